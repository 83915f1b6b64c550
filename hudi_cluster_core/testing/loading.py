"""A plugin's strategies as the core loads them, for its tests: through the registry's checks (names, hooks),
from the installed distribution or from a checkout of the plugin that is not installed."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any


def load_strategy(
    kind: str, name: str, module: str | ModuleType | None = None, *, search_path: str | Path | None = None
) -> Any:
    """The ``kind`` strategy answering to ``name`` (its short name or one of its ``java_class_names``).

    Without ``module``: among the installed plugins (entry points), as a run finds it. With ``module`` (a plugin
    module, or its import name): from that module alone, imported from ``search_path`` (e.g. the plugin's checkout)
    when it is not installed, so a plugin's tests pass installed or not. Either way the strategy goes through the
    registry's checks, and a broken plugin fails with the registry's one-line message."""
    from ..plugins import StrategyRegistry, default_registry

    if module is None:
        return default_registry().resolve(kind, name)
    if isinstance(module, str):
        module = import_plugin(module, search_path)
    return StrategyRegistry(extra_plugins=(module,), load_entry_points=False).resolve(kind, name)


def import_plugin(package: str, search_path: str | Path | None = None) -> ModuleType:
    """``import package``, or, if it is not installed, the copy under ``search_path``."""
    try:
        return importlib.import_module(package)
    except ModuleNotFoundError as exc:
        if exc.name != package or search_path is None:
            raise  # the package is there but one of its imports is not, or there is nowhere else to look
        sys.path.insert(0, str(Path(search_path).resolve()))
        return importlib.import_module(package)


__all__ = ["import_plugin", "load_strategy"]
