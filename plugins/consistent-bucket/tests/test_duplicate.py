"""Apache Hudi 1.1.1 writes beside our pending consistent-bucket resize with Hudi's duplicate update strategy
(``SparkConsistentBucketDuplicateUpdateStrategy``): each record bound to a bucket under resize goes to the old bucket
and, as a log file named with the clustering's instant, to its new bucket. Readers don't see those copies while the
resize is pending; the resize then commits (the write duplicated everything it wrote into the old buckets, so
nothing is lost) and the copies merge on top of the new base files. A write that did not duplicate still wins."""

from __future__ import annotations

from pathlib import Path

import pytest
from cb_tables import file_id_of, only_keys
from test_bucket_writer import ROWS, SPLIT, _U, _pending_split
from test_end_to_end import OURS, both_readers, rings

from hudi_cluster_core.api import cluster
from hudi_cluster_core.errors import WriteConflict
from hudi_cluster_core.table import load_table
from tests.support.apache_hudi import hudi_upsert, make_updates, small_file_rows

def _upsert(spark, base, first: int, count: int, tag: str, strategy: str):
    rows = make_updates(small_file_rows(first, count), tag=tag)
    return hudi_upsert(spark, base, rows, index_type="BUCKET",
                       extra_options={**SPLIT, "hoodie.clustering.updates.strategy": _U + strategy})  # fmt: skip


def test_a_write_that_duplicated_into_the_new_buckets_lets_the_resize_commit(spark, tmp_path):
    base = str((tmp_path / "dup").resolve())
    pending = _pending_split(spark, base)
    old_rings = rings(base)
    stats = _upsert(spark, base, 1000, 400, "dup", "SparkConsistentBucketDuplicateUpdateStrategy")
    assert stats.num_inserts == 0 and stats.num_update_writes == 800  # 400 into the old buckets, 400 copies
    copies = sorted(p.name for p in Path(base).glob(f"*/.*_{pending}.log.*") if not p.name.endswith(".crc"))
    assert copies and not set(n.split("_")[0].lstrip(".") for n in copies) & {
        n.file_id for r in old_rings.values() for n in r.nodes}  # the copies are in the new buckets only
    before = both_readers(spark, base)  # copies are invisible while the resize is pending: no duplicate keys
    assert before.num_rows == ROWS
    updated = only_keys(before, [f"k{n:06d}" for n in range(1000, 1400)])  # the old buckets hold the update
    assert set(updated["c_string"].to_pylist()) == {f"dup-k{n:06d}" for n in range(1000, 1400)}

    result = cluster(base, "execute", {**SPLIT, **OURS}, spark=spark)
    assert result.message == "completed" and result.instant_time == pending
    after = both_readers(spark, base)  # no duplicate keys (checked), the same rows, every update kept
    assert after.num_rows == ROWS
    changed = only_keys(after, [f"k{n:06d}" for n in range(1000, 1400)])
    assert set(changed["c_string"].to_pylist()) == {f"dup-k{n:06d}" for n in range(1000, 1400)}
    new_rings = rings(base)
    for key, partition, name in zip(after["_hoodie_record_key"].to_pylist(), after["_hoodie_partition_path"].to_pylist(),
                                    after["_hoodie_file_name"].to_pylist()):  # fmt: skip
        assert file_id_of(name) == new_rings[partition].bucket_of_key(key, ["id"]).file_id
    # Apache Hudi writes on: its upsert finds every key in the new buckets
    stats = _upsert(spark, base, 0, 200, "later", "SparkConsistentBucketDuplicateUpdateStrategy")
    assert stats.num_inserts == 0 and stats.num_update_writes == 200
    assert both_readers(spark, base).num_rows == ROWS


def test_a_write_that_did_not_duplicate_still_wins(spark, tmp_path):
    base = str((tmp_path / "allow").resolve())
    pending = _pending_split(spark, base)
    stats = _upsert(spark, base, 1000, 100, "allowed", "SparkAllowUpdateStrategy")
    assert stats.num_update_writes == 100
    with pytest.raises(WriteConflict, match="the writer wins"):
        cluster(base, "execute", {**SPLIT, **OURS}, spark=spark)
    assert load_table(base).timeline.get(pending) is None or not load_table(base).timeline.get(pending).is_completed
    after = both_readers(spark, base)
    changed = only_keys(after, [f"k{n:06d}" for n in range(1000, 1100)])
    assert set(changed["c_string"].to_pylist()) == {f"allowed-k{n:06d}" for n in range(1000, 1100)}
