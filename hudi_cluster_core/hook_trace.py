"""``HUDI_CLUSTER_TRACE_HOOKS=1``: one line on stderr per hook call, through pluggy's hook-call monitoring.

A line names the strategy, the hook, its arguments in a few words each and the result, and says when the core's
default answered for a hook the strategy does not implement.
"""

from __future__ import annotations

import contextvars
import sys
from typing import Any, Mapping, Sequence

import pluggy

TRACE_ENV = "HUDI_CLUSTER_TRACE_HOOKS"
# The strategy being called: a hook the strategy leaves to the core's default has none of its implementations.
calling: contextvars.ContextVar[Any] = contextvars.ContextVar("hudi_cluster_calling")


def before(hook: str, implementations: Sequence[pluggy.HookImpl], kwargs: Mapping[str, Any]) -> None:
    """Nothing to say before the call: the line waits for the result."""


def after(outcome: pluggy.Result[Any], hook: str, implementations: Sequence[pluggy.HookImpl],
          kwargs: Mapping[str, Any]) -> None:  # fmt: skip
    strategy = calling.get(None)
    if strategy is None or outcome.exception is not None:
        return
    arguments = ", ".join(f"{name}={brief(value)}" for name, value in kwargs.items())
    source = "" if any(i.plugin is strategy for i in implementations) else " [core default]"
    sys.stderr.write(f"hudi-cluster hook {strategy.kind}:{strategy.name} {hook}({arguments}){source} -> "
                     f"{brief(outcome.get_result())}\n")  # fmt: skip


def brief(value: Any) -> str:
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
