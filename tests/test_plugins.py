"""Strategy discovery: entry points only, Java class names as aliases, clear errors, hook tracing."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import types

import pytest

from hudi_cluster_core.cli import main
from hudi_cluster_core.errors import PluginError
from hudi_cluster_core.hookspecs import hookimpl
from hudi_cluster_core.plugins import StrategyRegistry, call_hook, default_registry
from hudi_cluster_core.sdk import BaseFile, FileSlice, PlanContext, PlannedGroup
from hudi_cluster_core.table import FileGroupId

SIZE_PLAN = "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy"
SORT_RUN = "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy"


def test_plugins_json_lists_the_installed_size_based_distribution(capsys):
    assert main(["plugins", "--json"]) == 0
    listed = {d["distribution"]: d for d in json.loads(capsys.readouterr().out)}
    size_based = listed["hudi-cluster-size-based"]
    assert size_based["version"]
    by_kind = {s["kind"]: s for s in size_based["strategies"]}
    assert by_kind["plan"]["name"] == "size-based" and SIZE_PLAN in by_kind["plan"]["java_class_names"]
    assert by_kind["plan"]["hooks"] == ["plan_group_slices"]  # the rest are the core's defaults
    assert by_kind["execution"]["hooks"] == ["execute_group", "execution_splits_group"] and SORT_RUN in by_kind["execution"]["java_class_names"]


def test_plugins_text_shows_aliases(capsys):
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "hudi-cluster-size-based" in out and f"alias: {SIZE_PLAN}" in out


WINDOW_KEY = "hoodie.clustering.plan.strategy.commit.time.window.commits"


def test_plugins_list_each_strategys_keys_with_type_default_and_description(capsys):
    assert main(["plugins", "--json"]) == 0
    listed = {(d["distribution"], s["kind"], s["name"]): s for d in json.loads(capsys.readouterr().out) for s in d["strategies"]}
    assert listed[("hudi-cluster-commit-time", "plan", "commit-time")]["keys"] == [{
        "key": WINDOW_KEY, "type": "long", "required": False, "default": 10,
        "description": "At most this many distinct commits' files in one group.",
    }]  # fmt: skip
    curve = {k["key"]: k for k in listed[("hudi-cluster-space-curve", "execution", "space-curve")]["keys"]}
    assert curve["hoodie.layout.optimize.strategy"]["type"] == "enum: LINEAR, ZORDER, HILBERT"
    assert curve["hoodie.clustering.plan.strategy.sort.columns"]["required"]
    assert listed[("hudi-cluster-size-based", "plan", "size-based")]["keys"] == []  # no params model
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert f"key: {WINDOW_KEY} (long, default 10): At most this many distinct commits' files in one group." in out
    assert "key: hoodie.clustering.plan.strategy.consistent.bucket.rewrite.unchanged (bool, default true)" in out


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


def test_incomplete_strategy_is_rejected_naming_the_required_hook():
    class Partial:
        name, kind = "partial", "plan"

        @hookimpl
        def plan_select_slices(self, context, slices):
            return slices

    with pytest.raises(PluginError, match="plugin demo_plugin: plan strategy 'partial' does not implement the required hook plan_group_slices"):
        StrategyRegistry(extra_plugins=(_plugin(Partial()),), load_entry_points=False)


class _OnlyGroups:
    name, kind = "only-groups", "plan"

    @hookimpl
    def plan_group_slices(self, context, slices):
        return [PlannedGroup((s,), 1) for s in slices]


def _context(**options):
    from hudi_cluster_core.config import load_config

    config = load_config(overrides=options)
    return PlanContext(None, config, None, "20270101000000000", {FileGroupId("p", "busy"): "1"}, ("p",))


def _slice(file_id, size, partition="p"):
    return FileSlice(partition, file_id, "1", BaseFile(f"{file_id}_0-1-1_1.parquet", file_id, "0-1-1", "1", size))


def test_a_plan_strategy_needs_only_plan_group_slices_and_gets_the_core_defaults():
    registry = StrategyRegistry(extra_plugins=(_plugin(_OnlyGroups()),), load_entry_points=False)
    strategy = registry.resolve("plan", "only-groups")
    assert registry.info(strategy).hooks == ("plan_group_slices",)
    context = _context(**{"hoodie.clustering.plan.strategy.small.file.limit": 100,
                          "hoodie.clustering.plan.strategy.max.num.groups": 2,
                          "hoodie.clustering.plan.strategy.sort.columns": "a,b"})  # fmt: skip
    slices = [_slice("small", 10), _slice("big", 100), _slice("busy", 10), _slice("other", 10, partition="q"),
              _slice("x", 1), _slice("y", 2)]  # fmt: skip
    eligible = call_hook(strategy, "plan_select_slices", context=context, slices=slices)
    assert [s.file_id for s in eligible] == ["small", "x", "y"]  # below the limit, selected partition, not pending
    groups = call_hook(strategy, "plan_group_slices", context=context, slices=eligible)
    assert len(call_hook(strategy, "plan_finalize_groups", context=context, groups=groups)) == 2
    assert call_hook(strategy, "plan_execution_strategy", context=context) == (
        SORT_RUN, {"hoodie.clustering.plan.strategy.sort.columns": "a,b"},
    )  # fmt: skip


def test_no_plugin_imports_another_plugin():
    """Plugins share code through hudi_cluster_core.sdk only: a plugin's package names no other plugin's."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    package_of = {p.parent: p.name for d in ("plugins", "contrib") for p in (root / d).glob("*/hudi_cluster_*") if p.is_dir()}
    for plugin_dir, own in package_of.items():
        for path in plugin_dir.rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            others = [p for p in package_of.values() if p != own and re.search(rf"\b(from|import) {p}\b", text)]
            assert not others, f"{path.relative_to(root)} imports {others}"


def test_hook_with_wrong_arguments_is_rejected_at_load():
    class Wrong(_Plan):
        name = "wrong"

        @hookimpl
        def plan_select_slices(self, context, slices, extra):
            return slices

    with pytest.raises(PluginError) as error:
        StrategyRegistry(extra_plugins=(_plugin(Wrong()),), load_entry_points=False)
    message = str(error.value)
    assert "plugin demo_plugin: plan strategy 'wrong': hook plan_select_slices(context, slices, extra)" in message
    assert "takes extra" in message and "\n" not in message


def test_unmarked_or_misspelt_hook_is_rejected_naming_it():
    class Unmarked(_Plan):
        name = "unmarked"

        def plan_group_slices(self, context, slices):  # no @hookimpl: pluggy would never call it
            return []

    class Misspelt(_OnlyGroups):
        @hookimpl
        def plan_finalise_groups(self, context, groups):
            return groups

    with pytest.raises(PluginError, match="hook plan_group_slices is not marked @hookimpl"):
        StrategyRegistry(extra_plugins=(_plugin(Unmarked()),), load_entry_points=False)
    with pytest.raises(PluginError, match="'plan_finalise_groups' is marked @hookimpl but is no plan hook; did you mean 'plan_finalize_groups'"):
        StrategyRegistry(extra_plugins=(_plugin(Misspelt()),), load_entry_points=False)


def test_name_clash_names_both_providers():
    with pytest.raises(PluginError, match="provided by both a and b .hook hudi_cluster_strategies."):
        StrategyRegistry(extra_plugins=(_plugin(_Plan(), name="a"), _plugin(_Plan(), name="b")), load_entry_points=False)


def _fake_distribution(site, name: str, entry_point: str) -> None:
    """A distribution known to importlib.metadata (a dist-info on the path), installed nowhere."""
    info = site / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[hudi_cluster.strategies]\n{entry_point}\n")


def _cli_with_path(site, *args):
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, "-m", "hudi_cluster_core.cli", *args], env=env, capture_output=True, text=True)


def test_plugin_failing_to_import_is_one_line_naming_the_distribution(tmp_path):
    _fake_distribution(tmp_path, "hudi-cluster-broken", "broken = hudi_cluster_broken_missing_module")
    done = _cli_with_path(tmp_path, "plugins")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "plugin hudi-cluster-broken: entry point broken = hudi_cluster_broken_missing_module" in done.stderr
    assert "hudi_cluster_strategies" in done.stderr and "ModuleNotFoundError" in done.stderr


def test_plugin_with_a_bad_hook_signature_is_one_line_at_the_cli(tmp_path):
    (tmp_path / "hudi_cluster_bad_hook.py").write_text(
        "from hudi_cluster_core.sdk import hookimpl\n"
        "class Bad:\n"
        "    name, kind = 'bad-hook', 'plan'\n"
        "    @hookimpl\n"
        "    def plan_group_slices(self, context, slices, limits):\n"
        "        return []\n"
        "@hookimpl\n"
        "def hudi_cluster_strategies():\n"
        "    return [Bad()]\n"
    )
    _fake_distribution(tmp_path, "hudi-cluster-bad-hook", "bad-hook = hudi_cluster_bad_hook")
    done = _cli_with_path(tmp_path, "plugins")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "plugin hudi-cluster-bad-hook: plan strategy 'bad-hook': hook plan_group_slices(context, slices, limits)" in done.stderr


def test_trace_env_var_prints_hook_calls():
    code = (
        "from types import SimpleNamespace as NS\n"
        "from hudi_cluster_core.plugins import default_registry, call_hook\n"
        "s = default_registry().resolve('plan', 'size-based')\n"
        "ctx = NS(partitions=(), pending_file_groups={}, config=NS(small_file_limit=100))\n"
        "print(call_hook(s, 'plan_select_slices', context=ctx, slices=[]))\n"
    )
    env = {**os.environ, "HUDI_CLUSTER_TRACE_HOOKS": "1"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    assert done.stderr == (
        "hudi-cluster hook plan:size-based plan_select_slices(context=SimpleNamespace, slices=list[0]) [core default] -> list[0]\n"
    )


def test_trace_shows_a_group_task_in_one_short_line():
    from types import SimpleNamespace as NS

    from hudi_cluster_core.plugins import _brief

    task = type("GroupTask", (), {"group": NS(partition="us", slices=(1, 2, 3), num_output_file_groups=2)})()
    assert _brief(task) == "GroupTask(partition='us', slices=3, output files=2)"


# ------------------------------------------------------------------- one plugin manager, core defaults trylast


def test_the_core_defaults_are_one_plugin_with_every_hook_trylast():
    from hudi_cluster_core import plugins

    defaults = plugins._manager.get_plugin("hudi-cluster-core-defaults")
    implementations = [i for hook in ("plan_select_slices", "plan_finalize_groups", "plan_execution_strategy")
                       for i in getattr(plugins._manager.hook, hook).get_hookimpls() if i.plugin is defaults]  # fmt: skip
    assert len(implementations) == 3 and all(i.trylast for i in implementations)
    registry = default_registry()
    names = {plugins._manager.get_name(p) for p, _ in plugins._manager.list_plugin_distinfo()}
    assert {"size-based", "commit-time"} <= names  # pluggy's own loader, one manager for every distribution
    assert all(plugins._manager.is_registered(registry.resolve(i.kind, i.name)) for i in registry.infos())


def test_a_hook_runs_on_the_configured_strategy_alone():
    class Other(_Plan):
        name = "other-plan"

        @hookimpl
        def plan_select_slices(self, context, slices):
            raise AssertionError("another strategy's hook ran")

    registry = StrategyRegistry(extra_plugins=(_plugin(_Plan(), Other(), _OnlyGroups()),), load_entry_points=False)
    assert call_hook(registry.resolve("plan", "demo-plan"), "plan_select_slices", context=None, slices=[1]) == [1]
    context = _context(**{"hoodie.clustering.plan.strategy.small.file.limit": 100})
    assert call_hook(registry.resolve("plan", "only-groups"), "plan_select_slices", context=context,
                     slices=[_slice("small", 10), _slice("big", 100)]) == [_slice("small", 10)]  # fmt: skip


def test_a_hook_answering_none_hands_the_call_to_the_core_default():
    class Declines(_OnlyGroups):
        name = "declines"

        @hookimpl
        def plan_finalize_groups(self, context, groups):
            return None

    strategy = StrategyRegistry(extra_plugins=(_plugin(Declines()),), load_entry_points=False).resolve("plan", "declines")
    context = _context(**{"hoodie.clustering.plan.strategy.max.num.groups": 1})
    assert call_hook(strategy, "plan_finalize_groups", context=context, groups=["a", "b"]) == ["a"]


def test_a_strategy_no_registry_holds_is_registered_and_only_the_last_few_stay():
    from hudi_cluster_core import plugins

    before = len(plugins._manager.get_plugins()) - len(plugins._strays)
    for n in range(3 * plugins.MAX_STRAYS):  # as a reused Spark worker unpickles a copy of the strategy per task
        assert call_hook(_Plan(), "plan_select_slices", context=None, slices=[n]) == [n]
    assert len(plugins._manager.get_plugins()) == before + plugins.MAX_STRAYS


def test_a_strategy_with_eq_is_refused():
    from dataclasses import dataclass

    @dataclass
    class ByValue(_OnlyGroups):
        name: str = "by-value"

    with pytest.raises(PluginError, match="plan strategy 'by-value': defines __eq__"):
        StrategyRegistry(extra_plugins=(_plugin(ByValue()),), load_entry_points=False)


# ------------------------------------------------------------------------------------- the protocols


def test_a_strategy_subclassing_its_protocol_gets_the_defaults_it_leaves_out():
    from hudi_cluster_core.sdk import PlanStrategy

    class Typed(PlanStrategy):
        name = "typed"

        @hookimpl
        def plan_group_slices(self, context, slices):
            return [PlannedGroup((s,), 1) for s in slices]

        @hookimpl
        def plan_finalize_groups(self, context, groups):
            return super().plan_finalize_groups(context, list(reversed(groups)))  # the default, as Python's super()

    registry = StrategyRegistry(extra_plugins=(_plugin(Typed()),), load_entry_points=False)
    strategy = registry.resolve("plan", "typed")
    assert strategy.kind == "plan" and registry.info(strategy).hooks == ("plan_group_slices", "plan_finalize_groups")
    context = _context(**{"hoodie.clustering.plan.strategy.small.file.limit": 100,
                          "hoodie.clustering.plan.strategy.max.num.groups": 1})  # fmt: skip
    eligible = call_hook(strategy, "plan_select_slices", context=context, slices=[_slice("a", 10), _slice("b", 100)])
    assert [s.file_id for s in eligible] == ["a"]  # the core default (inherited, unmarked: pluggy never calls it)
    groups = call_hook(strategy, "plan_group_slices", context=context, slices=[_slice("a", 10), _slice("c", 10)])
    assert [g.slices[0].file_id for g in call_hook(strategy, "plan_finalize_groups", context=context, groups=groups)] == ["c"]


def test_a_protocol_subclass_without_its_required_hook_is_refused():
    from hudi_cluster_core.sdk import ExecutionStrategy

    class NoExecute(ExecutionStrategy):
        name = "no-execute"

    with pytest.raises(PluginError, match="execution strategy 'no-execute' does not implement the required hook execute_group"):
        StrategyRegistry(extra_plugins=(_plugin(NoExecute()),), load_entry_points=False)
