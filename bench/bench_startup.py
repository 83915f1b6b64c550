"""Where a whole ``hudi-cluster run`` process spends its time on small tables (issue 24.1: start-up in ~2 s, a
40k-row table clustered in under 5 s as a whole process).

    PYTHONPATH=$PWD .venv/bin/python bench/bench_startup.py                 # 5 reps, tiny and demo tables
    PYTHONPATH=$PWD .venv/bin/python bench/bench_startup.py --quick         # 3 reps
    PYTHONPATH=$PWD .venv/bin/python bench/bench_startup.py --variant no-reuse:--spark-conf=spark.python.worker.reuse=false

**Tables** (built once, cached under ``bench/out/tables/``): ``micro`` (``--tables micro,...``), the same layout as
``tiny`` with 400 rows (the fixed cost of a run alone); ``tiny``, the 40,000-row table of
``bench_execution --cli`` (8 files in 2 partitions, 4 append commits of ours, sorted by ``c_int,ts`` into 2
groups); ``demo``, the table ``hudi-cluster demo`` writes (40 append commits of 2,500 rows in 3 partitions: 120
files, 100,000 rows), clustered as the demo does (size-based, sorted by ``customer_id,ts``).

**Contenders**, each a fresh process, ``--reps`` repetitions in alternating order, each run on a fresh copy of its
table (the copy is not timed):

| name | what |
|---|---|
| ``python`` | ``python -c pass``: the interpreter alone (the floor of any process) |
| ``imports`` | ``python -c "import hudi_cluster_core.cli, hudi_cluster_core.api"``: what the CLI imports before it plans |
| ``tiny``, ``demo`` | ``hudi-cluster run --base-path COPY --mode scheduleAndExecute --spark-master local[P] --parallelism P --json`` |
| ``tiny-<name>`` | ``tiny`` (or ``--variant-on TABLE``) with the extra flags of ``--variant NAME:FLAG[,FLAG...]`` (e.g. a ``--spark-conf``) |
| ``tiny-baseline``, ``demo-baseline`` | with ``--baseline DIR``: the same runs with the code in ``DIR`` (e.g. ``git archive`` of an earlier commit) first on ``PYTHONPATH`` |

Per run: wall seconds (spawn to exit), CPU seconds of the whole process tree (JVM and Python workers included),
and the run's own phases from ``--json``'s ``phases_s`` (README, "Run metrics"): ``interpreter``, ``imports``,
``checks``, ``plan``, ``session_start`` and ``session_wait``, ``first_task``, ``tasks``, ``commit`` (of which
``metadata_table``), and ``exit`` = wall - ``since_process_start`` (printing the result, Spark's and Python's exit).
A code version whose ``--json`` has no ``phases_s`` gets its ``duration_s`` only. The machine's load average
(``/proc/loadavg``) is recorded before and after every run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import common
from common import OUT_DIR, REPO_ROOT, TableSpec

TINY = TableSpec(rows=40_000, files=8)
MICRO = TableSpec(rows=400, files=8)  # the fixed cost alone: the same layout with 50 rows a file
DEMO_BATCHES, DEMO_ROWS = 40, 2500
TIMEOUT_S = 600
PHASES = ("interpreter", "imports", "checks", "plan", "session_start", "session_wait", "first_task", "tasks",
          "commit", "metadata_table", "since_process_start", "exit")  # fmt: skip


def demo_table() -> tuple[Path, dict]:
    """The table ``hudi-cluster demo`` writes, cached (its batches and writer settings)."""
    from hudi_cluster_core.demo import demo_batch
    from hudi_cluster_core.writer.append import append

    directory = OUT_DIR / "tables" / f"demo_b{DEMO_BATCHES}_r{DEMO_ROWS}_v1"

    def build(tmp: Path) -> dict:
        for batch in range(DEMO_BATCHES):
            append(tmp, demo_batch(batch, DEMO_ROWS), table_name="demo_orders", record_key="order_id",
                   partition_field="region", precombine_field="ts", table_version=9)  # fmt: skip
        files = common.base_files(tmp)
        return {"rows": DEMO_BATCHES * DEMO_ROWS, "files": len(files), "bytes": sum(f.stat().st_size for f in files)}

    return directory, common._cached(directory, build)


def tiny_options(info: dict, parallelism: int) -> dict[str, str]:
    """``bench_execution``'s options for the tiny table: 2 groups, one output file each, gzip."""
    cap = 4 * info["max_file_bytes"] + info["min_file_bytes"] // 2  # 4 files per partition: one group each
    return {
        "hoodie.clustering.plan.strategy.sort.columns": "c_int,ts",
        "hoodie.clustering.plan.strategy.max.bytes.per.group": str(cap),
        "hoodie.clustering.plan.strategy.target.file.max.bytes": str(cap),
        "hoodie.clustering.plan.strategy.small.file.limit": str(max(cap, 300 * 1024 * 1024)),
        "hoodie.clustering.max.parallelism": str(parallelism), "hoodie.parquet.compression.codec": "gzip",
    }  # fmt: skip


def run_command(copy: Path, options: dict[str, str], parallelism: int, extra: list[str]) -> list[str]:
    command = [str(REPO_ROOT / ".venv/bin/hudi-cluster"), "run", "--base-path", str(copy), "--mode",
               "scheduleAndExecute", "--spark-master", f"local[{parallelism}]", "--parallelism", str(parallelism),
               "--json", *extra]  # fmt: skip
    for key, value in options.items():
        command += ["--hoodie-conf", f"{key}={value}"]
    return command


def load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def run_once(command: list[str], code: Path = REPO_ROOT) -> tuple[common.Sample, str]:
    """One whole process (``code`` first on its ``PYTHONPATH``), its tree's CPU sampled; stdout back. Raises with
    stderr's tail if it fails."""
    outcome: dict = {}

    def go() -> None:
        # cwd: the code's own folder, since the Python worker daemon (``python -m``) finds the package in its
        # working directory before PYTHONPATH
        done = subprocess.run(command, capture_output=True, text=True, cwd=code, timeout=TIMEOUT_S,
                              env={**os.environ, "PYTHONPATH": str(code)}, start_new_session=True)  # fmt: skip
        outcome["done"] = done

    sample, _ = common.measure(go)
    done = outcome["done"]
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])} exited {done.returncode}: {done.stderr[-2000:]}")
    return sample, done.stdout


def phases_of(stdout: str, wall: float) -> dict[str, float]:
    result = json.loads(stdout)
    phases = dict(result.get("phases_s") or {})
    if not phases:  # a code version from before phases_s
        took = result["duration_s"]
        return {"plan": took["plan"], "spark": took["spark"], "commit": took["commit"], "until_result": took["total"]}
    if phases.get("since_process_start") is not None:
        phases["exit"] = round(wall - phases["since_process_start"], 3)
    if result.get("rows_written") is None or result.get("output_files", 0) < 1:
        raise AssertionError(f"the run clustered nothing: {result.get('message')}")
    return phases


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="3 repetitions")
    parser.add_argument("--reps", type=int)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--tables", default="tiny,demo", help="comma-separated: micro, tiny, demo")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME:FLAG[,FLAG...]",
                        help="also run a table (--variant-on) with these extra CLI flags, as contender TABLE-NAME")
    parser.add_argument("--variant-on", default="tiny", help="the table --variant runs on (default tiny)")
    parser.add_argument("--baseline", metavar="DIR", help="also run each table with the code in DIR (an earlier commit)")
    parser.add_argument("--out", default=str(OUT_DIR / "bench_startup.json"))
    args, _ = parser.parse_known_args(argv)  # run_all.py passes every benchmark's flags
    reps = args.reps or (3 if args.quick else 5)
    tables = {}
    if "micro" in args.tables:
        source, info = common.hudi_table(MICRO)
        tables["micro"] = (source, tiny_options(info, args.parallelism), [])
    if "tiny" in args.tables:
        source, info = common.hudi_table(TINY)
        tables["tiny"] = (source, tiny_options(info, args.parallelism), [])
    if "demo" in args.tables:
        source, _info = demo_table()
        tables["demo"] = (source, {"hoodie.clustering.plan.strategy.sort.columns": "customer_id,ts"}, [])
    codes = {name: REPO_ROOT for name in tables}
    if args.baseline:
        for name in list(tables):
            tables[f"{name}-baseline"], codes[f"{name}-baseline"] = tables[name], Path(args.baseline).resolve()
    for variant in args.variant:
        name, _, flags = variant.partition(":")
        base = args.variant_on
        tables[f"{base}-{name}"] = (tables[base][0], tables[base][1], [f for f in flags.split(",") if f])
        codes[f"{base}-{name}"] = REPO_ROOT
    python = str(REPO_ROOT / ".venv/bin/python")
    commands = {"python": [python, "-c", "pass"],
                "imports": [python, "-c", "import hudi_cluster_core.cli, hudi_cluster_core.api"]}  # fmt: skip
    names = [*commands, *tables]
    code_at_start = common.code_fingerprint()
    runs: dict[str, list[dict]] = {name: [] for name in names}
    for rep, order in enumerate(common.alternating_orders(names, reps)):
        for name in order:
            copy = None
            if name in tables:
                source, options, extra = tables[name]
                copy = common.fresh_copy(source, f"startup-{name}")
                command = run_command(copy, options, args.parallelism, extra)
            else:
                command = commands[name]
            common.settle()
            before = load()
            try:
                sample, stdout = run_once(command, codes.get(name, REPO_ROOT))
            finally:
                if copy is not None:
                    shutil.rmtree(copy, ignore_errors=True)
            record = {"wall": round(sample.seconds, 3), "cpu": round(sample.cpu_seconds, 3), "load_before": before,
                      "load_after": load()}  # fmt: skip
            if name in tables:
                record["phases"] = phases_of(stdout, sample.seconds)
            runs[name].append(record)
            print(f"[bench_startup] rep {rep + 1}/{reps} {name:>14}: {sample.seconds:6.2f}s wall, {sample.cpu_seconds:6.2f}s "
                  f"CPU, load {before:.2f}  {json.dumps(record.get('phases', {}))}", flush=True)  # fmt: skip
    summary = summarize(runs)
    print_summary(summary)
    report = {
        "benchmark": "bench_startup", "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": common.machine(),
        "command": " ".join(["bench/bench_startup.py", *sys.argv[1:]]), "code_sha256": code_at_start,
        "code_changed_during_run": common.code_fingerprint() != code_at_start, "parallelism": args.parallelism,
        "reps": reps, "tables": {"micro": {"rows": MICRO.rows, "files": MICRO.files},
                                 "tiny": {"rows": TINY.rows, "files": TINY.files},
                                 "demo": {"rows": DEMO_BATCHES * DEMO_ROWS, "commits": DEMO_BATCHES}},
        "summary": summary, "runs": runs,
    }  # fmt: skip
    common.write_json(Path(args.out), report)
    print(f"wrote {args.out}")
    return 0


def summarize(runs: dict[str, list[dict]]) -> dict:
    """Medians per contender: wall, CPU, load, and each phase."""
    summary = {}
    for name, records in runs.items():
        entry = {"wall": statistics.median(r["wall"] for r in records), "wall_min": min(r["wall"] for r in records),
                 "wall_max": max(r["wall"] for r in records), "cpu": statistics.median(r["cpu"] for r in records),
                 "load": statistics.median(r["load_before"] for r in records)}  # fmt: skip
        keys = [k for k in (*PHASES, "spark", "until_result") if any(k in r.get("phases", {}) for r in records)]
        entry["phases"] = {k: round(statistics.median(r["phases"][k] for r in records if k in r["phases"]), 3)
                           for k in keys}  # fmt: skip
        summary[name] = entry
    return summary


def print_summary(summary: dict) -> None:
    rows = [[name, f"{e['wall']:.2f}", f"{e['wall_min']:.2f}-{e['wall_max']:.2f}", f"{e['cpu']:.2f}", f"{e['load']:.2f}",
             " ".join(f"{k}={v:.2f}" for k, v in e["phases"].items())] for name, e in summary.items()]  # fmt: skip
    print(common.fmt_table(["contender", "wall s (median)", "wall min-max", "CPU s", "load", "phases (median s)"], rows))


if __name__ == "__main__":
    sys.exit(main())
