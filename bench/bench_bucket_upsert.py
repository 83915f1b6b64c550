"""Issue 13: our upsert into a consistent-bucket MOR table vs Apache Hudi 1.1.1's upsert of the same batch.

    .venv/bin/python bench/bench_bucket_upsert.py --quick     # 20k rows, a 2,000-row batch, 1 rep
    .venv/bin/python bench/bench_bucket_upsert.py [--rows 200000 --buckets 8 --batch 20000 --reps 3]

Input (built by **Apache Hudi 1.1.1** in the run, once): a MERGE_ON_READ v9 table, partitioned by a 2-value
``region``, ``hoodie.index.type=BUCKET`` with ``hoodie.index.bucket.engine=CONSISTENT_HASHING`` and ``--buckets``
buckets per partition, holding ``--rows`` rows of ``common.make_rows`` (one upsert: log-only file groups), no
metadata table (this writer refuses column stats on log records). The batch: 10% updates of existing keys (``ts``
raised, a new ``c_comment``), 90% new keys. Each rep upserts it into a fresh copy, in alternating order, on one
Spark session (``local[--parallelism]``):

* ``ours``: ``hudi_cluster_core.upsert(copy, batch, options)``: each record's bucket from the hashing metadata,
  one Avro log block per bucket, one deltacommit, in the driver;
* ``hudi`` (**the baseline**): Apache Hudi's datasource upsert with the same index settings, from a Spark
  DataFrame built and cached before the timer starts.

Checked after each rep (untimed): Hudi's snapshot read of the copy holds every key once and the batch's values.
Reported: wall and CPU seconds per contender (median, min-max) and the ratios ours/hudi.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402  (puts the repo root on sys.path)
from common import OUT_DIR  # noqa: E402

CONTENDERS = ("ours", "hudi")
BASELINE = "hudi"


def bucket_options(buckets: int, parallelism: int) -> dict[str, str]:
    return {
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.index.type": "BUCKET",
        "hoodie.index.bucket.engine": "CONSISTENT_HASHING",
        "hoodie.bucket.index.num.buckets": str(buckets),
        "hoodie.compact.inline": "false",
        "hoodie.upsert.shuffle.parallelism": str(parallelism),
    }


def make_batch(args, table):
    import pyarrow as pa
    import pyarrow.compute as pc

    n_updates = args.batch // 10
    step = max(1, table.num_rows // n_updates)
    updates = table.take(list(range(0, table.num_rows, step))[:n_updates])
    updates = updates.set_column(updates.schema.get_field_index("ts"), "ts", pc.add(updates["ts"], 10_000_000))
    comment = pa.array([f"updated by the benchmark {i}" for i in range(updates.num_rows)])
    updates = updates.set_column(updates.schema.get_field_index("c_comment"), "c_comment", comment)
    inserts = common.make_rows(10_000_000, args.batch - updates.num_rows, seed=7)
    return pa.concat_tables([updates, inserts])


def check(spark, copy: Path, batch, expected_rows: int, name: str) -> None:
    from tests.support.apache_hudi import read_hudi_snapshot

    rows = read_hudi_snapshot(spark, str(copy))
    keys = rows.column("_hoodie_record_key").to_pylist()
    if len(keys) != expected_rows or len(set(keys)) != expected_rows:
        raise AssertionError(f"{name}: {len(keys)} rows, {len(set(keys))} keys; expected {expected_rows}")
    wanted = dict(zip(batch.column("id").to_pylist(), batch.column("c_comment").to_pylist()))
    found = {k: v for k, v in zip(keys, rows.column("c_comment").to_pylist()) if k in wanted}
    if found != wanted:
        raise AssertionError(f"{name}: {sum(found.get(k) != v for k, v in wanted.items())} key(s) lack the batch's value")


def run(args) -> dict:
    from hudi_cluster_core.writer.ingest import upsert
    from tests.support.apache_hudi import _to_spark_df, write_hudi_table

    spark = common.spark_session(args.parallelism)
    options = bucket_options(args.buckets, args.parallelism)
    source = OUT_DIR / "work" / "bucket-source"
    common.remove(source)
    table = common.make_rows(0, args.rows)
    write_hudi_table(spark, str(source), table, operation="upsert", partition_field="region", table_type="MERGE_ON_READ",
                     index_type="BUCKET", extra_options=options)  # fmt: skip
    batch = make_batch(args, table)
    expected_rows = args.rows + batch.num_rows - args.batch // 10
    frame = _to_spark_df(spark, batch).cache()
    frame.count()  # materialised before any timer starts
    code_at_start = common.code_fingerprint()
    samples: dict[str, list[common.Sample]] = {c: [] for c in CONTENDERS}
    for rep, order in enumerate(common.alternating_orders(CONTENDERS, args.reps)):
        for name in order:
            copy = common.fresh_copy(source, f"bucket-upsert-{name}-{rep}")
            common.settle(spark)
            if name == "ours":
                sample, _ = common.measure(lambda: upsert(str(copy), batch, options, spark=spark), spark=spark)
            else:
                sample, _ = common.measure(lambda: write_hudi_table(
                    spark, str(copy), frame, operation="upsert", partition_field="region", index_type="BUCKET",
                    extra_options=options), spark=spark)  # fmt: skip
            check(spark, copy, batch, expected_rows, name)
            samples[name].append(sample)
            print(f"rep {rep} {name:<5} {sample.seconds:7.2f}s wall {sample.cpu_seconds:7.2f}s CPU", flush=True)
            common.remove(copy)
    frame.unpersist()
    return {
        **common.report_header("bench_bucket_upsert", code_at_start),
        "input": {"rows": args.rows, "buckets_per_partition": args.buckets, "partitions": 2},
        "batch": {"rows": batch.num_rows, "updates": args.batch // 10},
        "baseline": BASELINE,
        **common.timings(samples, "ours", BASELINE),
    }


def print_report(report: dict) -> None:
    common.print_timings(report, "bucket upsert", "ours", BASELINE)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--buckets", type=int, default=8, help="consistent-hashing buckets per partition")
    parser.add_argument("--batch", type=int, default=20_000, help="rows upserted: 10%% updates, 90%% inserts")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="20k rows, a 2,000-row batch, 1 rep")
    parser.add_argument("--out", type=Path, default=OUT_DIR / "bench_bucket_upsert.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.batch, args.reps = 20_000, 2_000, 1
    report = run(args)
    print_report(report)
    return common.save_report(args.out, report)


if __name__ == "__main__":
    sys.exit(main())
