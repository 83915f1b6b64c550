"""One table, many runs: processes racing on one table (written by Apache Hudi, its history archived) never commit an instant twice, never duplicate or lose a row,
and never touch an instant another live run owns. Rows are checked by hudi-rs and by Apache Hudi after every race.

``HUDI_RACE_ROUNDS`` repeats each race (default 1 in ``make test``; ``make soak`` runs more)."""

from __future__ import annotations

import os

import pytest

from hudi_cluster_core.table import load_table
from tests.support.apache_hudi import read_hudi_snapshot
from tests.support.readers import assert_same_rows, read_hudi_rs
from tests.support.runs import (
    error_lines, finish, inflight_clustering, run_cli, start_cli, table_problems, wait_for,
)  # fmt: skip

ROUNDS = range(int(os.environ.get("HUDI_RACE_ROUNDS", "1")))


def check_rows(spark, base, before_rs, before_hudi):
    assert_same_rows(before_rs, read_hudi_rs(base), labels=("before", "after the race (hudi-rs)"))
    assert_same_rows(before_hudi, read_hudi_snapshot(spark, base), labels=("before", "after the race (Apache Hudi)"))
    assert table_problems(base) == []


@pytest.fixture
def table(hudi_tables, spark, request):
    """A table Apache Hudi wrote, with archived history (36 small file groups in 3 partitions)."""
    base = hudi_tables.copy("cow_v9", request.node.name)
    return base, read_hudi_rs(base), read_hudi_snapshot(spark, base)


@pytest.mark.parametrize("round_", ROUNDS)
def test_simultaneous_starts_commit_one_clustering_per_file_group(spark, table, round_):
    base, before_rs, before_hudi = table
    runs = [start_cli(base, "--json") for _ in range(3)]
    results = [finish(run) for run in runs]
    assert all(code == 0 for code, _, _ in results), [err[-1500:] for _, _, err in results]
    check_rows(spark, base, before_rs, before_hudi)
    timeline = load_table(base).timeline
    assert len(timeline.completed_clustering) >= 1
    assert load_table(base).view().latest_file_slices() and len(load_table(base).view().latest_file_slices()) <= 3


@pytest.mark.parametrize("round_", ROUNDS)
@pytest.mark.parametrize("second_run", [(), ("--retry-last-failed-clustering-job",)], ids=["plain", "retry"])
def test_a_run_started_while_another_is_inflight_leaves_it_alone(spark, table, second_run, round_):
    base, before_rs, before_hudi = table
    first = start_cli(base, pause="after-tasks=8")
    wait_for(lambda: inflight_clustering(base), what="the first run's inflight instant")
    instant = inflight_clustering(base)[0]
    second = run_cli(base, *second_run)
    assert second.returncode == 0, second.stderr[-2000:]
    assert instant in inflight_clustering(base), "the second run touched the live instant"
    code, _, err = finish(first)
    assert code == 0, err[-2000:]
    assert instant in {i.time for i in load_table(base).timeline.completed_clustering}
    check_rows(spark, base, before_rs, before_hudi)
    # once committed, neither a retry nor an execute of that instant changes anything
    again = run_cli(base, "--instant-time", instant, *second_run, mode="execute")
    assert again.returncode == 2 and "already completed" in again.stderr, again.stderr[-1500:]
    check_rows(spark, base, before_rs, before_hudi)


@pytest.mark.parametrize("round_", ROUNDS)
def test_two_executes_of_one_instant_complete_it_once(spark, table, round_):
    base, before_rs, before_hudi = table
    scheduled = run_cli(base, "--json", mode="schedule")
    assert scheduled.returncode == 0, scheduled.stderr[-2000:]
    instant = load_table(base).timeline.pending_clustering[0].time
    runs = [start_cli(base, "--instant-time", instant, mode="execute") for _ in range(2)]
    results = [finish(run) for run in runs]
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 2], [err[-1500:] for _, _, err in results]
    loser = next(err for code, _, err in results if code == 2)
    assert len(error_lines(loser)) == 1 and instant in error_lines(loser)[0], loser[-1500:]
    assert "Traceback" not in loser
    check_rows(spark, base, before_rs, before_hudi)
