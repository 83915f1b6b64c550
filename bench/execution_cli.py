"""``bench_execution.py --cli``: whole processes, as a user runs them, on the bench's table and on a tiny one.

    .venv/bin/python bench/bench_execution.py --cli [--rows 2000000 --files 200] [--layouts linear,z-order,hilbert]

Contenders, each a fresh process on a fresh copy of the same cached table, in alternating order:

* ``ours-cli[-layout]`` - ``.venv/bin/hudi-cluster run --base-path COPY --mode scheduleAndExecute --spark-master
  local[P] --parallelism P --hoodie-conf ...`` with the options of ``bench_execution`` (same groups, same output
  files, gzip) and ``hoodie.layout.optimize.strategy=<layout>``: interpreter start, imports, Spark session,
  plan, tasks, commit, exit.
* ``hudi-cli[-layout]`` - a pyspark process (this file run as a script) that builds the Hudi 1.1.1 session of
  ``tests/support/apache_hudi.py`` with master ``local[P]`` and runs ``CALL run_clustering(op =>
  'scheduleAndExecute', order => 'c_int,ts', options => <the same options>)``, then stops: what a Hudi user's
  ``spark-submit`` of that call does (JVM start with the bundle, session, planning, clustering, commit).
* ``tiny``: ``ours-cli`` (linear) on a 40,000-row / 8-file table, 2 groups: the fixed cost of a run (target < 10 s
  wall), next to ``hudi-cli`` on the same table.

Wall and CPU seconds of the whole process tree (the JVM and the Python workers included), ratios per layout.
Each run is checked afterwards, untimed: ours through hudi-rs (row count), Hudi's through its commit metadata.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import common
from common import REPO_ROOT, TableSpec

SORT_COLUMNS = "c_int,ts"
TINY = TableSpec(rows=40_000, files=8)
TIMEOUT_S = 1800


def _run_process(command: list[str], env: dict[str, str] | None = None) -> str:
    """Run ``command`` in its own process group; both pipes drained by threads (an orphan JVM can hold them);
    the whole group is killed if it fails or overruns. Returns stdout; raises with stderr's tail on failure."""
    # cwd: the code on PYTHONPATH, if given: Spark's Python worker daemon (``python -m``) finds the package in its
    # working directory before PYTHONPATH
    env = dict(env or {})
    if env.get("PYTHONPATH"):
        env["PYTHONPATH"] = str(Path(env["PYTHONPATH"]).resolve())
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               cwd=env.get("PYTHONPATH") or REPO_ROOT, env={**os.environ, **env},
                               start_new_session=True)  # fmt: skip
    captured: dict[str, bytes] = {}
    readers = [threading.Thread(target=lambda n=n, s=s: captured.__setitem__(n, s.read()), daemon=True)
               for n, s in (("out", process.stdout), ("err", process.stderr))]  # fmt: skip
    for reader in readers:
        reader.start()
    try:
        rc = process.wait(TIMEOUT_S)
    finally:
        if process.poll() is None or any(r.is_alive() for r in readers):
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
        for reader in readers:
            reader.join(10)
    out, err = (captured.get(k, b"").decode(errors="replace") for k in ("out", "err"))
    if rc != 0:
        raise RuntimeError(f"{command[:3]} exited {rc}: {err[-2000:]}")
    return out


def ours_command(copy: Path, options: dict[str, str], parallelism: int) -> list[str]:
    command = [str(REPO_ROOT / ".venv/bin/hudi-cluster"), "run", "--base-path", str(copy), "--mode",
               "scheduleAndExecute", "--spark-master", f"local[{parallelism}]", "--parallelism", str(parallelism),
               "--json"]  # fmt: skip
    for key, value in options.items():
        command += ["--hoodie-conf", f"{key}={value}"]
    return command


def hudi_command(copy: Path, options: dict[str, str], parallelism: int) -> list[str]:
    options = {k: v for k, v in options.items() if k != "hoodie.clustering.plan.strategy.sort.columns"}
    return [sys.executable, str(Path(__file__).resolve()), str(copy), json.dumps(options), SORT_COLUMNS, str(parallelism)]


def _check_ours(copy: Path, rows: int) -> dict:
    from tests.support.apache_hudi import completed_instants
    from tests.support.readers import read_hudi_rs

    read = read_hudi_rs(copy).num_rows
    if read != rows:
        raise AssertionError(f"hudi-rs reads {read} rows after our CLI run, expected {rows}")
    return {"replacecommits": len(completed_instants(copy, ("replacecommit",))), "hudi_rs_rows": read}


def _check_hudi(copy: Path, rows: int) -> dict:
    from tests.support.apache_hudi import completed_instants, instant_metadata

    done = completed_instants(copy, ("replacecommit",))
    if len(done) != 1:
        raise AssertionError(f"Apache Hudi's process completed {len(done)} clusterings, expected 1")
    stats = [s for v in (instant_metadata(copy, done[0]).get("partitionToWriteStats") or {}).values() for s in v or []]
    written = sum(int(s.get("numWrites") or 0) for s in stats)
    if written != rows:
        raise AssertionError(f"Apache Hudi's process wrote {written} rows, expected {rows}")
    return {"output_files": len(stats), "rows_written": written}


def _contenders(args, clustering_options) -> dict[str, tuple[TableSpec, dict, str]]:
    """name -> (table, options, 'ours'|'hudi')."""
    spec = TableSpec(rows=args.rows, files=args.files, partitioned=not args.no_partition)
    info = common.hudi_table(spec)[1]
    found: dict[str, tuple[TableSpec, dict, str]] = {}
    for layout in args.layouts:
        suffix = "" if layout == "linear" else f"-{layout}"
        options = clustering_options(info, spec, args.groups, args.parallelism, layout)
        found[f"ours-cli{suffix}"] = (spec, options, "ours")
        found[f"hudi-cli{suffix}"] = (spec, options, "hudi")
    tiny_info = common.hudi_table(TINY)[1]
    tiny_options = clustering_options(tiny_info, TINY, 2, args.parallelism, "linear")
    found["ours-cli-tiny"] = (TINY, tiny_options, "ours")
    found["hudi-cli-tiny"] = (TINY, tiny_options, "hudi")
    return found


def run_cli(args, clustering_options) -> dict:
    code_at_start = common.code_fingerprint()
    contenders = _contenders(args, clustering_options)
    names = list(contenders)
    samples: dict[str, list[common.Sample]] = {name: [] for name in names}
    orders = common.alternating_orders(names, args.reps)
    for rep, order in enumerate(orders):
        for name in order:
            spec, options, kind = contenders[name]
            source = common.hudi_table(spec)[0]
            copy = common.fresh_copy(source, f"cli-{name}-{rep}")
            try:
                command = (ours_command if kind == "ours" else hudi_command)(copy, options, args.parallelism)
                common.settle()
                sample, _ = common.measure(lambda: _run_process(command))
                sample.extra = (_check_ours if kind == "ours" else _check_hudi)(copy, spec.rows)
            finally:
                common.remove(copy)
            samples[name].append(sample)
            print(f"[bench_execution --cli] rep {rep + 1}/{args.reps} {name:>20}: {sample.seconds:7.2f}s wall, "
                  f"{sample.cpu_seconds:7.2f}s CPU  {json.dumps(sample.extra)}", flush=True)  # fmt: skip
    seconds = {n: [s.seconds for s in samples[n]] for n in names}
    cpu = {n: [s.cpu_seconds for s in samples[n]] for n in names}
    ratios = {f"{n}/{n.replace('ours', 'hudi', 1)}": (n, n.replace("ours", "hudi", 1)) for n in names if n.startswith("ours")}
    report = {
        "benchmark": "bench_execution --cli", "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": common.machine(),
        "command": " ".join(["bench/bench_execution.py", *sys.argv[1:]]), "code_sha256": code_at_start,
        "code_changed_during_run": common.code_fingerprint() != code_at_start, "parallelism": args.parallelism,
        "table": {"rows": args.rows, "files": args.files}, "tiny_table": {"rows": TINY.rows, "files": TINY.files},
        "orders": orders, "seconds": {n: common.stats(v) for n, v in seconds.items()},
        "cpu_seconds": {n: common.stats(v) for n, v in cpu.items()},
        "ratios": {k: common.ratio(seconds[a], seconds[b]) for k, (a, b) in ratios.items()},
        "cpu_ratios": {k: common.ratio(cpu[a], cpu[b]) for k, (a, b) in ratios.items()},
        "checks": {n: [s.extra for s in samples[n]] for n in names},
    }  # fmt: skip
    report["target"] = {"tiny CLI run < 10 s wall": report["seconds"]["ours-cli-tiny"]["median"] < 10}
    for label in report["ratios"]:
        if "tiny" not in label:
            report["target"][f"{label} <= 0.25 (wall and CPU)"] = (
                report["ratios"][label]["of_medians"] <= 0.25 and report["cpu_ratios"][label]["of_medians"] <= 0.25)
    _print(report)
    return report


def _print(report: dict) -> None:
    rows = [[n, f"{s['median']:.2f}", f"{s['min']:.2f}-{s['max']:.2f}", f"{report['cpu_seconds'][n]['median']:.2f}"]
            for n, s in report["seconds"].items()]  # fmt: skip
    print()
    print(common.fmt_table(["process", "wall s (median)", "wall min-max", "CPU s (median)"], rows))
    print_ratios(report)


def print_ratios(report: dict) -> None:
    """The ratio table (wall and CPU) and the targets, met or not (bench_execution's report too)."""
    print()
    rows = [[k, f"{r['of_medians']:.3f}", f"{r['paired_min']:.3f}-{r['paired_max']:.3f}",
             f"{report['cpu_ratios'][k]['of_medians']:.3f}"] for k, r in report["ratios"].items()]  # fmt: skip
    print(common.fmt_table(["ratio", "wall, of medians", "wall, per-rep min-max", "CPU, of medians"], rows))
    print()
    for label, met in report["target"].items():
        print(f"target {label}: {'met' if met else 'NOT met'}")


def _hudi_process(base_path: str, options_json: str, order: str, parallelism: str) -> int:
    """The Apache Hudi contender's process: its session, one ``run_clustering`` call, stop."""
    from tests.support.apache_hudi import hudi_schedule_and_execute

    spark = common.spark_session(int(parallelism))
    try:
        done = hudi_schedule_and_execute(spark, base_path, json.loads(options_json), order=order)
    finally:
        spark.stop()
    print(json.dumps({"completed": done}))
    return 0


if __name__ == "__main__":
    sys.exit(_hudi_process(*sys.argv[1:5]))
