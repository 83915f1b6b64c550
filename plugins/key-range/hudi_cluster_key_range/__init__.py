"""RFC-19 "group files by record-key range": overlapping key ranges are clustered together.

Footer min/max record keys give each file an interval. Files whose intervals overlap (transitively) form a
component; components are packed in key order into groups up to ``max.bytes.per.group``, and each group is
rewritten sorted by record key, so output files' key ranges barely overlap and a point lookup by key (Hudi's
bloom index range pruning) opens fewer files. A component larger than the cap is cut in key order.
"""

from __future__ import annotations

import math

from hudi_cluster_core.hookspecs import hookimpl
from hudi_cluster_core.plan.eligibility import select_eligible_slices
from hudi_cluster_core.plan.limits import SizeLimits
from hudi_cluster_core.plan.model import PlannedGroup


def key_range_overlap(ranges: list[tuple[str, str]]) -> float:
    """Mean number of other files whose key range overlaps a file's range (0 = disjoint ranges)."""
    if len(ranges) < 2:
        return 0.0
    ordered = sorted(ranges)
    overlaps = 0
    for i, (low, high) in enumerate(ordered):
        for other_low, other_high in ordered[i + 1 :]:
            if other_low > high:
                break
            overlaps += 1
    return 2 * overlaps / len(ranges)


def group_by_key_range(slices, stats, *, max_bytes_per_group: int, target_file_max_bytes: int,
                       missing_base_size: int) -> list[PlannedGroup]:
    def size(s):
        return s.base_file_size if s.base_file else missing_base_size

    def key_range(s):
        st = stats(s)
        return (st.min_record_key or "", st.max_record_key or st.min_record_key or "")

    groups = []
    by_partition: dict[str, list] = {}
    for s in slices:
        by_partition.setdefault(s.partition, []).append(s)
    for partition in sorted(by_partition):
        ordered = sorted(by_partition[partition], key=lambda s: (*key_range(s), s.file_id))
        components, reach = [], None
        for s in ordered:
            low, high = key_range(s)
            if components and reach is not None and low <= reach:
                components[-1].append(s)
                reach = max(reach, high)
            else:
                components.append([s])
                reach = high
        current, total = [], 0
        for component in components:
            component_bytes = sum(size(s) for s in component)
            if current and total + component_bytes > max_bytes_per_group:
                groups.append(PlannedGroup(tuple(current), max(1, math.ceil(total / target_file_max_bytes))))
                current, total = [], 0
            for s in component:  # a component above the cap is cut in key order
                if current and total + size(s) > max_bytes_per_group:
                    groups.append(PlannedGroup(tuple(current), max(1, math.ceil(total / target_file_max_bytes))))
                    current, total = [], 0
                current.append(s)
                total += size(s)
        if current:
            groups.append(PlannedGroup(tuple(current), max(1, math.ceil(total / target_file_max_bytes))))
    return groups


class KeyRangePlanStrategy:
    name, kind = "key-range", "plan"
    java_class_names = ()
    params_model = None
    summary = "Groups small files whose footer record-key ranges overlap; output sorted by record key."

    @hookimpl
    def plan_select_slices(self, context, slices):
        return select_eligible_slices(context, slices)

    @hookimpl
    def plan_group_slices(self, context, slices):
        limits = SizeLimits.from_config(context.config)
        return group_by_key_range(
            slices, context.slice_stats, max_bytes_per_group=limits.max_bytes_per_group,
            target_file_max_bytes=limits.target_file_max_bytes, missing_base_size=limits.missing_base_size,
        )  # fmt: skip

    @hookimpl
    def plan_finalize_groups(self, context, groups):
        # most overlapping groups first: they gain the most
        def gain(group):
            return -key_range_overlap([(context.slice_stats(s).min_record_key or "", context.slice_stats(s).max_record_key or "") for s in group.slices])

        ordered = sorted(groups, key=lambda g: (gain(g), g.partition, g.slices[0].file_id))
        return ordered[: int(context.config.get("hoodie.clustering.plan.strategy.max.num.groups"))]

    @hookimpl
    def plan_execution_strategy(self, context):
        return context.config.get("hoodie.clustering.execution.strategy.class"), {
            "hoodie.clustering.plan.strategy.sort.columns": "_hoodie_record_key"
        }


@hookimpl
def hudi_cluster_strategies():
    return [KeyRangePlanStrategy()]
