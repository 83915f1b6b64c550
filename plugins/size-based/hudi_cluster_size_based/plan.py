"""``SparkSizeBasedClusteringPlanStrategy``: small files, largest first, packed up to max.bytes.per.group."""

from __future__ import annotations

import math

from hudi_cluster_core.hookspecs import hookimpl
from hudi_cluster_core.plan.eligibility import select_eligible_slices
from hudi_cluster_core.plan.limits import SizeLimits
from hudi_cluster_core.plan.model import PlannedGroup

_PLAN = "org.apache.hudi.client.clustering.plan.strategy."


def pack_by_size(slices, *, max_bytes_per_group: int, target_file_max_bytes: int, max_num_groups: int,
                 missing_base_size: int, single_group_clustering: bool = True) -> list[PlannedGroup]:
    """Hudi's packing, per partition: sort by size descending, close a group before it would pass the cap.

    A slice without a base file counts as ``missing_base_size`` (Hudi assumes a full ``parquet.max.file.size``).
    The last group of a partition is kept alone only when ``single_group_clustering`` is on or it has 2+ slices.
    """

    def size(s):
        return s.base_file_size if s.base_file else missing_base_size

    def close(members, total):
        return PlannedGroup(tuple(members), max(1, math.ceil(total / target_file_max_bytes)))

    groups: list[PlannedGroup] = []
    by_partition: dict[str, list] = {}
    for s in slices:
        by_partition.setdefault(s.partition, []).append(s)
    for partition in sorted(by_partition):
        partition_groups: list[PlannedGroup] = []
        current, total = [], 0
        for s in sorted(by_partition[partition], key=lambda s: (-size(s), s.file_id)):
            if current and total + size(s) > max_bytes_per_group:
                partition_groups.append(close(current, total))
                current, total = [], 0
                if len(partition_groups) >= max_num_groups:
                    break
            current.append(s)
            total += size(s)
        else:
            if current and (len(current) > 1 or single_group_clustering):
                partition_groups.append(close(current, total))
        groups.extend(partition_groups[:max_num_groups])
    return groups


class SizeBasedPlanStrategy:
    name = "size-based"
    kind = "plan"
    java_class_names = (_PLAN + "SparkSizeBasedClusteringPlanStrategy",)
    params_model = None
    summary = "Files below small.file.limit, largest first, packed into groups of at most max.bytes.per.group."

    @hookimpl
    def plan_select_slices(self, context, slices):
        return select_eligible_slices(context, slices)

    @hookimpl
    def plan_group_slices(self, context, slices):
        limits = SizeLimits.from_config(context.config)
        return pack_by_size(
            slices, max_bytes_per_group=limits.max_bytes_per_group, target_file_max_bytes=limits.target_file_max_bytes,
            max_num_groups=limits.max_num_groups, missing_base_size=limits.missing_base_size,
            single_group_clustering=limits.single_group_clustering,
        )  # fmt: skip

    @hookimpl
    def plan_finalize_groups(self, context, groups):
        return list(groups)[: int(context.config.get("hoodie.clustering.plan.strategy.max.num.groups"))]

    @hookimpl
    def plan_execution_strategy(self, context):
        params = {}
        sort_columns = context.config.get("hoodie.clustering.plan.strategy.sort.columns")
        if sort_columns:
            params["hoodie.clustering.plan.strategy.sort.columns"] = sort_columns
        return context.config.get("hoodie.clustering.execution.strategy.class"), params
