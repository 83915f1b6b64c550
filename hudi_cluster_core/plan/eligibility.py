"""Which partitions and slices a plan strategy may consider, as Apache Hudi selects them.

Partition selection follows Hudi's partition-aware strategies: an explicit
``hoodie.clustering.plan.strategy.partition.selected`` list wins over the regex filter, then
``hoodie.clustering.plan.partition.filter.mode`` applies (NONE, RECENT_DAYS, SELECTED_PARTITIONS, DAY_ROLLING).
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..table import FileSlice

if TYPE_CHECKING:
    from ..config import ClusteringConfig
    from .model import PlanContext

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PartitionSelection:
    partitions: tuple[str, ...]
    missing: tuple[str, ...] = ()  # skipped this time but due later: the plan's missingSchedulePartitions


def select_partitions(
    all_partitions: list[str], config: ClusteringConfig, *, now: dt.datetime | None = None
) -> PartitionSelection:
    selected = config.partition_selected
    if selected:
        candidates = [p.strip() for p in selected.split(",") if p.strip()]
    else:
        pattern = config.partition_regex_pattern
        candidates = [p for p in all_partitions if not pattern or re.fullmatch(pattern, p)]
    mode = config.partition_filter_mode
    if mode == "RECENT_DAYS":
        lookback = config.daybased_lookback_partitions
        skip = max(config.skip_partitions_from_latest, 0)
        newest_first = sorted(candidates, reverse=True)
        chosen = newest_first[skip:][: lookback if lookback > 0 else len(candidates)]
        return PartitionSelection(tuple(chosen), tuple(newest_first[:skip]))
    if mode == "SELECTED_PARTITIONS":
        begin, end = config.cluster_begin_partition, config.cluster_end_partition
        chosen = [p for p in candidates if (not begin or p >= begin) and (not end or p <= end)]
        return PartitionSelection(tuple(chosen))
    if mode == "DAY_ROLLING":
        hour = (now or dt.datetime.now()).hour
        return PartitionSelection(tuple(p for i, p in enumerate(sorted(candidates)) if i % 24 == hour))
    return PartitionSelection(tuple(candidates))


def select_eligible_slices(
    context: PlanContext, slices: list[FileSlice], *, small_file_limit: int | None = None
) -> list[FileSlice]:
    """Slices in the selected partitions, not pending another table service, below the small-file limit."""
    partitions = set(context.partitions)
    limit = small_file_limit if small_file_limit is not None else context.config.small_file_limit
    eligible = []
    for file_slice in slices:
        if file_slice.partition not in partitions or file_slice.group_id in context.pending_file_groups:
            continue
        if file_slice.base_file_size >= limit:
            continue
        eligible.append(file_slice)
    return eligible
