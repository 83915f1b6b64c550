"""The core's default plan hooks: what a plan strategy gets for every optional hook it does not implement.

They are Apache Hudi's own behaviour (``PartitionAwareClusteringPlanStrategy``): Hudi's eligibility, the first
``max.num.groups`` groups, and the configured execution strategy with the sort columns passed on. They reach the
strategies as a plugin, :class:`CoreDefaults`, registered with every hook ``trylast`` (pytest's and datasette's
way with their own defaults): pluggy calls one only when the strategy does not implement the hook (or its hook
returns None). They are also public building blocks: an override can do its own part and hand the rest to the
default, e.g. order the groups, then ``return finalize_groups(context, ordered)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from ..config import ClusteringConfig, catalogue
from ..config.sort_columns import parse_sort_columns
from ..config.strategy_params import StrategyParams
from ..errors import PlanError
from ..hookspecs import hookimpl
from .eligibility import select_eligible_slices

if TYPE_CHECKING:
    from ..table import FileSlice
    from .model import PlanContext, PlannedGroup


class SortAndSizeParams(StrategyParams):
    """The params of execution strategies that sort a group's rows and cut them into files: the sort columns
    the plan carries (``sort_columns_params`` puts them there)."""

    sort_columns: str | None = Field(
        None, alias=catalogue.SORT_COLUMNS,
        description="Comma-separated columns to sort each group by; none keeps input order.",
    )  # fmt: skip

    @property
    def columns(self) -> list[str]:
        """The sort columns as names (the one parse, :func:`..config.sort_columns.parse_sort_columns`)."""
        return list(parse_sort_columns(self.sort_columns, error=PlanError))


def sort_columns_params(config: ClusteringConfig) -> dict[str, str]:
    """``{sort.columns: ...}`` when the user configured sort columns, else ``{}``: the plan's strategy params."""
    return {catalogue.SORT_COLUMNS: config.sort_columns} if config.sort_columns else {}


def select_slices(context: PlanContext, slices: list[FileSlice]) -> list[FileSlice]:
    """Default ``plan_select_slices``: Hudi's eligibility (selected partitions, nothing pending, small files)."""
    return select_eligible_slices(context, slices)


def finalize_groups(context: PlanContext, groups: list[PlannedGroup]) -> list[PlannedGroup]:
    """Default ``plan_finalize_groups``: the first ``max.num.groups`` groups, in the order given."""
    return list(groups)[: context.config.max_num_groups]


def execution_strategy(context: PlanContext) -> tuple[str, dict[str, str]]:
    """Default ``plan_execution_strategy``: the configured execution class (Hudi's default is
    ``SparkSortAndSizeExecutionStrategy``), with the configured sort columns passed on."""
    return context.config.execution_strategy_class, sort_columns_params(context.config)


class CoreDefaults:
    """The defaults above as a plugin: registered once, every hook ``trylast``, so a strategy's own hook runs first
    and firstresult stops there. (A class, not this module: a plugin module that imports ``finalize_groups``
    would otherwise carry the marked hook along.)"""

    @hookimpl(trylast=True)
    def plan_select_slices(self, context: PlanContext, slices: list[FileSlice]) -> list[FileSlice]:
        return select_slices(context, slices)

    @hookimpl(trylast=True)
    def plan_finalize_groups(self, context: PlanContext, groups: list[PlannedGroup]) -> list[PlannedGroup]:
        return finalize_groups(context, groups)

    @hookimpl(trylast=True)
    def plan_execution_strategy(self, context: PlanContext) -> tuple[str, dict[str, str]]:
        return execution_strategy(context)
