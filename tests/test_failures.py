"""Failures never block ingestion: a run that fails with an error it can see (a task error, Ctrl-C, SIGTERM) rolls its
instant back before it exits and says so in one line; a live run keeps a heartbeat in Hudi's format; an instant
whose heartbeat expired is rolled back by the next run; ``--mode purge_pending_instant`` removes a plan on request.
After each failure Apache Hudi's upsert (default update strategy: reject updates to pending clustering) succeeds."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from hudi_cluster_core.api import cluster
from hudi_cluster_core.table import State, load_table
from hudi_cluster_core.table.ownership import heartbeat_state
from tests.support.apache_hudi import hudi_upsert, make_updates, read_hudi_snapshot, small_file_rows
from tests.support.readers import assert_same_rows, read_hudi_rs
from tests.support.runs import (
    error_lines, finish, inflight_clustering, run_cli, start_cli, table_problems, wait_for,
)  # fmt: skip

SORT = {"hoodie.clustering.plan.strategy.sort.columns": "c_int"}


@pytest.fixture
def base(hudi_tables, request) -> str:
    """A table Apache Hudi wrote, with archived history."""
    return hudi_tables.copy("cow_v9", request.node.name)


def marker_written(base: str) -> bool:
    temp = Path(base) / ".hoodie" / ".temp"
    return temp.is_dir() and any(p.name.endswith(".marker.CREATE") for p in temp.rglob("*"))


def upsert_is_not_blocked(spark, base: str) -> None:
    """Apache Hudi's default update strategy rejects updates to file groups under pending clustering."""
    updates = make_updates(small_file_rows(0, 10))
    stats = hudi_upsert(spark, base, updates)
    assert stats.num_update_writes == 10 and stats.num_inserts == 0


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_interrupted_run_rolls_back_and_says_so_in_one_line(spark, base, how):
    before = read_hudi_rs(base)
    run = start_cli(base, pause="task-after-first-file=30")
    wait_for(lambda: marker_written(base), what="a file of the running clustering")
    time.sleep(0.5)
    run.send_signal(how)
    code, _, err = finish(run, timeout=120)
    assert code == 130, err[-3000:]
    assert len(error_lines(err)) == 1 and "interrupted" in error_lines(err)[0] and "rolled back" in err, err[-3000:]
    assert "Traceback" not in err and "py4j" not in err.lower(), err[-3000:]
    assert table_problems(base) == []
    assert_same_rows(before, read_hudi_rs(base), labels=("before", "after the interrupted run"))
    upsert_is_not_blocked(spark, base)


def test_task_error_rolls_back_with_one_line(spark, base):
    scheduled = run_cli(base, "--json", mode="schedule")
    assert scheduled.returncode == 0, scheduled.stderr[-2000:]
    plan_input = json.loads(scheduled.stdout)["groups"][0]
    partition, file_id = plan_input["partition"], plan_input["input_file_ids"][0]
    victim = next((Path(base) / partition).glob(f"{file_id}_*.parquet"))
    intact = victim.read_bytes()
    victim.write_bytes(intact[: len(intact) // 2])  # a torn file: the task can't read it

    failed = run_cli(base, mode="execute")
    assert failed.returncode not in (0, -signal.SIGKILL), failed.stderr[-3000:]
    lines = error_lines(failed.stderr)
    assert len(lines) == 1 and "rolled back" in lines[0], failed.stderr[-3000:]
    assert "Traceback" not in failed.stderr
    victim.write_bytes(intact)
    assert table_problems(base) == []
    upsert_is_not_blocked(spark, base)


def test_keep_failed_plan_then_retry(spark, base):
    before = read_hudi_rs(base)
    run = start_cli(base, "--keep-failed-plan", pause="task-after-first-file=30")
    wait_for(lambda: marker_written(base), what="a file of the running clustering")
    run.send_signal(signal.SIGINT)
    code, _, err = finish(run, timeout=120)
    assert code == 130 and "kept for --retry-last-failed-clustering-job" in err, err[-3000:]
    pending = load_table(base).timeline.pending_clustering
    assert [i.state.name for i in pending] == ["REQUESTED"]
    retried = run_cli(base, "--retry-last-failed-clustering-job", "--json")
    assert retried.returncode == 0 and json.loads(retried.stdout)["instant_time"] == pending[0].time
    assert table_problems(base) == []
    assert_same_rows(before, read_hudi_rs(base), labels=("before", "after the retry"))


def test_heartbeat_in_hudis_format_while_running(base):
    run = start_cli(base, "--hoodie-conf", "hoodie.client.heartbeat.interval_in_ms=1000", pause="after-tasks=4")
    wait_for(lambda: inflight_clustering(base), what="the inflight instant")
    instant = inflight_clustering(base)[0]
    beat = Path(base) / ".hoodie" / ".heartbeat" / instant
    first = beat.stat().st_mtime
    time.sleep(2.5)
    assert beat.stat().st_mtime > first, "the heartbeat was not refreshed"
    assert heartbeat_state(load_table(base).storage, instant, 1000, 2).live
    code, _, err = finish(run)
    assert code == 0, err[-2000:]
    assert not beat.exists() and table_problems(base) == []


def test_expired_heartbeat_is_rolled_back_live_one_is_not(spark, base):
    scheduled = cluster(base, "schedule", SORT)
    instant = scheduled.instant_time
    timeline = load_table(base).timeline
    Path(timeline.path_of(timeline.clustering_file_name(instant, State.INFLIGHT))).write_bytes(b"")
    beat = Path(base) / ".hoodie" / ".heartbeat" / instant
    beat.parent.mkdir(parents=True, exist_ok=True)
    beat.write_text(json.dumps({"owner": "x", "host": "another-host", "pid": 1}))  # a run elsewhere, alive
    options = {**SORT, "hoodie.client.heartbeat.interval_in_ms": "1000", "hoodie.client.heartbeat.tolerable.misses": "2"}
    result = cluster(base, "scheduleAndExecute", options, spark=spark)
    assert instant not in result.rolled_back and instant in inflight_clustering(base)
    old = time.time() - 3
    os.utime(beat, (old, old))  # its heartbeat stopped 3 s ago: more than 1 s x 2 misses
    result = cluster(base, "scheduleAndExecute", options, spark=spark)
    assert instant in result.rolled_back and result.message == "completed"
    assert table_problems(base) == []
    assert_same_rows(read_hudi_snapshot(spark, base), read_hudi_rs(base), labels=("Apache Hudi", "hudi-rs"))


def test_purge_pending_instant(spark, base):
    instant = cluster(base, "schedule", SORT).instant_time
    missing = run_cli(base, mode="purge_pending_instant")
    assert missing.returncode == 2 and instant in error_lines(missing.stderr)[0]
    purged = run_cli(base, "--instant-time", instant, "--json", mode="PURGE_PENDING_INSTANT")
    assert purged.returncode == 0, purged.stderr[-2000:]
    assert json.loads(purged.stdout)["rolled_back"] == [instant]
    assert load_table(base).timeline.get(instant) is None and table_problems(base) == []
    again = run_cli(base, "--instant-time", instant, mode="purge_pending_instant")
    assert again.returncode == 2 and len(error_lines(again.stderr)) == 1
    upsert_is_not_blocked(spark, base)
