"""Strategy discovery and invocation, through one pluggy ``PluginManager`` for the process.

Only strategies of distributions registered under the ``hudi_cluster.strategies`` entry-point group load (pluggy's
``load_setuptools_entrypoints``): a configured class name is looked up among them, never imported, so
configuration cannot import arbitrary code. The core's defaults for optional hooks are a plugin of the same
manager, every hook ``trylast`` (:class:`~hudi_cluster_core.plan.defaults.CoreDefaults`); a hook is called on the
configured strategy alone (pluggy's ``subset_hook_caller``), its own implementation first, then the default.
"""

from __future__ import annotations

import logging
import os
import threading
from functools import lru_cache
from importlib.metadata import entry_points
from typing import Any

import pluggy

from . import hook_trace, hookspecs
from .config.strategy_names import unknown_strategy
from .config.strategy_params import add_key_source, describe_params
from .errors import HudiClusterError, PluginError, StrategyFailed
from .plan.defaults import CoreDefaults
from .protocols import IMPL_MARK, KINDS, REQUIRED_HOOKS, StrategyInfo, check_strategy  # noqa: F401 - public here

ENTRY_POINT_GROUP = "hudi_cluster.strategies"
MAX_STRAYS = 8
log = logging.getLogger(__name__)

_manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
_manager.add_hookspecs(hookspecs)
_CORE_DEFAULTS = CoreDefaults()
_manager.register(_CORE_DEFAULTS, name="hudi-cluster-core-defaults")
if os.environ.get(hook_trace.TRACE_ENV):
    _manager.add_hookcall_monitoring(hook_trace.before, hook_trace.after)
# Strategies are told apart by identity (pluggy compares plugins with ==): every one a registry registered, held
# so its id is never reused, and the few call_hook registered itself (copies unpickled in a task), oldest first.
_registered: dict[int, Any] = {}
_strays: dict[int, Any] = {}
_lock = threading.Lock()


def _one_line(text: object) -> str:
    return "; ".join(line.strip() for line in str(text).splitlines() if line.strip())


def _load_entry_points() -> list[tuple[Any, str, str]]:
    """``(module, distribution, version)`` of every installed plugin, loaded by pluggy (which would skip a second
    distribution's entry point of the same name silently: an error here)."""
    points = entry_points(group=ENTRY_POINT_GROUP)
    owners: dict[str, str] = {}
    for point in points:
        owner = owners.setdefault(point.name, name := point.dist.metadata["Name"] if point.dist else "?")
        if owner != name:
            raise PluginError(f"entry point '{point.name}' in group {ENTRY_POINT_GROUP} is declared by both {owner} "
                              f"and {name}; rename one of them")  # fmt: skip
    try:
        _manager.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    except Exception as exc:  # pluggy loads them in this order and stops at the first that fails
        failed = next((e for e in points if not _manager.has_plugin(e.name)), None)
        what = f"plugin {owners[failed.name]}: entry point {failed.name} = {failed.value}" if failed else "a plugin"
        raise PluginError(f"{what} (hook hudi_cluster_strategies) fails to import: {type(exc).__name__}: "
                          f"{_one_line(exc)}") from exc  # fmt: skip
    return sorted(((plugin, dist.project_name, dist.version) for plugin, dist in _manager.list_plugin_distinfo()),
                  key=lambda entry: entry[1])  # fmt: skip


def _strategies_of(plugin: Any, distribution: str) -> list[Any]:
    where = f"plugin {distribution}: hook hudi_cluster_strategies"
    implementation: Any = getattr(plugin, "hudi_cluster_strategies", None)
    if not hasattr(implementation, IMPL_MARK):
        raise PluginError(f"{where}: the module has no hudi_cluster_strategies() marked @hookimpl")
    try:
        return list(implementation() or [])
    except Exception as exc:
        raise PluginError(f"{where} failed: {type(exc).__name__}: {_one_line(exc)}") from exc


def _register(strategy: Any, name: str, where: str) -> None:
    try:
        _manager.register(strategy, name=name)  # pluggy's validation of the hooks, now
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"{where}: {_one_line(exc)}") from None


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
            raise PluginError(f"{kind} strategy '{name}' is provided by both {other} and {distribution} (hook "
                              f"hudi_cluster_strategies); uninstall one of them or rename the strategy")  # fmt: skip
        if getattr(type(strategy), "__eq__") is not getattr(object, "__eq__"):  # pluggy tells plugins apart by ==
            raise PluginError(f"{where}: defines __eq__; a strategy object is compared by identity (@dataclass(eq=False))")
        if _registered.get(id(strategy)) is not strategy:
            _register(strategy, f"{kind}:{name}#{id(strategy)}", where)
            _registered[id(strategy)] = strategy
        info = StrategyInfo(
            name, kind, tuple(getattr(strategy, "java_class_names", ())), getattr(strategy, "summary", ""),
            distribution, version, hooks, describe_params(getattr(strategy, "params_model", None)),
        )  # fmt: skip
        self._strategies[(kind, name)] = (strategy, info)
        for alias in (name, *info.java_class_names):
            self._aliases[(kind, alias)] = name

    def infos(self, kind: str | None = None) -> list[StrategyInfo]:
        return sorted((info for (k, _), (_, info) in self._strategies.items() if kind in (None, k)),
                      key=lambda i: (i.distribution, KINDS.index(i.kind), i.name))  # fmt: skip

    def resolve(self, kind: str, name: str, *, config_key: str | None = None) -> Any:
        """The strategy of ``kind`` answering to a short name or a Hudi Java class name."""
        canonical = self._aliases.get((kind, name.strip()))
        if canonical is not None:
            return self._strategies[(kind, canonical)][0]
        aliases, installed = [a for k, a in self._aliases if k == kind], [n for k, n in self._strategies if k == kind]
        raise PluginError(unknown_strategy(kind, name.strip(), config_key, aliases, installed))

    def info(self, strategy: Any) -> StrategyInfo:
        return self._strategies[(strategy.kind, strategy.name)][1]


def call_hook(strategy: Any, hook: str, **kwargs: Any) -> Any:
    """Call ``hook`` on ``strategy`` alone: its own implementation, else the core's default for that hook (None if
    the hook has none). The one way the core calls a strategy. A strategy no registry holds (a copy unpickled in a
    Spark task, one handed to the conformance kit) is registered on its first call, among the last few such.
    An error of the strategy's own (not a :class:`HudiClusterError`, not the store's ``OSError``) becomes a
    :class:`StrategyFailed` naming the strategy and its plugin."""
    kind, name = getattr(strategy, "kind", "?"), getattr(strategy, "name", "?")
    with _lock:
        if _registered.get(id(strategy)) is not strategy and _strays.get(id(strategy)) is not strategy:
            _register(strategy, f"call#{id(strategy)}", f"{kind} strategy '{name}'")
            _strays[id(strategy)] = strategy
            while len(_strays) > MAX_STRAYS:  # a reused Spark worker unpickles a copy per task: keep a few
                _manager.unregister(_strays.pop(next(iter(_strays))))
        others = [p for p in _manager.get_plugins() if p is not strategy and p is not _CORE_DEFAULTS]
        caller = _manager.subset_hook_caller(hook, remove_plugins=others)
    token = hook_trace.calling.set(strategy)
    try:
        return caller(**kwargs)
    except (HudiClusterError, OSError):
        raise  # input, a run's own errors and the store's say what they are
    except Exception as exc:
        where = f"{kind} strategy '{name}' ({_provider(strategy)})"
        log.debug("%s: hook %s failed", where, hook, exc_info=True)  # -v shows the traceback
        raise StrategyFailed(f"{where}: hook {hook} raised {type(exc).__name__}: {_one_line(exc)}") from exc
    finally:
        hook_trace.calling.reset(token)


def _provider(strategy: Any) -> str:
    """The installed distribution whose entry point's package holds the strategy's class, else its module (the
    same in a Spark task, where no registry loaded the plugins)."""
    module = type(strategy).__module__
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.dist and point.module.split(".")[0] == module.split(".")[0]:
            return f"plugin {point.dist.metadata['Name']} {point.dist.version}"
    return f"module {module}"


@lru_cache(maxsize=1)
def default_registry() -> StrategyRegistry:
    return StrategyRegistry()


add_key_source(default_registry)  # config asks through params for the keys of the installed plugins' params models
