"""Run every benchmark in ``bench/`` (``bench/bench_*.py``), each in its own process, one after another.

    .venv/bin/python bench/run_all.py                 # full size (what `make bench` runs)
    .venv/bin/python bench/run_all.py --quick         # every benchmark's --quick mode
    .venv/bin/python bench/run_all.py --only execution --reps 5
    .venv/bin/python bench/run_all.py --list

Arguments other than ``--only`` / ``--list`` are passed to every benchmark unchanged, so a benchmark script
must accept ``--quick`` (and should accept ``--reps``). Each writes its own JSON under ``bench/out/``. The exit
status is non-zero if any benchmark failed; the others still run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent


def discover(only: list[str] | None = None) -> list[Path]:
    scripts = sorted(BENCH_DIR.glob("bench_*.py"))
    if only:
        scripts = [s for s in scripts if any(name in s.stem for name in only)]
    return scripts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", action="append", help="run only benchmarks whose name contains this (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    args, passthrough = parser.parse_known_args(argv)
    scripts = discover(args.only)
    if args.list:
        print("\n".join(s.name for s in scripts))
        return 0
    if not scripts:
        print("no benchmark matched", file=sys.stderr)
        return 2
    results = []
    for script in scripts:
        command = [sys.executable, str(script), *passthrough]
        print(f"\n=== {script.name}: {' '.join(command[1:])}", flush=True)
        started = time.perf_counter()
        code = subprocess.call(command, cwd=BENCH_DIR.parent)
        results.append((script.name, code, time.perf_counter() - started))
    print("\n=== summary")
    for name, code, seconds in results:
        print(f"{name:<40} {'ok' if code == 0 else f'FAILED (exit {code})':<18} {seconds:8.1f}s")
    return 0 if all(code == 0 for _, code, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
