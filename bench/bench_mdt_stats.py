"""What keeping the metadata table's stats indexes costs our clustering, and what it saves Apache Hudi's next write.

Input (cached under ``bench/out/tables/``): a COW v9 table written by Apache Hudi 1.1.1 with the metadata table on
and its stats indexes built (``files``, ``column_stats``, ``partition_stats``, ``bloom_filters``): ``--files``
insert commits of small files over two partitions.

Contenders, each on a fresh copy, in alternating order:

* ``kept``: our clustering keeps every stats partition (this branch);
* ``dropped`` (baseline): the same clustering after the stats partitions were dropped alone (untimed), i.e. what
  the commit did before: it writes only ``files``.

For each: the wall and CPU seconds of our clustering (whole table, one plan), then of Apache Hudi's first upsert
after it (a small batch of updates, the stats indexes enabled in its config, so after ``dropped`` it rebuilds them
from every file's footer). Reported as ratios ``kept / dropped``.

    .venv/bin/python bench/bench_mdt_stats.py --quick
    .venv/bin/python bench/bench_mdt_stats.py --rows 400000 --files 40 --reps 3
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    OUT_DIR, _cached, alternating_orders, base_files, fmt_table, fresh_copy, machine, measure, ratio, remove, settle,
    spark_session, stats, write_json,
)  # fmt: skip

STATS = ("column_stats", "partition_stats", "bloom_filters")
WRITE_OPTIONS = {"hoodie.metadata.index.bloom.filter.enable": "true"}
CLUSTERING = {"hoodie.clustering.plan.strategy.sort.columns": "c_int",
              "hoodie.clustering.plan.strategy.max.num.groups": "1000"}  # fmt: skip


def source_table(spark, rows: int, files: int) -> tuple[Path, dict]:
    from tests.support.apache_hudi import make_small_file_table, read_hoodie_properties

    directory = OUT_DIR / "tables" / f"hudi_mdt_stats_r{rows}_f{files}_v1"

    def build(tmp: Path) -> dict:
        batches = max(1, files // 3)  # the synthetic rows spread over three regions: one file each per commit
        make_small_file_table(spark, str(tmp), batches=batches, rows_per_batch=rows // batches, metadata_enable=True,
                              extra_options=WRITE_OPTIONS)  # fmt: skip
        built = read_hoodie_properties(tmp)["hoodie.table.metadata.partitions"].split(",")
        missing = set(STATS) - set(built)
        if missing:
            raise SystemExit(f"Apache Hudi did not build {sorted(missing)} (built: {built})")
        return {"rows": rows, "files": len(base_files(tmp)), "metadata_partitions": built}

    return directory, _cached(directory, build)


def updates_of(base: Path, count: int):
    from tests.support.apache_hudi import SMALL_FILE_SCHEMA, make_updates
    from tests.support.readers import read_hudi_rs

    rows = read_hudi_rs(base).select(SMALL_FILE_SCHEMA.names).cast(SMALL_FILE_SCHEMA)
    return make_updates(rows.slice(0, count))


def run_one(spark, source: Path, name: str, rep: int, updates) -> dict:
    from hudi_cluster_core.api import cluster
    from hudi_cluster_core.io.storage import Storage
    from hudi_cluster_core.table.metadata_table import drop_metadata_partitions
    from tests.support.apache_hudi import hudi_upsert, read_hoodie_properties

    copy = fresh_copy(source, f"mdt_stats_{name}_{rep}")
    if name == "dropped":
        drop_metadata_partitions(Storage(str(copy)), STATS)
    settle(spark)
    clustering, result = measure(lambda: cluster(str(copy), "scheduleAndExecute", CLUSTERING, spark=spark), spark=spark)
    if not result.instant_time:
        raise SystemExit(f"{name}: nothing was clustered ({result.message})")
    kept = read_hoodie_properties(copy)["hoodie.table.metadata.partitions"].split(",")
    settle(spark)
    upsert, stats_ = measure(lambda: hudi_upsert(spark, copy, updates, extra_options=WRITE_OPTIONS), spark=spark)
    if stats_.num_inserts:
        raise SystemExit(f"{name}: Hudi's upsert did not find every key ({stats_})")
    after = read_hoodie_properties(copy)["hoodie.table.metadata.partitions"].split(",")
    remove(copy)
    return {"clustering": clustering, "upsert": upsert, "partitions_after_clustering": kept,
            "partitions_after_upsert": after}  # fmt: skip


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small table, 2 repetitions")
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--files", type=int, default=30)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--updates", type=int, default=100)
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.files, args.reps = 30_000, 12, 2
    spark = spark_session(2)
    source, info = source_table(spark, args.rows, args.files)
    updates = updates_of(source, args.updates)
    run_one(spark, source, "kept", -1, updates)  # untimed warm-up
    samples: dict[str, list[dict]] = {"kept": [], "dropped": []}
    for rep, order in enumerate(alternating_orders(list(samples), args.reps)):
        for name in order:
            samples[name].append(run_one(spark, source, name, rep, updates))
    report = {"machine": machine(), "input": info, "args": vars(args), "contenders": {}, "ratios": {}}
    for name, runs in samples.items():
        report["contenders"][name] = {
            phase: {"wall": stats([r[phase].seconds for r in runs]), "cpu": stats([r[phase].cpu_seconds for r in runs])}
            for phase in ("clustering", "upsert")
        } | {"partitions_after_clustering": runs[-1]["partitions_after_clustering"],
             "partitions_after_upsert": runs[-1]["partitions_after_upsert"]}  # fmt: skip
    for phase in ("clustering", "upsert"):
        for measure_ in ("seconds", "cpu_seconds"):
            kept = [getattr(r[phase], measure_) for r in samples["kept"]]
            dropped = [getattr(r[phase], measure_) for r in samples["dropped"]]
            report["ratios"][f"{phase}_{measure_}_kept_over_dropped"] = ratio(kept, dropped)
    write_json(OUT_DIR / "bench_mdt_stats.json", report)
    rows = [[f"{phase} {m}", f"{report['ratios'][f'{phase}_{m}_kept_over_dropped']['of_medians']:.2f}",
             f"{report['ratios'][f'{phase}_{m}_kept_over_dropped']['paired_min']:.2f}-"
             f"{report['ratios'][f'{phase}_{m}_kept_over_dropped']['paired_max']:.2f}"]
            for phase in ("clustering", "upsert") for m in ("seconds", "cpu_seconds")]  # fmt: skip
    print(fmt_table(["kept / dropped", "ratio of medians", "paired min-max"], rows))
    for name in samples:
        c = report["contenders"][name]
        print(f"{name}: clustering {c['clustering']['wall']['median']:.1f}s, upsert {c['upsert']['wall']['median']:.1f}s;"
              f" after upsert: {','.join(c['partitions_after_upsert'])}")
    return report


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
