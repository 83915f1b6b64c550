"""The conformance kit on hot-partitions planning."""

from hudi_cluster_core.testing import run_plan_kit
from hudi_cluster_hot_partitions import LOOKBACK_COMMITS_KEY, TOP_N_KEY, HotPartitionsPlanStrategy


def test_plan_kit():
    run_plan_kit(HotPartitionsPlanStrategy())


def test_plan_kit_top_partition_only():
    run_plan_kit(HotPartitionsPlanStrategy(), extra_options={LOOKBACK_COMMITS_KEY: 1, TOP_N_KEY: 1}, max_examples=20)
