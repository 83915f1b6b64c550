"""Overlap-aware grouping on the sort columns (RFC-19's third idea, on the columns users query).

Per partition, the footer min/max of each small file on the first sort column give it a range. Files whose ranges
overlap (transitively) form a component: rewriting a component sorted turns its overlapping ranges into
contiguous ones, which is what cuts the files a query on the column opens. Components are packed in value order
into groups of at most ``max.bytes.per.group`` (a component above the cap cut in value order). A file that
overlaps no other is left alone: rewriting it changes no query.

Groups are then ranked by the files per query they save (the point and 1% range query model of the layout report,
``predict_files_per_query``, on every sort column, weighted by the partition's rows), so ``max.num.groups`` keeps
the groups that cut the most files per query. Without sort columns the record key stands in for them, and the
output is sorted by it.
"""

from __future__ import annotations

from collections.abc import Sequence

from hudi_cluster_core.sdk import (
    FileRanges, GroupCutter, PlannedGroup, PlannedRewrite, PlanStrategy, SizeLimits, column_names, finalize_groups,
    hookimpl, keys, overlapping_components, predict_files_per_query, slices_by_partition,
)  # fmt: skip

NAME = "overlap-aware"
RECORD_KEY = "_hoodie_record_key"


def sort_columns(config) -> tuple[str, ...]:
    """The configured sort columns, or the record key when none is."""
    return column_names(config.sort_columns) if config.sort_columns else (RECORD_KEY,)


def column_range(stats, column: str):
    """A slice's (min, max) on ``column`` from its footer statistics, or None when the footer has none."""
    if column == RECORD_KEY:
        low, high = stats.min_record_key, stats.max_record_key or stats.min_record_key
        return None if low is None else (low, high)
    found = stats.columns.get(column)
    return None if found is None or found[0] is None or found[1] is None else tuple(found)


def overlap_components(members, ranges) -> list[list]:
    """Slices whose ranges overlap, transitively, in value order (equal ranges by file id); slices without a
    range last, each alone."""
    return overlapping_components(sorted(members, key=lambda s: s.file_id), ranges)


def group_overlapping(slices, stats, limits: SizeLimits, column: str) -> list[PlannedGroup]:
    groups = []
    for members in slices_by_partition(slices).values():
        cutter = GroupCutter(limits)
        for component in overlap_components(members, lambda s: column_range(stats(s), column)):
            if len(component) < 2:
                continue  # overlaps nothing: rewriting it changes no query
            if cutter.would_pass_cap(sum(limits.slice_size(s) for s in component)):
                cutter.close()  # a component that fits whole starts a group of its own
            for s in component:
                cutter.add(s)
            cutter.close()
        groups += [g for g in cutter.groups if len(g.slices) > 1]
    return groups


def files_per_query_saved(groups: Sequence[PlannedGroup], stats, columns: Sequence[str]) -> list[float]:
    """Per group: the point plus 1% range query files it saves in its partition, times the partition's rows."""
    files = {}
    for group in groups:
        for s in group.slices:
            st = stats(s)
            ranges = {c: r for c in columns if (r := column_range(st, c)) is not None}
            files[s.group_id] = FileRanges(s.partition, st.num_rows or 1, ranges)
    saved = []
    for group in groups:
        rows = sum(f.rows for f in files.values() if f.partition == group.partition)
        figures = predict_files_per_query(files, [PlannedRewrite(tuple(s.group_id for s in group.slices),
                                                                  group.num_output_file_groups)], columns)  # fmt: skip
        saved.append(rows * sum(q.point_before - q.point_after + q.range_before - q.range_after for q in figures))
    return saved


class OverlapAwarePlanStrategy(PlanStrategy):
    name, kind = NAME, "plan"
    java_class_names = (f"{__name__}.OverlapAwarePlanStrategy",)
    summary = ("Groups small files whose sort-column ranges overlap; the groups that cut the most files per query "
               "first.")  # fmt: skip

    @hookimpl
    def plan_group_slices(self, context, slices):
        limits = SizeLimits.from_config(context.config)
        return group_overlapping(slices, context.slice_stats, limits, sort_columns(context.config)[0])

    @hookimpl
    def plan_finalize_groups(self, context, groups):
        saved = files_per_query_saved(groups, context.slice_stats, sort_columns(context.config))
        ranked = sorted(zip(saved, groups), key=lambda p: (-p[0], p[1].partition, p[1].slices[0].file_id))
        return finalize_groups(context, [g for _, g in ranked])

    @hookimpl
    def plan_execution_strategy(self, context):
        return context.config.execution_strategy_class, {keys.SORT_COLUMNS: ",".join(sort_columns(context.config))}


@hookimpl
def hudi_cluster_strategies():
    return [OverlapAwarePlanStrategy()]
