"""Issue 5's proof per strategy family: each clusters a real table, and Apache Hudi and hudi-rs read the same
rows after. Key-range also shows the key-range overlap of the files before and after."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_cluster_core.api import cluster
from hudi_cluster_core.table import load_table
from hudi_cluster_core.writer.append import append
from hudi_cluster_key_range import key_range_overlap
from tests.support.apache_hudi import read_hudi_snapshot, small_file_rows
from tests.support.readers import assert_same_rows, read_hudi_rs

PLAN = "hoodie.clustering.plan.strategy.class"
RUN = "hoodie.clustering.execution.strategy.class"
FAMILIES = {
    "size-based": {PLAN: "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy",
                   "hoodie.clustering.plan.strategy.sort.columns": "c_int"},
    "single-file-sort": {PLAN: "org.apache.hudi.client.clustering.plan.strategy.SparkSingleFileSortPlanStrategy",
                         RUN: "org.apache.hudi.client.clustering.run.strategy.SparkSingleFileSortExecutionStrategy",
                         "hoodie.clustering.plan.strategy.sort.columns": "c_long"},
    "commit-time": {PLAN: "commit-time", "hoodie.clustering.plan.strategy.commit.time.window.commits": "3"},
    # a small target makes several output files per partition, so their key ranges can be compared (80 rows per
    # partition take ~7.4 KB of gzip pages now: an 8 KiB target no longer made a second file)
    # small files (several per partition, to show key ranges that no longer overlap), so a small bloom filter: at
    # Hudi's sizes its text alone (~431 KB) is larger than such a file
    "key-range": {PLAN: "key-range", "hoodie.clustering.plan.strategy.target.file.max.bytes": str(1 << 13),
                  "hoodie.index.bloom.num_entries": "100", "hoodie.bloom.index.filter.dynamic.max.entries": "200"},
    "z-order": {PLAN: "size-based", "hoodie.clustering.plan.strategy.sort.columns": "c_int,c_double",
                "hoodie.layout.optimize.strategy": "z-order"},
    "hilbert": {PLAN: "size-based", "hoodie.clustering.plan.strategy.sort.columns": "c_int,c_double",
                "hoodie.layout.optimize.strategy": "hilbert"},
    "hot-partitions": {PLAN: "hot-partitions"},
}  # fmt: skip


def shuffled_table(base, version=9, batches=6, rows=40):
    """Append-mode commits whose keys are spread at random, so every small file spans most of the key space."""
    everything = small_file_rows(0, batches * rows, seed=11)
    order = np.random.default_rng(5).permutation(everything.num_rows)
    for batch in range(batches):
        append(base, everything.take(pa.array(order[batch * rows:(batch + 1) * rows])), table_name="fam",
               record_key="id", partition_field="region", precombine_field="ts", table_version=version)  # fmt: skip


def file_key_ranges(base):
    table = load_table(base)
    ranges = {}
    for s in table.view().latest_file_slices():
        meta = pq.ParquetFile(table.storage.join(s.partition, s.base_file.name)).metadata.metadata
        ranges.setdefault(s.partition, []).append((meta[b"hoodie_min_record_key"].decode(), meta[b"hoodie_max_record_key"].decode()))
    return ranges


def mean_overlap(base):
    ranges = file_key_ranges(base)
    return sum(key_range_overlap(r) * len(r) for r in ranges.values()) / sum(len(r) for r in ranges.values())


@pytest.mark.parametrize("family", list(FAMILIES))
def test_family_clusters_a_real_table_and_both_readers_agree(spark, tmp_path, family):
    base = str(tmp_path / family)
    shuffled_table(base)
    before = {"hudi": read_hudi_snapshot(spark, base), "hudi-rs": read_hudi_rs(base)}
    files_before = len(load_table(base).view().latest_file_slices())
    overlap_before = mean_overlap(base)
    result = cluster(base, "scheduleAndExecute", FAMILIES[family], spark=spark)
    assert result.message == "completed", result
    for reader, rows in (("hudi", read_hudi_snapshot(spark, base)), ("hudi-rs", read_hudi_rs(base))):
        assert_same_rows(before[reader], rows, labels=(f"{reader} before", f"{reader} after"))
    files_after = len(load_table(base).view().latest_file_slices())
    print(f"{family}: files {files_before} -> {files_after}, key-range overlap {overlap_before:.2f} -> {mean_overlap(base):.2f}")
    if family == "single-file-sort":
        assert files_after == files_before and result.output_files == result.input_file_groups
    else:
        assert files_after < files_before
    if family == "key-range":
        assert files_after > len(file_key_ranges(base)) and mean_overlap(base) == 0 < overlap_before


def test_mor_table_with_log_updates_and_deletes_clusters_merged(spark, tmp_path):
    """Hudi MOR with upserts and deletes in log files: the rewrite merges them (hudi-rs's file-group reader)."""
    from tests.support.apache_hudi import make_small_file_table, make_updates, write_hudi_table

    base = str(tmp_path / "mor")
    no_compaction = {"hoodie.compact.inline": "false", "hoodie.datasource.compaction.async.enable": "false"}
    rows = make_small_file_table(spark, base, batches=3, rows_per_batch=30, table_type="MERGE_ON_READ",
                                 extra_options=no_compaction)  # fmt: skip
    write_hudi_table(spark, base, make_updates(rows.slice(0, 20)), operation="upsert", extra_options=no_compaction)
    write_hudi_table(spark, base, rows.slice(40, 10), operation="delete", extra_options=no_compaction)
    assert any(s.log_files for s in load_table(base).view().latest_file_slices()), "no log files to merge"
    before = {"hudi": read_hudi_snapshot(spark, base), "hudi-rs": read_hudi_rs(base)}
    assert before["hudi"].num_rows == 80
    result = cluster(base, "scheduleAndExecute", spark=spark)
    assert result.message == "completed"
    for reader, after in (("hudi", read_hudi_snapshot(spark, base)), ("hudi-rs", read_hudi_rs(base))):
        assert_same_rows(before[reader], after, labels=(f"{reader} before", f"{reader} after"))
    assert not any(s.log_files for s in load_table(base).view().latest_file_slices())
