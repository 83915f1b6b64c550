"""The core's default plan hooks: what a plan strategy gets for every optional hook it does not implement.

They are Apache Hudi's own behaviour (``PartitionAwareClusteringPlanStrategy``): Hudi's eligibility, the first
``max.num.groups`` groups, and the configured execution strategy with the sort columns passed on. They are also
public building blocks: an override can do its own part and hand the rest to the default, e.g. order the groups,
then ``return finalize_groups(context, ordered)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping

from pydantic import Field

from ..config import StrategyParams
from .eligibility import select_eligible_slices

if TYPE_CHECKING:
    from ..table import FileSlice
    from .model import PlanContext, PlannedGroup

SORT_COLUMNS_KEY = "hoodie.clustering.plan.strategy.sort.columns"
EXECUTION_STRATEGY_KEY = "hoodie.clustering.execution.strategy.class"
MAX_NUM_GROUPS_KEY = "hoodie.clustering.plan.strategy.max.num.groups"


class SortAndSizeParams(StrategyParams):
    """The params of execution strategies that sort a group's rows and cut them into files: the sort columns
    the plan carries (``sort_columns_params`` puts them there)."""

    sort_columns: str | None = Field(
        None, alias=SORT_COLUMNS_KEY,
        description="Comma-separated columns to sort each group by; none keeps input order.",
    )  # fmt: skip

    @property
    def columns(self) -> list[str]:
        return [c.strip() for c in (self.sort_columns or "").split(",") if c.strip()]


def sort_columns_params(config: Any) -> dict[str, str]:
    """``{sort.columns: ...}`` when the user configured sort columns, else ``{}``: the plan's strategy params."""
    sort_columns = config.get(SORT_COLUMNS_KEY)
    return {SORT_COLUMNS_KEY: sort_columns} if sort_columns else {}


def select_slices(context: PlanContext, slices: list[FileSlice]) -> list[FileSlice]:
    """Default ``plan_select_slices``: Hudi's eligibility (selected partitions, nothing pending, small files)."""
    return select_eligible_slices(context, slices)


def finalize_groups(context: PlanContext, groups: list[PlannedGroup]) -> list[PlannedGroup]:
    """Default ``plan_finalize_groups``: the first ``max.num.groups`` groups, in the order given."""
    return list(groups)[: int(context.config.get(MAX_NUM_GROUPS_KEY))]


def execution_strategy(context: PlanContext) -> tuple[str, dict[str, str]]:
    """Default ``plan_execution_strategy``: the configured execution class (Hudi's default is
    ``SparkSortAndSizeExecutionStrategy``), with the configured sort columns passed on."""
    return context.config.get(EXECUTION_STRATEGY_KEY), sort_columns_params(context.config)


PLAN_HOOK_DEFAULTS: Mapping[str, Callable[..., Any]] = {
    "plan_select_slices": select_slices,
    "plan_finalize_groups": finalize_groups,
    "plan_execution_strategy": execution_strategy,
}
