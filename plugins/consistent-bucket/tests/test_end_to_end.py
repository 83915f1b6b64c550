"""Apache Hudi 1.1.1 writes a consistent-hashing bucket MOR table; hudi-cluster resizes it (split, then merge);
hudi-rs and Apache Hudi read the same rows throughout, and Apache Hudi's writer routes later upserts to the new
buckets' file groups (so it accepted the hashing metadata we wrote). Finally Apache Hudi's own planner and executor
resize the table again, on top of our metadata."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import fastavro
import pyarrow as pa
from cb_tables import KB, bucket_options, file_id_of, hashing_metadata, only_keys, write_bucket_table

from hudi_cluster_consistent_bucket.hashing import (
    CHILD_NODE_KEY, INIT_INSTANT, PARTITION_KEY, SEQUENCE_NO_KEY, Ring, list_metadata_files,
)  # fmt: skip
from hudi_cluster_consistent_bucket.execution import write_new_metadata
from hudi_cluster_core.api import cluster
from hudi_cluster_core.plan.avro_plan import read_plan
from hudi_cluster_core.table import load_table
from hudi_cluster_core.io.storage import Storage
from tests.support.apache_hudi import (
    hudi_execute_clustering, hudi_schedule_clustering, hudi_upsert, make_updates, read_hudi_snapshot, small_file_rows,
    timeline_dir,
)  # fmt: skip
from tests.support.readers import assert_same_rows, hudi_rs_file_slices, read_hudi_rs

PARTITIONS = ("apac", "eu", "us")
ROWS = 6000
SPLIT = bucket_options(2, 20 * KB, **{"hoodie.bucket.index.max.num.buckets": 8, "hoodie.bucket.index.min.num.buckets": 1})
MERGE = bucket_options(2, 100 << 20, **{"hoodie.bucket.index.max.num.buckets": 8, "hoodie.bucket.index.min.num.buckets": 1})
OURS = {"hoodie.clustering.plan.strategy.class": "consistent-bucket",
        "hoodie.clustering.execution.strategy.class": "consistent-bucket"}  # fmt: skip


def both_readers(spark, base) -> pa.Table:
    """hudi-rs's rows, after checking Apache Hudi reads the same (all columns but _hoodie_file_name), no dupes."""
    ours, theirs = read_hudi_rs(base), read_hudi_snapshot(spark, base)
    assert_same_rows(ours, theirs, labels=("hudi-rs", "Apache Hudi"))
    keys = Counter(ours["_hoodie_record_key"].to_pylist())
    assert not [k for k, n in keys.items() if n > 1], "duplicate keys"
    return ours


def rings(base) -> dict[str, Ring]:
    return {p: Ring(hashing_metadata(base, p).nodes) for p in PARTITIONS}


def assert_rows_in_their_buckets(table: pa.Table, by_partition: dict[str, Ring]) -> None:
    for key, partition, name in zip(table["_hoodie_record_key"].to_pylist(), table["_hoodie_partition_path"].to_pylist(),
                                    table["_hoodie_file_name"].to_pylist()):  # fmt: skip
        assert file_id_of(name) == by_partition[partition].bucket_of_key(key, ["id"]).file_id, (partition, key, name)


def plan_record(base, instant: str) -> dict:
    path = timeline_dir(base) / f"{instant}.clustering.requested"
    return next(iter(fastavro.reader(io.BytesIO(path.read_bytes()))))


def upsert_and_check(spark, base, keys_from: int, count: int, tag: str, expected_rings: dict[str, Ring]) -> None:
    """An Apache Hudi upsert of existing keys lands in the buckets of ``expected_rings``, found by the index."""
    updates = make_updates(small_file_rows(keys_from, count), tag=tag)
    stats = hudi_upsert(spark, base, updates, index_type="BUCKET", extra_options=SPLIT)
    assert stats.num_inserts == 0 and stats.num_update_writes == count, stats
    after = both_readers(spark, base)
    assert after.num_rows == ROWS
    changed = only_keys(after, [f"k{n:06d}" for n in range(keys_from, keys_from + count)])
    assert set(changed["c_string"].to_pylist()) == {f"{tag}-k{n:06d}" for n in range(keys_from, keys_from + count)}
    assert_rows_in_their_buckets(changed, expected_rings)  # the updated records live in the new buckets' groups
    written = {p.rsplit("/", 1)[-1].lstrip(".").split("_", 1)[0] for p in stats.files}
    assert written <= {n.file_id for r in expected_rings.values() for n in r.nodes}, written


def test_split_merge_and_hudi_writes_on_top(spark, tmp_path):
    base = str((tmp_path / "bucket_mor").resolve())
    write_bucket_table(spark, base, small_file_rows(0, ROWS), options=SPLIT)
    write_bucket_table(spark, base, make_updates(small_file_rows(0, 600), tag="first"), options=SPLIT)
    before = both_readers(spark, base)
    slices = hudi_rs_file_slices(base)
    assert len(slices) == 6 and all(s["base_file"] is None and len(s["log_files"]) == 2 for s in slices)
    initial = rings(base)

    # ---- 1. split: every bucket (~170 KB of logs) is above 2 x 20 KB, room for 6 more buckets per partition
    # a 64 KiB task budget: each bucket's rows (streamed from its logs) spill to disk per child before writing
    result = cluster(base, "scheduleAndExecute", {**SPLIT, **OURS, "hudi.cluster.task.memory.bytes": "65536"}, spark=spark)
    split_at = result.instant_time
    assert result.message == "completed" and result.input_file_groups == 6 and result.output_files == 12
    record = plan_record(base, split_at)
    assert record["clusteringPlan"]["strategy"]["strategyClassName"].endswith("SparkConsistentBucketClusteringExecutionStrategy")
    # no params of the strategy's own, as Apache Hudi's plan; beside them the target the plan was scheduled with
    # (a job setting stored so that the plan executes as scheduled; Hudi ignores params its strategy does not read)
    assert list(record["clusteringPlan"]["strategy"]["strategyParams"]) == ["hoodie.clustering.plan.strategy.target.file.max.bytes"]
    for group in record["clusteringPlan"]["inputGroups"]:
        assert group["numOutputFileGroups"] == 2 and group["extraMetadata"][SEQUENCE_NO_KEY] == "0"
        assert group["extraMetadata"][PARTITION_KEY] == group["slices"][0]["partitionPath"]
        assert group["slices"][0]["dataFilePath"] == "" and len(group["slices"][0]["deltaFilePaths"]) == 2
    assert_same_rows(before, both_readers(spark, base))
    split_rings = rings(base)
    for partition in PARTITIONS:
        meta = hashing_metadata(base, partition)
        assert (meta.instant, meta.seq_no, meta.num_buckets) == (split_at, 1, 2)
        assert [n.value for n in meta.nodes] == [536870911, 1073741824, 1610612735, 2147483647]
        assert {n.tag for n in meta.nodes} == {"NORMAL"}
        assert not set(n.file_id for n in meta.nodes) & set(initial[partition].by_file_id)
        assert split_at not in list_metadata_files(Storage(base), partition).committed  # no <T>.commit from us
    assert_rows_in_their_buckets(read_hudi_rs(base), split_rings)
    # execution_before_commit is idempotent: run again for the committed plan, it rewrites the same bytes
    table = load_table(base)
    plan = read_plan(table.storage, split_at, table.timeline.clustering_plan(split_at), source="plan")
    meta_file = Path(base, ".hoodie/.bucket_index/consistent_hashing_metadata/us", f"{split_at}.hashing_meta")
    written = meta_file.read_bytes()
    write_new_metadata(table, plan, [])
    assert meta_file.read_bytes() == written
    files = sorted(p.name for p in Path(base).glob("*/*.parquet"))
    assert len(files) == 12 and all(f.endswith(f"_{split_at}.parquet") and f.split("_")[0].endswith("-0") for f in files)

    # ---- 2. Apache Hudi upserts existing keys: they go to the new buckets' file groups
    upsert_and_check(spark, base, 3000, 900, "second", split_rings)
    for partition in PARTITIONS:  # Hudi's writer took our metadata as committed and marked it itself
        assert split_at in list_metadata_files(Storage(base), partition).committed
        assert INIT_INSTANT in list_metadata_files(Storage(base), partition).committed
    before_merge = both_readers(spark, base)

    # ---- 3. merge: with a 100 MB max file size every bucket is small; down to min.num.buckets=1 per partition
    result = cluster(base, "scheduleAndExecute", {**MERGE, **OURS}, spark=spark)
    merge_at = result.instant_time
    assert result.input_file_groups == 12 and result.output_files == 3
    record = plan_record(base, merge_at)
    for group in record["clusteringPlan"]["inputGroups"]:
        assert group["numOutputFileGroups"] == 1 and len(group["slices"]) == 4
        assert group["extraMetadata"][SEQUENCE_NO_KEY] == "1"
        assert [n["tag"] for n in json.loads(group["extraMetadata"][CHILD_NODE_KEY])] == [
            "DELETE", "DELETE", "DELETE", "REPLACE"]
    assert_same_rows(before_merge, both_readers(spark, base))
    merged_rings = rings(base)
    for partition in PARTITIONS:
        meta = hashing_metadata(base, partition)
        assert (meta.instant, meta.seq_no, len(meta.nodes)) == (merge_at, 2, 1)
    assert_rows_in_their_buckets(read_hudi_rs(base), merged_rings)
    upsert_and_check(spark, base, 100, 1200, "third", merged_rings)

    # ---- 4. Apache Hudi's own planner and executor resize again, from our metadata (seqNo 2)
    hudi_options = {**SPLIT, "hoodie.datasource.write.recordkey.field": "id", "hoodie.bucket.index.hash.field": "id",
                    "hoodie.clustering.plan.strategy.class":
                        "org.apache.hudi.client.clustering.plan.strategy.SparkConsistentBucketClusteringPlanStrategy",
                    "hoodie.clustering.execution.strategy.class":
                        "org.apache.hudi.client.clustering.run.strategy.SparkConsistentBucketClusteringExecutionStrategy"}  # fmt: skip
    before_hudi = both_readers(spark, base)
    hudi_at = hudi_schedule_clustering(spark, base, hudi_options)
    assert hudi_at is not None
    groups = plan_record(base, hudi_at)["clusteringPlan"]["inputGroups"]
    assert {g["extraMetadata"][SEQUENCE_NO_KEY] for g in groups} == {"2"}
    assert {g["slices"][0]["fileId"] for g in groups} == {n.file_id for r in merged_rings.values() for n in r.nodes}
    assert hudi_execute_clustering(spark, base, hudi_at, hudi_options) == [hudi_at]
    assert_same_rows(before_hudi, both_readers(spark, base))
    for partition in PARTITIONS:
        meta = hashing_metadata(base, partition)
        assert (meta.instant, meta.seq_no, len(meta.nodes)) == (hudi_at, 3, 2)
    assert_rows_in_their_buckets(read_hudi_rs(base), rings(base))


def test_non_partitioned_complex_key_hashed_on_a_subset(spark, tmp_path):
    """Record key ``id,c_int`` hashed on ``c_int`` only: a run without the writers' hash field is refused before
    anything commits; with it, rows land in their buckets and Apache Hudi's upsert finds every key."""
    base = str((tmp_path / "complex").resolve())
    options = bucket_options(2, 8 * KB, **{"hoodie.bucket.index.max.num.buckets": 8,
                                           "hoodie.bucket.index.hash.field": "c_int"})  # fmt: skip
    write_bucket_table(spark, base, small_file_rows(0, 2000), options=options, record_key="id,c_int", partitioned=False)
    before = both_readers(spark, base)

    without = {k: v for k, v in options.items() if k != "hoodie.bucket.index.hash.field"}
    try:
        cluster(base, "scheduleAndExecute", {**without, **OURS}, spark=spark)
    except Exception as error:  # noqa: BLE001 - the task's PlanError arrives wrapped by Spark
        assert "does not hash into its bucket" in str(error)
        assert "rolled back" in str(error)  # a run that fails rolls its own instant back
    else:
        raise AssertionError("clustering with the wrong hash fields was not refused")
    assert_same_rows(before, both_readers(spark, base))
    assert load_table(base).timeline.pending_clustering == []  # the refused run rolled its own instant back

    result = cluster(base, "scheduleAndExecute", {**options, **OURS}, spark=spark)
    assert result.message == "completed" and result.rolled_back == () and result.output_files == 4
    assert_same_rows(before, both_readers(spark, base))
    meta = hashing_metadata(base, "")
    assert (meta.partition_path, meta.seq_no, len(meta.nodes)) == ("", 1, 4)
    ring = Ring(meta.nodes)
    rows = read_hudi_rs(base)
    for key, name in zip(rows["_hoodie_record_key"].to_pylist(), rows["_hoodie_file_name"].to_pylist()):
        assert file_id_of(name) == ring.bucket_of_key(key, ["c_int"]).file_id
    updates = make_updates(small_file_rows(0, 500), tag="complex")
    stats = hudi_upsert(spark, base, updates, index_type="BUCKET", record_key="id,c_int", extra_options=options)
    assert stats.num_inserts == 0 and stats.num_update_writes == 500
    after = both_readers(spark, base)
    assert after.num_rows == 2000
    for key, name in zip(after["_hoodie_record_key"].to_pylist(), after["_hoodie_file_name"].to_pylist()):
        assert file_id_of(name) == ring.bucket_of_key(key, ["c_int"]).file_id
