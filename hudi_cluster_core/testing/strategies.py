"""Hypothesis strategies for what a plan strategy sees: partitions, slices, stats, pending instants, configs."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from hypothesis import strategies as st

from ..plan.model import SliceStats
from ..table import FileGroupId, FileSlice
from ..table.naming import BaseFile, LogFile

MB = 1024 * 1024
INSTANTS = [f"2026010100{m:02d}{s:02d}000" for m in range(0, 60, 7) for s in (0, 30)]


@dataclass(frozen=True)
class PlanningInput:
    """One generated scheduling situation."""

    slices: tuple[FileSlice, ...]
    stats: dict = field(default_factory=dict)  # FileSlice -> SliceStats
    pending: dict = field(default_factory=dict)  # FileGroupId -> instant
    options: dict = field(default_factory=dict)  # Hudi keys -> values
    all_partitions: tuple[str, ...] = ()


def partition_names(hive_style: bool | None = None):
    plain = st.sampled_from(["", "us", "eu", "apac", "2024/01/01", "2024/01/02", "2024/02/01"])
    hive = st.sampled_from(["region=us", "region=eu", "dt=2024-01-01", "dt=2024-01-02"])
    return {None: st.one_of(plain, hive), True: hive, False: plain}[hive_style]


@st.composite
def file_slices(draw, max_slices: int = 40, partitions=None, with_logs: bool = False):
    parts = draw(st.lists(partitions or partition_names(), min_size=1, max_size=4, unique=True))
    count = draw(st.integers(0, max_slices))
    slices = []
    for index in range(count):
        partition = draw(st.sampled_from(parts))
        file_id = f"{uuid.UUID(int=(draw(st.integers(0, 2**64 - 1)) << 64) | index)}-0"
        instant = draw(st.sampled_from(INSTANTS))
        size = draw(st.one_of(st.integers(1, 4 * MB), st.integers(1, 2048 * MB)))
        has_base = draw(st.booleans()) if with_logs else True
        base = BaseFile(f"{file_id}_0-1-{index}_{instant}.parquet", file_id, f"0-1-{index}", instant, size) if has_base else None
        logs = ()
        if with_logs and (not has_base or draw(st.booleans())):
            logs = (LogFile(f".{file_id}_{instant}.log.1_0-1-{index}", file_id, instant, 1, f"0-1-{index}", draw(st.integers(1, 8 * MB))),)
        slices.append(FileSlice(partition, file_id, instant, base, logs))
    return tuple(slices)


@st.composite
def slice_stats(draw, file_slice: FileSlice):
    low = draw(st.integers(0, 10_000))
    high = low + draw(st.integers(0, 5_000))
    rows = draw(st.integers(1, 1_000_000))
    col_low = draw(st.floats(-1e6, 1e6, allow_nan=False))
    return SliceStats(rows, f"key-{low:06d}", f"key-{high:06d}", {"ts": (low, high), "amount": (col_low, col_low + 100)})


@st.composite
def clustering_options(draw, partitions: tuple[str, ...] = ()):
    options = {
        "hoodie.clustering.plan.strategy.small.file.limit": draw(st.sampled_from([1, 10 * MB, 300 * MB, 4096 * MB])),
        "hoodie.clustering.plan.strategy.max.bytes.per.group": draw(st.sampled_from([1, 8 * MB, 512 * MB, 2048 * MB])),
        "hoodie.clustering.plan.strategy.target.file.max.bytes": draw(st.sampled_from([1 * MB, 128 * MB, 1024 * MB])),
        "hoodie.clustering.plan.strategy.max.num.groups": draw(st.integers(1, 40)),
    }
    mode = draw(st.sampled_from(["NONE", "RECENT_DAYS", "SELECTED_PARTITIONS", "DAY_ROLLING"]))
    options["hoodie.clustering.plan.partition.filter.mode"] = mode
    ordered = sorted(partitions)
    if mode == "RECENT_DAYS":
        options["hoodie.clustering.plan.strategy.daybased.lookback.partitions"] = draw(st.integers(0, 4))
        options["hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions"] = draw(st.integers(0, 2))
    if mode == "SELECTED_PARTITIONS" and ordered:
        begin = draw(st.sampled_from(ordered))
        options["hoodie.clustering.plan.strategy.cluster.begin.partition"] = begin
        options["hoodie.clustering.plan.strategy.cluster.end.partition"] = draw(st.sampled_from([p for p in ordered if p >= begin]))
    if ordered and draw(st.booleans()):
        options["hoodie.clustering.plan.strategy.partition.regex.pattern"] = draw(st.sampled_from([".*", "region=.*", "2024/.*", "u.*"]))
    return options


@st.composite
def planning_inputs(draw, max_slices: int = 40, with_logs: bool = False, options=None):
    slices = draw(file_slices(max_slices=max_slices, with_logs=with_logs))
    partitions = tuple(sorted({s.partition for s in slices}))
    pending = {}
    for file_slice in slices:
        if draw(st.integers(0, 9)) == 0:
            pending[FileGroupId(file_slice.partition, file_slice.file_id)] = draw(st.sampled_from(INSTANTS))
    stats = {s: draw(slice_stats(s)) for s in slices}
    chosen = draw(options if options is not None else clustering_options(partitions))
    return PlanningInput(slices, stats, pending, chosen, partitions)
