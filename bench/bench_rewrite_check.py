"""Issue 19.5: what the rewrite check costs (``hudi.cluster.task.verify`` on against off).

    .venv/bin/python bench/bench_rewrite_check.py --quick               # 200k rows / 40 files, a few minutes
    .venv/bin/python bench/bench_rewrite_check.py [--rows 2000000 --files 200 --reps 3] [--parts in-memory,spark]

Input and options are ``bench_execution.py``'s (its cached table; sort-and-size, linear on ``c_int,ts``, gzip, one
output file per group). Two measurements, each alternating the check on and off:

1. **A group's rewrite, in this process** (no Spark, so nothing else is counted): every group of the bench's own
   plan through the strategy's ``execute_group``, armed and checked as a Spark task does it
   (``hudi.cluster.task.verify=true``, and ``full`` in the in-memory pass), against the same call unarmed
   (``false``); CPU seconds of this process (``time.process_time``, all its threads), the modes rotated per group
   and rep after an untimed warm-up. Once with the default memory budget (groups sorted in memory) and once with
   ``--spill-budget`` (groups spilled and sorted out of core). Written files are deleted between calls, untimed.
   The check's parts are also timed alone on each group's rows: the digest of the input, of the output, and the
   footer reads.
2. **Whole runs on Spark** (``--no-spark`` skips them): ``cluster(copy, "scheduleAndExecute")`` with the check on
   and off, CPU seconds of the process tree (driver, JVM, Python workers), as ``bench_execution.py`` measures.

The machine's load (``os.getloadavg``) is recorded before and after each part.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402  (puts the repo root on sys.path)
from common import OUT_DIR, TableSpec  # noqa: E402
from hudi_cluster_core.config.catalogue import TASK_VERIFY  # noqa: E402


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def group_tasks(source: Path, options: dict, name: str):
    """A scheduled copy of the table and its plan's tasks (as ``run/execute.py`` builds them)."""
    from hudi_cluster_core.api import cluster
    from hudi_cluster_core.config import load_config
    from hudi_cluster_core.plugins import default_registry
    from hudi_cluster_core.run.execute import build_tasks, load_stored_plan
    from hudi_cluster_core.table import load_table

    copy = common.fresh_copy(source, name)
    scheduled = cluster(str(copy), "schedule", options)
    table = load_table(str(copy))
    plan = load_stored_plan(table, scheduled.instant_time)
    return copy, build_tasks(table, plan, load_config(None, [], dict(options)), default_registry())


def remove_written(task, stats) -> None:
    storage = task.storage
    for stat in stats:
        storage.delete_file(storage.join(stat["path"]))
    common.remove(Path(storage.join(".hoodie", ".temp")))


def in_process(source: Path, options: dict, reps: int, budget: int | None, label: str, modes: list[str]) -> dict:
    """CPU seconds of every group's ``execute_group`` plus the check, per ``hudi.cluster.task.verify`` value in
    ``modes`` (``false``: unarmed), the modes rotated per group and rep."""
    from hudi_cluster_core.run import digest

    copy, tasks = group_tasks(source, options, f"check-{label}")
    cpu: dict[str, list[float]] = {mode: [] for mode in modes}
    parts = {"input digest": 0.0, "output digest": 0.0, "footers": 0.0}
    loads = [load()]

    def prepared(task, mode: str, token: str):
        task = task.with_write_token(token)
        task = replace(task, memory_budget=budget) if budget else task
        return digest.armed(replace(task, settings={**task.settings, TASK_VERIFY: mode}))

    try:
        for mode in modes:  # untimed warm-up: first calls (imports, caches, scratch space) are not a group's
            warm = prepared(tasks[0], mode, "0-99-0")
            remove_written(warm, warm.strategy.execute_group(task=warm))
        for rep in range(reps):
            seconds = dict.fromkeys(modes, 0.0)
            for index, task in enumerate(tasks):
                shift = (rep + index) % len(modes)
                for mode in modes[shift:] + modes[:shift]:
                    run = prepared(task, mode, f"{index}-{rep}-{index}")
                    gc.collect()
                    started = time.process_time()
                    stats = run.strategy.execute_group(task=run)
                    digest.check(run, stats)
                    seconds[mode] += time.process_time() - started
                    if mode == "true" and rep == 0:
                        parts_of(run, stats, parts)
                    remove_written(task, stats)
            for mode in modes:
                cpu[mode].append(seconds[mode])
            print(f"  {label} rep {rep + 1}/{reps}: " + ", ".join(
                f"verify={m} {seconds[m]:.2f} CPU s ({seconds[m] / seconds['false'] - 1:+.1%})" for m in modes)
                + f", load {load()}", flush=True)  # fmt: skip
    finally:
        common.remove(copy)
    loads.append(load())
    return {"groups": len(tasks), "cpu": {m: common.stats(v) for m, v in cpu.items()},
            "ratios": {f"{m}/false": common.ratio(cpu[m], cpu["false"]) for m in modes if m != "false"},
            "parts_cpu_seconds": parts, "load_before_after": loads}  # fmt: skip


def parts_of(task, stats, parts: dict) -> None:
    """The check's parts alone, on this group's rows (rep 1 only): what the digests and footer reads cost."""
    import pyarrow.parquet as pq

    from hudi_cluster_core.run.digest import Digest

    rows = replace(task, digest=None).read_arrow(_whole_group=True)
    written = [pq.read_table(task.storage.join(s["path"])) for s in stats]
    for name, tables in (("input digest", [rows]), ("output digest", written)):
        started = time.process_time()
        for table in tables:
            Digest().add(table, task.digest.skipped)
        parts[name] += time.process_time() - started
    started = time.process_time()
    task.digest._files_problem(task, stats)
    parts["footers"] += time.process_time() - started


def on_spark(args, source: Path, options: dict) -> dict:
    from hudi_cluster_core.api import cluster

    spark = common.spark_session(args.parallelism)
    samples: dict[str, list] = {"on": [], "off": []}
    warm = common.fresh_copy(source, "check-spark-warm-up")  # untimed: the session's first job pays the JVM's start
    cluster(str(warm), "scheduleAndExecute", options, spark=spark, parallelism=args.parallelism)
    common.remove(warm)
    loads = [load()]
    for rep, order in enumerate(common.alternating_orders(["on", "off"], args.reps)):
        for mode in order:
            copy = common.fresh_copy(source, f"check-spark-{mode}")
            run_options = {**options, TASK_VERIFY: "true" if mode == "on" else "false"}
            common.settle(spark)
            sample, result = common.measure(
                lambda: cluster(str(copy), "scheduleAndExecute", run_options, spark=spark,
                                parallelism=args.parallelism).to_json(), spark=spark)  # fmt: skip
            assert result["message"] == "completed", result
            samples[mode].append(sample)
            common.remove(copy)
            print(f"  spark rep {rep + 1}/{args.reps} check {mode}: {sample.seconds:.1f} s, {sample.cpu_seconds:.1f} "
                  f"CPU s, load {load()}", flush=True)  # fmt: skip
    loads.append(load())
    report = common.timings(samples, "on", "off")
    report["load_before_after"] = loads
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--groups", type=int, default=10)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--spill-budget", type=int, default=64 * 1024**2,
                        help="hudi.cluster.task.memory.bytes of the out-of-core pass (0: skip it)")
    parser.add_argument("--no-spark", action="store_true")
    parser.add_argument("--parts", default="in-memory,out-of-core,spark",
                        help="which measurements, comma-separated (default: all three)")
    parser.add_argument("--quick", action="store_true", help="200k rows in 40 files, 4 groups")
    parser.add_argument("--out", type=Path, default=OUT_DIR / "bench_rewrite_check.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.files, args.groups = 200_000, 40, 4
        args.spill_budget = min(args.spill_budget, 8 * 1024**2) if args.spill_budget else 0
    from bench_execution import clustering_options

    spec = TableSpec(args.rows, args.files)
    source, info = common.hudi_table(spec)
    options = clustering_options(info, spec, args.groups, args.parallelism)
    print(f"{args.rows:,} rows in {args.files} files, {args.groups} groups; load {load()}", flush=True)
    report = {"machine": common.machine(), "code_sha256": common.code_fingerprint(), "args": vars(args) | {"out": str(args.out)},
              "options": options, "parts": {}}  # fmt: skip
    parts = set(args.parts.split(","))
    passes = [("in-memory", None)] + ([("out-of-core", args.spill_budget)] if args.spill_budget else [])
    for label, budget in [p for p in passes if p[0] in parts]:
        modes = ["false", "true", "full"] if label == "in-memory" else ["false", "true"]
        report["parts"][label] = part = in_process(source, options, args.reps, budget, label, modes)
        cpu_off = part["cpu"]["false"]["median"]
        for key, ratio in part["ratios"].items():
            mode = key.split("/")[0]
            extra = (part["cpu"][mode]["median"] - cpu_off) / part["groups"]
            print(f"{label}, verify={mode}: {part['groups']} groups, CPU s {part['cpu'][mode]['median']:.2f} against "
                  f"{cpu_off:.2f} unchecked (medians of {args.reps}): ratio {ratio['of_medians']:.3f} (per rep "
                  f"{ratio['paired_min']:.3f}-{ratio['paired_max']:.3f}), {extra * 1000:.0f} ms per group", flush=True)  # fmt: skip
        print(f"{label}: the check's parts on rep 1: "
              + ", ".join(f"{k} {v:.2f} CPU s" for k, v in part["parts_cpu_seconds"].items()), flush=True)
    if not args.no_spark and "spark" in parts:
        report["parts"]["spark"] = part = on_spark(args, source, options)
        common.print_timings(part, "whole run on Spark", "on", "off")
    report["code_changed_during_run"] = common.code_fingerprint() != report["code_sha256"]
    common.write_json(args.out, report)
    print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
