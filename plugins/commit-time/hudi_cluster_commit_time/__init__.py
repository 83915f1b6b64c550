"""RFC-19 "group files by commit time": slices written by adjacent commits are clustered together.

A time-range query then opens few files, because each output file holds one contiguous span of commits. Groups
are contiguous in commit order within a partition and bounded by ``max.bytes.per.group`` and a window of
distinct commits; output files follow Hudi's size rule. Rows keep their commit times (preserved metadata).
"""

from __future__ import annotations

import math

from pydantic import Field

from hudi_cluster_core.config import StrategyParams
from hudi_cluster_core.hookspecs import hookimpl
from hudi_cluster_core.plan.eligibility import select_eligible_slices
from hudi_cluster_core.plan.limits import SizeLimits
from hudi_cluster_core.plan.model import PlannedGroup

WINDOW_KEY = "hoodie.clustering.plan.strategy.commit.time.window.commits"


class CommitTimeParams(StrategyParams):
    window_commits: int = Field(
        10, ge=1, alias=WINDOW_KEY, description="At most this many distinct commits' files in one group.",
    )  # fmt: skip


def group_by_commit_time(slices, *, window_commits: int, max_bytes_per_group: int, target_file_max_bytes: int,
                         missing_base_size: int) -> list[PlannedGroup]:
    def size(s):
        return s.base_file_size if s.base_file else missing_base_size

    groups = []
    by_partition: dict[str, list] = {}
    for s in slices:
        by_partition.setdefault(s.partition, []).append(s)
    for partition in sorted(by_partition):
        current, total, commits = [], 0, set()
        for s in sorted(by_partition[partition], key=lambda s: (s.base_instant, s.file_id)):
            new_commit = s.base_instant not in commits
            if current and (total + size(s) > max_bytes_per_group or (new_commit and len(commits) >= window_commits)):
                groups.append(PlannedGroup(tuple(current), max(1, math.ceil(total / target_file_max_bytes))))
                current, total, commits = [], 0, set()
            current.append(s)
            total += size(s)
            commits.add(s.base_instant)
        if current:
            groups.append(PlannedGroup(tuple(current), max(1, math.ceil(total / target_file_max_bytes))))
    return groups


class CommitTimePlanStrategy:
    name, kind = "commit-time", "plan"
    java_class_names = ()
    params_model = CommitTimeParams
    summary = "Groups small files of adjacent commits (window.commits, max.bytes.per.group) so time ranges touch few files."

    @hookimpl
    def plan_select_slices(self, context, slices):
        return select_eligible_slices(context, slices)

    @hookimpl
    def plan_group_slices(self, context, slices):
        limits = SizeLimits.from_config(context.config)
        return group_by_commit_time(
            slices, window_commits=context.params.window_commits if context.params else 10,
            max_bytes_per_group=limits.max_bytes_per_group, target_file_max_bytes=limits.target_file_max_bytes,
            missing_base_size=limits.missing_base_size,
        )  # fmt: skip

    @hookimpl
    def plan_finalize_groups(self, context, groups):
        # oldest spans first: they are the least likely to be written again
        ordered = sorted(groups, key=lambda g: (min(s.base_instant for s in g.slices), g.partition))
        return ordered[: int(context.config.get("hoodie.clustering.plan.strategy.max.num.groups"))]

    @hookimpl
    def plan_execution_strategy(self, context):
        # keep arrival order inside a group unless the user sorts: commit time is the layout
        params = {"hoodie.clustering.plan.strategy.sort.columns": context.config.get("hoodie.clustering.plan.strategy.sort.columns") or "_hoodie_commit_time"}
        return context.config.get("hoodie.clustering.execution.strategy.class"), params


@hookimpl
def hudi_cluster_strategies():
    return [CommitTimePlanStrategy()]
