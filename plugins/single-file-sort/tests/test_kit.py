"""The conformance kit on single-file sort: one group and one output file per eligible file."""

from hudi_cluster_core.testing import run_execution_kit, run_plan_kit
from hudi_cluster_single_file_sort import SingleFileSortExecutionStrategy, SingleFileSortPlanStrategy


def test_plan_kit():
    run_plan_kit(SingleFileSortPlanStrategy(), size_rule=False)


def test_execution_kit():
    run_execution_kit(SingleFileSortExecutionStrategy(), max_output_files=1, expected_files=lambda task: 1)
