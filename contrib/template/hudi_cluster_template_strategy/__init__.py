"""A template plan strategy: each partition's small files, in file-id order, cut at ``max.bytes.per.group``.

Copy ``contrib/template`` to start your own strategy (its README.md says which four names to change). The
strategy implements the four plan hooks of :mod:`hudi_cluster_core.hookspecs`:

1. ``plan_select_slices``: Hudi's standard eligibility (partition filter, no file group pending another table
   service, base file below ``small.file.limit``);
2. ``plan_group_slices``: per partition, slices in file-id order; a new group starts before one would pass
   ``max.bytes.per.group``; output files follow Hudi's size rule ``ceil(group bytes / target.file.max.bytes)``;
3. ``plan_finalize_groups``: drops groups of fewer than ``min.slices.per.group`` slices and keeps at most
   ``max.num.groups``;
4. ``plan_execution_strategy``: the configured execution strategy, passing the sort columns on if set.
"""

from __future__ import annotations

import math

from pydantic import Field

from hudi_cluster_core.config import StrategyParams
from hudi_cluster_core.hookspecs import hookimpl
from hudi_cluster_core.plan.eligibility import select_eligible_slices
from hudi_cluster_core.plan.model import PlannedGroup

MIN_SLICES_KEY = "hoodie.clustering.plan.strategy.template.min.slices.per.group"
SORT_COLUMNS_KEY = "hoodie.clustering.plan.strategy.sort.columns"


class TemplateParams(StrategyParams):
    """This strategy's own keys. Declaring an alias here makes it a known config key wherever the plugin loads."""

    min_slices_per_group: int = Field(
        2, ge=1, alias=MIN_SLICES_KEY,
        description="Plan a group only if it holds at least this many file slices: rewriting one small file "
                    "alone does not reduce the file count.",
    )  # fmt: skip


def group_partition_slices(
    slices, *, max_bytes_per_group: int, target_file_max_bytes: int, missing_base_size: int
) -> list[PlannedGroup]:
    """Per partition (sorted), slices in file-id order, cut before a group would pass ``max_bytes_per_group``.

    A slice without a base file counts as ``missing_base_size``, as Hudi assumes a full file for it.
    """

    def size(file_slice) -> int:
        return file_slice.base_file_size if file_slice.base_file else missing_base_size

    def close(members: list, total: int) -> PlannedGroup:
        return PlannedGroup(tuple(members), max(1, math.ceil(total / target_file_max_bytes)))

    by_partition: dict[str, list] = {}
    for file_slice in slices:
        by_partition.setdefault(file_slice.partition, []).append(file_slice)
    groups: list[PlannedGroup] = []
    for partition in sorted(by_partition):
        members, total = [], 0
        for file_slice in sorted(by_partition[partition], key=lambda s: s.file_id):
            if members and total + size(file_slice) > max_bytes_per_group:
                groups.append(close(members, total))
                members, total = [], 0
            members.append(file_slice)
            total += size(file_slice)
        if members:
            groups.append(close(members, total))
    return groups


class TemplatePlanStrategy:
    name = "template"  # what users put in hoodie.clustering.plan.strategy.class
    kind = "plan"
    # Further names the strategy answers to: here its dotted Python path, which reads like a Java class name.
    java_class_names = (f"{__name__}.TemplatePlanStrategy",)
    params_model = TemplateParams
    summary = "Template: a partition's small files in file-id order, groups up to max.bytes.per.group."

    @hookimpl
    def plan_select_slices(self, context, slices):
        return select_eligible_slices(context, slices)

    @hookimpl
    def plan_group_slices(self, context, slices):
        config = context.config
        return group_partition_slices(
            slices,
            max_bytes_per_group=int(config.get("hoodie.clustering.plan.strategy.max.bytes.per.group")),
            target_file_max_bytes=int(config.get("hoodie.clustering.plan.strategy.target.file.max.bytes")),
            missing_base_size=int(config.get("hoodie.parquet.max.file.size")),
        )

    @hookimpl
    def plan_finalize_groups(self, context, groups):
        worth_rewriting = [g for g in groups if len(g.slices) >= context.params.min_slices_per_group]
        return worth_rewriting[: int(context.config.get("hoodie.clustering.plan.strategy.max.num.groups"))]

    @hookimpl
    def plan_execution_strategy(self, context):
        sort_columns = context.config.get(SORT_COLUMNS_KEY)
        params = {SORT_COLUMNS_KEY: sort_columns} if sort_columns else {}
        return context.config.get("hoodie.clustering.execution.strategy.class"), params


@hookimpl
def hudi_cluster_strategies():
    return [TemplatePlanStrategy()]
