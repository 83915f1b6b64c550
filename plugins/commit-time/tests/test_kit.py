"""The conformance kit on commit-time planning."""

from hypothesis import strategies as st

from hudi_cluster_commit_time import WINDOW_KEY, CommitTimePlanStrategy
from hudi_cluster_core.testing import run_plan_kit


def test_plan_kit():
    run_plan_kit(CommitTimePlanStrategy())


def test_plan_kit_with_a_one_commit_window():
    run_plan_kit(CommitTimePlanStrategy(), extra_options={WINDOW_KEY: 1}, max_examples=20)
