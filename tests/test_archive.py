"""Archived commits: the view sees the whole timeline, the archive reader, ``show --archived``.

Tables come from ``tests/support/archived_tables.py``: Apache Hudi 1.1.1 wrote 12 insert commits (3 partitions,
one new file group per partition and commit) with archival keeping 3-4 commits active, so the base files of most
file groups belong to archived commits. Before the view followed Hudi's committed-ness rule for archived instants
it saw only the file groups of the active commits (12 of 36).
"""

from __future__ import annotations

import json
import posixpath
import shutil
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_cluster_core.api import cluster
from hudi_cluster_core.cli import main as cli_main
from hudi_cluster_core.errors import TableError
from hudi_cluster_core.table import State, load_table
from hudi_cluster_core.table.archive import ArchivedTimeline, load_archived_timeline
from tests.support.apache_hudi import hudi_schedule_and_execute, read_hudi_snapshot
from tests.support.archived_tables import (
    INSERT_COMMITS, KINDS, LATE_INSERTS, PARTITIONS, WHOLE_TABLE_CLUSTERING, TableBuilder, insert_rows,
    slices_as_hudi_rs, snapshot_file_groups,
)  # fmt: skip
from tests.support.readers import assert_same_rows, hudi_rs_file_slices, read_hudi_rs

# the record-index table is the crash campaign's: with the record index Hudi archives less (6 of 12 commits stay active)
ALL_KINDS = [name for name, kind in KINDS.items() if not kind.record_index]


@pytest.fixture(scope="module")
def builder(hudi_tables) -> TableBuilder:
    return hudi_tables  # built once per session, shared with the race and crash tests


def archive_of(path: str) -> ArchivedTimeline:
    table = load_table(path)
    return load_archived_timeline(table.storage, table.config)


@dataclass(frozen=True)
class Reads:
    hudi: object  # pa.Table from Apache Hudi's snapshot read
    hudi_rs: object  # pa.Table from hudi-rs


@pytest.fixture(scope="module")
def reads_before(builder, spark):
    cache: dict[str, Reads] = {}

    def get(name: str) -> Reads:
        if name not in cache:
            path = builder.table(name)
            cache[name] = Reads(read_hudi_snapshot(spark, path), read_hudi_rs(path))
        return cache[name]

    return get


@dataclass(frozen=True)
class Clustered:
    ours: str  # copy clustered by hudi-cluster
    hudi: str  # copy clustered by Apache Hudi
    instant: str  # our clustering's instant
    replaced: dict  # partition -> file ids our clustering replaced


@pytest.fixture(scope="module")
def clustered(builder, spark):
    """Each table clustered twice, on separate copies: by us and by Apache Hudi, same sizes (whole table)."""
    cache: dict[str, Clustered] = {}

    def get(name: str) -> Clustered:
        if name not in cache:
            ours, theirs = builder.copy(name, "ours"), builder.copy(name, "hudi")
            result = cluster(ours, "scheduleAndExecute", WHOLE_TABLE_CLUSTERING, spark=spark)
            assert result.instant_time, result.message
            assert hudi_schedule_and_execute(spark, theirs, WHOLE_TABLE_CLUSTERING), "Apache Hudi clustered nothing"
            table = load_table(ours)
            completed = next(i for i in table.timeline.completed(("replacecommit",)) if i.time == result.instant_time)
            replaced = table.timeline.commit_metadata(completed)["partitionToReplaceFileIds"]
            cache[name] = Clustered(ours, theirs, result.instant_time, replaced)
        return cache[name]

    return get


def expected_file_groups(name: str) -> int:
    inserts = INSERT_COMMITS + (LATE_INSERTS if KINDS[name].late_upserts else 0)
    return inserts * PARTITIONS


# ------------------------------------------------------------------------------------------------ the view


@pytest.mark.parametrize("name", ALL_KINDS)
def test_archive_holds_most_of_the_history(builder, name):
    path = builder.table(name)
    table = load_table(path)
    archived = archive_of(path).completed()
    active = table.timeline.completed()
    assert len(archived) >= 7, f"archival moved only {len(archived)} writes"
    assert len(active) <= 5
    assert max(i.time for i in archived) < active[0].time
    assert not {i.time for i in archived} & {i.time for i in table.timeline.instants}


@pytest.mark.parametrize("name", ALL_KINDS)
def test_view_sees_file_groups_of_archived_commits_like_both_readers(builder, reads_before, name):
    path = builder.table(name)
    table = load_table(path)
    ours = table.view().latest_file_slices()
    assert slices_as_hudi_rs(ours) == hudi_rs_file_slices(path)
    assert len(ours) == expected_file_groups(name)
    assert {(s.partition, s.file_id) for s in ours} == snapshot_file_groups(reads_before(name).hudi)
    active = {i.time for i in table.timeline.instants}
    archived_bases = [s for s in ours if s.base_instant not in active]
    assert len(archived_bases) >= len(ours) // 2, "most base files should belong to archived commits"
    assert all(s.base_file for s in ours), "no log-only slice: every file group has its base file"


def test_late_upserts_land_on_base_files_of_archived_commits(builder):
    path = builder.table("mor_v9_late_upserts")
    table = load_table(path)
    active = {i.time for i in table.timeline.instants}
    with_logs = [s for s in table.view().latest_file_slices() if s.log_files]
    assert len(with_logs) == 2 * PARTITIONS  # rows of the first two commits were updated
    assert all(s.base_instant not in active and s.base_file for s in with_logs)
    logs = [log for s in with_logs for log in s.log_files]
    assert any(log.instant not in active for log in logs), "the first upsert's deltacommit should be archived"
    assert any(log.instant in active for log in logs)
    archived_deltacommits = {i.time for i in archive_of(path).completed(("deltacommit",))}
    assert {log.instant for log in logs if log.instant not in active} <= archived_deltacommits


def _one_ms_later(instant: str) -> str:
    from datetime import datetime, timedelta

    moment = datetime.strptime(instant, "%Y%m%d%H%M%S%f") + timedelta(milliseconds=1)
    return moment.strftime("%Y%m%d%H%M%S%f")[:17]


def test_a_log_of_an_archived_deltacommit_joins_the_slice_its_completion_time_picks(builder):
    """A compaction (here: a base file) begun while the archived upsert was in flight, and done without its log:
    the log belongs on top of it, as its completion time says (Hudi's rule, the archive's completion time)."""
    path = Path(builder.copy("mor_v9_late_upserts", "archived-log-completion"))
    table = load_table(str(path))
    active = {i.time for i in table.timeline.instants}
    completed = {i.time: i.completion_time for i in archive_of(str(path)).completed(("deltacommit",))}
    archived_log, older_slice = next((log, s) for s in table.view().latest_file_slices() for log in s.log_files
                                     if log.instant not in active)  # fmt: skip
    begun = _one_ms_later(archived_log.instant)
    assert archived_log.instant < begun < completed[archived_log.instant] < min(active)
    base = path / older_slice.partition / older_slice.base_file.name
    compacted = base.with_name(base.name.replace(older_slice.base_instant, begun))
    shutil.copyfile(base, compacted)

    (latest,) = [s for s in load_table(str(path)).view().latest_file_slices() if s.file_id == older_slice.file_id]
    assert latest.base_instant == begun and latest.base_file.name == compacted.name
    assert archived_log.name in [log.name for log in latest.log_files]


@pytest.mark.parametrize("name", ALL_KINDS)
def test_whole_table_clustering_reads_the_same_and_matches_hudi(spark, reads_before, clustered, name, record_property):
    before = reads_before(name)
    result = clustered(name)
    replaced = sum(len(ids) for ids in result.replaced.values())
    assert replaced == expected_file_groups(name), "every file group, archived commit or not, is rewritten"
    for path in (result.ours, result.hudi):
        assert_same_rows(before.hudi, read_hudi_snapshot(spark, path), labels=("hudi before", f"hudi {path}"))
        assert_same_rows(before.hudi_rs, read_hudi_rs(path), labels=("hudi-rs before", f"hudi-rs {path}"))
    ours_after, hudi_after = hudi_rs_file_slices(result.ours), hudi_rs_file_slices(result.hudi)
    record_property("file_slices_before", expected_file_groups(name))
    record_property("files_after_ours", len(ours_after))
    record_property("files_after_hudi", len(hudi_after))
    print(f"{name}: {expected_file_groups(name)} file slices -> ours {len(ours_after)}, Apache Hudi {len(hudi_after)}")
    assert len(ours_after) == len(hudi_after) == PARTITIONS
    assert slices_as_hudi_rs(load_table(result.ours).view().latest_file_slices()) == ours_after


# ------------------------------------------------------------------------------------------ archive reader


def test_v6_archive_is_read_from_hudi_log_files(builder):
    path = builder.table("cow_v6")
    table = load_table(path)
    archive = archive_of(path)
    assert archive.directory == str(Path(path) / ".hoodie" / "history")  # 1.x writes v6 archives there
    sources = {posixpath.basename(i.source) for i in archive.instants}
    assert sources and all(s.startswith(".commits_.archive.") for s in sources)
    visible = {s.file_id for s in table.view().latest_file_slices()}
    for instant in archive.instants:
        assert (instant.action, instant.state) == ("commit", State.COMPLETED)
        assert instant.completion_time and instant.completion_time > instant.time
        meta = archive.commit_metadata(instant)
        assert meta["operationType"] == "INSERT"
        written = {s["fileId"] for stats in meta["partitionToWriteStats"].values() for s in stats}
        assert len(written) == PARTITIONS and written <= visible
    assert archive.completed_clustering == []


@pytest.mark.parametrize("name", ["cow_v9", "mor_v9"])
def test_v9_archive_is_read_from_the_lsm_history(builder, name):
    path = builder.table(name)
    archive = archive_of(path)
    assert archive.directory == str(Path(path) / ".hoodie" / "timeline" / "history")
    assert all(i.source.endswith(".parquet") for i in archive.instants)
    action = "commit" if KINDS[name].table_type == "COPY_ON_WRITE" else "deltacommit"
    visible = {s.file_id for s in load_table(path).view().latest_file_slices()}
    for instant in archive.instants:
        assert instant.action == action and instant.completion_time > instant.time
        meta = archive.commit_metadata(instant)
        written = {s["fileId"] for stats in meta["partitionToWriteStats"].values() for s in stats}
        assert meta["operationType"] == "INSERT" and len(written) == PARTITIONS and written <= visible


def test_lsm_history_without_version_file_uses_the_highest_manifest(builder):
    path = builder.copy("cow_v9", "no-version")
    expected = [(i.time, i.completion_time) for i in archive_of(path).instants]
    (Path(path) / ".hoodie" / "timeline" / "history" / "_version_").unlink()
    assert [(i.time, i.completion_time) for i in archive_of(path).instants] == expected


CORRUPTIONS = {
    "truncated": lambda data: data[:2000],
    "no magic": lambda data: b"#JUNK#" + data[6:],
    "bad schema": lambda data: data.replace(b'{"type":"record"', b'{"type":"rec0rd"', 1),
    "garbage": lambda data: data[:8] + b"\x00garbage" * 10,
}


@pytest.mark.parametrize(
    "name, pattern, corruption",
    [
        ("cow_v6", ".commits_.archive.*", "truncated"),
        ("cow_v6", ".commits_.archive.*", "no magic"),
        ("cow_v6", ".commits_.archive.*", "bad schema"),
        ("cow_v9", "*.parquet", "garbage"),
    ],
)
def test_a_corrupt_archive_file_is_a_table_error_naming_it(builder, name, pattern, corruption):
    path = builder.copy(name, "corrupt")
    history = Path(path) / ".hoodie" / ("history" if name == "cow_v6" else "timeline/history")
    victim = sorted(history.glob(pattern))[0]
    victim.write_bytes(CORRUPTIONS[corruption](victim.read_bytes()))
    with pytest.raises(TableError, match=victim.name):
        archive_of(path).instants
    # the view does not need the archive
    assert len(load_table(path).view().latest_file_slices()) == expected_file_groups(name)


def test_lsm_metadata_is_read_only_when_asked(builder):
    path = builder.copy("cow_v9", "bad-metadata")
    victim = sorted((Path(path) / ".hoodie" / "timeline" / "history").glob("*.parquet"))[0]
    rows = pq.read_table(victim)
    garbage = pa.array([b"Obj\x01 not a container"] * rows.num_rows, pa.binary())
    pq.write_table(rows.set_column(rows.schema.get_field_index("metadata"), "metadata", garbage), victim)
    archive = archive_of(path)
    assert len(archive.completed()) >= 7  # listing reads instant columns only
    with pytest.raises(TableError, match=victim.name):
        archive.commit_metadata(next(i for i in archive.instants if i.source == str(victim)))


def test_a_corrupt_lsm_manifest_is_a_table_error_naming_it(builder):
    path = builder.copy("cow_v9", "bad-manifest")
    history = Path(path) / ".hoodie" / "timeline" / "history"
    manifest = history / f"manifest_{(history / '_version_').read_text().strip()}"
    manifest.write_text("{not json")
    with pytest.raises(TableError, match=manifest.name):
        archive_of(path).instants


def test_a_table_never_archived_has_an_empty_archive(builder, spark, tmp_path):
    path = str(tmp_path / "fresh")
    insert_rows(spark, path, 0)
    assert archive_of(path).instants == ()
    assert archive_of(path).completed_clustering == []


# --------------------------------------------------------------------------------------- show --archived


def _show(capsys, *argv: str) -> str:
    assert cli_main(["show", *argv]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("name", ["cow_v6", "cow_v9"])
def test_show_archived_lists_our_clustering_after_hudi_archived_it(builder, clustered, spark, capsys, name):
    done = clustered(name)
    path = str(builder.root / "copies" / f"{name}-archive-clustering")
    shutil.copytree(done.ours, path)
    for n in range(3):  # Hudi cleans the replaced files, then archives our replacecommit
        insert_rows(spark, path, 50_000 + 100 * n)
    table = load_table(path)
    assert done.instant not in {i.time for i in table.timeline.instants}, "Hudi did not archive the clustering"

    archive = archive_of(path)
    assert [i.time for i in archive.completed_clustering] == [done.instant]
    plan = archive.clustering_plan(archive.completed_clustering[0])
    planned = {s["fileId"] for group in plan["clusteringPlan"]["inputGroups"] for s in group["slices"]}
    assert planned == {fid for ids in done.replaced.values() for fid in ids}

    layout = json.loads(_show(capsys, path, "--archived", "--json"))
    assert layout["archived_completed_clustering"] == [done.instant]
    assert layout["completed_clustering"] == []
    assert "archived_completed_clustering" not in json.loads(_show(capsys, path, "--json"))
    assert f"archived completed clustering: {done.instant}" in _show(capsys, path, "--archived")
    assert "archived completed clustering" not in _show(capsys, path)
    # show --clustering: the archived clustering with its plan's groups and partitions and the bytes it wrote
    (listed,) = json.loads(_show(capsys, path, "--clustering", "--json"))
    written = sum(s["fileSizeInBytes"] for stats in archive.commit_metadata(archive.completed_clustering[0])
                  ["partitionToWriteStats"].values() for s in stats)  # fmt: skip
    assert listed == {"instant_time": done.instant, "state": "completed", "archived": True,
                      "groups": len(plan["clusteringPlan"]["inputGroups"]), "partitions": 3, "bytes_written": written,
                      "input_bytes": None} and written > 0  # fmt: skip
    assert f"{done.instant}  completed (archived)" in _show(capsys, path, "--clustering")
    # and the view still agrees with hudi-rs once the replacecommit left the active timeline
    assert slices_as_hudi_rs(table.view().latest_file_slices()) == hudi_rs_file_slices(path)
    assert_same_rows(read_hudi_snapshot(spark, path), read_hudi_rs(path), labels=("hudi", "hudi-rs"))


def test_show_archived_without_archived_clustering(builder, capsys):
    layout = json.loads(_show(capsys, builder.table("cow_v9"), "--archived", "--json"))
    assert layout["archived_completed_clustering"] == []
    assert len(layout["file_slices"]) == expected_file_groups("cow_v9")
