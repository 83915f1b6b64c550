"""What a review of the commit protocol (issue 22) found, replayed deterministically on real files in one process:
the race each needs is made by running the other party's real code at the point where it would interleave.

* An upsert of ours began its instant; a clustering pending since before then completed, a clean deleted the
  file groups it replaced and archival moved its replacecommit out of the active timeline, all before the upsert
  committed. The commit's check read the active timeline only, so the log writer committed log files into a
  replaced file group: every key it updated then read twice (the clustering's copy, and the update). The commit
  now refuses once the archive holds an instant that may have completed while the write ran, and the write is
  read and done again.
"""

from __future__ import annotations

import uuid

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_cluster_core import javaprops
from hudi_cluster_core.api import cluster
from hudi_cluster_core.io.storage import Storage
from hudi_cluster_core.run import execute as core_execute
from hudi_cluster_core.table import load_table
from hudi_cluster_core.table.timeline import retry_when_timeline_changes
from hudi_cluster_core.writer import bucket_upsert
from hudi_cluster_core.writer.append import append
from tests.sim.archiver import archive
from tests.sim.cleaner import clean
from tests.sim.runtime import InProcessSpark, run_group_tasks_in_process
from tests.support.readers import read_hudi_rs

ARGS = {"table_name": "review", "record_key": "id", "partition_field": "region", "precombine_field": "ts",
        "heartbeat_ms": (1000, 2)}  # fmt: skip
SORT = {"hoodie.clustering.plan.strategy.sort.columns": "id"}


def _rows(start: int, count: int = 4, ts: int | None = None) -> pa.Table:
    ids = [f"k{n:03d}" for n in range(start, start + count)]
    return pa.table({"id": ids, "ts": pa.array([start if ts is None else ts] * count, pa.int64()),
                     "region": ["us", "eu"] * (count // 2)})  # fmt: skip


def _rows_read(base: str) -> list[tuple[str, int]]:
    return sorted((r["id"], r["ts"]) for r in read_hudi_rs(base).to_pylist())


def _declare_merge_on_read(base: str) -> None:
    """Our append writes COW tables; a COW table of base files is a MOR table's too once its properties say so."""
    storage = Storage(base)
    path = storage.join(".hoodie", "hoodie.properties")
    props = javaprops.parse(storage.read_bytes(path).decode("utf-8"))
    props["hoodie.table.type"] = "MERGE_ON_READ"
    storage.write_atomic(path, javaprops.dump(props).encode("utf-8"))


def _holding(table, partition: str, keys: list, after_clustering: str | None = None) -> list[str]:
    """The file group holding each key now (its latest base file), or a new one: a bucket index's routing."""
    where = {}
    for piece in table.view().latest_file_slices(partitions=[partition]):
        if piece.base_file is not None:
            path = table.storage.join(piece.relative_path(piece.base_file.name))
            with table.storage.fs.open_input_file(path) as handle:
                where.update({key: piece.file_id for key in pq.read_table(handle, columns=["id"])["id"].to_pylist()})
    new = f"{uuid.uuid4()}-0"
    return [where.get(key, new) for key in keys]


def test_a_log_write_under_which_a_clustering_completed_and_was_archived_commits_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(core_execute, "run_group_tasks", run_group_tasks_in_process)  # the clustering's Spark job
    base = str(tmp_path / "t")
    for start in (0, 4, 8):
        append(base, _rows(start), **ARGS)
    clustering = cluster(base, "schedule", SORT).instant_time  # pending when the upsert reads the table
    append(base, _rows(12), **ARGS)  # completed before the upsert begins: the clean may then pass the clustering
    _declare_merge_on_read(base)
    attempts = []

    def others_go_on_then_write(units):
        attempts.append(units[0].instant)
        if len(attempts) == 1:  # the upsert has begun its instant; its tasks have not started
            assert cluster(base, "execute", SORT, spark=InProcessSpark(), instant_time=clustering).message == "completed"
            for start in (100, 104):  # two more commits: archival keeps the latest two only
                bucket_upsert.upsert(base, _rows(start), locate=_holding)
            assert clean(base) is not None  # the replaced file groups are deleted
            assert clustering in archive(base)  # and the replacecommit leaves the active timeline
        return [unit() for unit in units]

    summary = retry_when_timeline_changes(
        lambda: bucket_upsert.upsert(base, _rows(0, 2, ts=50), locate=_holding, run_units=others_go_on_then_write),
        "upsert")  # fmt: skip
    expected = {f"k{n:03d}": n // 4 * 4 for n in range(16)} | {f"k{n}": n // 4 * 4 for n in range(100, 108)}
    assert _rows_read(base) == sorted((expected | {"k000": 50, "k001": 50}).items())  # every key once
    assert len(attempts) == 2 and summary["instant_time"] == attempts[1], (attempts, summary)  # read and done again
    timeline = load_table(base).timeline
    assert timeline.get(attempts[0]) is None and not timeline.pending(), [i.file_name for i in timeline.instants]
