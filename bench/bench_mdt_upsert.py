"""Issue 11: the first Apache Hudi upsert after our clustering, metadata table kept vs dropped.

    .venv/bin/python bench/bench_mdt_upsert.py --quick                 # 20k rows / 8 files, a few minutes
    .venv/bin/python bench/bench_mdt_upsert.py [--rows 200000 --files 20 --updates 2000 --reps 2]

Input (built once, cached under ``bench/out/tables/``): a COW v9 table **written by Apache Hudi 1.1.1**,
partitioned by a 2-value ``region``, ``--files / 2`` insert commits (small-file limit 0: one new file group per
partition per commit) with the metadata table on and ``files``, ``column_stats``, ``partition_stats`` and
``record_index`` built (Hudi's defaults plus ``hoodie.metadata.record.index.enable=true``).

Contenders, each rep on fresh copies, in alternating order, on one Spark session (the Hudi test session):

* ``kept``    - untimed: our ``cluster(scheduleAndExecute)``, which keeps the metadata table (the partitions with
                a builder in ``hudi_cluster_core.mdt.partitions`` are updated in the clustering commit, the others
                dropped alone). Timed: the next Apache Hudi upsert of ``--updates`` existing keys with
                ``hoodie.index.type=RECORD_INDEX``.
* ``dropped`` (**the baseline**, what clustering did before issue 11) - untimed:
                ``hudi_cluster_core.table.metadata_table.drop_metadata_table`` and our clustering with
                ``hoodie.metadata.enable=false``. Timed: the same upsert, which first rebuilds the metadata table
                (listing, column stats of every file, a record-index entry for every record).

Both upserts must find every key (no inserts, ``--updates`` update writes). Reported: wall and CPU seconds of the
upsert per contender (median, min-max), the ratio kept/dropped, and which MDT partitions each upsert initialised.

``--encode-keys N`` (default 2,000,000; 0 skips it) also measures the record-index records of a clustering that
wrote N keys into 20 files (no Spark): ``record_index_records`` + routing to 10 MDT file groups + HFile log
blocks, against a baseline of the same run: pyarrow reading the same key column and writing it as one gzip
parquet file. Reported: seconds of both, the ratio, the log bytes, the largest uncompressed HFile data block,
and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402  (puts the repo root on sys.path)
from common import OUT_DIR  # noqa: E402

CONTENDERS = ("kept", "dropped")
BASELINE = "dropped"
WRITE_OPTIONS = {  # every Hudi write: the indexes the table has stay enabled (Hudi drops what its config disables)
    "hoodie.metadata.record.index.enable": "true",
    "hoodie.metadata.index.column.stats.enable": "true",
    "hoodie.metadata.index.partition.stats.enable": "true",
    "hoodie.parquet.compression.codec": "gzip",
}
CLUSTER_OPTIONS = {"hoodie.clustering.plan.strategy.sort.columns": "c_int", "hoodie.clustering.plan.strategy.max.num.groups": "100"}
INIT_TIMES = re.compile(r"0{12}\d{5}")  # MDT partition initialisation instants: 00000000000000000, ...001, ...


def hudi_written_table(args) -> tuple[Path, dict]:
    """The cached input table (see the module docstring)."""
    from tests.support.apache_hudi import read_hoodie_properties, write_hudi_table

    commits = max(1, args.files // 2)
    per_commit = args.rows // commits
    directory = OUT_DIR / "tables" / f"hudi_mdt_rli_{args.rows}r_{args.files}f"

    def build(tmp: Path) -> dict:
        spark = common.spark_session(args.parallelism)
        for commit in range(commits):
            rows = common.make_rows(commit * per_commit, per_commit)
            write_hudi_table(spark, str(tmp), rows, table_name="bench_mdt", partition_field="region",
                             operation="insert", metadata_enable=True, extra_options=WRITE_OPTIONS)  # fmt: skip
        partitions = read_hoodie_properties(tmp)["hoodie.table.metadata.partitions"].split(",")
        missing = {"files", "column_stats", "record_index"} - set(partitions)
        if missing:
            raise AssertionError(f"the input table lacks metadata partitions {sorted(missing)}: {partitions}")
        return {"rows": per_commit * commits, "files": len(common.base_files(tmp)), "commits": commits,
                "bytes": common.dir_bytes(tmp), "mdt_partitions": partitions}  # fmt: skip

    return directory, common._cached(directory, build)


class Bench:
    def __init__(self, args, spark, source: Path, info: dict):
        self.args, self.spark, self.source, self.info = args, spark, source, info
        self.updates = self._updates()
        self.cluster_seconds: dict[str, list[float]] = {c: [] for c in CONTENDERS}

    def _updates(self):
        from tests.support.apache_hudi import read_hudi_snapshot

        rows = read_hudi_snapshot(self.spark, str(self.source)).select(common.SCHEMA.names).cast(common.SCHEMA)
        step = max(1, rows.num_rows // self.args.updates)
        picked = rows.take(list(range(0, rows.num_rows, step))[: self.args.updates])
        import pyarrow.compute as pc

        return picked.set_column(picked.schema.get_field_index("ts"), "ts", pc.add(picked["ts"], 10_000_000))

    def prepare(self, name: str, rep: int) -> Path:
        """A fresh copy, clustered the contender's way (untimed, but recorded)."""
        import time

        from hudi_cluster_core.api import cluster
        from hudi_cluster_core.table.metadata_table import drop_metadata_table
        from hudi_cluster_core.io.storage import Storage

        copy = common.fresh_copy(self.source, f"{name}-{rep}")
        started = time.perf_counter()
        if name == "kept":
            result = cluster(str(copy), "scheduleAndExecute", CLUSTER_OPTIONS, spark=self.spark).to_dict()
        else:
            drop_metadata_table(Storage(str(copy)))
            result = cluster(str(copy), "scheduleAndExecute", {**CLUSTER_OPTIONS, "hoodie.metadata.enable": "false"},
                             spark=self.spark).to_dict()  # fmt: skip
        self.cluster_seconds[name].append(time.perf_counter() - started)
        if result.get("message") != "completed":
            raise AssertionError(f"{name}: our clustering did not complete: {result.get('message')}")
        return copy

    def upsert(self, copy: Path):
        from tests.support.apache_hudi import hudi_upsert

        return hudi_upsert(self.spark, str(copy), self.updates, index_type="RECORD_INDEX", metadata_enable=True,
                           extra_options=WRITE_OPTIONS)  # fmt: skip

    def check(self, name: str, copy: Path, stats, mdt_before: set[str]) -> dict:
        from tests.support.apache_hudi import read_hoodie_properties

        n = self.updates.num_rows
        if stats.num_inserts != 0 or stats.num_update_writes != n:
            raise AssertionError(f"{name}: the upsert did not find all {n} keys: inserts={stats.num_inserts}, "
                                 f"updates={stats.num_update_writes}")  # fmt: skip
        timeline = copy / ".hoodie/metadata/.hoodie/timeline"
        new = {p.name for p in timeline.iterdir() if p.is_file()} - mdt_before
        inits = sorted(n for n in new if INIT_TIMES.fullmatch(n.split("_")[0]) and n.endswith(".deltacommit"))
        return {"mdt_init_deltacommits": len(inits),
                "mdt_partitions_after": read_hoodie_properties(copy)["hoodie.table.metadata.partitions"]}  # fmt: skip


def _mdt_timeline(copy: Path) -> set[str]:
    timeline = copy / ".hoodie/metadata/.hoodie/timeline"
    return {p.name for p in timeline.iterdir() if p.is_file()} if timeline.is_dir() else set()


def run(args) -> dict:
    spark = common.spark_session(args.parallelism)
    source, info = hudi_written_table(args)
    bench = Bench(args, spark, source, info)
    code_at_start = common.code_fingerprint()
    samples: dict[str, list[common.Sample]] = {c: [] for c in CONTENDERS}
    for rep, order in enumerate(common.alternating_orders(CONTENDERS, args.reps)):
        for name in order:
            copy = bench.prepare(name, rep)
            mdt_before = _mdt_timeline(copy)
            common.settle(spark)
            sample, stats = common.measure(lambda: bench.upsert(copy), spark=spark)
            sample.extra = bench.check(name, copy, stats, mdt_before)
            samples[name].append(sample)
            print(f"rep {rep} {name:<8} upsert {sample.seconds:7.2f}s wall {sample.cpu_seconds:7.2f}s CPU  "
                  f"{json.dumps(sample.extra)}", flush=True)  # fmt: skip
            common.remove(copy)
    seconds = {c: [s.seconds for s in samples[c]] for c in CONTENDERS}
    cpu = {c: [s.cpu_seconds for s in samples[c]] for c in CONTENDERS}
    return {
        **common.report_header("bench_mdt_upsert", code_at_start),
        "input": {**info, "path": str(source.relative_to(common.REPO_ROOT)), "updates": bench.updates.num_rows},
        "baseline": BASELINE,
        "upsert_seconds": {c: common.stats(v) for c, v in seconds.items()},
        "upsert_cpu_seconds": {c: common.stats(v) for c, v in cpu.items()},
        "clustering_seconds_untimed": {c: common.stats(v) for c, v in bench.cluster_seconds.items()},
        "per_rep": {c: [s.extra for s in samples[c]] for c in CONTENDERS},
        "ratios": {"kept/dropped": common.ratio(seconds["kept"], seconds["dropped"])},
        "cpu_ratios": {"kept/dropped": common.ratio(cpu["kept"], cpu["dropped"])},
    }


def encode_bench(keys: int, reps: int) -> dict:
    """The record-index build at scale vs a pyarrow read+write of the same keys (see the module docstring)."""
    import resource
    import time
    import uuid

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hudi_cluster_core.io.storage import Storage
    from hudi_cluster_core.mdt import log_block
    from hudi_cluster_core.mdt.hfile import read_hfile
    from hudi_cluster_core.mdt.commit_files import CommitFiles
    from hudi_cluster_core.mdt.record_index import record_index_records

    base = OUT_DIR / "work" / "rli_encode"
    common.remove(base)
    (base / "p").mkdir(parents=True)
    files, per_file, stats = 20, keys // 20, []
    for n in range(files):
        file_id = f"{uuid.uuid4()}-0"
        path = f"p/{file_id}_0-0-0_20260101000000000.parquet"
        ids = common._uuid_text(np.random.default_rng(n), per_file)
        pq.write_table(pa.table({"_hoodie_record_key": ids}), base / path, row_group_size=50_000, compression="gzip")
        stats.append({"fileId": file_id, "path": path, "partitionPath": "p"})
    commit = CommitFiles(Storage(str(base)), "20260101000000000", {"p": stats})
    groups = [f"record-index-{i:04d}-0" for i in range(10)]

    def ours() -> list:
        records = record_index_records(commit)
        blocks = [log_block.hfile_data_block(commit.instant_time, part) for part in log_block.route(records, groups).values()]
        for block in blocks:
            log_block.encode_block(block)
        return blocks

    def floor() -> int:
        table = pa.concat_tables(pq.read_table(base / s["path"], columns=["_hoodie_record_key"]) for s in stats)
        pq.write_table(table, base / "floor.parquet", compression="gzip")
        return (base / "floor.parquet").stat().st_size

    seconds: dict[str, list[float]] = {"ours": [], "pyarrow": []}
    log_bytes = largest_block = 0
    for rep, order in enumerate(common.alternating_orders(("ours", "pyarrow"), reps)):
        for name in order:
            common.settle()
            started = time.perf_counter()
            blocks = ours() if name == "ours" else floor()
            seconds[name].append(time.perf_counter() - started)
            if name == "ours":  # untimed: what was written
                log_bytes = sum(len(log_block.encode_block(b)) for b in blocks)
                largest_block = max(len(p) for b in blocks for p in read_hfile(b.content).payloads.values())
            print(f"encode rep {rep} {name:<8} {seconds[name][-1]:7.2f}s", flush=True)
    common.remove(base)
    return {"keys": per_file * files, "files": files, "mdt_file_groups": len(groups),
            "seconds": {k: common.stats(v) for k, v in seconds.items()},
            "ratio_ours/pyarrow": common.ratio(seconds["ours"], seconds["pyarrow"]),
            "log_bytes": log_bytes, "largest_uncompressed_data_block": largest_block,
            "peak_rss_gib_process": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 3)}  # fmt: skip


def print_report(report: dict) -> None:
    rows = []
    for name in CONTENDERS:
        wall, cpu = report["upsert_seconds"][name], report["upsert_cpu_seconds"][name]
        rows.append([name, f"{wall['median']:.2f}", f"{wall['min']:.2f}-{wall['max']:.2f}", f"{cpu['median']:.2f}",
                     report["per_rep"][name][0]["mdt_init_deltacommits"]])  # fmt: skip
    print(common.fmt_table(["upsert after", "wall s (median)", "wall min-max", "CPU s (median)", "MDT inits"], rows))
    wall, cpu = report["ratios"]["kept/dropped"], report["cpu_ratios"]["kept/dropped"]
    print(f"kept/dropped: wall {wall['of_medians']:.3f} (per rep {wall['paired_min']:.3f}-{wall['paired_max']:.3f}), "
          f"CPU {cpu['of_medians']:.3f}")  # fmt: skip
    encode = report.get("record_index_encode")
    if encode:
        ours, floor = encode["seconds"]["ours"]["median"], encode["seconds"]["pyarrow"]["median"]
        print(f"record index of {encode['keys']:,} keys: {ours:.2f}s vs pyarrow read+write {floor:.2f}s "
              f"(ratio {encode['ratio_ours/pyarrow']['of_medians']:.2f}), {encode['log_bytes'] / 2**20:.1f} MiB of logs, "
              f"largest data block {encode['largest_uncompressed_data_block']:,} B")  # fmt: skip


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--files", type=int, default=20, help="base files (2 partitions, files/2 commits)")
    parser.add_argument("--updates", type=int, default=2_000, help="existing keys the timed upsert updates")
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--encode-keys", type=int, default=2_000_000, help="keys for the record-index build (0: skip)")
    parser.add_argument("--quick", action="store_true", help="20k rows, 8 files, 500 updates, 1 rep, 200k keys")
    parser.add_argument("--out", type=Path, default=OUT_DIR / "bench_mdt_upsert.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.files, args.updates, args.reps = 20_000, 8, 500, 1
        args.encode_keys = min(args.encode_keys, 200_000)
    report = run(args)
    if args.encode_keys:
        report["record_index_encode"] = encode_bench(args.encode_keys, max(2, args.reps))
    print_report(report)
    return common.save_report(args.out, report)


if __name__ == "__main__":
    sys.exit(main())
