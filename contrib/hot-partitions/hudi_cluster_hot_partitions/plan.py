"""The ``hot-partitions`` plan strategy: Hudi's size-based packing, partitions taken hottest first."""

from __future__ import annotations

from dataclasses import replace

from hudi_cluster_core.hookspecs import hookimpl
from hudi_cluster_core.plan.avro_plan import group_metrics
from hudi_cluster_core.plan.eligibility import select_eligible_slices
from hudi_cluster_size_based.plan import pack_by_size

from .params import HotPartitionsParams
from .ranking import rank_partitions

SORT_COLUMNS_KEY = "hoodie.clustering.plan.strategy.sort.columns"
# Stored in each group's plan metrics, next to Hudi's own, so a plan shows why its groups were chosen.
RANK_METRIC = "HOT_PARTITION_RANK"
RECENT_SLICES_METRIC = "HOT_PARTITION_RECENT_SLICES"
RECENT_BYTES_METRIC = "HOT_PARTITION_RECENT_BYTES"


class HotPartitionsPlanStrategy:
    name = "hot-partitions"
    kind = "plan"
    java_class_names = ()
    params_model = HotPartitionsParams
    summary = ("Partitions most written by the last lookback.commits commits first (only the top.n if set), "
               "each packed as size-based does.")  # fmt: skip

    @hookimpl
    def plan_select_slices(self, context, slices):
        return select_eligible_slices(context, slices)

    @hookimpl
    def plan_group_slices(self, context, slices):
        params, config = context.params, context.config
        heats = rank_partitions(slices, lookback_commits=params.lookback_commits,
                                lookback_minutes=params.lookback_minutes)  # fmt: skip
        chosen = heats[: params.top_n] if params.top_n else heats
        by_partition: dict[str, list] = {}
        for file_slice in slices:
            by_partition.setdefault(file_slice.partition, []).append(file_slice)
        groups = []
        for rank, heat in enumerate(chosen, start=1):
            packed = pack_by_size(
                by_partition[heat.partition],
                max_bytes_per_group=int(config.get("hoodie.clustering.plan.strategy.max.bytes.per.group")),
                target_file_max_bytes=int(config.get("hoodie.clustering.plan.strategy.target.file.max.bytes")),
                max_num_groups=int(config.get("hoodie.clustering.plan.strategy.max.num.groups")),
                missing_base_size=int(config.get("hoodie.parquet.max.file.size")),
                single_group_clustering=bool(config.get("hoodie.clustering.plan.strategy.single.group.clustering.enabled")),
            )  # fmt: skip
            heat_metrics = {RANK_METRIC: float(rank), RECENT_SLICES_METRIC: float(heat.recent_slices),
                            RECENT_BYTES_METRIC: float(heat.recent_bytes)}  # fmt: skip
            groups += [replace(group, metrics={**group_metrics(group), **heat_metrics}) for group in packed]
        return groups

    @hookimpl
    def plan_finalize_groups(self, context, groups):
        # hottest partitions first, so max.num.groups cuts from the cold end; sorted() keeps packing order within one
        ordered = sorted(groups, key=lambda group: group.metrics.get(RANK_METRIC, float("inf")))
        return ordered[: int(context.config.get("hoodie.clustering.plan.strategy.max.num.groups"))]

    @hookimpl
    def plan_execution_strategy(self, context):
        sort_columns = context.config.get(SORT_COLUMNS_KEY)
        params = {SORT_COLUMNS_KEY: sort_columns} if sort_columns else {}
        return context.config.get("hoodie.clustering.execution.strategy.class"), params
