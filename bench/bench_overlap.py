"""Overlap-aware grouping against size-based grouping at the same bytes rewritten: files per query after clustering.

    .venv/bin/python bench/bench_overlap.py --quick     # 2 partitions x 30 files, seconds
    .venv/bin/python bench/bench_overlap.py             # 2 partitions x 120 files
    .venv/bin/python bench/bench_overlap.py --execute   # also clusters copies on local Spark and measures them

Input: a COW table written by the append writer, one commit per batch, each commit one file per partition. The
sort column ``event_time`` arrives mostly in order (a batch's rows fall in its own window, which overlaps the next
one a little), but a quarter of the batches are backfills whose rows span everything before them: the late files
overlap almost every other file, which is what makes a query open many files. Batches hold 100-400 rows, so file
sizes differ.

Both strategies plan the same table with the same settings (sort column ``event_time``, every file small,
``max.bytes.per.group`` an eighth of the table, files of a quarter of that); each plan's groups are then taken in
the plan's own order until a byte budget (``--budget``, a fraction of the table's base-file bytes) is reached, so
both rewrite about the same bytes. Files per query after clustering are predicted from the footers by the
layout report's model (``predict_files_per_query``, linear sort; docs/layout-report.md): the expected number of
files a point query and a 1% range query on ``event_time`` open, row-weighted over the partitions.

``--execute`` also runs each plan for real (``hudi_cluster_core.api.cluster`` on a fresh copy of the table, local
Spark, the plan's groups kept by ``max.num.groups``) and measures the same figures on the files the run wrote, from
their footers. Results: ``bench/out/bench_overlap.json``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/common.py, whatever the working directory
import common  # noqa: E402  (also puts the repository root on sys.path)

for plugin in ("size-based", "overlap-aware"):  # the strategies as their sources, installed or not
    sys.path.insert(0, str(common.REPO_ROOT / "plugins" / plugin))

import hudi_cluster_overlap_aware  # noqa: E402
from hudi_cluster_core.plan.footer_stats import footer_stats_provider  # noqa: E402
from hudi_cluster_core.sdk import (  # noqa: E402
    RANGE_QUERY_FRACTION, FileRanges, PlannedRewrite, expected_files, positions, predict_files_per_query,
)  # fmt: skip
from hudi_cluster_core.table import load_table  # noqa: E402
from hudi_cluster_core.testing import PlanningInput, plan_with  # noqa: E402
from hudi_cluster_core.write.append import append  # noqa: E402
from hudi_cluster_overlap_aware import OverlapAwarePlanStrategy  # noqa: E402
from hudi_cluster_size_based.plan import SizeBasedPlanStrategy  # noqa: E402

OUT_JSON = common.OUT_DIR / "bench_overlap.json"
COLUMN = "event_time"
WINDOW = 1000


def write_table(path: Path, batches: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for batch in range(batches):
        rows = int(rng.integers(100, 401))
        if batch >= 4 and rng.random() < 0.25:  # a backfill: rows from anywhere before
            times = rng.integers(0, batch * WINDOW, rows)
        else:
            times = rng.integers(batch * WINDOW - WINDOW // 10, (batch + 1) * WINDOW + WINDOW // 10, rows)
        table = pa.table({"id": [f"b{batch}-{i}" for i in range(rows)], "region": ["us", "eu"] * (rows // 2) + ["us"] * (rows % 2),
                          COLUMN: times.astype("int64"), "payload": [f"p{int(t):08d}" for t in times]})  # fmt: skip
        append(path, table, record_key="id", partition_field="region", metadata_enable=False)


def chosen_within_budget(groups, budget: int) -> tuple[list, int]:
    """The plan's first groups, in its order, while they fit the budget (a prefix: ``max.num.groups`` keeps it)."""
    taken, spent = [], 0
    for group in groups:
        size = sum(s.base_file_size for s in group.slices)
        if spent + size > budget:
            break
        taken.append(group)
        spent += size
    return taken, spent


def file_ranges(path: Path) -> dict:
    table = load_table(path)
    stats_of = footer_stats_provider(table.storage)
    return {s.group_id: FileRanges(s.partition, stats_of(s).num_rows, {COLUMN: stats_of(s).columns[COLUMN]})
            for s in table.view().latest_file_slices() if s.base_file is not None}  # fmt: skip


def measured(files: dict) -> tuple[float, float]:
    """(point, 1% range query files) of the files as they are, row-weighted over partitions."""
    point = ranged = rows_total = 0.0
    for partition in sorted({f.partition for f in files.values()}):
        members = [f for f in files.values() if f.partition == partition]
        places = positions([f.ranges[COLUMN][0] for f in members] + [f.ranges[COLUMN][1] for f in members])
        lows, highs, rows = places[: len(members)], places[len(members) :], [f.rows for f in members]
        point += expected_files(lows, highs, rows) * sum(rows)
        ranged += expected_files(lows, highs, rows, RANGE_QUERY_FRACTION) * sum(rows)
        rows_total += sum(rows)
    return point / rows_total, ranged / rows_total


def execute(path: Path, label: str, options: dict, groups: int) -> dict:
    """Cluster a fresh copy with ``label``'s plan cut to ``groups`` groups; the files per query of the result."""
    from hudi_cluster_core.api import cluster
    from hudi_cluster_core.plugins import StrategyRegistry

    copy = path.parent / f"{path.name}-{label}"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(path, copy)
    registry = StrategyRegistry(extra_plugins=(hudi_cluster_overlap_aware,))  # whether or not it is installed
    began = time.perf_counter()
    result = cluster(copy, "scheduleAndExecute", {**options, "hoodie.clustering.plan.strategy.class": label,
                                                  "hoodie.clustering.plan.strategy.max.num.groups": groups},
                     common.spark_session(2), registry=registry)  # fmt: skip
    seconds = time.perf_counter() - began
    point, ranged = measured(file_ranges(copy))
    return {"bytes_rewritten": result.bytes_rewritten, "output_files": result.output_files,
            "point_query_files_after": round(point, 3), "range_query_files_after": round(ranged, 3),
            "seconds": round(seconds, 1)}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--batches", type=int)
    parser.add_argument("--budget", type=float, default=0.3, help="fraction of the table's bytes rewritten")
    parser.add_argument("--reps", type=int, default=1, help="accepted for run_all.py; the figures are deterministic")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--execute", action="store_true", help="also run both plans on local Spark and measure")
    args = parser.parse_args()
    batches = args.batches or (30 if args.quick else 120)
    path = common.OUT_DIR / "tables" / f"overlap-{batches}-{args.seed}"
    started = time.perf_counter()
    if path.exists():
        shutil.rmtree(path)
    write_table(path, batches, args.seed)
    written = time.perf_counter() - started
    table = load_table(path)
    slices = tuple(s for s in table.view().latest_file_slices() if s.base_file is not None)
    stats_of = footer_stats_provider(table.storage)
    stats = {s: stats_of(s) for s in slices}
    total = sum(s.base_file_size for s in slices)
    options = {
        "hoodie.clustering.plan.strategy.sort.columns": COLUMN,
        "hoodie.clustering.plan.strategy.small.file.limit": total,
        "hoodie.clustering.plan.strategy.max.bytes.per.group": total // 8,
        "hoodie.clustering.plan.strategy.target.file.max.bytes": max(1, total // 32),
        "hoodie.clustering.plan.strategy.max.num.groups": 1000,
    }  # fmt: skip
    case = PlanningInput(slices, stats=stats, options=options, all_partitions=tuple(sorted({s.partition for s in slices})),
                         table_path=str(path))  # fmt: skip
    files = {s.group_id: FileRanges(s.partition, stats[s].num_rows, {COLUMN: stats[s].columns[COLUMN]}) for s in slices}
    budget = int(total * args.budget)
    results = {}
    for label, strategy in (("size-based", SizeBasedPlanStrategy()), ("overlap-aware", OverlapAwarePlanStrategy())):
        began = time.perf_counter()
        outcome = plan_with(strategy, case)
        planned = time.perf_counter() - began
        taken, spent = chosen_within_budget(outcome.groups, budget)
        rewrites = [PlannedRewrite(tuple(s.group_id for s in g.slices), g.num_output_file_groups) for g in taken]
        [figures] = predict_files_per_query(files, rewrites, [COLUMN], every_partition=True)
        results[label] = {
            "groups": len(taken), "files_rewritten": sum(len(g.slices) for g in taken), "bytes_rewritten": spent,
            "plan_seconds": round(planned, 3),
            "point_query_files": [round(figures.point_before, 3), round(figures.point_after, 3)],
            "range_query_files": [round(figures.range_before, 3), round(figures.range_after, 3)],
        }  # fmt: skip
        if args.execute:
            results[label]["executed"] = execute(path, label, options, len(taken))
    report = {"batches": batches, "files": len(slices), "table_bytes": total, "budget_bytes": budget,
              "write_seconds": round(written, 1), "results": results}  # fmt: skip
    OUT_JSON.parent.mkdir(parents=True, exist_ok=True)
    OUT_JSON.write_text(json.dumps(report, indent=2))
    print(f"{len(slices)} files, {total} bytes; budget {budget} bytes ({args.budget:.0%})")
    for label, r in results.items():
        print(f"{label:>14}: {r['groups']} groups, {r['files_rewritten']} files, {r['bytes_rewritten']} bytes; "
              f"point query files {r['point_query_files'][0]} -> {r['point_query_files'][1]}, "
              f"1% range {r['range_query_files'][0]} -> {r['range_query_files'][1]}")  # fmt: skip
        if "executed" in r:
            e = r["executed"]
            print(f"{'executed':>14}: {e['bytes_rewritten']} bytes into {e['output_files']} files in {e['seconds']} s; "
                  f"measured point {e['point_query_files_after']}, 1% range {e['range_query_files_after']}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
