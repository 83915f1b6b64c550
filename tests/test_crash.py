"""Crash safety: SIGKILL the clustering driver at every failpoint; readers keep reading the last committed
snapshot, the next run recovers (rollback, or re-execution with --retry-last-failed-clustering-job), and the
rows are exactly those before. No file of a failed attempt stays behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from hudi_cluster_core.api import cluster
from hudi_cluster_core.failpoints import ENV, POINTS, SKIP_ENV
from hudi_cluster_core.table import load_table
from hudi_cluster_core.table.naming import parse_base_file
from hudi_cluster_core.writer.append import append
from tests.support.apache_hudi import read_hudi_snapshot, small_file_rows
from tests.support.readers import assert_same_rows, read_hudi_rs


def run_cli(base, *extra, failpoint=None, skip=0):
    """``skip``: the driver passes ``failpoint`` that many times before it is killed there."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HUDI_CLUSTER_FAILPOINT")}
    if failpoint:
        env[ENV] = failpoint
    if skip:
        env[SKIP_ENV] = str(skip)
    command = [sys.executable, "-m", "hudi_cluster_core.cli", "run", "--base-path", base, "--mode", "scheduleAndExecute",
               "--spark-master", "local[2]", "--hoodie-conf", "hoodie.clustering.plan.strategy.sort.columns=c_int",
               "--json", *extra]  # fmt: skip
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)


def make_table(base, version):
    for batch in range(4):
        append(base, small_file_rows(batch * 25, 25, seed=3), table_name="crash", record_key="id",
               partition_field="region", precombine_field="ts", table_version=version)  # fmt: skip


def files_of_uncommitted_instants(base):
    table = load_table(base)
    committed = {i.time for i in table.timeline.completed()}
    view = table.view(from_storage=True)  # storage's files: uncommitted ones are in no metadata table
    return [e.name for p in view.partitions for e in view.listing.files(p)
            if (b := parse_base_file(e.name)) and b.instant not in committed]  # fmt: skip


CASES = [(9, point, retry) for point in POINTS for retry in (False, True) if not (retry and point == "after-commit-file")]
CASES += [(6, point, retry) for point in ("after-inflight", "task-after-first-file", "before-commit-file") for retry in (False, True)]


@pytest.mark.parametrize("version, point, retry", CASES, ids=[f"v{v}-{p}-{'retry' if r else 'rollback'}" for v, p, r in CASES])
def test_sigkill_then_rerun_keeps_every_row(spark, tmp_path, version, point, retry):
    base = str(tmp_path / "t")
    make_table(base, version)
    before_rs, before_hudi = read_hudi_rs(base), read_hudi_snapshot(spark, base)

    crashed = run_cli(base, failpoint=point)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr[-2000:]
    # whatever the crash left, readers see exactly the last committed snapshot
    assert_same_rows(before_rs, read_hudi_rs(base), labels=("before", "after crash (hudi-rs)"))
    assert_same_rows(before_hudi, read_hudi_snapshot(spark, base), labels=("before", "after crash (hudi)"))
    pending = [i.time for i in load_table(base).timeline.pending_clustering]

    # the next run, in this process (the crash needed its own process; the recovery does not)
    result = cluster(base, "scheduleAndExecute", {"hoodie.clustering.plan.strategy.sort.columns": "c_int"},
                     spark=spark, retry_last_failed_clustering_job=retry).to_dict()  # fmt: skip
    if pending and (retry or point == "after-requested"):
        assert result["instant_time"] == pending[0], "the pending plan was not executed under its instant"
    elif pending:
        assert pending[0] in result["rolled_back"] and result["instant_time"] != pending[0]
    assert_same_rows(before_rs, read_hudi_rs(base), labels=("before", "after rerun (hudi-rs)"))
    assert_same_rows(before_hudi, read_hudi_snapshot(spark, base), labels=("before", "after rerun (hudi)"))
    assert files_of_uncommitted_instants(base) == []
    assert load_table(base).timeline.pending_clustering == []


def test_rerun_from_the_cli_recovers_after_a_crash(tmp_path):
    """The same recovery through the command line, as an operator runs it after a lost driver."""
    base = str(tmp_path / "t")
    make_table(base, 9)
    before = read_hudi_rs(base)
    assert run_cli(base, failpoint="task-after-first-file").returncode == -signal.SIGKILL
    rerun = run_cli(base, "--retry-last-failed-clustering-job")
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert json.loads(rerun.stdout)["message"] == "completed"
    assert_same_rows(before, read_hudi_rs(base), labels=("before", "after rerun"))
    assert files_of_uncommitted_instants(base) == []
