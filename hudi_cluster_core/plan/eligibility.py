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

from ..table import FileSlice

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PartitionSelection:
    partitions: tuple[str, ...]
    missing: tuple[str, ...] = ()  # skipped this time but due later: the plan's missingSchedulePartitions


def select_partitions(all_partitions: list[str], config, *, now: dt.datetime | None = None) -> PartitionSelection:
    selected = config.get("hoodie.clustering.plan.strategy.partition.selected")
    if selected:
        candidates = [p.strip() for p in selected.split(",") if p.strip()]
    else:
        pattern = config.get("hoodie.clustering.plan.strategy.partition.regex.pattern")
        candidates = [p for p in all_partitions if not pattern or re.fullmatch(pattern, p)]
    mode = str(config.get("hoodie.clustering.plan.partition.filter.mode")).upper()
    if mode == "RECENT_DAYS":
        lookback = int(config.get("hoodie.clustering.plan.strategy.daybased.lookback.partitions"))
        skip = max(int(config.get("hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions")), 0)
        newest_first = sorted(candidates, reverse=True)
        chosen = newest_first[skip:][: lookback if lookback > 0 else len(candidates)]
        return PartitionSelection(tuple(chosen), tuple(newest_first[:skip]))
    if mode == "SELECTED_PARTITIONS":
        begin = config.get("hoodie.clustering.plan.strategy.cluster.begin.partition")
        end = config.get("hoodie.clustering.plan.strategy.cluster.end.partition")
        chosen = [p for p in candidates if (not begin or p >= begin) and (not end or p <= end)]
        return PartitionSelection(tuple(chosen))
    if mode == "DAY_ROLLING":
        hour = (now or dt.datetime.now()).hour
        return PartitionSelection(tuple(p for i, p in enumerate(sorted(candidates)) if i % 24 == hour))
    return PartitionSelection(tuple(candidates))


def select_eligible_slices(context, slices: list[FileSlice], *, small_file_limit: int | None = None) -> list[FileSlice]:
    """Slices in the selected partitions, not pending another table service, below the small-file limit."""
    partitions = set(context.partitions)
    limit = small_file_limit if small_file_limit is not None else int(
        context.config.get("hoodie.clustering.plan.strategy.small.file.limit")
    )  # fmt: skip
    eligible = []
    for file_slice in slices:
        if file_slice.partition not in partitions or file_slice.group_id in context.pending_file_groups:
            continue
        if file_slice.base_file_size >= limit:
            continue
        eligible.append(file_slice)
    return eligible
