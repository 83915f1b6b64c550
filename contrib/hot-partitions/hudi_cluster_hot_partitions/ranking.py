"""How hot a partition is: what the newest commits wrote into it, read off the slices' base instants."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class PartitionHeat:
    partition: str
    recent_slices: int  # slices whose base file a recent commit wrote
    recent_bytes: int
    newest_instant: str

    @property
    def order_key(self) -> tuple[int, int, str]:
        """Hotter sorts higher: more recent slices, then more recent bytes, then the newer latest write."""
        return (self.recent_slices, self.recent_bytes, self.newest_instant)


def instant_datetime(instant: str) -> dt.datetime | None:
    """``yyyyMMddHHmmss[SSS]`` as a datetime; None for Hudi's special instants (e.g. bootstrap's zeros)."""
    try:
        return dt.datetime.strptime(instant[:14], "%Y%m%d%H%M%S") + dt.timedelta(milliseconds=int(instant[14:17] or 0))
    except ValueError:
        return None


def recent_instants(instants: Iterable[str], *, lookback_commits: int, lookback_minutes: int | None = None) -> frozenset[str]:
    """The newest ``lookback_commits`` instants, or those within ``lookback_minutes`` of the newest."""
    newest_first = sorted(set(instants), reverse=True)
    if lookback_minutes is None:
        return frozenset(newest_first[:lookback_commits])
    times = {instant: instant_datetime(instant) for instant in newest_first}
    newest_time = max((t for t in times.values() if t is not None), default=None)
    if newest_time is None:
        return frozenset()
    cutoff = newest_time - dt.timedelta(minutes=lookback_minutes)
    return frozenset(instant for instant, t in times.items() if t is not None and t >= cutoff)


def rank_partitions(slices, *, lookback_commits: int, lookback_minutes: int | None = None) -> list[PartitionHeat]:
    """Every partition of ``slices``, hottest first; equally hot partitions in name order."""
    recent = recent_instants((s.base_instant for s in slices), lookback_commits=lookback_commits,
                             lookback_minutes=lookback_minutes)  # fmt: skip
    tally: dict[str, list] = {}
    for file_slice in slices:
        counts = tally.setdefault(file_slice.partition, [0, 0, ""])
        if file_slice.base_instant in recent:
            counts[0] += 1
            counts[1] += file_slice.total_size
        counts[2] = max(counts[2], file_slice.base_instant)
    heats = [PartitionHeat(partition, *counts) for partition, counts in sorted(tally.items())]
    return sorted(heats, key=lambda heat: heat.order_key, reverse=True)  # stable: ties stay in name order
