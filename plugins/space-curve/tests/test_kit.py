"""The conformance kit on the space-curve strategies: size-based groups, curve-ordered output."""

from hudi_cluster_core.testing import run_execution_kit, run_plan_kit
from hudi_cluster_space_curve import SpaceCurveExecutionStrategy, SpaceCurvePlanStrategy

SORT = {"hoodie.clustering.plan.strategy.sort.columns": "x,y"}


def test_plan_kit():
    run_plan_kit(SpaceCurvePlanStrategy(), extra_options=SORT)


def test_execution_kit_direct_build():
    run_execution_kit(SpaceCurveExecutionStrategy(), sorts="required")
