"""Interop with Apache Hudi's own clustering: each side executes a plan the other scheduled."""

from __future__ import annotations

import pytest

from hudi_cluster_core.api import cluster
from hudi_cluster_core.table import load_table
from tests.support.apache_hudi import (
    hudi_execute_clustering, hudi_schedule_clustering, hudi_show_clustering, make_small_file_table, read_hudi_snapshot,
)  # fmt: skip
from tests.support.readers import assert_same_rows, hudi_rs_file_slices, read_hudi_rs


@pytest.mark.parametrize("version", [6, 9])
def test_we_execute_a_plan_apache_hudi_scheduled(spark, tmp_path, version):
    base = str(tmp_path / "t")
    make_small_file_table(spark, base, batches=4, rows_per_batch=30, table_version=version)
    before_hudi, before_rs = read_hudi_snapshot(spark, base), read_hudi_rs(base)
    instant = hudi_schedule_clustering(spark, base, order="c_int,ts")
    assert instant in [i.time for i in load_table(base).timeline.pending_clustering]
    result = cluster(base, "execute", instant_time=instant, spark=spark)
    assert result.instant_time == instant and result.completed_file
    assert_same_rows(before_hudi, read_hudi_snapshot(spark, base), labels=("hudi before", "hudi after"))
    assert_same_rows(before_rs, read_hudi_rs(base), labels=("hudi-rs before", "hudi-rs after"))
    assert {c.instant: c.state for c in hudi_show_clustering(spark, base)}[instant] == "COMPLETED"
    assert len(hudi_rs_file_slices(base)) < 4 * 2


@pytest.mark.parametrize("version", [6, 9])
def test_apache_hudi_executes_a_plan_we_scheduled(spark, tmp_path, version):
    base = str(tmp_path / "t")
    make_small_file_table(spark, base, batches=4, rows_per_batch=30, table_version=version)
    before_hudi, before_rs = read_hudi_snapshot(spark, base), read_hudi_rs(base)
    scheduled = cluster(base, "schedule", {"hoodie.clustering.plan.strategy.sort.columns": "c_int,ts"})
    assert scheduled.message == "scheduled" and scheduled.output_files >= 1
    assert hudi_execute_clustering(spark, base, scheduled.instant_time) == [scheduled.instant_time]
    assert_same_rows(before_hudi, read_hudi_snapshot(spark, base), labels=("hudi before", "hudi after"))
    assert_same_rows(before_rs, read_hudi_rs(base), labels=("hudi-rs before", "hudi-rs after"))
    assert [i.time for i in load_table(base).timeline.completed_clustering] == [scheduled.instant_time]
