"""Our writers (issue 13): ``upsert()`` and ``hudi-cluster upsert``, and ``append``, on tables Apache Hudi 1.1.1
wrote (COW, partitioned, the metadata table on with every index we keep: one template for the module).

Our upsert's updates, precombine, small-file packing and inserts are read back by both readers (every key holds
its latest value); Apache Hudi's next upserts with the BLOOM index (its index reads our footers) and with the
RECORD_INDEX (our MDT deltacommit) find every key in place, with no duplicate and no MDT partition initialised.
With the small-file limit at 0 inserts go to new file groups and no file is rewritten. Bad input is one line,
exit 2, and the table is untouched. The update strategy is consulted (reject before writing, allow and the
clustering yields), a clustering that completes while the upsert writes wins, inline clustering runs after the
commit, and append keeps every index (Hudi finds the appended keys through data skipping and the record index).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from hudi_cluster_core.writer.ingest import upsert
from hudi_cluster_core.writer.append import append
from tests.support.apache_hudi import (
    SMALL_FILE_SCHEMA, assert_upsert_found_keys, hudi_upsert, instant_metadata, make_small_file_table, make_updates,
    read_hoodie_properties, read_hudi_snapshot, small_file_rows,
)  # fmt: skip
from tests.support.readers import assert_same_rows, read_hudi_rs
from tests.support.runs import error_lines
from tests.test_mdt_commit import _assert_listing_equals_storage
from tests.test_mdt_record_index import _init_files, _is_init, _mdt_timeline, _point_lookup, _record_index_of


# every index our commits keep; Hudi's writer drops an index its config does not enable, so its writes say them all
ALL_INDEXES = {
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.index.column.stats.enable": "true",
    "hoodie.metadata.index.partition.stats.enable": "true",
    "hoodie.metadata.index.bloom.filter.enable": "true",
    "hoodie.metadata.record.index.enable": "true",
}
INDEXES = {"files", "column_stats", "partition_stats", "bloom_filters", "record_index"}
RS_MDT = {"hoodie.metadata.enable": "true"}
SKIPPING = {**ALL_INDEXES, "hoodie.enable.data.skipping": "true"}


@pytest.fixture(scope="module")
def template(spark, tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("upsert") / "t"
    make_small_file_table(spark, str(base), batches=3, rows_per_batch=12, metadata_enable=True, extra_options=ALL_INDEXES)
    assert set(read_hoodie_properties(base)["hoodie.table.metadata.partitions"].split(",")) == INDEXES
    return base


def _copy(template: Path, tmp_path: Path) -> str:
    base = tmp_path / "t"
    shutil.copytree(template, base)
    return str(base)


def _data(snapshot: pa.Table) -> pa.Table:
    return snapshot.select(SMALL_FILE_SCHEMA.names).cast(SMALL_FILE_SCHEMA)


def _values(table: pa.Table) -> dict[str, tuple]:
    return {r["id"]: (r["ts"], r["c_string"]) for r in table.select(["id", "ts", "c_string"]).to_pylist()}


def _file_groups(base: str) -> dict[str, set[str]]:
    """partition -> file ids of the base files in storage."""
    found: dict[str, set[str]] = {}
    for path in Path(base).glob("*/*.parquet"):
        found.setdefault(path.parent.name, set()).add(path.name.split("_")[0])
    return found


def test_upsert_into_a_hudi_table_both_readers_and_hudi_find_every_key(spark, template, tmp_path):
    base = _copy(template, tmp_path)
    before = read_hudi_snapshot(spark, base)
    groups_before = _file_groups(base)
    init_before = {n for n in _mdt_timeline(base) if _is_init(n)}
    rli_init = _init_files(base, "record_index")
    rows = _data(before)
    newer = make_updates(rows.slice(0, 6), tag="ours")
    older = make_updates(rows.slice(6, 2), tag="stale", ts_bump=-1)  # a lower ordering value must not win
    inserts = small_file_rows(500, 10)
    batch = pa.concat_tables([newer, older, inserts])

    result = upsert(base, batch, {"hoodie.metadata.record.index.enable": "true"}, spark=spark)

    assert (result["updates"], result["inserts"], result["files_created"]) == (8, 10, 0), result
    meta = instant_metadata(base, result["instant_time"])
    assert meta["operationType"] == "UPSERT"
    stats = [s for part in meta["partitionToWriteStats"].values() for s in part]
    assert sum(s["numUpdateWrites"] for s in stats) == 8 and sum(s["numInserts"] for s in stats) == 10
    assert all(s["prevCommit"] not in ("null", None) for s in stats)  # every file group existed: rewritten once
    assert len({(s["partitionPath"], s["fileId"]) for s in stats}) == len(stats)
    # small-file packing: the inserts went into existing (small) file groups, no new file group appeared
    assert {p: ids for p, ids in _file_groups(base).items()} == groups_before

    expected = _values(rows)
    expected.update(_values(newer))
    expected.update(_values(inserts))
    hudi = read_hudi_snapshot(spark, base, ALL_INDEXES)
    assert _values(hudi) == expected
    assert hudi.num_rows == len(expected)
    assert_same_rows(read_hudi_rs(base, options=RS_MDT), hudi, labels=("hudi-rs", "Hudi"))
    assert set(read_hoodie_properties(base)["hoodie.table.metadata.partitions"].split(",")) == INDEXES
    _assert_listing_equals_storage(spark, base)

    # Apache Hudi's next upserts find every key in place, ours and theirs, with both indexes
    data = _data(hudi)
    for index_type, keys in (("BLOOM", pc.is_in(data["id"], value_set=pa.concat_arrays(
            [inserts["id"].combine_chunks(), newer["id"].combine_chunks()]))),
            ("RECORD_INDEX", pc.is_in(data["id"], value_set=batch["id"].combine_chunks()))):  # fmt: skip
        updates = make_updates(data.filter(keys), tag=index_type.lower())
        stats_hudi = hudi_upsert(spark, base, updates, index_type=index_type, extra_options=ALL_INDEXES)
        assert_upsert_found_keys(spark, base, updates, stats_hudi, rows_before=len(expected))
    assert not {n for n in _mdt_timeline(base) if _is_init(n)} - init_before, "a metadata partition was initialised"
    assert _init_files(base, "record_index") == rli_init
    assert_same_rows(read_hudi_rs(base, options=RS_MDT), read_hudi_snapshot(spark, base), labels=("hudi-rs", "Hudi"))


def test_small_file_limit_zero_writes_inserts_to_new_file_groups(spark, template, tmp_path):
    base = _copy(template, tmp_path)
    groups_before = _file_groups(base)
    files_before = {p.name for p in Path(base).glob("*/*.parquet")}
    inserts = small_file_rows(700, 9)
    result = upsert(base, inserts, {"hoodie.parquet.small.file.limit": "0"}, spark=spark)
    assert (result["updates"], result["inserts"], result["files_rewritten"]) == (0, 9, 0), result
    assert result["files_created"] == 3  # one new file group per partition
    after = _file_groups(base)
    for partition, ids in groups_before.items():
        assert ids < after[partition] and len(after[partition] - ids) == 1
    assert files_before < {p.name for p in Path(base).glob("*/*.parquet")}  # nothing rewritten or removed
    rs = read_hudi_rs(base, options=RS_MDT)
    assert set(inserts["id"].to_pylist()) <= set(rs["id"].to_pylist()) and rs.num_rows == 36 + 9


def _parquet(base: str) -> set[str]:
    return {str(p.relative_to(base)) for p in Path(base).glob("*/*.parquet")}


def _cli_upsert(base: str, rows: pa.Table, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    source = tmp_path / "batch.parquet"
    pq.write_table(rows, source)
    return subprocess.run([sys.executable, "-m", "hudi_cluster_core.cli", "upsert", "--base-path", base, "--input",
                           str(source), "--spark-master", "local[1]", *extra],
                          text=True, capture_output=True, timeout=600)  # fmt: skip


def _tree(base: str) -> dict[str, int]:
    return {str(p.relative_to(base)): p.stat().st_size for p in Path(base).rglob("*") if p.is_file()}


@pytest.mark.parametrize("case, change, words", [
    ("no record key", lambda t: t.drop_columns(["id"]), ["record key column 'id'", "columns:"]),
    ("wrong type", lambda t: t.set_column(2, "c_int", pa.array([f"x{i}" for i in range(t.num_rows)])),
     ["column 'c_int'", "int32"]),
    ("extra column", lambda t: t.append_column("surprise", pa.array([1] * t.num_rows)), ["'surprise'", "columns:"]),
])  # fmt: skip
def test_bad_input_is_one_line_exit_2_and_the_table_is_untouched(template, tmp_path, case, change, words):
    base = _copy(template, tmp_path)
    tree = _tree(base)
    run = _cli_upsert(base, change(small_file_rows(900, 4)), tmp_path)
    assert run.returncode == 2, run.stderr
    lines = error_lines(run.stderr)
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert all(w in lines[0] for w in words), lines[0]
    assert _tree(base) == tree


# ------------------------------------------------------------------ update strategies (issue 13, section 2)

SORT = {"hoodie.clustering.plan.strategy.sort.columns": "c_int"}
ALLOW = "org.apache.hudi.client.clustering.update.strategy.SparkAllowUpdateStrategy"


def _scheduled(base: str) -> tuple[str, set[str]]:
    """Schedule our clustering; returns its instant and the ``partition/file id`` of its input file groups."""
    from hudi_cluster_core.api import cluster
    from hudi_cluster_core.table import load_table

    instant = cluster(base, "schedule", SORT).instant_time
    assert instant
    pending = load_table(base).view().pending_clustering_file_groups()
    return instant, {f"{g.partition}/{g.file_id}" for g, t in pending.items() if t == instant}


def test_the_default_strategy_rejects_before_writing_and_names_the_file_groups(spark, template, tmp_path):
    from hudi_cluster_core.errors import ConfigError

    base = _copy(template, tmp_path)
    _, planned = _scheduled(base)
    snapshot = read_hudi_snapshot(spark, base).slice(0, 3)
    updates = make_updates(_data(snapshot), tag="rejected")
    touched = {f"{p}/{n.split('_')[0]}" for p, n in zip(snapshot["_hoodie_partition_path"].to_pylist(),
                                                       snapshot["_hoodie_file_name"].to_pylist())} & planned  # fmt: skip
    assert touched, "the updates go to file groups under the pending clustering"
    tree = _tree(base)
    run = _cli_upsert(base, updates, tmp_path)  # no strategy configured: Hudi's default, SparkRejectUpdateStrategy
    assert run.returncode == 1, run.stderr
    lines = error_lines(run.stderr)
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert {g for g in planned if g in lines[0]} == touched and "clustering" in lines[0], lines[0]
    assert _tree(base) == tree
    # consistent-bucket duplicate belongs to bucket-index writers: refused here, also before writing anything
    with pytest.raises(ConfigError, match="consistent-bucket"):
        upsert(base, updates, {"hoodie.clustering.updates.strategy": "consistent-bucket-duplicate"}, spark=spark)
    assert _tree(base) == tree


def test_allow_writes_and_the_clustering_then_yields_to_the_writer(spark, template, tmp_path):
    from hudi_cluster_core.api import cluster
    from hudi_cluster_core.errors import WriteConflict

    base = _copy(template, tmp_path)
    instant, planned = _scheduled(base)
    rows = _data(read_hudi_snapshot(spark, base))
    updates = make_updates(rows.slice(0, 30), tag="allowed")
    result = upsert(base, updates, {"hoodie.clustering.updates.strategy": ALLOW}, spark=spark)
    assert _written_groups(base, result["instant_time"]) & planned, "the upsert updated file groups under the pending clustering"

    with pytest.raises(WriteConflict, match="writer wins"):
        cluster(base, "execute", SORT, spark=spark, instant_time=instant)

    _assert_clustering_gone_and_no_update_lost(spark, base, instant, rows, updates)


def _written_groups(base: str, instant: str) -> set[str]:
    stats = instant_metadata(base, instant)["partitionToWriteStats"]
    return {f"{p}/{s['fileId']}" for p, st in stats.items() for s in st}


def _assert_clustering_gone_and_no_update_lost(spark, base: str, instant: str, rows: pa.Table, updates: pa.Table) -> None:
    from hudi_cluster_core.table import load_table

    timeline = load_table(base).timeline
    assert timeline.get(instant) is None and not timeline.pending(), [i.file_name for i in timeline.pending()]
    expected = _values(rows)
    expected.update(_values(updates))
    hudi = read_hudi_snapshot(spark, base, ALL_INDEXES)
    assert _values(hudi) == expected, "an update was lost"
    assert_same_rows(read_hudi_rs(base, options=RS_MDT), hudi, labels=("hudi-rs", "Hudi"))


def test_allow_with_rollback_on_conflict_rolls_the_pending_clustering_back_before_writing(spark, template, tmp_path):
    from hudi_cluster_core.table import load_table

    base = _copy(template, tmp_path)
    instant, planned = _scheduled(base)
    rows = _data(read_hudi_snapshot(spark, base))
    updates = make_updates(rows.slice(0, 30), tag="rolled")
    options = {"hoodie.clustering.updates.strategy": ALLOW,
               "hoodie.clustering.rollback.pending.replacecommit.on.conflict": "true"}  # fmt: skip
    result = upsert(base, updates, options, spark=spark)
    assert _written_groups(base, result["instant_time"]) & planned, "the upsert updated the clustering's file groups"
    assert [i for i in load_table(base).timeline.completed(("rollback",)) if i.time > instant], "a rollback records it"
    _assert_clustering_gone_and_no_update_lost(spark, base, instant, rows, updates)


# ------------------------------------------------------------------ inline clustering (issue 13, section 4)


def test_inline_clustering_runs_once_max_commits_landed_since_the_last_one(spark, template, tmp_path):
    from hudi_cluster_core.table import load_table

    base = _copy(template, tmp_path)  # three commits by Hudi, no clustering yet
    inline = {"hoodie.clustering.inline": "true", "hoodie.clustering.inline.max.commits": "5", **SORT}
    first = upsert(base, small_file_rows(800, 3), inline, spark=spark)
    assert first["clustering"] is None and not load_table(base).timeline.completed_clustering
    second = upsert(base, small_file_rows(810, 3), inline, spark=spark)
    clustering = second["clustering"]
    assert clustering and clustering["mode"] == "scheduleAndExecute" and clustering["message"] == "completed"
    timeline = load_table(base).timeline
    assert [i.time for i in timeline.completed_clustering] == [clustering["instant_time"]]
    assert clustering["instant_time"] > second["instant_time"] and not timeline.pending()
    third = upsert(base, small_file_rows(820, 3), inline, spark=spark)  # one commit since: nothing to do
    assert third["clustering"] is None
    hudi = read_hudi_snapshot(spark, base, ALL_INDEXES)
    assert hudi.num_rows == 36 + 9
    assert_same_rows(read_hudi_rs(base, options=RS_MDT), hudi, labels=("hudi-rs", "Hudi"))


def test_schedule_inline_only_schedules(spark, template, tmp_path):
    from hudi_cluster_core.table import load_table

    base = _copy(template, tmp_path)
    options = {"hoodie.clustering.schedule.inline": "true", "hoodie.clustering.async.max.commits": "4", **SORT}
    result = upsert(base, small_file_rows(900, 3), options, spark=spark)
    clustering = result["clustering"]
    assert clustering and clustering["mode"] == "schedule" and clustering["instant_time"]
    timeline = load_table(base).timeline
    assert [i.time for i in timeline.pending_clustering] == [clustering["instant_time"]]
    assert not timeline.completed_clustering


def test_a_clustering_that_completes_while_the_upsert_writes_wins_and_the_upsert_is_undone(spark, template, tmp_path):
    """The clustering commits between our tagging and our commit (run_units is where the writer hands out its work:
    the second call is the write); our commit then finds its file groups replaced, fails, and leaves nothing."""
    from hudi_cluster_core.api import cluster
    from hudi_cluster_core.errors import WriteConflict
    from hudi_cluster_core.table import load_table
    from hudi_cluster_core.writer.bloom_index import run_in_process
    from hudi_cluster_core.writer.upsert import upsert as write_upsert

    base = _copy(template, tmp_path)
    rows = _data(read_hudi_snapshot(spark, base))
    before = _parquet(base)
    calls: list[str] = []

    def clustering_first_then_write(units):
        calls.append("call")
        if len(calls) == 2:
            calls.append(cluster(base, "scheduleAndExecute", SORT, spark=spark).instant_time or "")
        return run_in_process(units)

    with pytest.raises(WriteConflict, match="a clustering replaced file group"):
        write_upsert(base, make_updates(rows.slice(0, 5), tag="late"), run_units=clustering_first_then_write)
    assert calls[2], "the clustering completed while the upsert ran"
    timeline = load_table(base).timeline
    assert not timeline.pending() and [i.time for i in timeline.completed_clustering] == [calls[2]]
    assert not list(Path(base, ".hoodie/.temp").glob("*")), "markers left behind"
    clustered = {s["path"] for st in instant_metadata(base, calls[2])["partitionToWriteStats"].values() for s in st}
    assert _parquet(base) == before | clustered, "a file of the failed upsert was left behind"
    hudi = read_hudi_snapshot(spark, base, ALL_INDEXES)
    assert _values(hudi) == _values(rows)
    assert_same_rows(read_hudi_rs(base, options=RS_MDT), hudi, labels=("hudi-rs", "Hudi"))


# ------------------------------------------------------------------ append keeps the metadata table (issue 13, step 1)


def test_append_keeps_every_index_and_hudi_finds_the_appended_keys(spark, template, tmp_path):
    base = _copy(template, tmp_path)
    before = read_hudi_snapshot(spark, base)
    init_before = {n for n in _mdt_timeline(base) if _is_init(n)}
    rli_init = _init_files(base, "record_index")
    appended = small_file_rows(1000, 9)

    instant = append(base, appended)["instant_time"]

    assert set(read_hoodie_properties(base)["hoodie.table.metadata.partitions"].split(",")) == INDEXES
    mdt_done = [n for n in _mdt_timeline(base) if n.startswith(f"{instant}_") and n.endswith(".deltacommit")]
    data_done = [p.name for p in Path(base, ".hoodie/timeline").glob(f"{instant}_*.commit")]
    assert len(mdt_done) == 1 and len(data_done) == 1, (mdt_done, data_done)
    assert mdt_done[0].split("_")[1].split(".")[0] < data_done[0].split("_")[1].split(".")[0]
    assert not list(Path(base, ".hoodie/.temp").glob(f"{instant}*")), "markers left behind"
    # the record index holds exactly the appended keys, each in the new file group holding it
    index = _record_index_of(base, instant)
    assert set(index) == set(appended["id"].to_pylist())
    stats = instant_metadata(base, instant)["partitionToWriteStats"]
    new_groups = {(p, s["fileId"]) for p, st in stats.items() for s in st}
    snapshot = read_hudi_snapshot(spark, base, ALL_INDEXES)
    assert snapshot.num_rows == before.num_rows + appended.num_rows
    for key, partition, name in zip(snapshot["_hoodie_record_key"].to_pylist(), snapshot["_hoodie_partition_path"].to_pylist(),
                                    snapshot["_hoodie_file_name"].to_pylist()):  # fmt: skip
        if key in index:
            assert (partition, name.split("_")[0]) in new_groups

    # both readers through the metadata table; Hudi with data skipping finds every appended key
    assert_same_rows(read_hudi_rs(base, options=RS_MDT), snapshot, labels=("hudi-rs", "Hudi"))
    for key in appended["id"].to_pylist()[::3]:
        rows, files = _point_lookup(spark, base, key, SKIPPING)
        assert [r["id"] for r in rows] == [key] and files == 1, (key, rows, files)
    _assert_listing_equals_storage(spark, base)

    # Hudi's next upsert with the record index finds appended and older keys in place, initialising nothing
    rows = pa.concat_tables([appended, before.select(SMALL_FILE_SCHEMA.names).cast(SMALL_FILE_SCHEMA).slice(0, 3)])
    updates = make_updates(rows, tag="rli")
    upsert = hudi_upsert(spark, base, updates, index_type="RECORD_INDEX", extra_options=ALL_INDEXES)
    assert_upsert_found_keys(spark, base, updates, upsert, rows_before=snapshot.num_rows)
    assert not {n for n in _mdt_timeline(base) if _is_init(n)} - init_before, "a metadata partition was initialised"
    assert _init_files(base, "record_index") == rli_init
    assert set(read_hoodie_properties(base)["hoodie.table.metadata.partitions"].split(",")) == INDEXES
    assert_same_rows(read_hudi_rs(base, options=RS_MDT), read_hudi_snapshot(spark, base), labels=("hudi-rs", "Hudi"))


def test_append_runs_inline_clustering_too(spark, template, tmp_path):
    from hudi_cluster_core.writer.ingest import append_file
    from hudi_cluster_core.table import load_table

    base = _copy(template, tmp_path)  # three commits by Hudi
    source = tmp_path / "rows.parquet"
    pq.write_table(small_file_rows(1100, 6), source)
    conf = ["hoodie.clustering.inline=true", "hoodie.clustering.inline.max.commits=4", f"{next(iter(SORT))}=c_int"]
    result = append_file(base, source, hoodie_conf=conf)
    clustering = result["clustering"]
    assert clustering and clustering["message"] == "completed", clustering
    timeline = load_table(base).timeline
    assert [i.time for i in timeline.completed_clustering] == [clustering["instant_time"]] and not timeline.pending()
    assert read_hudi_rs(base, options=RS_MDT).num_rows == 36 + 6


def test_with_hudis_lock_provider_our_upsert_takes_hudis_lock(spark, template, tmp_path):
    """OCC beside Apache Hudi writers (FileSystemBasedLockProvider): while Hudi's lock file is held our upsert waits
    ``wait_time_ms``, then stops with one error naming the file, having written nothing; once it is free the upsert
    commits and leaves no lock file behind."""
    from hudi_cluster_core.errors import HudiClusterError

    base = _copy(template, tmp_path)
    options = {"hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider",
               "hoodie.write.lock.wait_time_ms": "1500"}  # fmt: skip
    lock = Path(base, ".hoodie", "lock")
    lock.write_bytes(b"")  # what Hudi's provider leaves on local disk while it holds the lock
    tree = _tree(base)
    with pytest.raises(HudiClusterError) as held:
        upsert(base, small_file_rows(1200, 3), options, spark=spark)
    assert str(lock) in str(held.value) and "hoodie.write.lock.wait_time_ms" in str(held.value), held.value
    assert _tree(base) == tree
    lock.unlink()
    assert upsert(base, small_file_rows(1200, 3), options, spark=spark)["inserts"] == 3
    assert not lock.exists(), "our upsert left Hudi's lock file behind"
