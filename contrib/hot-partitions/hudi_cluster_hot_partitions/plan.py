"""The ``hot-partitions`` plan strategy: Hudi's size-based packing, partitions taken hottest first."""

from __future__ import annotations

from dataclasses import replace

from hudi_cluster_core.sdk import (
    PlanStrategy, SizeLimits, finalize_groups, group_metrics, hookimpl, pack_by_size, slices_by_partition,
)  # fmt: skip

from .params import HotPartitionsParams
from .ranking import rank_partitions

# Stored in each group's plan metrics, next to Hudi's own, so a plan shows why its groups were chosen.
RANK_METRIC = "HOT_PARTITION_RANK"
RECENT_SLICES_METRIC = "HOT_PARTITION_RECENT_SLICES"
RECENT_BYTES_METRIC = "HOT_PARTITION_RECENT_BYTES"


class HotPartitionsPlanStrategy(PlanStrategy):
    name = "hot-partitions"
    kind = "plan"
    params_model = HotPartitionsParams
    summary = ("Partitions most written by the last lookback.commits commits first (only the top.n if set), "
               "each packed as size-based does.")  # fmt: skip
    # a file alone in its group is planned as Hudi plans it (single.group.clustering.enabled, default true), even
    # one already at the target size
    kit_silence = ("lone-slice-at-target",)

    @hookimpl
    def plan_group_slices(self, context, slices):
        params, limits = context.params, SizeLimits.from_config(context.config)
        heats = rank_partitions(slices, lookback_commits=params.lookback_commits,
                                lookback_minutes=params.lookback_minutes)  # fmt: skip
        by_partition = slices_by_partition(slices)
        groups = []
        for rank, heat in enumerate(heats[: params.top_n] if params.top_n else heats, start=1):
            heat_metrics = {RANK_METRIC: float(rank), RECENT_SLICES_METRIC: float(heat.recent_slices),
                            RECENT_BYTES_METRIC: float(heat.recent_bytes)}  # fmt: skip
            packed = pack_by_size(by_partition[heat.partition], limits)
            groups += [replace(group, metrics={**group_metrics(group), **heat_metrics}) for group in packed]
        return groups

    @hookimpl
    def plan_finalize_groups(self, context, groups):
        # hottest partitions first, so max.num.groups cuts from the cold end; sorted() keeps packing order within one
        return finalize_groups(context, sorted(groups, key=lambda group: group.metrics.get(RANK_METRIC, float("inf"))))
