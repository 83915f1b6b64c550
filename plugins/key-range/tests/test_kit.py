"""The conformance kit on key-range planning."""

from hudi_cluster_core.testing import run_plan_kit
from hudi_cluster_key_range import KeyRangePlanStrategy


def test_plan_kit():
    run_plan_kit(KeyRangePlanStrategy())
