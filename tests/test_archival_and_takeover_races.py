"""Races of the commit protocol with archival and with a run that takes an instant over, replayed deterministically
on real files in one process: each race is made by running the other party's real code where it would interleave.

* An upsert of ours began its instant; a clustering pending since before then completed, a clean deleted the
  file groups it replaced and archival moved its replacecommit out of the active timeline, all before the upsert
  committed. The commit's check read the active timeline only, so the log writer committed log files into a
  replaced file group: every key it updated then read twice (the clustering's copy, and the update). The commit
  now refuses once the archive holds an instant that may have completed while the write ran, and the write is
  read and done again.
* ``recover()`` claimed a dead run's clustering, then rolled it back in a second lock section; held up in between
  past its heartbeat's expiry, it rolled back the run that had claimed the instant meanwhile. So did a failed
  run's own rollback (``api._roll_back_failed``), whose ownership check ran outside the rollback's lock. Neither
  lost data (that run's commit refuses once its files are gone) but each threw its work away. The rollback now
  checks, under its lock, that the caller's heartbeat still names it.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_cluster_core import javaprops
from hudi_cluster_core.api import cluster
from hudi_cluster_core.io.storage import Storage
from hudi_cluster_core.run import spark as core_spark
from hudi_cluster_core.run import rollback as core_rollback
from hudi_cluster_core.run.recovery import Ownership, claim, recover
from hudi_cluster_core.table import State, load_table
from hudi_cluster_core.table.ownership import Heartbeat
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
# heartbeats of one minute: no refresh lands while a test runs, so a heartbeat is stale exactly when a test says so
SLOW = Ownership(60000, 2, 60000)


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
    monkeypatch.setattr(core_spark, "run_group_tasks", run_group_tasks_in_process)  # the clustering's Spark job
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


@pytest.fixture
def dead_inflight_clustering(tmp_path) -> tuple[str, str]:
    """A table with an inflight clustering whose run died long ago (no heartbeat, its inflight file old)."""
    base = str(tmp_path / "t")
    for start in (0, 4, 8):
        append(base, _rows(start), **ARGS)
    instant = cluster(base, "schedule", SORT).instant_time
    timeline = load_table(base).timeline
    inflight = Path(timeline.path_of(timeline.clustering_file_name(instant, State.INFLIGHT)))
    inflight.write_bytes(b"")
    os.utime(inflight, (time.time() - 1000, time.time() - 1000))
    return base, instant


def _another_run_takes_over_at_the_rollback_lock(monkeypatch, base: str, instant: str) -> list[Heartbeat]:
    """While this run waits for the rollback's timeline lock, held up past its heartbeat's expiry, another run
    claims the instant (and goes on executing it); returns [that run's heartbeat] once it has."""
    taker: list[Heartbeat] = []
    real_lock = core_rollback.timeline_lock

    def lock_after_a_takeover(storage, wait_ms=60000):
        if not taker:
            beat = Path(base, ".hoodie", ".heartbeat", instant)
            os.utime(beat, (time.time() - 1000, time.time() - 1000))  # this run's last beat, long ago
            taker.append(claim(load_table(base), instant, SLOW))
        return real_lock(storage, wait_ms)

    monkeypatch.setattr(core_rollback, "timeline_lock", lock_after_a_takeover)
    return taker


def _left_to_the_taker(base: str, instant: str, taker: Heartbeat) -> None:
    timeline = load_table(base).timeline
    assert timeline.get(instant) is not None and timeline.get(instant).state is State.INFLIGHT
    assert not [i for i in timeline.instants if i.action == "rollback"], [i.file_name for i in timeline.instants]
    assert taker.still_owned()


def test_recovery_held_up_after_its_claim_leaves_the_run_that_took_over_alone(dead_inflight_clustering, monkeypatch):
    base, instant = dead_inflight_clustering
    taker = _another_run_takes_over_at_the_rollback_lock(monkeypatch, base, instant)
    try:
        assert recover(load_table(base), SLOW, keep_plans=False) == []
        assert len(taker) == 1, "the rollback was never reached"
        _left_to_the_taker(base, instant, taker[0])
    finally:
        for beat in taker:
            beat.stop()


def test_a_failed_runs_rollback_leaves_the_run_that_took_over_alone(dead_inflight_clustering, monkeypatch):
    from hudi_cluster_core.api import _roll_back_failed
    from hudi_cluster_core.errors import RunFailed

    base, instant = dead_inflight_clustering
    own = claim(load_table(base), instant, SLOW)  # this run executes the instant, and fails
    taker = _another_run_takes_over_at_the_rollback_lock(monkeypatch, base, instant)
    try:
        with pytest.raises(RunFailed, match="left to the run that took it over"):
            _roll_back_failed(load_table(base), instant, own, SLOW, OSError("a task failed"), keep_plan=False)
        assert len(taker) == 1, "the rollback was never reached"
        _left_to_the_taker(base, instant, taker[0])
    finally:
        own.stop()
        for beat in taker:
            beat.stop()
