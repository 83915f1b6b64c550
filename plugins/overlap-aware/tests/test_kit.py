"""The conformance kit on overlap-aware planning."""

from hudi_cluster_core.testing import run_plan_kit
from hudi_cluster_overlap_aware import OverlapAwarePlanStrategy


def test_plan_kit():
    run_plan_kit(OverlapAwarePlanStrategy())
