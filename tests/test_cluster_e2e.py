"""Issue 4's proof: we cluster tables Apache Hudi wrote (and tables our append writer wrote); Apache Hudi and
hudi-rs read exactly the same rows before and after, see the new layout, and Apache Hudi keeps writing."""

from __future__ import annotations

import pytest

from hudi_cluster_core.api import cluster
from hudi_cluster_core.table import load_table
from hudi_cluster_core.writer.append import append
from tests.support.apache_hudi import (
    assert_upsert_found_keys, completed_instants, hudi_show_clustering, hudi_upsert, make_small_file_table,
    make_updates, read_hudi_incremental, read_hudi_snapshot, small_file_rows,
)  # fmt: skip
from tests.support.readers import assert_same_rows, hudi_rs_file_slices, read_hudi_rs

SORT = {"hoodie.clustering.plan.strategy.sort.columns": "c_int,ts"}


def snapshot(spark, base):
    return {"hudi": read_hudi_snapshot(spark, base), "hudi-rs": read_hudi_rs(base)}


def assert_clustered_like_hudi(spark, base, before, result):
    """Same rows for both readers, replaced groups hidden, fewer (or equal) files, Hudi lists it COMPLETED."""
    after = snapshot(spark, base)
    for reader in ("hudi", "hudi-rs"):
        assert_same_rows(before[reader], after[reader], labels=(f"{reader} before", f"{reader} after"))
    slices = hudi_rs_file_slices(base)
    replaced = {fid for group in result.groups for fid in group["input_file_ids"]}
    assert not replaced & {s["file_id"] for s in slices}, "a replaced file group is still visible"
    ours = load_table(base).view().latest_file_slices()
    assert sorted(s.file_id for s in ours) == sorted(s["file_id"] for s in slices)
    states = {c.instant: c.state for c in hudi_show_clustering(spark, base)}
    assert states.get(result.instant_time) == "COMPLETED", states
    return after


COW_FIXTURES = ["cow_v6_nonpartitioned", "cow_v6_timebasedkeygen_nonhivestyle", "cow_v8_nonpartitioned", "cow_v9_txns_simple_overwrite"]
MOR_FIXTURES = ["mor_v6_trips_8i1u", "mor_v9_txns_nonpart_nometa", "mor_v9_nonpartitioned_rollback"]


@pytest.mark.parametrize("name", COW_FIXTURES + MOR_FIXTURES)
def test_fixture_clustered_copy_reads_the_same(spark, table_copy, name):
    base = table_copy(name)
    before = snapshot(spark, base)
    files_before = len(hudi_rs_file_slices(base))
    config = load_table(base).config
    keeps_mdt = config.version >= 8 and "files" in config.metadata_partitions
    result = cluster(base, "scheduleAndExecute", spark=spark)
    assert result.instant_time and result.completed_file
    assert_clustered_like_hudi(spark, base, before, result)
    assert len(hudi_rs_file_slices(base)) <= files_before
    # v8+ tables with a files partition keep the metadata table and every index it has (issue 11); others have none
    after = load_table(base)
    assert after.storage.exists(after.storage.join(".hoodie", "metadata")) == keeps_mdt
    assert after.config.metadata_partitions == (config.metadata_partitions if keeps_mdt else ())


@pytest.mark.parametrize("version", [6, 9])
def test_hudi_written_small_files_cluster_then_hudi_upserts_with_bloom_index(spark, tmp_path, version):
    base = str(tmp_path / f"hudi_v{version}")
    rows = make_small_file_table(spark, base, batches=6, rows_per_batch=40, table_version=version)
    before = snapshot(spark, base)
    files_before = len(hudi_rs_file_slices(base))
    last_write = completed_instants(base)[-1]
    result = cluster(base, "scheduleAndExecute", SORT, spark=spark)
    after = assert_clustered_like_hudi(spark, base, before, result)
    assert len(hudi_rs_file_slices(base)) < files_before
    # commit times are kept: an incremental query after the last write sees nothing new
    assert read_hudi_incremental(spark, base, last_write).num_rows == 0
    assert_same_rows(read_hudi_incremental(spark, base, "000").drop_columns(["_hoodie_file_name"]),
                     after["hudi"].drop_columns(["_hoodie_file_name"]))  # fmt: skip
    updates = make_updates(rows.slice(0, 25))
    stats = hudi_upsert(spark, base, updates, table_version=version)
    assert_upsert_found_keys(spark, base, updates, stats, rows_before=rows.num_rows)
    assert_same_rows(read_hudi_snapshot(spark, base), read_hudi_rs(base), labels=("hudi", "hudi-rs"))


@pytest.mark.parametrize("version", [6, 9])
def test_append_writer_tables_are_valid_and_cluster(spark, tmp_path, version):
    base = str(tmp_path / f"appended_v{version}")
    written = []
    for batch in range(5):
        rows = small_file_rows(batch * 30, 30, seed=version)
        append(base, rows, table_name=f"appended_v{version}", record_key="id", partition_field="region",
               precombine_field="ts", table_version=version)  # fmt: skip
        written.append(rows)
    before = snapshot(spark, base)
    assert before["hudi"].num_rows == before["hudi-rs"].num_rows == 150
    assert_same_rows(before["hudi"], before["hudi-rs"], labels=("hudi", "hudi-rs"))
    result = cluster(base, "scheduleAndExecute", SORT, spark=spark)
    assert_clustered_like_hudi(spark, base, before, result)
    updates = make_updates(written[0].slice(0, 10))
    stats = hudi_upsert(spark, base, updates, table_version=version)
    assert_upsert_found_keys(spark, base, updates, stats, rows_before=150)
