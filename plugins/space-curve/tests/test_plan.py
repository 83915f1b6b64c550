"""The space-curve plan strategy: size-based groups (conformance kit), space-curve execution in the plan."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hudi_cluster_core.config import load_config
from hudi_cluster_core.errors import ConfigError
from hudi_cluster_core.plugins import default_registry
from hudi_cluster_core.sdk import SizeLimits, pack_by_size
from hudi_cluster_core.testing import check_plan_strategy, plan_with, planning_inputs

from hudi_cluster_space_curve import SpaceCurveExecutionStrategy, SpaceCurvePlanStrategy

SORT = {"hoodie.clustering.plan.strategy.sort.columns": "x, y"}


@settings(max_examples=150, deadline=None)
@given(planning_inputs())
def test_space_curve_plan_conforms_and_groups_like_size_based(case):
    outcome = check_plan_strategy(SpaceCurvePlanStrategy(), case, extra_options=SORT)
    limits = SizeLimits.from_config(load_config(overrides={**case.options, **SORT}))
    assert list(outcome.groups) == pack_by_size(outcome.eligible, limits)[: limits.max_num_groups]
    if outcome.record is not None:
        strategy = outcome.record["clusteringPlan"]["strategy"]
        assert strategy["strategyClassName"] == "space-curve"
        assert strategy["strategyParams"] == {"hoodie.clustering.plan.strategy.sort.columns": "x,y"}


@settings(max_examples=30, deadline=None)
@given(planning_inputs())
def test_layout_keys_are_checked_when_scheduling(case):
    bad = {**SORT, "hoodie.layout.optimize.curve.build.method": "SAMPLE", "hoodie.layout.optimize.build.curve.sample.size": "-5"}
    with pytest.raises(ConfigError, match="sample.size"):
        plan_with(SpaceCurvePlanStrategy(), case, extra_options=bad)
    with pytest.raises(ConfigError, match="missing param 'hoodie.clustering.plan.strategy.sort.columns'"):
        plan_with(SpaceCurvePlanStrategy(), case)


def test_both_strategies_are_registered_under_their_short_name():
    registry = default_registry()
    assert isinstance(registry.resolve("plan", "space-curve"), SpaceCurvePlanStrategy)
    assert isinstance(registry.resolve("execution", "space-curve"), SpaceCurveExecutionStrategy)
    assert registry.info(registry.resolve("plan", "space-curve")).distribution == "hudi-cluster-space-curve"
