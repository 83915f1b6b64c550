"""The core's default plan hooks: what a plan strategy gets for every optional hook it does not implement.

They are Apache Hudi's own behaviour (``PartitionAwareClusteringPlanStrategy``): Hudi's eligibility, the first
``max.num.groups`` groups, and the configured execution strategy with the sort columns passed on. They are also
public building blocks: an override can do its own part and hand the rest to the default, e.g. order the groups,
then ``return finalize_groups(context, ordered)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping

from pydantic import Field

from ..config import ClusteringConfig, catalogue
from ..config.sort_columns import parse_sort_columns
from ..config.strategy_params import StrategyParams
from ..errors import PlanError
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


PLAN_HOOK_DEFAULTS: Mapping[str, Callable[..., Any]] = {
    "plan_select_slices": select_slices,
    "plan_finalize_groups": finalize_groups,
    "plan_execution_strategy": execution_strategy,
}
