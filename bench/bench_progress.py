"""What progress inside groups costs (issue 23.4: under 2%): the same clustering run with progress on and off.

    .venv/bin/python bench/bench_progress.py --quick     # 200,000 rows in 40 files, 4 groups
    .venv/bin/python bench/bench_progress.py             # 2,000,000 rows in 200 files, 10 groups

Input: ``common.hudi_table`` (bench_execution.py's table and options: sort columns ``c_int,ts``, one output file
per group), a fresh copy per run (copying is not timed). Contenders, on one warm Spark session:

* ``on``: ``HUDI_CLUSTER_PROGRESS=log`` (what a run prints off a terminal; a terminal's bar runs the same
  machinery): the driver's progress listener, each Spark task's reporter counting rows read and written and its
  sender thread (a line to the driver every 0.5 s), the progress lines every 10 s;
* ``off`` (**the baseline**): ``HUDI_CLUSTER_PROGRESS=off``: no listener, so no task sends anything.

Each rep runs both, alternating which goes first; timed is the whole ``cluster(..., "scheduleAndExecute")`` call,
wall clock and CPU seconds of the process tree (driver, JVM, Python workers). The ratio on / off is reported
as the ratio of medians and the min-max of the per-rep ratios. Results: ``bench/out/bench_progress.json``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/common.py, whatever the working directory
import common  # noqa: E402  (also puts the repository root on sys.path)
from bench_execution import clustering_options  # noqa: E402

OUT_JSON = common.OUT_DIR / "bench_progress.json"
MODES = {"on": "log", "off": "off"}


def run_once(source: Path, options: dict, spark, contender: str, name: str) -> common.Sample:
    from hudi_cluster_core.api import cluster
    from hudi_cluster_core.run.progress import MODE_ENV

    copy = common.fresh_copy(source, name)
    os.environ[MODE_ENV] = MODES[contender]
    common.settle(spark)
    try:
        sample, result = common.measure(lambda: cluster(str(copy), "scheduleAndExecute", options, spark=spark),
                                        spark=spark)  # fmt: skip
    finally:
        os.environ.pop(MODE_ENV, None)
    if not result.completed_file or result.rows_written != result.rows_read:
        raise SystemExit(f"{contender}: the run did not complete as expected: {result.message}")
    common.remove(copy)
    return sample


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="200,000 rows in 40 files, 4 groups")
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--groups", type=int, default=10)
    parser.add_argument("--reps", type=int, default=5, help="repetitions (median reported; >= 3)")
    parser.add_argument("--parallelism", type=int, default=2, help="Spark local[N] (default 2)")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.files, args.groups = 200_000, 40, 4
    if args.reps < 3:
        raise SystemExit("--reps: at least 3 (the median of fewer says little on a noisy machine)")
    spec = common.TableSpec(args.rows, args.files)
    source, info = common.hudi_table(spec)
    options = clustering_options(info, spec, args.groups, args.parallelism)
    spark = common.spark_session(args.parallelism)
    loads = [os.getloadavg()]
    run_once(source, options, spark, "on", "progress_warmup")  # untimed: Python workers, imports, JIT
    samples: dict[str, list[common.Sample]] = {name: [] for name in MODES}
    for rep, order in enumerate(common.alternating_orders(list(MODES), args.reps)):
        for contender in order:
            samples[contender].append(run_once(source, options, spark, contender, f"progress_{contender}_{rep}"))
        print(f"[bench_progress] rep {rep + 1}/{args.reps}: " + ", ".join(
            f"{c} {samples[c][-1].seconds:.2f} s ({samples[c][-1].cpu_seconds:.2f} CPU s)" for c in order)
            + f"; load {[round(x, 2) for x in os.getloadavg()]}", flush=True)  # fmt: skip
        loads.append(os.getloadavg())
    report = {"benchmark": "bench_progress", "machine": common.machine(), "code": common.code_fingerprint(),
              "input": info, "options": options, "settings": vars(args), "loadavg": loads,
              **common.timings(samples, "on", "off")}  # fmt: skip
    common.write_json(OUT_JSON, report)
    print(f"\n{args.rows:,} rows in {args.files} files, {args.groups} groups, local[{args.parallelism}], "
          f"{args.reps} reps:")  # fmt: skip
    common.print_timings(report, "progress", "on", "off")
    print(f"\nwritten {OUT_JSON}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
