"""Single-file sort: one group and one output file per eligible file; the conformance kit's invariants."""

from __future__ import annotations

from hypothesis import given, settings

from hudi_cluster_core.testing import check_plan_strategy, planning_inputs
from hudi_cluster_single_file_sort import EXECUTION_CLASS, SingleFileSortPlanStrategy


@settings(max_examples=100, deadline=None)
@given(planning_inputs())
def test_single_file_sort_conforms(case):
    outcome = check_plan_strategy(SingleFileSortPlanStrategy(), case, size_rule=False)
    assert all(len(g.slices) == 1 and g.num_output_file_groups == 1 for g in outcome.groups)
    max_groups = int(case.options["hoodie.clustering.plan.strategy.max.num.groups"])
    assert len(outcome.groups) == min(len(outcome.eligible), max_groups)
    if outcome.record:
        assert outcome.record["clusteringPlan"]["strategy"]["strategyClassName"] == EXECUTION_CLASS
