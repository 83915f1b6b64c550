"""The strategy's tests: the conformance kit on generated input, and one worked example.

They run whether or not the package is installed: the strategy is loaded from the package (installed, or this
checkout's copy), not from entry points, and still goes through the registry's checks (names, hooks). They import
only the SDK (``hudi_cluster_core.sdk``), the kit (``hudi_cluster_core.testing``) and the package itself.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_cluster_core.sdk import BaseFile, FileSlice
from hudi_cluster_core.testing import (
    PlanningInput, check_plan_strategy, import_plugin, load_strategy, plan_with, planning_inputs,
)  # fmt: skip

PACKAGE = "hudi_cluster_template"
MB = 1024 * 1024

strategy_package = import_plugin(PACKAGE, search_path=Path(__file__).resolve().parents[1])
strategy = load_strategy("plan", strategy_package.TemplatePlanStrategy.name, strategy_package)
MIN_SLICES_KEY = strategy_package.MIN_SLICES_KEY


def small_file(partition: str, file_id: str, size: int) -> FileSlice:
    instant = "20260101000000000"
    return FileSlice(partition, file_id, instant, BaseFile(f"{file_id}_0-1-0_{instant}.parquet", file_id, "0-1-0", instant, size))


@settings(max_examples=150, deadline=None)
@given(planning_inputs(), st.integers(1, 4))
def test_conforms_and_keeps_min_slices_per_group(case, min_slices):
    outcome = check_plan_strategy(strategy, case, extra_options={MIN_SLICES_KEY: min_slices})
    assert all(len(group.slices) >= min_slices for group in outcome.groups)


def test_packs_in_file_id_order_and_drops_lone_files():
    slices = (
        small_file("us", "d", 40 * MB), small_file("us", "b", 30 * MB), small_file("us", "a", 10 * MB),
        small_file("us", "c", 50 * MB), small_file("eu", "e", 5 * MB),
    )  # fmt: skip
    options = {
        "hoodie.clustering.plan.strategy.small.file.limit": 300 * MB,
        "hoodie.clustering.plan.strategy.max.bytes.per.group": 100 * MB,
        "hoodie.clustering.plan.strategy.target.file.max.bytes": 64 * MB,
    }
    outcome = plan_with(strategy, PlanningInput(slices, options=options, all_partitions=("eu", "us")))
    # us: a+b+c = 90 MB (d would pass 100 MB) -> 2 output files; us [d] and eu [e] are lone files, dropped.
    assert [[s.file_id for s in g.slices] for g in outcome.groups] == [["a", "b", "c"]]
    assert outcome.groups[0].num_output_file_groups == 2
    assert outcome.record["clusteringPlan"]["strategy"]["strategyClassName"].endswith("SparkSortAndSizeExecutionStrategy")


def test_never_rewrites_a_lone_file_already_at_the_target():
    slices = (small_file("us", "a", 70 * MB), small_file("us", "b", 40 * MB))
    options = {
        "hoodie.clustering.plan.strategy.small.file.limit": 300 * MB,
        "hoodie.clustering.plan.strategy.max.bytes.per.group": 100 * MB,  # a and b do not fit in one group
        "hoodie.clustering.plan.strategy.target.file.max.bytes": 64 * MB,
        MIN_SLICES_KEY: 1,
    }
    outcome = plan_with(strategy, PlanningInput(slices, options=options, all_partitions=("us",)))
    assert [[s.file_id for s in g.slices] for g in outcome.groups] == [["b"]]  # a (70 MB >= 64 MB) stays as it is


def test_answers_to_its_dotted_class_name():
    dotted = f"{PACKAGE}.TemplatePlanStrategy"
    assert load_strategy("plan", dotted, strategy_package).name == strategy.name
