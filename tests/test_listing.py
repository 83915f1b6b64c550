"""The table's listing (issue 20.6): the file-system view reads the metadata table's ``files`` partition where the
table has one (as Apache Hudi's readers do), else storage, once per run; footers only when a strategy asks.

* On tables Apache Hudi 1.1.1 wrote (archived, MOR with log files, an insert_overwrite, a rollback, writes in flight
  or failed before their commit and then rolled back by Hudi, with our clustering pending, after its commit and the
  Hudi clean that follows it), the view over
  the MDT listing gives exactly the file slices the view over storage's listing gives, and the MDT listing equals
  Hudi's own (``HoodieBackedTableMetadata.getAllFilesInPartition``).
* An MDT some writer left behind the data timeline is not trusted: storage is listed instead, with a warning.
* Planning lists each partition at most once (one recursive listing of the table, or none with an MDT), asks
  storage for no file size and reads no footer for a size-based plan; a whole run lists the plan's partitions
  once more, at the commit (writers that came during the run).
* Footers: tests/test_footer_stats.py.
"""

from __future__ import annotations

import logging
import shutil
from collections import Counter
from pathlib import Path

import pytest

from hudi_cluster_core.api import cluster
from hudi_cluster_core.io.storage import Storage, requests
from hudi_cluster_core.plan.footer_stats import FOOTER_THREADS
from hudi_cluster_core.table import load_table
from hudi_cluster_core.table.listing import MetadataTableListing, StorageListing, table_listing
from tests.support.apache_hudi import (
    hudi_upsert, make_small_file_table, make_updates, small_file_rows, timeline_dir, write_hudi_table,
)  # fmt: skip
from tests.support.archived_tables import ARCHIVAL_OPTIONS
from tests.support.hudi_metadata import hudi_listing
from tests.support.runs import orders_table

OPTIONS = {"hoodie.clustering.plan.strategy.sort.columns": "c_int"}
# Hudi 1.1.1 builds column_stats and partition_stats beside files by default; the files partition is what is read
MDT_ONLY_FILES = {"hoodie.metadata.index.column.stats.enable": "false", "hoodie.metadata.index.partition.stats.enable": "false"}


# ----------------------------------------------------------------------------------------------------- helpers
def _views(base: str):
    table = load_table(base)
    mdt = MetadataTableListing(table.storage, table.config, table.timeline)
    return table, table.view(StorageListing(table.storage, table.config)), table.view(mdt), mdt


def _group_ids(view) -> set[tuple[str, str]]:
    return {(p, file_id) for p in view.partitions for file_id in view._group_files(p)}


def assert_same_view(base: str, spark=None) -> None:
    """The view over the MDT's files partition is the view over storage: partitions, every file group's slices
    (sizes included), the latest slices, the file groups of writes in flight; and (with ``spark``) the MDT
    listing is Apache Hudi's own."""
    table, by_storage, by_mdt, mdt = _views(base)
    assert by_mdt.partitions == by_storage.partitions
    assert mdt.source == "metadata table", "the MDT listing fell back to storage"
    assert by_mdt.latest_file_slices() == by_storage.latest_file_slices()
    groups = _group_ids(by_storage)
    assert _group_ids(by_mdt) == groups and groups
    for partition, file_id in sorted(groups):
        assert by_mdt.file_slices(partition, file_id) == by_storage.file_slices(partition, file_id), (partition, file_id)
    assert by_mdt.pending_write_file_groups() == by_storage.pending_write_file_groups()
    if spark is not None:
        for partition in by_mdt.partitions:
            ours = {entry.name: entry.size for entry in mdt.files(partition)}
            assert ours == hudi_listing(spark, base, partition), f"Hudi's own MDT listing of {partition!r}"


def _copy(source: str, tmp_path: Path, name: str = "t") -> str:
    target = tmp_path / name
    shutil.copytree(source, target)
    return str(target)


def _unfinish(base: str, instant: str, *, mdt_too: bool = False) -> None:
    """Make the completed write ``instant`` a write that died before its commit (after its MDT deltacommit, or
    with ``mdt_too`` before that too): its completed instant files go, its requested and inflight files stay."""
    for directory in [timeline_dir(base)] + ([Path(base, ".hoodie/metadata/.hoodie/timeline")] if mdt_too else []):
        done = [p for p in Path(directory).iterdir() if p.name.startswith(f"{instant}_")]
        assert len(done) == 1, (directory, instant)
        done[0].unlink()


# --------------------------------------------------------------------------- the MDT listing equals storage's
@pytest.fixture(scope="module")
def mor_mdt(spark, tmp_path_factory) -> str:
    """A MOR v9 table Apache Hudi wrote with its metadata table: 3 insert commits, then an upsert into log files."""
    base = str(tmp_path_factory.mktemp("mor_mdt") / "t")
    written = make_small_file_table(spark, base, batches=3, rows_per_batch=12, table_type="MERGE_ON_READ",
                                    metadata_enable=True)  # fmt: skip
    hudi_upsert(spark, base, make_updates(written.slice(0, 8), tag="late"), extra_options={"hoodie.compact.inline": "false"})
    return base


def test_an_archived_table_lists_the_same_through_the_mdt(spark, hudi_tables):
    """Most of its commits archived (on the data timeline and the MDT's): the MDT is in step all the same."""
    base = hudi_tables.copy("cow_v9_mdt", "listing")
    assert len(load_table(base).timeline.completed()) < 12, "commits were archived"
    assert_same_view(base, spark)


def test_a_mor_table_with_log_files_lists_the_same_through_the_mdt(spark, mor_mdt, tmp_path):
    base = _copy(mor_mdt, tmp_path)
    table, by_storage, _, _ = _views(base)
    assert any(s.log_files for s in by_storage.latest_file_slices()), "the upsert wrote log files"
    assert_same_view(base, spark)


@pytest.mark.parametrize("name", ["cow_v9_txns_simple_overwrite", "mor_v9_nonpartitioned_rollback"])
def test_fixture_tables_list_the_same_through_the_mdt(spark, table_copy, name):
    """An insert_overwrite (a replacecommit that is no clustering), and a non-partitioned MOR table with a rollback."""
    assert_same_view(table_copy(name), spark)


@pytest.mark.parametrize("mdt_too", [False, True], ids=["died-after-its-mdt-deltacommit", "died-before-it"])
def test_writes_in_flight_or_failed_are_listed_by_neither_until_hudi_rolls_them_back(spark, mor_mdt, tmp_path, mdt_too):
    """A write in flight and one that died look the same on storage (an inflight instant, its files): both views
    leave its files out. Hudi's next write rolls the failed one back (its default EAGER policy), in the MDT too, and
    the views still agree."""
    base = _copy(mor_mdt, tmp_path)
    no_compaction = {"hoodie.compact.inline": "false"}
    failed = hudi_upsert(spark, base, make_updates(small_file_rows(0, 12), tag="failed"), extra_options=no_compaction).instant
    _unfinish(base, failed, mdt_too=mdt_too)
    table, by_storage, by_mdt, mdt = _views(base)
    assert table.timeline.get(failed).state.name == "INFLIGHT"
    in_flight = by_storage.pending_write_file_groups()
    assert in_flight and set(in_flight.values()) == {failed}, "the failed write's files are on storage"
    assert all(failed not in name for p in by_mdt.partitions for name in (e.name for e in mdt.files(p)))
    assert_same_view(base, spark)

    hudi_upsert(spark, base, make_updates(small_file_rows(12, 6), tag="next"), extra_options=no_compaction)
    table, by_storage, _, _ = _views(base)
    assert table.timeline.get(failed) is None, "Hudi rolled the failed write back"
    assert [i for i in table.timeline.completed(("rollback",)) if i.time > failed], "a rollback instant completed"
    assert not by_storage.pending_write_file_groups()
    # Hudi 1.1.1's rollback here (no markers left: the write had completed) leaves the failed write's log files on
    # storage (observed); its instant is off the timeline, so no view counts them
    stored = {e.name for p in by_storage.partitions for e in by_storage.listing.stored_files(p)}
    assert [name for name in stored if failed in name], "the failed write's files are still on storage"
    sliced = {f.name for s in by_storage.latest_file_slices() for f in (*s.log_files, *([s.base_file] if s.base_file else []))}
    assert not [name for name in sliced if failed in name]
    assert_same_view(base, spark)


def test_with_our_clustering_pending_then_committed_and_a_hudi_clean_after_it(spark, hudi_tables, tmp_path):
    base = hudi_tables.copy("cow_v9_mdt", "after-ours")
    scheduled = cluster(base, "schedule", OPTIONS)
    assert load_table(base).timeline.pending_clustering, "our plan is pending"
    assert_same_view(base)
    result = cluster(base, "execute", OPTIONS)
    assert result.completed_file and result.input_file_groups > 1 and result.instant_time == scheduled.instant_time
    assert_same_view(base, spark)
    # Hudi's next writes clean the file groups our replacecommit replaced (the MDT records the deletions)
    for n in range(3):
        write_hudi_table(spark, base, small_file_rows(50_000 + 12 * n, 12), operation="insert", extra_options=ARCHIVAL_OPTIONS)
    replaced = set(result.groups[0]["input_file_ids"])
    _, by_storage, _, _ = _views(base)
    assert not {f for _, f in _group_ids(by_storage)} & replaced, "Hudi's clean removed the replaced file groups"
    assert_same_view(base, spark)


def test_an_mdt_behind_the_data_timeline_is_not_trusted(spark, mor_mdt, tmp_path, caplog):
    """A data commit whose MDT deltacommit is gone (a writer that did not keep the MDT and did not drop it)."""
    base = _copy(mor_mdt, tmp_path)
    latest = load_table(base).timeline.completed()[-1].time
    mdt_done = [p for p in Path(base, ".hoodie/metadata/.hoodie/timeline").iterdir() if p.name.startswith(f"{latest}_")]
    mdt_done[0].unlink()
    table, by_storage, by_mdt, mdt = _views(base)
    with caplog.at_level(logging.WARNING):
        slices = by_mdt.latest_file_slices()
    assert mdt.source == "storage"
    assert any(latest in r.getMessage() and "listing storage instead" in r.getMessage() for r in caplog.records)
    assert slices == by_storage.latest_file_slices()


# ------------------------------------------------------------------------------------- requests per run
class _Calls:
    """Every Storage.list (directory, recursive) and Storage.info path made while installed."""

    def __init__(self, monkeypatch):
        self.lists: list[tuple[str, bool]] = []
        self.infos: list[str] = []
        real_list, real_info = Storage.list, Storage.info

        def list_(storage, directory, recursive=False):
            self.lists.append((directory.rstrip("/"), recursive))
            return real_list(storage, directory, recursive)

        def info(storage, path):
            self.infos.append(path)
            return real_info(storage, path)

        monkeypatch.setattr(Storage, "list", list_)
        monkeypatch.setattr(Storage, "info", info)

    def reset(self) -> None:
        self.lists.clear()
        self.infos.clear()

    def of_partitions(self, base: str, partitions) -> Counter:
        """How often each partition's files were listed: by a listing of its folder, or a recursive one above it."""
        counts: Counter = Counter()
        for directory, recursive in self.lists:
            for partition in partitions:
                folder = f"{base}/{partition}"
                if directory == folder or (recursive and (folder + "/").startswith(directory + "/")):
                    counts[partition] += 1
        return counts


def test_planning_lists_each_partition_once_and_asks_no_size(tmp_path, monkeypatch):
    base = orders_table(tmp_path / "orders")
    partitions = sorted(p.name for p in Path(base).iterdir() if p.is_dir() and not p.name.startswith("."))
    assert len(partitions) == 3
    calls = _Calls(monkeypatch)
    with requests.counting() as counted:  # no sort columns: no files-per-query prediction either (it reads footers)
        result = cluster(base, "schedule", {}, dry_run=True)
    assert result.input_file_groups == 18 and result.bytes_rewritten > 0 and not result.files_per_query
    assert calls.of_partitions(base, partitions) == Counter(dict.fromkeys(partitions, 1)), calls.lists
    assert [d for d, recursive in calls.lists if recursive] == [base], "one recursive listing of the table"
    data_files = [p for p in calls.infos if p.endswith(".parquet") or ".log." in p]
    assert data_files == [], "sizes come from the listing, not a request per file"
    # the output estimate reads each base file's footer by ranged requests, never opening a file, once for the
    # plan's numOutputFileGroups and the dry run's predicted files and bytes together; a footer larger than the
    # first guess (Hudi's bloom filter makes them ~430 KB) takes a second request until one such footer was met
    base_files = 18
    assert "open" not in counted and base_files <= counted.get("range", 0) <= base_files + FOOTER_THREADS, counted

    # scheduling for real: the plan is checked against the same listing (the timeline moved by our instant alone)
    calls.reset()
    scheduled = cluster(base, "schedule", OPTIONS)
    assert calls.of_partitions(base, partitions) == Counter(dict.fromkeys(partitions, 1)), calls.lists
    assert scheduled.bytes_rewritten == result.bytes_rewritten


def test_a_whole_run_lists_the_plan_partitions_once_more_at_the_commit(spark, tmp_path, monkeypatch):
    base = orders_table(tmp_path / "orders")
    partitions = sorted(p.name for p in Path(base).iterdir() if p.is_dir() and not p.name.startswith("."))
    calls = _Calls(monkeypatch)
    # no sort columns: with them the result measures files per query on the new files, listing the plan's
    # partitions once more after the commit (a figure of the result, not what the run needs)
    result = cluster(base, "scheduleAndExecute", {})
    assert result.completed_file and {g["partition"] for g in result.groups} == set(partitions)
    # planning: one recursive listing of the table; the commit: each plan partition alone (writers during the run)
    assert calls.of_partitions(base, partitions) == Counter(dict.fromkeys(partitions, 2)), calls.lists
    assert [d for d, recursive in calls.lists if recursive and "/.hoodie" not in d] == [base]
    assert [p for p in calls.infos if p.endswith(".parquet")] == [], "input sizes come from the listing"


def test_with_a_metadata_table_planning_lists_no_partition(spark, mor_mdt, tmp_path, monkeypatch):
    base = _copy(mor_mdt, tmp_path)
    partitions = load_table(base).view().partitions
    calls = _Calls(monkeypatch)
    result = cluster(base, "schedule", OPTIONS, dry_run=True)
    assert result.input_file_groups > 0
    assert calls.of_partitions(base, partitions) == Counter(), calls.lists
    files_folder = [d for d, _ in calls.lists if d == f"{base}/.hoodie/metadata/files"]
    assert files_folder == [f"{base}/.hoodie/metadata/files"], "the MDT's files partition is listed once"


# ----------------------------------------------------------------------------------- one listing per table object
def test_a_table_read_again_keeps_its_listing_while_the_timeline_stands_still(tmp_path):
    base = orders_table(tmp_path / "orders", commits=2, files_per_partition=1)
    table = load_table(base)
    listing = table.view().listing
    assert table.view().listing is listing and table.listing is listing
    assert table.reload().listing is listing, "nothing changed: the listing is handed on"
    requested = Path(table.timeline.directory, "20990101000000000.clustering.requested")
    requested.write_bytes(b"")
    assert table.reload().listing is not listing, "another instant appeared: the table is listed again"
    assert table.reload(own_instants=("20990101000000000",)).listing is listing, "our own pending instant"
    Path(table.timeline.directory, "20990101000000000_20990101000000001.replacecommit").write_bytes(b"{}")
    assert table.reload(own_instants=("20990101000000000",)).listing is not listing, "ours completed: its files count"
    narrowed = table.view(partitions=["us"])
    assert narrowed.listing is not listing and narrowed.partitions == ["us"]
    assert table_listing(table.storage, table.config, table.timeline).source == "storage"
