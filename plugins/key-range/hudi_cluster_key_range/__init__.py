"""RFC-19 "group files by record-key range": overlapping key ranges are clustered together.

Footer min/max record keys give each file an interval. Files whose intervals overlap (transitively) form a
component; components are packed in key order into groups up to ``max.bytes.per.group``, and each group is
rewritten sorted by record key, so output files' key ranges barely overlap and a point lookup by key (Hudi's
bloom index range pruning) opens fewer files. A component larger than the cap is cut in key order.
"""

from __future__ import annotations

from bisect import bisect_right

from hudi_cluster_core.sdk import (
    GroupCutter, PlannedGroup, PlanStrategy, SizeLimits, finalize_groups, hookimpl, keys, overlapping_components,
    slices_by_partition,
)  # fmt: skip


def key_range_overlap(ranges: list[tuple[str, str]]) -> float:
    """Mean number of other files whose key range overlaps a file's range (0 = disjoint ranges)."""
    if len(ranges) < 2:
        return 0.0
    ordered = sorted(ranges)
    lows = [low for low, _ in ordered]
    # in low order, the ranges after the i-th that overlap it are those starting at or before its high: counted by
    # a binary search, not pair by pair (a partition of 1,000 files that all overlap is half a million pairs)
    overlaps = sum(max(0, bisect_right(lows, high) - i - 1) for i, (_, high) in enumerate(ordered))
    return 2 * overlaps / len(ranges)


def group_by_key_range(slices, stats, limits: SizeLimits) -> list[PlannedGroup]:
    """Per partition: files whose key ranges overlap (transitively) form a component; components are packed in
    key order up to ``max.bytes.per.group``, a component larger than the cap cut in key order."""

    def key_range(s):
        st = stats(s)
        return (st.min_record_key or "", st.max_record_key or st.min_record_key or "")

    groups = []
    for members in slices_by_partition(slices).values():
        cutter = GroupCutter(limits)
        # equal ranges by file id: the same plan for the same slices, in whatever order they come
        for component in overlapping_components(sorted(members, key=lambda s: s.file_id), key_range):
            if cutter.would_pass_cap(sum(limits.slice_size(s) for s in component)):
                cutter.close()  # a component that fits whole starts a group of its own
            for s in component:
                cutter.add(s)
        cutter.close()
        groups += cutter.groups
    return groups


class KeyRangePlanStrategy(PlanStrategy):
    name, kind = "key-range", "plan"
    summary = "Groups small files whose footer record-key ranges overlap; output sorted by record key."
    # a file alone in its group is planned as Hudi plans it (single.group.clustering.enabled, default true), even
    # one already at the target size
    kit_silence = ("lone-slice-at-target",)

    @hookimpl
    def plan_group_slices(self, context, slices):
        return group_by_key_range(slices, context.slice_stats, SizeLimits.from_config(context.config))

    @hookimpl
    def plan_finalize_groups(self, context, groups):
        # most overlapping groups first: they gain the most
        def gain(group):
            return -key_range_overlap([(context.slice_stats(s).min_record_key or "", context.slice_stats(s).max_record_key or "") for s in group.slices])

        return finalize_groups(context, sorted(groups, key=lambda g: (gain(g), g.partition, g.slices[0].file_id)))

    @hookimpl
    def plan_execution_strategy(self, context):
        return context.config.execution_strategy_class, {keys.SORT_COLUMNS: "_hoodie_record_key"}


@hookimpl
def hudi_cluster_strategies():
    return [KeyRangePlanStrategy()]
