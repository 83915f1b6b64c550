"""The three strategy interfaces as :class:`typing.Protocol` classes, for type checkers.

A strategy class that subclasses its kind's protocol (``class MyPlan(PlanStrategy)``, from
:mod:`hudi_cluster_core.sdk`) is checked by mypy against the hooks' specifications
(:mod:`hudi_cluster_core.hookspecs`): every hook it implements must take the hook's arguments, ``kind`` must be
its kind, and leaving out the required hook is an error where the strategy is made ("Cannot instantiate abstract
class"). ``tests/test_types.py`` runs mypy on the bundled plugins this way.

Nothing changes at run time: hooks are still marked ``@hookimpl``, and a hook the class does not implement is
inherited unmarked from here, so pluggy never calls it and the core's default applies. The inherited bodies are
those defaults too, so ``super().plan_finalize_groups(context, groups)`` does what the core would.
"""

from __future__ import annotations

import difflib
import inspect
from typing import TYPE_CHECKING, Any, Literal, Mapping, Protocol, Sequence

from . import hookspecs
from .errors import PluginError
from .plan.defaults import execution_strategy, finalize_groups, select_slices

if TYPE_CHECKING:
    from .config.strategy_params import StrategyParams
    from .plan.avro_plan import StoredPlan
    from .plan.model import PlanContext, PlannedGroup, UpdateContext, UpdateDecision
    from .run.task import GroupTask
    from .table import FileSlice, HudiTable

WriteStat = dict[str, Any]  # one written file's HoodieWriteStat fields, as GroupTask.write returns them


class _Strategy(Protocol):
    name: str  # the short name users configure
    java_class_names: tuple[str, ...] = ()  # more names it answers to (Hudi's Java classes)
    summary: str = ""
    params_model: type[StrategyParams] | None = None  # its own settings


class PlanStrategy(_Strategy, Protocol):
    kind: Literal["plan"] = "plan"

    def plan_select_slices(self, context: PlanContext, slices: list[FileSlice]) -> list[FileSlice]:
        return select_slices(context, slices)

    def plan_group_slices(self, context: PlanContext, slices: list[FileSlice]) -> list[PlannedGroup]:
        """Required."""

    def plan_finalize_groups(self, context: PlanContext, groups: list[PlannedGroup]) -> list[PlannedGroup]:
        return finalize_groups(context, groups)

    def plan_execution_strategy(self, context: PlanContext) -> tuple[str, Mapping[str, str]]:
        return execution_strategy(context)


class ExecutionStrategy(_Strategy, Protocol):
    kind: Literal["execution"] = "execution"

    def execute_group(self, task: GroupTask) -> Sequence[WriteStat]:
        """Required."""

    def execution_splits_group(self, task: GroupTask) -> bool:
        return False

    def execution_before_commit(self, table: HudiTable, plan: StoredPlan, write_stats: list[WriteStat]) -> None:
        return None

    def bucket_file_ids(self, table: HudiTable, partition: str, record_keys: Sequence[str], settings: Mapping[str, str],
                        after_clustering: str | None) -> Sequence[str] | None:  # fmt: skip
        return None


class UpdateStrategy(_Strategy, Protocol):
    kind: Literal["update"] = "update"

    def update_decide(self, context: UpdateContext) -> UpdateDecision:
        """Required."""


PROTOCOLS: Mapping[str, type] = {"plan": PlanStrategy, "execution": ExecutionStrategy, "update": UpdateStrategy}
KINDS = tuple(PROTOCOLS)
# Every hook of a kind, in the order the core calls them; REQUIRED_HOOKS must be implemented, the others have a
# core default (hookspecs.py's table).
KIND_HOOKS = {
    "plan": ("plan_select_slices", "plan_group_slices", "plan_finalize_groups", "plan_execution_strategy"),
    "execution": ("execute_group", "execution_splits_group", "execution_before_commit", "bucket_file_ids"),
    "update": ("update_decide",),
}
REQUIRED_HOOKS = {"plan": ("plan_group_slices",), "execution": ("execute_group",), "update": ("update_decide",)}
OPTIONAL_HOOKS = {kind: tuple(h for h in hooks if h not in REQUIRED_HOOKS[kind]) for kind, hooks in KIND_HOOKS.items()}
IMPL_MARK = hookspecs.PROJECT_NAME + "_impl"  # the attribute pluggy's hookimpl marker sets on a function


def check_strategy(strategy: Any, where: str) -> tuple[str, ...]:
    """The hooks ``strategy`` implements, once it is known to fit its kind: a ``name``, a ``kind``, the required
    hook, and none of the mistakes pluggy would let pass silently or report over several lines (a hook method
    without ``@hookimpl``, a marked method that is no hook, arguments the hook's specification lacks)."""
    name, kind = getattr(strategy, "name", None), getattr(strategy, "kind", None)
    if not name or kind not in KINDS:
        raise PluginError(f"{where}: hook hudi_cluster_strategies: strategy {strategy!r} needs a 'name' and a 'kind' "
                          f"in {', '.join(KINDS)}")  # fmt: skip
    where, kind_hooks = f"{where}: {kind} strategy '{name}'", KIND_HOOKS[kind]
    for attribute in dir(strategy):
        method = getattr(strategy, attribute, None)
        marked = callable(method) and hasattr(method, IMPL_MARK)
        default = vars(PROTOCOLS[kind]).get(attribute)  # a hook the strategy's protocol base class supplies
        inherited = default is not None and getattr(type(strategy), attribute, None) is default
        if attribute in kind_hooks and not marked and not inherited:
            raise PluginError(f"{where}: hook {attribute} is not marked @hookimpl, so it would never be called")
        if not marked:
            continue
        if not hasattr(hookspecs, attribute) or attribute == "hudi_cluster_strategies":
            close = difflib.get_close_matches(attribute, kind_hooks, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"{kind} hooks: {', '.join(kind_hooks)}"
            raise PluginError(f"{where}: '{attribute}' is marked @hookimpl but is no {kind} hook; {hint}")
        given = tuple(inspect.signature(getattr(strategy, attribute)).parameters)
        spec = tuple(inspect.signature(getattr(hookspecs, attribute)).parameters)
        if unknown := [arg for arg in given if arg not in spec]:
            raise PluginError(f"{where}: hook {attribute}({', '.join(given)}) takes {', '.join(unknown)}, which the "
                              f"core does not pass; the hook's arguments are ({', '.join(spec)})")  # fmt: skip
    hooks = tuple(h for h in kind_hooks if hasattr(getattr(strategy, h, None), IMPL_MARK))
    if missing := [h for h in REQUIRED_HOOKS[kind] if h not in hooks]:
        raise PluginError(f"{where} does not implement the required hook {', '.join(missing)}")
    return hooks
