"""The conformance kit on size-based planning and sort-and-size execution."""

from hudi_cluster_core.testing import run_execution_kit, run_plan_kit
from hudi_cluster_size_based.execution import SortAndSizeExecutionStrategy
from hudi_cluster_size_based.plan import SizeBasedPlanStrategy


def test_plan_kit():
    run_plan_kit(SizeBasedPlanStrategy())


def test_execution_kit():
    run_execution_kit(SortAndSizeExecutionStrategy())
