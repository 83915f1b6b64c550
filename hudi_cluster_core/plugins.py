"""Strategy discovery and invocation, through one pluggy ``PluginManager`` for the process.

Only strategies of distributions registered under the ``hudi_cluster.strategies`` entry-point group load (pluggy's
``load_setuptools_entrypoints``): a configured class name is looked up among them, never imported, so
configuration cannot import arbitrary code. The core's defaults for optional hooks are a plugin of the same
manager, every hook ``trylast`` (:class:`~hudi_cluster_core.plan.defaults.CoreDefaults`); a hook is called on the
configured strategy alone (pluggy's ``subset_hook_caller``), its own implementation first, then the default.
"""

from __future__ import annotations

import contextvars
import difflib
import os
import sys
import threading
from dataclasses import asdict, dataclass
from functools import lru_cache
from importlib.metadata import entry_points
from typing import Any, Mapping, Sequence

import pluggy

from . import hookspecs
from .errors import PluginError
from .config.strategy_params import add_key_source, describe_params
from .plan.defaults import CoreDefaults
from .protocols import IMPL_MARK, KINDS, REQUIRED_HOOKS, check_strategy  # noqa: F401 - REQUIRED_HOOKS: public here

ENTRY_POINT_GROUP = "hudi_cluster.strategies"
TRACE_ENV = "HUDI_CLUSTER_TRACE_HOOKS"

# Our distributions and the names they answer to (Hudi's Java classes, our short names), for a missing one's hint.
_P, _R = "org.apache.hudi.client.clustering.plan.strategy.Spark", "org.apache.hudi.client.clustering.run.strategy."
_U = "org.apache.hudi.client.clustering.update.strategy.Spark"
KNOWN_DISTRIBUTIONS = {
    "hudi-cluster-size-based": ("size-based", "sort-and-size", _P + "SizeBasedClusteringPlanStrategy",
                                _R + "SparkSortAndSizeExecutionStrategy"),
    "hudi-cluster-single-file-sort": ("single-file-sort", _P + "SingleFileSortPlanStrategy",
                                      _R + "SparkSingleFileSortExecutionStrategy"),
    "hudi-cluster-consistent-bucket": ("consistent-bucket", _P + "ConsistentBucketClusteringPlanStrategy",
                                       _R + "SparkConsistentBucketClusteringExecutionStrategy",
                                       _R + "SingleSparkJobConsistentHashingExecutionStrategy"),
    "hudi-cluster-update-strategies": ("reject", "allow", "consistent-bucket-duplicate", _U + "RejectUpdateStrategy",
                                       _U + "AllowUpdateStrategy", _U + "ConsistentBucketDuplicateUpdateStrategy"),
    "hudi-cluster-commit-time": ("commit-time",), "hudi-cluster-key-range": ("key-range",),
    "hudi-cluster-space-curve": ("space-curve",),
}  # fmt: skip

_manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
_manager.add_hookspecs(hookspecs)
_CORE_DEFAULTS = CoreDefaults()
_manager.register(_CORE_DEFAULTS, name="hudi-cluster-core-defaults")
_registered: dict[int, Any] = {}  # every strategy a registry registered, by id (held, so an id is never reused)
_strays: dict[int, Any] = {}  # the strategies call_hook registered itself, oldest first
MAX_STRAYS = 8
_lock = threading.Lock()
_calling: contextvars.ContextVar[Any] = contextvars.ContextVar("hudi_cluster_calling")  # for the trace


@dataclass(frozen=True)
class StrategyInfo:
    name: str
    kind: str
    java_class_names: tuple[str, ...]
    summary: str
    distribution: str
    version: str
    hooks: tuple[str, ...]
    keys: tuple[dict[str, Any], ...] = ()  # its params model's keys: key, type, default, required, description

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k not in ("distribution", "version")}


def _one_line(text: object) -> str:
    return "; ".join(line.strip() for line in str(text).splitlines() if line.strip())


def _load_entry_points() -> list[tuple[Any, str, str]]:
    """``(module, distribution, version)`` of every installed plugin, loaded by pluggy (which would skip a second
    distribution's entry point of the same name silently: an error here)."""
    owners: dict[str, str] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        owner = owners.setdefault(point.name, name := point.dist.metadata["Name"] if point.dist else "?")
        if owner != name:
            raise PluginError(f"entry point '{point.name}' in group {ENTRY_POINT_GROUP} is declared by both {owner} "
                              f"and {name}; rename one of them")  # fmt: skip
    try:
        _manager.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    except Exception as exc:  # pluggy loads them in this order and stops at the first that fails
        failed = next((e for e in entry_points(group=ENTRY_POINT_GROUP) if not _manager.has_plugin(e.name)), None)
        what = f"plugin {owners[failed.name]}: entry point {failed.name} = {failed.value}" if failed else "a plugin"
        raise PluginError(f"{what} (hook hudi_cluster_strategies) fails to import: {type(exc).__name__}: "
                          f"{_one_line(exc)}") from exc  # fmt: skip
    return sorted(((plugin, dist.project_name, dist.version) for plugin, dist in _manager.list_plugin_distinfo()),
                  key=lambda entry: entry[1])


def _strategies_of(plugin: Any, distribution: str) -> list[Any]:
    where = f"plugin {distribution}: hook hudi_cluster_strategies"
    implementation: Any = getattr(plugin, "hudi_cluster_strategies", None)
    if not hasattr(implementation, IMPL_MARK):
        raise PluginError(f"{where}: the module has no hudi_cluster_strategies() marked @hookimpl")
    try:
        return list(implementation() or [])
    except Exception as exc:
        raise PluginError(f"{where} failed: {type(exc).__name__}: {_one_line(exc)}") from exc


class StrategyRegistry:
    """The installed strategies, by kind and by every name they answer to."""

    def __init__(self, extra_plugins: tuple[Any, ...] = (), load_entry_points: bool = True):
        plugins = _load_entry_points() if load_entry_points else []
        plugins += [(plugin, getattr(plugin, "__name__", type(plugin).__name__), "") for plugin in extra_plugins]
        self._strategies: dict[tuple[str, str], tuple[Any, StrategyInfo]] = {}
        self._aliases: dict[tuple[str, str], str] = {}
        for plugin, distribution, version in plugins:
            for strategy in _strategies_of(plugin, distribution):
                self._add(strategy, distribution, version)

    def _add(self, strategy: Any, distribution: str, version: str) -> None:
        hooks = check_strategy(strategy, f"plugin {distribution}")
        name, kind = strategy.name, strategy.kind
        where = f"plugin {distribution}: {kind} strategy '{name}'"
        if (kind, name) in self._strategies:
            other = self._strategies[(kind, name)][1].distribution
            raise PluginError(
                f"{kind} strategy '{name}' is provided by both {other} and {distribution} (hook "
                f"hudi_cluster_strategies); uninstall one of them or rename the strategy"
            )
        if getattr(type(strategy), "__eq__") is not getattr(object, "__eq__"):  # pluggy tells plugins apart by ==
            raise PluginError(f"{where}: defines __eq__; a strategy object is compared by identity (@dataclass(eq=False))")
        if _registered.get(id(strategy)) is not strategy:
            try:
                _manager.register(strategy, name=f"{kind}:{name}#{id(strategy)}")  # pluggy's validation, now
            except pluggy.PluginValidationError as exc:
                raise PluginError(f"{where}: {_one_line(exc)}") from None
            _registered[id(strategy)] = strategy
        info = StrategyInfo(
            name, kind, tuple(getattr(strategy, "java_class_names", ())), getattr(strategy, "summary", ""),
            distribution, version, hooks, describe_params(getattr(strategy, "params_model", None)),
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
        distribution = next((d for d, names in KNOWN_DISTRIBUTIONS.items() if name in names), None)
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


def call_hook(strategy: Any, hook: str, **kwargs: Any) -> Any:
    """Call ``hook`` on ``strategy`` alone: its own implementation, else the core's default for that hook (None if
    the hook has none). The one way the core calls a strategy. A strategy no registry holds (a copy unpickled in a
    Spark task, one handed to the conformance kit) is registered on its first call, among the last few such."""
    if _registered.get(id(strategy)) is not strategy:
        with _lock:
            if _strays.get(id(strategy)) is not strategy:
                try:
                    _manager.register(strategy, name=f"call#{id(strategy)}")
                except pluggy.PluginValidationError as exc:
                    raise PluginError(f"{getattr(strategy, 'kind', '?')} strategy '{getattr(strategy, 'name', '?')}'"
                                      f": {_one_line(exc)}") from None  # fmt: skip
                _strays[id(strategy)] = strategy
                while len(_strays) > MAX_STRAYS:  # a reused Spark worker unpickles a copy per task: keep a few
                    _manager.unregister(_strays.pop(next(iter(_strays))))
    return _call(strategy, hook, kwargs)


def _call(strategy: Any, hook: str, kwargs: dict[str, Any]) -> Any:
    with _lock:
        others = [p for p in _manager.get_plugins() if p is not strategy and p is not _CORE_DEFAULTS]
        caller = _manager.subset_hook_caller(hook, remove_plugins=others)
    token = _calling.set(strategy)
    try:
        return caller(**kwargs)
    finally:
        _calling.reset(token)


def _trace(outcome: pluggy.Result[Any], hook: str, implementations: Sequence[pluggy.HookImpl],
           kwargs: Mapping[str, Any]) -> None:
    """pluggy's hook-call monitoring: one line per hook call on stderr."""
    strategy = _calling.get(None)
    if strategy is None or outcome.exception is not None:
        return
    arguments = ", ".join(f"{name}={_brief(value)}" for name, value in kwargs.items())
    source = "" if any(i.plugin is strategy for i in implementations) else " [core default]"
    sys.stderr.write(f"hudi-cluster hook {strategy.kind}:{strategy.name} {hook}({arguments}){source} -> "
                     f"{_brief(outcome.get_result())}\n")  # fmt: skip


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


if os.environ.get(TRACE_ENV):
    _manager.add_hookcall_monitoring(lambda hook, implementations, kwargs: None, _trace)


@lru_cache(maxsize=1)
def default_registry() -> StrategyRegistry:
    return StrategyRegistry()


add_key_source(default_registry)  # config asks through params for the keys of the installed plugins' params models
