"""Partition heat on hand-made slices: which commits count as recent, and the order that follows."""

from __future__ import annotations

import pytest

from hudi_cluster_core.errors import ConfigError
from hudi_cluster_core.config import strategy_params
from hudi_cluster_core.table import FileSlice
from hudi_cluster_core.table.naming import BaseFile
from hudi_cluster_hot_partitions import (
    LOOKBACK_COMMITS_KEY, LOOKBACK_MINUTES_KEY, TOP_N_KEY, HotPartitionsPlanStrategy, rank_partitions,
)  # fmt: skip
from hudi_cluster_hot_partitions.ranking import instant_datetime, recent_instants

MB = 1024 * 1024


def written(partition: str, file_id: str, instant: str, size: int = MB) -> FileSlice:
    return FileSlice(partition, file_id, instant, BaseFile(f"{file_id}_0-1-0_{instant}.parquet", file_id, "0-1-0", instant, size))


def test_recent_by_commit_count_takes_the_newest_distinct_instants():
    instants = ["20260101000000000", "20260101000100000", "20260101000100000", "20260101000200000"]
    assert recent_instants(instants, lookback_commits=2) == {"20260101000100000", "20260101000200000"}


def test_recent_by_minutes_is_relative_to_the_newest_instant_and_skips_special_ones():
    instants = ["00000000000000", "20260101100000000", "20260101114500000", "20260101120000000"]
    assert recent_instants(instants, lookback_commits=1, lookback_minutes=30) == {"20260101114500000", "20260101120000000"}
    assert instant_datetime("00000000000000") is None
    assert instant_datetime("20260101120000123").microsecond == 123_000


def test_partitions_rank_by_recent_slices_then_recent_bytes_then_name():
    old, new = "20260101000000000", "20260101010000000"
    slices = [
        written("us", "u1", new), written("us", "u2", new), written("us", "u0", old),
        written("eu", "e1", new, 5 * MB), written("apac", "a1", new, 2 * MB),
        written("latam", "l1", old), written("africa", "f1", old),
    ]  # fmt: skip
    ranked = rank_partitions(slices, lookback_commits=1)
    assert [h.partition for h in ranked] == ["us", "eu", "apac", "africa", "latam"]
    assert (ranked[0].recent_slices, ranked[0].recent_bytes) == (2, 2 * MB)
    assert ranked[-1].recent_slices == 0


@pytest.mark.parametrize("key, value", [(LOOKBACK_COMMITS_KEY, "0"), (TOP_N_KEY, "-1"), (LOOKBACK_MINUTES_KEY, "x")])
def test_bad_params_are_config_errors_naming_the_key(key, value):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        strategy_params(HotPartitionsPlanStrategy(), {key: value})
