"""Recently-hot partitions first: the partitions most written in the latest commits are clustered first.

Fast ingestion leaves the most small files where it writes most, and readers of fresh data look there too, so
those partitions gain the most from clustering. Heat comes from the eligible slices themselves: how many of them
(then how many bytes) were written by the newest ``lookback.commits`` commits, or within ``lookback.minutes`` of
the newest one. Each partition is packed as Hudi's size-based strategy packs it; ``max.num.groups`` is filled
from the hottest partition down, and ``top.n`` limits clustering to the hottest partitions.
"""

from hudi_cluster_core.sdk import hookimpl

from .params import LOOKBACK_COMMITS_KEY, LOOKBACK_MINUTES_KEY, TOP_N_KEY, HotPartitionsParams
from .plan import HotPartitionsPlanStrategy
from .ranking import PartitionHeat, rank_partitions

__all__ = [
    "LOOKBACK_COMMITS_KEY", "LOOKBACK_MINUTES_KEY", "TOP_N_KEY", "HotPartitionsParams", "HotPartitionsPlanStrategy",
    "PartitionHeat", "rank_partitions",
]  # fmt: skip


@hookimpl
def hudi_cluster_strategies():
    return [HotPartitionsPlanStrategy()]
