"""Strategy discovery: entry points only, Java class names as aliases, clear errors, hook tracing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import pytest

from hudi_cluster_core.cli import main
from hudi_cluster_core.errors import PluginError
from hudi_cluster_core.hookspecs import hookimpl
from hudi_cluster_core.plugins import StrategyRegistry, call_hook, default_registry

SIZE_PLAN = "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy"
SORT_RUN = "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy"


def test_plugins_json_lists_the_installed_size_based_distribution(capsys):
    assert main(["plugins", "--json"]) == 0
    listed = {d["distribution"]: d for d in json.loads(capsys.readouterr().out)}
    size_based = listed["hudi-cluster-size-based"]
    assert size_based["version"]
    by_kind = {s["kind"]: s for s in size_based["strategies"]}
    assert by_kind["plan"]["name"] == "size-based" and SIZE_PLAN in by_kind["plan"]["java_class_names"]
    assert by_kind["plan"]["hooks"] == [
        "plan_select_slices", "plan_group_slices", "plan_finalize_groups", "plan_execution_strategy",
    ]  # fmt: skip
    assert by_kind["execution"]["hooks"] == ["execute_group"] and SORT_RUN in by_kind["execution"]["java_class_names"]


def test_plugins_text_shows_aliases(capsys):
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "hudi-cluster-size-based" in out and f"alias: {SIZE_PLAN}" in out


@pytest.mark.parametrize("name", ["size-based", SIZE_PLAN, f"  {SIZE_PLAN} "])
def test_resolve_by_short_or_java_name(name):
    strategy = default_registry().resolve("plan", name)
    assert strategy.name == "size-based" and strategy.kind == "plan"


def test_unknown_name_suggests_close_match_and_lists_installed():
    with pytest.raises(PluginError) as error:
        default_registry().resolve("plan", "size-basd", config_key="hoodie.clustering.plan.strategy.class")
    message = str(error.value)
    assert "hoodie.clustering.plan.strategy.class=size-basd" in message
    assert "did you mean 'size-based'?" in message and "Installed plan strategies:" in message


def test_class_strings_are_never_imported():
    with pytest.raises(PluginError, match="unknown execution strategy"):
        default_registry().resolve("execution", "json.tool.main")
    with pytest.raises(PluginError):
        default_registry().resolve("plan", "antigravity.Strategy")
    assert "antigravity" not in sys.modules and "json.tool" not in sys.modules


def test_known_java_class_without_its_plugin_names_the_distribution():
    empty = StrategyRegistry(load_entry_points=False)
    with pytest.raises(PluginError, match="install the distribution 'hudi-cluster-size-based'"):
        empty.resolve("plan", SIZE_PLAN, config_key="hoodie.clustering.plan.strategy.class")
    assert empty.infos() == []


class _Plan:
    name, kind, java_class_names, params_model, summary = "demo-plan", "plan", ("com.example.DemoPlan",), None, "demo"

    @hookimpl
    def plan_select_slices(self, context, slices):
        return slices

    @hookimpl
    def plan_group_slices(self, context, slices):
        return []

    @hookimpl
    def plan_finalize_groups(self, context, groups):
        return groups

    @hookimpl
    def plan_execution_strategy(self, context):
        return "x", {}


def _plugin(*strategies, name="demo_plugin"):
    module = types.ModuleType(name)

    @hookimpl
    def hudi_cluster_strategies():
        return list(strategies)

    module.hudi_cluster_strategies = hudi_cluster_strategies
    return module


def test_registered_plugin_answers_to_its_java_alias_and_hook_calls_work():
    registry = StrategyRegistry(extra_plugins=(_plugin(_Plan()),), load_entry_points=False)
    strategy = registry.resolve("plan", "com.example.DemoPlan")
    assert call_hook(strategy, "plan_select_slices", context=None, slices=[1, 2]) == [1, 2]


def test_incomplete_strategy_is_rejected_naming_missing_hooks():
    class Partial:
        name, kind = "partial", "plan"

        @hookimpl
        def plan_select_slices(self, context, slices):
            return slices

    with pytest.raises(PluginError, match="does not implement plan_execution_strategy, plan_finalize_groups, plan_group_slices"):
        StrategyRegistry(extra_plugins=(_plugin(Partial()),), load_entry_points=False)


def test_hook_with_wrong_arguments_is_rejected_at_load():
    class Wrong(_Plan):
        name = "wrong"

        @hookimpl
        def plan_select_slices(self, context, slices, extra):
            return slices

    with pytest.raises(PluginError, match="wrong"):
        StrategyRegistry(extra_plugins=(_plugin(Wrong()),), load_entry_points=False)


def test_name_clash_names_both_providers():
    with pytest.raises(PluginError, match="provided by both"):
        StrategyRegistry(extra_plugins=(_plugin(_Plan(), name="a"), _plugin(_Plan(), name="b")), load_entry_points=False)


def test_trace_env_var_prints_hook_calls():
    code = (
        "from types import SimpleNamespace as NS\n"
        "from hudi_cluster_core.plugins import default_registry, call_hook\n"
        "s = default_registry().resolve('plan', 'size-based')\n"
        "ctx = NS(partitions=(), pending_file_groups={}, config=NS(get=lambda key: 100))\n"
        "print(call_hook(s, 'plan_select_slices', context=ctx, slices=[]))\n"
    )
    env = {**os.environ, "HUDI_CLUSTER_TRACE_HOOKS": "1"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert "plan_select_slices" in done.stderr and done.stdout.strip() == "[]"
