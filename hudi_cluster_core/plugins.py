"""Strategy discovery and invocation.

Only strategies of distributions registered under the ``hudi_cluster.strategies`` entry-point group load: a
configured class name is looked up among them, never imported, so configuration cannot import arbitrary code.
"""

from __future__ import annotations

import difflib
import os
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import pluggy

from . import hookspecs
from .errors import PluginError

ENTRY_POINT_GROUP = "hudi_cluster.strategies"
TRACE_ENV = "HUDI_CLUSTER_TRACE_HOOKS"
KINDS = ("plan", "execution", "update")
KIND_HOOKS = {
    "plan": ("plan_select_slices", "plan_group_slices", "plan_finalize_groups", "plan_execution_strategy"),
    "execution": ("execute_group",),
    "update": ("update_decide",),
}
OPTIONAL_HOOKS = {"plan": (), "execution": ("execution_before_commit",), "update": ()}

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


def _check_entry_point_names() -> None:
    """pluggy skips a second entry point of the same name silently; two distributions claiming one is an error."""
    from importlib.metadata import distributions

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


def _new_manager() -> pluggy.PluginManager:
    manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    manager.add_hookspecs(hookspecs)
    if os.environ.get(TRACE_ENV):
        manager.trace.root.setwriter(sys.stderr.write)
        manager.enable_tracing()
    return manager


class StrategyRegistry:
    """The installed strategies, by kind and by every name they answer to."""

    def __init__(self, extra_plugins: tuple[Any, ...] = (), load_entry_points: bool = True):
        self._manager = _new_manager()
        if load_entry_points:
            _check_entry_point_names()
            self._manager.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
        for plugin in extra_plugins:
            self._manager.register(plugin)
        distributions = {id(plugin): dist for plugin, dist in self._manager.list_plugin_distinfo()}
        self._strategies: dict[tuple[str, str], tuple[Any, StrategyInfo]] = {}
        self._aliases: dict[tuple[str, str], str] = {}
        for impl in self._manager.hook.hudi_cluster_strategies.get_hookimpls():
            dist = distributions.get(id(impl.plugin))
            dist_name = dist.project_name if dist else getattr(impl.plugin, "__name__", type(impl.plugin).__name__)
            for strategy in impl.function() or []:
                self._add(strategy, dist_name, dist.version if dist else "")

    def _add(self, strategy: Any, distribution: str, version: str) -> None:
        name, kind = getattr(strategy, "name", None), getattr(strategy, "kind", None)
        if not name or kind not in KINDS:
            raise PluginError(
                f"plugin {distribution}: strategy {strategy!r} needs a 'name' and a 'kind' in {', '.join(KINDS)}"
            )
        hooks = tuple(h for h in KIND_HOOKS[kind] + OPTIONAL_HOOKS[kind] if callable(getattr(strategy, h, None)))
        missing = sorted(set(KIND_HOOKS[kind]) - set(hooks))
        if missing:
            raise PluginError(f"plugin {distribution}: {kind} strategy '{name}' does not implement {', '.join(missing)}")
        if (kind, name) in self._strategies:
            other = self._strategies[(kind, name)][1].distribution
            raise PluginError(f"{kind} strategy '{name}' is provided by both {other} and {distribution}")
        try:
            _single_manager(strategy)  # validates the hook signatures against the specs now, not mid-run
        except pluggy.PluginValidationError as exc:
            raise PluginError(f"plugin {distribution}: {kind} strategy '{name}': {exc}") from None
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


def call_hook(strategy: Any, hook: str, **kwargs: Any) -> Any:
    """Call one hook on one strategy, through pluggy (so tracing and signature checks apply)."""
    return getattr(_single_manager(strategy).hook, hook)(**kwargs)


@lru_cache(maxsize=1)
def default_registry() -> StrategyRegistry:
    return StrategyRegistry()
