"""Our MOR upsert into a consistent-hashing bucket table (``hoodie.index.type=BUCKET``, engine CONSISTENT_HASHING):
records go by hash to their bucket's file group as Avro log blocks; Apache Hudi and hudi-rs read them, Apache
Hudi's upsert finds every key after. Beside a pending resize the update strategy decides: ``reject`` writes
nothing, ``allow`` makes the resize yield, ``duplicate`` also writes each record into its bucket after the resize,
and the resize then commits with every update kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from cb_tables import KB, bucket_options, file_id_of, only_keys, write_bucket_table
from test_end_to_end import OURS, both_readers, rings

from hudi_cluster_core.api import cluster
from hudi_cluster_core.errors import UpdateRejected, WriteConflict
from hudi_cluster_core.writer.ingest import upsert
from hudi_cluster_core.table import load_table
from tests.support.apache_hudi import hudi_upsert, make_updates, read_hudi_snapshot, small_file_rows

_U = "org.apache.hudi.client.clustering.update.strategy."
SPLIT = bucket_options(2, 20 * KB, **{"hoodie.bucket.index.max.num.buckets": 8, "hoodie.bucket.index.min.num.buckets": 1})
ROWS = 3000


def _table(spark, base) -> None:
    write_bucket_table(spark, base, small_file_rows(0, ROWS), options=SPLIT)
    write_bucket_table(spark, base, make_updates(small_file_rows(0, 300), tag="first"), options=SPLIT)


def _keys(first: int, count: int) -> list[str]:
    return [f"k{n:06d}" for n in range(first, first + count)]


def assert_in_buckets(table, by_partition) -> None:
    for key, partition, name in zip(table["_hoodie_record_key"].to_pylist(), table["_hoodie_partition_path"].to_pylist(),
                                    table["_hoodie_file_name"].to_pylist()):  # fmt: skip
        assert file_id_of(name) == by_partition[partition].bucket_of_key(key, ["id"]).file_id, (partition, key, name)


def validated_files(spark, base: str, name: str) -> list[dict]:
    """Apache Hudi's ``validate_metadata_table_files`` on the table (a catalog table ``name`` for the call)."""
    spark.sql(f"create table {name} using hudi location '{base}'")
    try:
        return [r.asDict() for r in spark.sql(f"call validate_metadata_table_files(table => '{name}', verbose => true)").collect()]
    finally:
        spark.sql(f"drop table {name}")


def our_upsert(base, first: int, count: int, tag: str, strategy: str | None = None, **more):
    rows = make_updates(small_file_rows(first, count), tag=tag)
    options = {**SPLIT, **more}
    if strategy:
        options["hoodie.clustering.updates.strategy"] = _U + strategy
    return upsert(base, rows, options)


def test_updates_and_inserts_land_in_their_buckets_and_hudi_writes_on(spark, tmp_path):
    base = str((tmp_path / "cb").resolve())
    _table(spark, base)
    buckets = rings(base)
    summary = our_upsert(base, 2800, 400, "ours")  # 200 updates, 200 inserts
    assert summary["rows"] == 400 and summary["duplicated"] == 0
    instant = summary["instant_time"]
    assert (Path(base, ".hoodie/timeline") / f"{instant}.deltacommit.requested").exists()
    logs = [p.name for p in Path(base).glob(f"*/.*_{instant}.log.1_*")]
    assert logs and {n.lstrip(".").split("_")[0] for n in logs} <= {n.file_id for r in buckets.values() for n in r.nodes}
    after = both_readers(spark, base)
    assert after.num_rows == ROWS + 200
    changed = only_keys(after, _keys(2800, 400))
    assert set(changed["c_string"].to_pylist()) == {f"ours-{k}" for k in _keys(2800, 400)}
    assert_in_buckets(after, buckets)
    # Apache Hudi's upsert on top: its index finds every key, its reads merge our log blocks
    stats = hudi_upsert(spark, base, make_updates(small_file_rows(2900, 300), tag="hudi"), index_type="BUCKET",
                        extra_options=SPLIT)  # fmt: skip
    assert stats.num_inserts == 0 and stats.num_update_writes == 300
    final = both_readers(spark, base)
    assert final.num_rows == ROWS + 200
    assert set(only_keys(final, _keys(2800, 100))["c_string"].to_pylist()) == {f"ours-{k}" for k in _keys(2800, 100)}
    assert set(only_keys(final, _keys(2900, 300))["c_string"].to_pylist()) == {f"hudi-{k}" for k in _keys(2900, 300)}


def _pending_split(spark, base) -> str:
    _table(spark, base)
    result = cluster(base, "schedule", {**SPLIT, **OURS}, spark=spark)
    assert result.instant_time
    return result.instant_time


def test_duplicate_writes_both_buckets_and_the_resize_keeps_every_update(spark, tmp_path):
    base = str((tmp_path / "dup").resolve())
    pending = _pending_split(spark, base)
    old = rings(base)
    summary = our_upsert(base, 1000, 400, "dup", "SparkConsistentBucketDuplicateUpdateStrategy")
    assert summary["duplicated"] == 400  # every bucket is under the resize
    copies = [p.name for p in Path(base).glob(f"*/.*_{pending}.log.*")]
    assert copies and not {n.lstrip(".").split("_")[0] for n in copies} & {n.file_id for r in old.values() for n in r.nodes}
    before = both_readers(spark, base)  # the copies stay hidden while the resize is pending: no duplicate keys
    assert before.num_rows == ROWS
    assert set(only_keys(before, _keys(1000, 400))["c_string"].to_pylist()) == {f"dup-{k}" for k in _keys(1000, 400)}

    result = cluster(base, "execute", {**SPLIT, **OURS}, spark=spark)
    assert result.message == "completed" and result.instant_time == pending
    after = both_readers(spark, base)
    assert after.num_rows == ROWS
    assert set(only_keys(after, _keys(1000, 400))["c_string"].to_pylist()) == {f"dup-{k}" for k in _keys(1000, 400)}
    assert_in_buckets(after, rings(base))
    # both writers go on in the new buckets
    our_upsert(base, 0, 100, "again")
    # (Hudi's writer may compact here, over our log blocks: the datasource's async compaction runs inline)
    hudi_upsert(spark, base, make_updates(small_file_rows(100, 100), tag="hudi"), index_type="BUCKET", extra_options=SPLIT)
    final = both_readers(spark, base)
    assert final.num_rows == ROWS
    assert set(only_keys(final, _keys(0, 100))["c_string"].to_pylist()) == {f"again-{k}" for k in _keys(0, 100)}
    assert set(only_keys(final, _keys(100, 100))["c_string"].to_pylist()) == {f"hudi-{k}" for k in _keys(100, 100)}
    assert_in_buckets(final, rings(base))


def test_reject_writes_nothing_and_allow_makes_the_resize_yield(spark, tmp_path):
    base = str((tmp_path / "policies").resolve())
    pending = _pending_split(spark, base)
    files = sorted(p.name for p in Path(base).rglob("*") if p.is_file())
    with pytest.raises(UpdateRejected, match="Not allowed to update the clustering file group"):
        our_upsert(base, 1000, 50, "rejected", "SparkRejectUpdateStrategy")
    assert sorted(p.name for p in Path(base).rglob("*") if p.is_file()) == files  # nothing written
    our_upsert(base, 1000, 50, "allowed", "SparkAllowUpdateStrategy")
    with pytest.raises(WriteConflict, match="the writer wins"):
        cluster(base, "execute", {**SPLIT, **OURS}, spark=spark)
    timeline = load_table(base).timeline
    assert timeline.pending() == [] and timeline.get(pending) is None
    after = both_readers(spark, base)
    assert after.num_rows == ROWS
    assert set(only_keys(after, _keys(1000, 50))["c_string"].to_pylist()) == {f"allowed-{k}" for k in _keys(1000, 50)}


def test_a_killed_write_is_undone_by_the_next_and_readers_never_see_it(spark, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import textwrap

    base = str((tmp_path / "killed").resolve())
    _table(spark, base)
    before = both_readers(spark, base)
    script = textwrap.dedent(f"""
        from hudi_cluster_core.writer.ingest import upsert
        from tests.support.apache_hudi import make_updates, small_file_rows
        upsert({base!r}, make_updates(small_file_rows(0, 500), tag="killed"), {SPLIT!r})
    """)  # fmt: skip
    env = {**os.environ, "HUDI_CLUSTER_FAILPOINT": "write-after-files"}
    killed = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300,
                            cwd=Path(__file__).resolve().parents[3])  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    (dead,) = [i for i in load_table(base).timeline.pending()]
    assert dead.action == "deltacommit"
    written = list(Path(base).glob(f"*/.*_{dead.time}.log.*"))
    assert written
    assert both_readers(spark, base).equals(before)  # a pending deltacommit's logs are not read

    our_upsert(base, 0, 100, "next")  # the dead writer's process is gone: its instant is undone first
    assert load_table(base).timeline.pending() == []
    assert not any(p.exists() for p in written)
    after = both_readers(spark, base)
    assert after.num_rows == ROWS
    assert set(only_keys(after, _keys(0, 100))["c_string"].to_pylist()) == {f"next-{k}" for k in _keys(0, 100)}
    assert set(only_keys(after, _keys(100, 200))["c_string"].to_pylist()) == {f"first-{k}" for k in _keys(100, 200)}


def test_the_metadata_table_files_partition_is_kept_and_other_indexes_are_refused(spark, tmp_path):
    from hudi_cluster_core.errors import ConfigError

    # Hudi 1.1.1's defaults build column_stats and partition_stats: not kept for log records, so refused whole
    default = str((tmp_path / "default_mdt").resolve())
    write_bucket_table(spark, default, small_file_rows(0, 600), options={**SPLIT, "hoodie.metadata.enable": "true"})
    assert set(load_table(default).config.metadata_partitions) == {"files", "column_stats", "partition_stats"}
    with pytest.raises(ConfigError, match="column_stats, partition_stats, which this writer does not keep"):
        upsert(default, make_updates(small_file_rows(0, 10), tag="x"), {**SPLIT, "hoodie.metadata.enable": "true"})
    assert load_table(default).timeline.pending() == []

    base = str((tmp_path / "files_mdt").resolve())
    files_only = {**SPLIT, "hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "false",
                  "hoodie.metadata.index.partition.stats.enable": "false"}  # fmt: skip
    write_bucket_table(spark, base, small_file_rows(0, ROWS), options=files_only)
    assert load_table(base).config.metadata_partitions == ("files",)
    summary = upsert(base, make_updates(small_file_rows(0, 300), tag="mdt"), files_only)
    rows = validated_files(spark, base, "cb_files_mdt")
    assert rows and all(r["is_present_in_fs"] and r["is_present_in_metadata"] for r in rows), rows
    assert sum(summary["instant_time"] in r["file_name"] for r in rows) == summary["log_files"]
    after = read_hudi_snapshot(spark, base, {"hoodie.metadata.enable": "true"})
    assert after.num_rows == ROWS
    assert set(only_keys(after, _keys(0, 300))["c_string"].to_pylist()) == {f"mdt-{k}" for k in _keys(0, 300)}


def test_an_abandoned_resize_takes_the_copies_with_it(spark, tmp_path):
    """A duplicating write, then one that did not duplicate: the resize yields and is rolled back. Its copies are
    deleted with it (kept, they would read as committed once archival passes the resize's instant), the metadata
    table's ``files`` forgets them, and every row is still read once, with its last value."""
    base = str((tmp_path / "abandoned").resolve())
    files_only = {**SPLIT, "hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "false",
                  "hoodie.metadata.index.partition.stats.enable": "false"}  # fmt: skip
    write_bucket_table(spark, base, small_file_rows(0, ROWS), options=files_only)
    pending = cluster(base, "schedule", {**files_only, **OURS}, spark=spark).instant_time
    our_upsert(base, 1000, 200, "dup", "SparkConsistentBucketDuplicateUpdateStrategy", **files_only)
    copies = list(Path(base).glob(f"*/.*_{pending}.log.*"))
    assert copies
    our_upsert(base, 1100, 200, "allowed", "SparkAllowUpdateStrategy", **files_only)
    with pytest.raises(WriteConflict, match="the writer wins"):
        cluster(base, "execute", {**files_only, **OURS}, spark=spark)
    assert not any(p.exists() for p in copies)
    timeline = load_table(base).timeline
    assert timeline.pending() == [] and timeline.get(pending) is None
    rows = validated_files(spark, base, "cb_abandoned")
    assert rows and all(r["is_present_in_fs"] and r["is_present_in_metadata"] for r in rows), rows
    assert not [r for r in rows if pending in r["file_name"]]
    after = read_hudi_snapshot(spark, base, {"hoodie.metadata.enable": "true"})
    assert after.num_rows == ROWS and len(set(after["_hoodie_record_key"].to_pylist())) == ROWS
    assert set(only_keys(after, _keys(1000, 100))["c_string"].to_pylist()) == {f"dup-{k}" for k in _keys(1000, 100)}
    assert set(only_keys(after, _keys(1100, 200))["c_string"].to_pylist()) == {f"allowed-{k}" for k in _keys(1100, 200)}


def test_a_write_that_read_the_table_before_a_resize_and_its_clean_writes_no_key_twice(spark, tmp_path, monkeypatch):
    """Our bucket writer reads the table (its buckets' ring, their slices) before it begins its instant. Between
    the two, a resize completes, later writes follow, the cleaner deletes the file groups the resize replaced and
    archival takes its replacecommit off the active timeline: the write would route its records to the old
    buckets, and its log files would form file groups no replacecommit names, every key read twice. Apache Hudi's
    writer requests its instant before it reads; ours begins only if no clean began, and no instant it read was
    archived, since its read (else it reads the table again), as the COW upsert does."""
    from hudi_cluster_core.writer import bucket_upsert
    from tests.sim import archiver
    from tests.sim.cleaner import clean

    base = str((tmp_path / "stale").resolve())
    write_bucket_table(spark, base, small_file_rows(0, ROWS), options=SPLIT)
    monkeypatch.setattr(archiver, "MAX_COMMITS", 2)  # hoodie.keep.max.commits: archival past a single later write
    monkeypatch.setattr(archiver, "MIN_COMMITS", 1)
    begins = []
    begin = bucket_upsert.writing

    def others_go_on_then_begin(*args, **kwargs):
        begins.append(args[0].timeline)
        if len(begins) == 1:  # the writer stalls between its read of the table and its instant
            resize = cluster(base, "scheduleAndExecute", {**SPLIT, **OURS}, spark=spark)
            assert resize.instant_time and sum(len(r.nodes) for r in rings(base).values()) > 6, resize
            our_upsert(base, 2000, 10, "later")  # the resize is no longer the commit the cleaner retains
            assert clean(base) is not None
            assert resize.instant_time in archiver.archive(base)
        return begin(*args, **kwargs)

    monkeypatch.setattr(bucket_upsert, "writing", others_go_on_then_begin)
    our_upsert(base, 0, 100, "late")
    after = both_readers(spark, base)  # no key twice
    assert len(begins) == 3, "the later write began once, the stale write twice"
    assert after.num_rows == ROWS
    assert set(only_keys(after, _keys(0, 100))["c_string"].to_pylist()) == {f"late-{k}" for k in _keys(0, 100)}
    assert_in_buckets(after, rings(base))
