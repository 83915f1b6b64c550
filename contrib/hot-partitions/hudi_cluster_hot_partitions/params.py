"""The strategy's own keys, under ``hoodie.clustering.plan.strategy.hot.partitions.*``."""

from __future__ import annotations

from pydantic import Field

from hudi_cluster_core.sdk import StrategyParams, params_key

LOOKBACK_COMMITS_KEY = params_key("hot-partitions", "lookback.commits")
LOOKBACK_MINUTES_KEY = params_key("hot-partitions", "lookback.minutes")
TOP_N_KEY = params_key("hot-partitions", "top.n")


class HotPartitionsParams(StrategyParams):
    lookback_commits: int = Field(
        10, ge=1, alias=LOOKBACK_COMMITS_KEY,
        description="A slice counts as recent when its base file was written by one of this many newest commits "
                    "(distinct base instants among the eligible slices).",
    )  # fmt: skip
    lookback_minutes: int | None = Field(
        None, ge=1, alias=LOOKBACK_MINUTES_KEY,
        description="If set, replaces lookback.commits: a slice counts as recent when its base instant is at most "
                    "this many minutes before the newest base instant.",
    )  # fmt: skip
    top_n: int = Field(
        0, ge=0, alias=TOP_N_KEY,
        description="Cluster only this many partitions, the hottest; 0 clusters every partition, hottest first.",
    )  # fmt: skip
