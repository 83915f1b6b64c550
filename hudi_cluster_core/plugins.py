"""Strategy discovery and invocation.

Only strategies of distributions registered under the ``hudi_cluster.strategies`` entry-point group load: a
configured class name is looked up among them, never imported, so configuration cannot import arbitrary code.
"""

from __future__ import annotations

import difflib
import inspect
import os
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

import pluggy

from . import hookspecs
from .errors import PluginError

ENTRY_POINT_GROUP = "hudi_cluster.strategies"
TRACE_ENV = "HUDI_CLUSTER_TRACE_HOOKS"
KINDS = ("plan", "execution", "update")
# Every hook of a kind, in the order the core calls them; REQUIRED_HOOKS must be implemented, the others have a
# core default (hookspecs.py's table).
KIND_HOOKS = {
    "plan": ("plan_select_slices", "plan_group_slices", "plan_finalize_groups", "plan_execution_strategy"),
    "execution": ("execute_group", "execution_splits_group", "execution_before_commit", "bucket_file_ids"),
    "update": ("update_decide",),
}
REQUIRED_HOOKS = {"plan": ("plan_group_slices",), "execution": ("execute_group",), "update": ("update_decide",)}
OPTIONAL_HOOKS = {kind: tuple(h for h in hooks if h not in REQUIRED_HOOKS[kind]) for kind, hooks in KIND_HOOKS.items()}
_IMPL_MARK = hookspecs.PROJECT_NAME + "_impl"  # the attribute pluggy's hookimpl marker sets on a function

# Hudi's own strategy classes and the distribution of ours that provides each, so a missing one gets a useful hint.
_P = "org.apache.hudi.client.clustering.plan.strategy."
_R = "org.apache.hudi.client.clustering.run.strategy."
_U = "org.apache.hudi.client.clustering.update.strategy."
KNOWN_JAVA_CLASSES = {
    _P + "SparkSizeBasedClusteringPlanStrategy": "hudi-cluster-size-based",
    _R + "SparkSortAndSizeExecutionStrategy": "hudi-cluster-size-based",
    _P + "SparkSingleFileSortPlanStrategy": "hudi-cluster-single-file-sort",
    _R + "SparkSingleFileSortExecutionStrategy": "hudi-cluster-single-file-sort",
    _P + "SparkConsistentBucketClusteringPlanStrategy": "hudi-cluster-consistent-bucket",
    _R + "SparkConsistentBucketClusteringExecutionStrategy": "hudi-cluster-consistent-bucket",
    _U + "SparkRejectUpdateStrategy": "hudi-cluster-update-strategies",
    _U + "SparkAllowUpdateStrategy": "hudi-cluster-update-strategies",
    _U + "SparkConsistentBucketDuplicateUpdateStrategy": "hudi-cluster-update-strategies",
    _R + "SingleSparkJobConsistentHashingExecutionStrategy": "hudi-cluster-consistent-bucket",
}
# our families' short names, for the same hint
KNOWN_SHORT_NAMES = {
    "size-based": "hudi-cluster-size-based", "sort-and-size": "hudi-cluster-size-based",
    "single-file-sort": "hudi-cluster-single-file-sort", "commit-time": "hudi-cluster-commit-time",
    "key-range": "hudi-cluster-key-range", "space-curve": "hudi-cluster-space-curve",
    "consistent-bucket": "hudi-cluster-consistent-bucket", "reject": "hudi-cluster-update-strategies",
    "allow": "hudi-cluster-update-strategies", "consistent-bucket-duplicate": "hudi-cluster-update-strategies",
}  # fmt: skip


@dataclass(frozen=True)
class StrategyInfo:
    name: str
    kind: str
    java_class_names: tuple[str, ...]
    summary: str
    distribution: str
    version: str
    hooks: tuple[str, ...]

    def to_json(self) -> dict:
        return {
            "name": self.name, "kind": self.kind, "java_class_names": list(self.java_class_names),
            "summary": self.summary, "hooks": list(self.hooks),
        }  # fmt: skip


def _entry_points() -> list[tuple[Any, Any]]:
    """``(distribution, entry point)`` of every plugin; two distributions claiming one entry-point name is an
    error (pluggy would load the first and skip the other silently)."""
    from importlib.metadata import distributions

    found: list[tuple[Any, Any]] = []
    owners: dict[str, str] = {}
    for dist in distributions():
        for entry_point in dist.entry_points:
            if entry_point.group != ENTRY_POINT_GROUP:
                continue
            name = dist.metadata["Name"]
            other = owners.setdefault(entry_point.name, name)
            if other != name:
                raise PluginError(
                    f"entry point '{entry_point.name}' in group {ENTRY_POINT_GROUP} is declared by both {other} and "
                    f"{name}; rename one of them"
                )
            if all(e.name != entry_point.name for _, e in found):  # one distribution may be found twice on sys.path
                found.append((dist, entry_point))
    return sorted(found, key=lambda pair: pair[1].name)


def _one_line(text: object) -> str:
    return "; ".join(line.strip() for line in str(text).splitlines() if line.strip())


def _new_manager() -> pluggy.PluginManager:
    manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    manager.add_hookspecs(hookspecs)
    return manager


def _spec_arguments(hook: str) -> tuple[str, ...]:
    return tuple(inspect.signature(getattr(hookspecs, hook)).parameters)


def _check_hook_methods(strategy: Any, where: str) -> None:
    """The mistakes pluggy would let pass silently or report over several lines: a hook method without
    ``@hookimpl`` (never called), a marked method that is no hook (a misspelt name), arguments the spec lacks."""
    kind_hooks = KIND_HOOKS[strategy.kind]
    for attribute in dir(strategy):
        method = getattr(strategy, attribute, None)
        if not callable(method):
            continue
        marked = hasattr(method, _IMPL_MARK)
        if attribute in kind_hooks and not marked:
            raise PluginError(f"{where}: hook {attribute} is not marked @hookimpl, so it would never be called")
        if not marked:
            continue
        if not hasattr(hookspecs, attribute) or attribute == "hudi_cluster_strategies":
            close = difflib.get_close_matches(attribute, kind_hooks, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"{strategy.kind} hooks: {', '.join(kind_hooks)}"
            raise PluginError(f"{where}: '{attribute}' is marked @hookimpl but is no {strategy.kind} hook; {hint}")
        given = tuple(inspect.signature(method).parameters)
        unknown = [name for name in given if name not in _spec_arguments(attribute)]
        if unknown:
            raise PluginError(
                f"{where}: hook {attribute}({', '.join(given)}) takes {', '.join(unknown)}, which the core does not "
                f"pass; the hook's arguments are ({', '.join(_spec_arguments(attribute))})"
            )


class StrategyRegistry:
    """The installed strategies, by kind and by every name they answer to."""

    def __init__(self, extra_plugins: tuple[Any, ...] = (), load_entry_points: bool = True):
        self._manager = _new_manager()
        plugins: list[tuple[Any, str, str]] = []  # (module, distribution, version)
        if load_entry_points:
            for dist, entry_point in _entry_points():
                name = dist.metadata["Name"]
                try:
                    plugins.append((entry_point.load(), name, dist.version))
                except Exception as exc:  # any failure to import a plugin names the plugin, not a traceback
                    raise PluginError(
                        f"plugin {name}: entry point {entry_point.name} = {entry_point.value} (hook "
                        f"hudi_cluster_strategies) fails to import: {type(exc).__name__}: {_one_line(exc)}"
                    ) from exc
        plugins += [(plugin, getattr(plugin, "__name__", type(plugin).__name__), "") for plugin in extra_plugins]
        self._strategies: dict[tuple[str, str], tuple[Any, StrategyInfo]] = {}
        self._aliases: dict[tuple[str, str], str] = {}
        for plugin, dist_name, version in plugins:
            for strategy in self._strategies_of(plugin, dist_name):
                self._add(strategy, dist_name, version)

    def _strategies_of(self, plugin: Any, distribution: str) -> list[Any]:
        where = f"plugin {distribution}: hook hudi_cluster_strategies"
        try:
            self._manager.register(plugin)
        except ValueError:
            return []  # the same module registered twice (an extra plugin that is also installed)
        except pluggy.PluginValidationError as exc:
            raise PluginError(f"{where}: {_one_line(exc)}") from None
        implementation = getattr(plugin, "hudi_cluster_strategies", None)
        if not callable(implementation) or not hasattr(implementation, _IMPL_MARK):
            raise PluginError(f"{where}: the module has no hudi_cluster_strategies() marked @hookimpl")
        try:
            return list(implementation() or [])
        except Exception as exc:
            raise PluginError(f"{where} failed: {type(exc).__name__}: {_one_line(exc)}") from exc

    def _add(self, strategy: Any, distribution: str, version: str) -> None:
        name, kind = getattr(strategy, "name", None), getattr(strategy, "kind", None)
        if not name or kind not in KINDS:
            raise PluginError(
                f"plugin {distribution}: hook hudi_cluster_strategies: strategy {strategy!r} needs a 'name' and a "
                f"'kind' in {', '.join(KINDS)}"
            )
        where = f"plugin {distribution}: {kind} strategy '{name}'"
        _check_hook_methods(strategy, where)
        hooks = tuple(h for h in KIND_HOOKS[kind] if hasattr(getattr(strategy, h, None), _IMPL_MARK))
        missing = [h for h in REQUIRED_HOOKS[kind] if h not in hooks]
        if missing:
            raise PluginError(f"{where} does not implement the required hook {', '.join(missing)}")
        if (kind, name) in self._strategies:
            other = self._strategies[(kind, name)][1].distribution
            raise PluginError(
                f"{kind} strategy '{name}' is provided by both {other} and {distribution} (hook "
                f"hudi_cluster_strategies); uninstall one of them or rename the strategy"
            )
        try:
            _single_manager(strategy)  # pluggy's own validation, now rather than mid-run
        except pluggy.PluginValidationError as exc:
            raise PluginError(f"{where}: {_one_line(exc)}") from None
        info = StrategyInfo(
            name, kind, tuple(getattr(strategy, "java_class_names", ())), getattr(strategy, "summary", ""),
            distribution, version, hooks,
        )  # fmt: skip
        self._strategies[(kind, name)] = (strategy, info)
        for alias in (name, *info.java_class_names):
            self._aliases[(kind, alias)] = name

    def infos(self, kind: str | None = None) -> list[StrategyInfo]:
        return sorted(
            (info for (k, _), (_, info) in self._strategies.items() if kind in (None, k)),
            key=lambda i: (i.distribution, KINDS.index(i.kind), i.name),
        )

    def resolve(self, kind: str, name: str, *, config_key: str | None = None) -> Any:
        """The strategy of ``kind`` answering to a short name or a Hudi Java class name."""
        canonical = self._aliases.get((kind, name.strip()))
        if canonical is not None:
            return self._strategies[(kind, canonical)][0]
        raise PluginError(self._unknown_message(kind, name.strip(), config_key))

    def info(self, strategy: Any) -> StrategyInfo:
        return self._strategies[(strategy.kind, strategy.name)][1]

    def _unknown_message(self, kind: str, name: str, config_key: str | None) -> str:
        where = f"{config_key}={name}" if config_key else f"'{name}'"
        distribution = KNOWN_JAVA_CLASSES.get(name) or KNOWN_SHORT_NAMES.get(name)
        if distribution:
            return (
                f"{where}: no installed plugin provides this {kind} strategy; install the distribution "
                f"'{distribution}' (pip install plugins/{distribution.removeprefix('hudi-cluster-')})"
            )
        names = sorted(alias for (k, alias) in self._aliases if k == kind)
        short = sorted(n for (k, n) in self._strategies if k == kind)
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        installed = ", ".join(short) if short else "none (no plugin is installed)"
        return f"{where}: unknown {kind} strategy{hint} Installed {kind} strategies: {installed}"


@lru_cache(maxsize=None)
def _single_manager_by_id(key: int, strategy: Any) -> pluggy.PluginManager:
    manager = _new_manager()
    manager.register(strategy, name=f"{strategy.kind}:{strategy.name}")
    return manager


def _single_manager(strategy: Any) -> pluggy.PluginManager:
    return _single_manager_by_id(id(strategy), strategy)


def core_default(kind: str, hook: str) -> Callable[..., Any] | None:
    """The core's implementation of an optional hook, used when a strategy does not implement it."""
    if kind != "plan":
        return None  # execution_splits_group's default answer is None (no), execution_before_commit does nothing
    from .plan.defaults import PLAN_HOOK_DEFAULTS

    return PLAN_HOOK_DEFAULTS.get(hook)


def call_hook(strategy: Any, hook: str, **kwargs: Any) -> Any:
    """Call ``hook`` on ``strategy``: its own implementation through pluggy (signature checked), else the core's
    default for that hook (None if the hook has none). The one way the core calls a strategy."""
    caller = getattr(_single_manager(strategy).hook, hook)
    default = None if caller.get_hookimpls() else core_default(strategy.kind, hook)
    if default is not None:
        result = default(**kwargs)
    else:
        result = caller(**kwargs)
    if os.environ.get(TRACE_ENV):
        _trace(strategy, hook, kwargs, result, by_default=default is not None)
    return result


def _trace(strategy: Any, hook: str, kwargs: dict[str, Any], result: Any, *, by_default: bool) -> None:
    arguments = ", ".join(f"{name}={_brief(value)}" for name, value in kwargs.items())
    source = " [core default]" if by_default else ""
    sys.stderr.write(f"hudi-cluster hook {strategy.kind}:{strategy.name} {hook}({arguments}){source} -> {_brief(result)}\n")


def _brief(value: Any) -> str:
    """A value in a few words: a trace line per hook call, not a dump of every slice."""
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, str):
        return repr(value if len(value) <= 60 else value[:57] + "...")
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        return f"{type(value).__name__}[{len(value)}]"
    group = getattr(value, "group", None)  # a GroupTask: which group, how big
    if group is not None and hasattr(group, "slices"):
        return (f"{type(value).__name__}(partition={getattr(group, 'partition', '')!r}, slices={len(group.slices)}, "
                f"output files={getattr(group, 'num_output_file_groups', '?')})")  # fmt: skip
    return type(value).__name__


@lru_cache(maxsize=1)
def default_registry() -> StrategyRegistry:
    return StrategyRegistry()
