"""Issue 13: our COW upsert (``hudi_cluster_core.upsert``) vs Apache Hudi 1.1.1's upsert of the same batch.

    .venv/bin/python bench/bench_upsert.py --quick        # 20k rows / 8 files, a 2,000-row batch, 1 rep
    .venv/bin/python bench/bench_upsert.py [--rows 200000 --files 20 --batch 20000 --reps 3]

Input: ``bench_mdt_upsert.py``'s table (built once by **Apache Hudi 1.1.1**, cached under
``bench/out/tables/hudi_mdt_rli_*``): a COW v9 table, partitioned by a 2-value ``region``, ``--files / 2`` insert
commits (small-file limit 0: one new file group per partition per commit), the metadata table on with ``files``,
``column_stats``, ``partition_stats`` and ``record_index``; the rows of ``common.make_rows`` (36-char UUID keys,
``ts`` the ordering field). Both contenders keep every one of those indexes (Hudi with the same index keys on).

The batch (``--batch`` rows): 10% updates of existing keys (``ts`` raised, a new ``c_comment``) spread over every
file, 90% new keys. Each rep upserts it into a fresh copy of the input, in alternating order, on one Spark session
(the Hudi test session, ``local[--parallelism]``):

* ``ours``: ``hudi_cluster_core.upsert(copy, batch, options, spark=spark)``: BLOOM index from the footers, one
  Spark task per candidate file to confirm keys and one per file group written, the MDT kept;
* ``hudi`` (**the baseline**): Apache Hudi's datasource upsert (``hoodie.index.type=BLOOM``, the same
  small-file limit and max file size, metadata table on, shuffle parallelism ``--parallelism``) of the same batch
  as a Spark DataFrame built and cached **before** the timer starts (so Hudi does not pay for Arrow -> Spark).

Both get Hudi's default file sizing, set explicitly (small-file limit 100 MiB, max file size 120 MiB), so the
inserts go into one existing small file per partition and every file group is rewritten once (both write the
same number of files; checked). Checked after each rep (untimed): the commit updated exactly the
batch's existing keys and inserted the new ones. Reported: wall and CPU seconds per contender (median, min-max) and
the ratios ours/hudi (of medians and per-rep min-max).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402  (puts the repo root on sys.path)
from common import OUT_DIR  # noqa: E402

from bench_mdt_upsert import WRITE_OPTIONS, hudi_written_table  # noqa: E402  (the same cached input table)

CONTENDERS = ("ours", "hudi")
BASELINE = "hudi"
# Hudi's defaults, said out loud: the test helper that writes for Hudi sets the small-file limit to 0 otherwise
SIZING = {"hoodie.parquet.small.file.limit": str(100 * 2**20), "hoodie.parquet.max.file.size": str(120 * 2**20)}


def make_batch(args, spark, source: Path):
    """(batch as Arrow, number of updates, number of inserts): 10% existing keys updated, 90% new keys."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from tests.support.apache_hudi import read_hudi_snapshot

    rows = read_hudi_snapshot(spark, str(source)).select(common.SCHEMA.names).cast(common.SCHEMA)
    n_updates = args.batch // 10
    step = max(1, rows.num_rows // n_updates)
    updates = rows.take(list(range(0, rows.num_rows, step))[:n_updates])
    updates = updates.set_column(updates.schema.get_field_index("ts"), "ts", pc.add(updates["ts"], 10_000_000))
    comment = pa.array([f"updated by the benchmark {i}" for i in range(updates.num_rows)])
    updates = updates.set_column(updates.schema.get_field_index("c_comment"), "c_comment", comment)
    inserts = common.make_rows(10_000_000, args.batch - updates.num_rows, seed=7)
    return pa.concat_tables([updates, inserts]), updates.num_rows, inserts.num_rows


def run(args) -> dict:
    from hudi_cluster_core.writer.ingest import upsert
    from tests.support.apache_hudi import _to_spark_df, commit_stats, write_hudi_table

    spark = common.spark_session(args.parallelism)
    source, info = hudi_written_table(args)
    batch, n_updates, n_inserts = make_batch(args, spark, source)
    frame = _to_spark_df(spark, batch).cache()
    frame.count()  # materialised before any timer starts
    options = {**WRITE_OPTIONS, **SIZING, "hoodie.metadata.enable": "true",
               "hoodie.upsert.shuffle.parallelism": str(args.parallelism)}  # fmt: skip
    code_at_start = common.code_fingerprint()
    samples: dict[str, list[common.Sample]] = {c: [] for c in CONTENDERS}
    for rep, order in enumerate(common.alternating_orders(CONTENDERS, args.reps)):
        for name in order:
            copy = common.fresh_copy(source, f"upsert-{name}-{rep}")
            common.settle(spark)
            if name == "ours":
                sample, result = common.measure(lambda: upsert(str(copy), batch, options, spark=spark), spark=spark)
                found = (result["updates"], result["inserts"])
            else:
                sample, instant = common.measure(lambda: write_hudi_table(
                    spark, str(copy), frame, operation="upsert", index_type="BLOOM", metadata_enable=True,
                    extra_options=options), spark=spark)  # fmt: skip
                stats = commit_stats(str(copy), instant)
                found = (stats.num_update_writes, stats.num_inserts)
            if found != (n_updates, n_inserts):
                raise AssertionError(f"{name}: the upsert wrote (updates, inserts) = {found}, expected {(n_updates, n_inserts)}")
            sample.extra = {"updates": found[0], "inserts": found[1], "files": len(common.base_files(copy))}
            samples[name].append(sample)
            print(f"rep {rep} {name:<5} {sample.seconds:7.2f}s wall {sample.cpu_seconds:7.2f}s CPU  "
                  f"{json.dumps(sample.extra)}", flush=True)  # fmt: skip
            common.remove(copy)
    frame.unpersist()
    files = {name: {s.extra["files"] for s in samples[name]} for name in CONTENDERS}
    if len(set().union(*files.values())) != 1:
        raise AssertionError(f"the contenders did not write the same files (count of base files after): {files}")
    return {
        **common.report_header("bench_upsert", code_at_start),
        "input": {**info, "path": str(source.relative_to(common.REPO_ROOT))},
        "batch": {"rows": batch.num_rows, "updates": n_updates, "inserts": n_inserts},
        "baseline": BASELINE,
        **common.timings(samples, "ours", BASELINE),
        "per_rep": {c: [s.extra for s in samples[c]] for c in CONTENDERS},
    }


def print_report(report: dict) -> None:
    common.print_timings(report, "upsert", "ours", BASELINE)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--files", type=int, default=20, help="base files (2 partitions, files/2 commits)")
    parser.add_argument("--batch", type=int, default=20_000, help="rows upserted: 10%% updates, 90%% inserts")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="20k rows, 8 files, a 2,000-row batch, 1 rep")
    parser.add_argument("--out", type=Path, default=OUT_DIR / "bench_upsert.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.files, args.batch, args.reps = 20_000, 8, 2_000, 1
    report = run(args)
    print_report(report)
    return common.save_report(args.out, report)


if __name__ == "__main__":
    sys.exit(main())
