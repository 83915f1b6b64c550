"""RFC-19 "group files by commit time": slices written by adjacent commits are clustered together.

A time-range query then opens few files, because each output file holds one contiguous span of commits. Groups
are contiguous in commit order within a partition and bounded by ``max.bytes.per.group`` and a window of
distinct commits; output files follow Hudi's size rule. Rows keep their commit times (preserved metadata).
"""

from __future__ import annotations

from pydantic import Field

from hudi_cluster_core.sdk import (
    PlannedGroup, PlanStrategy, SizeLimits, StrategyParams, cut_in_order, finalize_groups, hookimpl, keys, params_key,
    slices_by_partition,
)  # fmt: skip

WINDOW_KEY = params_key("commit-time", "window.commits")


class CommitTimeParams(StrategyParams):
    window_commits: int = Field(
        10, ge=1, alias=WINDOW_KEY, description="At most this many distinct commits' files in one group.",
    )  # fmt: skip


def group_by_commit_time(slices, limits: SizeLimits, *, window_commits: int) -> list[PlannedGroup]:
    """Per partition, slices in commit order, a group cut before it passes the cap or a ``window_commits``+1st
    distinct commit."""

    def window_full(members, next_slice) -> bool:
        commits = {s.base_instant for s in members}
        return next_slice.base_instant not in commits and len(commits) >= window_commits

    groups = []
    for members in slices_by_partition(slices).values():
        ordered = sorted(members, key=lambda s: (s.base_instant, s.file_id))
        groups += cut_in_order(ordered, limits, split_before=window_full)
    return groups


class CommitTimePlanStrategy(PlanStrategy):
    name, kind = "commit-time", "plan"
    params_model = CommitTimeParams
    summary = "Groups small files of adjacent commits (window.commits, max.bytes.per.group) so time ranges touch few files."
    # a file alone in its group is planned as Hudi plans it (single.group.clustering.enabled, default true), even
    # one already at the target size
    kit_silence = ("lone-slice-at-target",)

    @hookimpl
    def plan_group_slices(self, context, slices):
        window = context.params.window_commits if context.params else 10
        return group_by_commit_time(slices, SizeLimits.from_config(context.config), window_commits=window)

    @hookimpl
    def plan_finalize_groups(self, context, groups):
        # oldest spans first: they are the least likely to be written again
        return finalize_groups(context, sorted(groups, key=lambda g: (min(s.base_instant for s in g.slices), g.partition)))

    @hookimpl
    def plan_execution_strategy(self, context):
        # keep arrival order inside a group unless the user sorts: commit time is the layout
        params = {keys.SORT_COLUMNS: context.config.sort_columns or "_hoodie_commit_time"}
        return context.config.execution_strategy_class, params


@hookimpl
def hudi_cluster_strategies():
    return [CommitTimePlanStrategy()]
