"""The strategy's tests: the conformance kit on generated input, and one worked example.

They run whether or not the package is installed: the strategy is resolved from a registry built around the
imported module, not from entry points, and still goes through the registry's checks (names, hooks).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_cluster_core.plugins import StrategyRegistry
from hudi_cluster_core.table import FileSlice
from hudi_cluster_core.table.naming import BaseFile
from hudi_cluster_core.testing import PlanningInput, check_plan_strategy, plan_with, planning_inputs

PACKAGE = "hudi_cluster_template"
MB = 1024 * 1024


def import_strategy_package():
    try:
        return importlib.import_module(PACKAGE)
    except ModuleNotFoundError as exc:
        if exc.name != PACKAGE:
            raise  # the package is there but one of its imports is not
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's copy
        return importlib.import_module(PACKAGE)


strategy_package = import_strategy_package()
registry = StrategyRegistry(extra_plugins=(strategy_package,), load_entry_points=False)
strategy = registry.resolve("plan", strategy_package.TemplatePlanStrategy.name)
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


def test_answers_to_its_dotted_class_name():
    dotted = f"{PACKAGE}.TemplatePlanStrategy"
    assert registry.resolve("plan", dotted) is strategy
