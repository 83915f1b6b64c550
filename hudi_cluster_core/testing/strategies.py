"""Hypothesis strategies for what a plan strategy sees: a real table, its slices, stats, pending groups, options.

Every generated :class:`PlanningInput` is non-trivial by construction, and :func:`check_non_trivial` (the guard)
fails the generation itself if one is not:

* a **real** small Hudi table on local disk (written with the project's own append writer), so ``context.table``
  is a :class:`~hudi_cluster_core.table.HudiTable` and strategies take their production branch;
* slices of **several partitions** (the table's real file groups, with generated sizes);
* at least two **eligible** slices: in a selected partition, not pending, base file below ``small.file.limit``
  (the limit is never a byte or so: it is drawn first, sizes are drawn against it);
* at least one **pending** file group (``PlanContext.pending_file_groups``) in a selected partition;
* **MOR** slices: base files with log files, and (``log_only=True``) slices with log files only;
* a partition filter (``hoodie.clustering.plan.partition.filter.mode``, regex, ``partition.selected``) that
  selects at least one partition;
* often a selected partition with **no slice** (an empty partition: ``context.partitions`` names it, no slice is
  in it) and a selected partition whose slices are all **ineligible** (above ``small.file.limit``).

What the guard rules out but a scheduler hands over all the same (an empty table, nothing eligible, everything
pending, a filter selecting nothing) is :func:`edge_inputs`, a fixed list that ``run_plan_kit`` checks first.

The tables are built once per process under a temporary directory removed at exit.
"""

from __future__ import annotations

import atexit
import datetime as dt
import math
import os
import re
import shutil
import tempfile
import uuid
from dataclasses import dataclass, field, replace
from functools import lru_cache

from hypothesis import strategies as st

from ..plan.model import SliceStats
from ..write.base_file import ParquetOptions
from ..table import FileSlice
from ..table.naming import BaseFile, LogFile

MB = 1024 * 1024
KB = 1024
INSTANTS = [f"2026010100{m:02d}{s:02d}000" for m in range(0, 60, 7) for s in (0, 30)]
FIXED_NOW = dt.datetime(2026, 1, 1, 5, 0, 0)
SMALL_FILE_LIMIT = "hoodie.clustering.plan.strategy.small.file.limit"
MAX_BYTES = "hoodie.clustering.plan.strategy.max.bytes.per.group"
TARGET = "hoodie.clustering.plan.strategy.target.file.max.bytes"
MAX_GROUPS = "hoodie.clustering.plan.strategy.max.num.groups"
FILTER_MODE = "hoodie.clustering.plan.partition.filter.mode"
LOOKBACK = "hoodie.clustering.plan.strategy.daybased.lookback.partitions"
SKIP_LATEST = "hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions"
BEGIN = "hoodie.clustering.plan.strategy.cluster.begin.partition"
END = "hoodie.clustering.plan.strategy.cluster.end.partition"
REGEX = "hoodie.clustering.plan.strategy.partition.regex.pattern"
SELECTED = "hoodie.clustering.plan.strategy.partition.selected"
MIN_ELIGIBLE = 2


class KitGenerationError(AssertionError):
    """The kit generated an example that tests nothing: a bug of the kit (or of options passed to it)."""


@dataclass(frozen=True)
class PlanningInput:
    """One generated scheduling situation."""

    slices: tuple[FileSlice, ...]
    stats: dict = field(default_factory=dict)  # FileSlice -> SliceStats
    pending: dict = field(default_factory=dict)  # FileGroupId -> instant
    options: dict = field(default_factory=dict)  # Hudi keys -> values
    all_partitions: tuple[str, ...] = ()
    table_path: str | None = None  # a real Hudi table the slices' file groups belong to (None: no table)
    now: dt.datetime = FIXED_NOW  # the scheduler's clock (DAY_ROLLING)

    def describe(self, options: bool = True) -> str:
        """One line: counts, the partitions without a slice, and (``options``) the options, Hudi's clustering
        prefix left out."""
        parts = {s.partition for s in self.slices}
        mor = sum(1 for s in self.slices if s.log_files)
        empty = [p or "(none)" for p in self.all_partitions if p not in parts]
        more = ", ..." if len(empty) > 3 else ""
        no_slice = f" ({len(empty)} without a slice: {', '.join(empty[:3])}{more})" if empty else ""
        shown = f"; options {_brief_options(self.options)}" if options else ""
        counts = f"{len(self.slices)} slices ({mor} MOR) in {len(parts)} partitions{no_slice}, {len(self.pending)} pending"
        return counts + shown

    def __repr__(self) -> str:  # short: a failing property test prints its input, not 300 lines of slices
        return f"PlanningInput({self.describe()})"

    def _repr_pretty_(self, printer, cycle) -> None:  # hypothesis' "Falsifying example" printer uses this
        printer.text(repr(self))


def _brief_options(options: dict) -> str:
    prefixes = ("hoodie.clustering.plan.strategy.", "hoodie.clustering.plan.", "hoodie.clustering.")
    shown = []
    for key, value in options.items():
        short = next((key[len(p):] for p in prefixes if key.startswith(p)), key)
        shown.append(f"{short}={value}")
    return "{" + ", ".join(shown) + "}"


# ------------------------------------------------------------------------------------------- kit tables

_KIT_DIR: list[str] = []

# The planning tables: (partition field values, hive style). Six day partitions (RECENT_DAYS, DAY_ROLLING,
# begin/end ranges) and four hive-style regions.
PLAN_TABLES = {
    "days": (("2024/01/01", "2024/01/02", "2024/01/03", "2024/02/01", "2024/02/02", "2024/03/01"), False),
    "regions": (("apac", "emea", "eu", "us"), True),
}
PLAN_TABLE_COMMITS = 3
PLAN_TABLE_FILES_PER_COMMIT = 3


def kit_dir() -> str:
    """The process's scratch directory for kit tables (removed at exit)."""
    if not _KIT_DIR:
        path = tempfile.mkdtemp(prefix="hudi-cluster-kit-")
        _KIT_DIR.append(path)
        atexit.register(shutil.rmtree, path, True)
    return _KIT_DIR[0]


@lru_cache(maxsize=None)
def plan_table(name: str) -> tuple[str, tuple[FileSlice, ...]]:
    """``(base path, latest slices)`` of the named planning table, built once per process."""
    import pyarrow as pa

    from ..table import load_table
    from ..write.append import append

    values, hive = PLAN_TABLES[name]
    base = f"{kit_dir()}/plan-{name}"
    per_commit = len(values) * PLAN_TABLE_FILES_PER_COMMIT
    for commit in range(PLAN_TABLE_COMMITS):
        rows = pa.table({
            "id": [f"c{commit}-{i:04d}" for i in range(per_commit)],
            "part": [values[i % len(values)] for i in range(per_commit)],
            "amount": [float(i) for i in range(per_commit)],
        })  # fmt: skip
        append(base, rows, record_key="id", partition_field="part", hive_style=hive,
               files_per_partition=PLAN_TABLE_FILES_PER_COMMIT, options=ParquetOptions(bloom_enabled=False))  # fmt: skip
    slices = tuple(sorted(load_table(base).view().latest_file_slices(), key=lambda s: (s.partition, s.base_instant, s.file_id)))
    return base, slices


@lru_cache(maxsize=256)
def table_with_pending(name: str, pending: tuple[tuple[FileSlice, str], ...]) -> str:
    """A copy of planning table ``name`` (hard links: cheap) whose timeline holds a requested clustering plan for
    every pending file group, so a strategy reading the table's timeline sees what ``pending_file_groups`` says."""
    from ..avro import encode_avro
    from ..plan.avro_plan import build_requested_replace_metadata
    from ..plan.model import PlannedGroup
    from ..table import State, load_table

    source, _ = plan_table(name)
    if not pending:
        return source
    target = f"{kit_dir()}/case-{name}-{len(_CASE_DIRS)}"
    _CASE_DIRS.append(target)
    shutil.copytree(source, target, copy_function=os.link)
    table = load_table(target)
    by_instant: dict[str, list[FileSlice]] = {}
    for file_slice, instant in pending:
        by_instant.setdefault(instant, []).append(file_slice)
    for instant, members in sorted(by_instant.items()):
        groups = [PlannedGroup(tuple(s for s in members if s.partition == p)) for p in sorted({s.partition for s in members})]
        record = build_requested_replace_metadata(table.storage, groups, "sort-and-size", {})
        path = table.timeline.path_of(table.timeline.clustering_file_name(instant, State.REQUESTED))
        table.storage.write_atomic(path, encode_avro(record, "HoodieRequestedReplaceMetadata"))
    return target


_CASE_DIRS: list[str] = []


@lru_cache(maxsize=256)
def load_kit_table(path: str):
    from ..table import load_table

    return load_table(path)


# --------------------------------------------------------------------------------------- compat helpers


def partition_names(hive_style: bool | None = None):
    plain = st.sampled_from(["", "us", "eu", "apac", "2024/01/01", "2024/01/02", "2024/02/01"])
    hive = st.sampled_from(["region=us", "region=eu", "dt=2024-01-01", "dt=2024-01-02"])
    return {None: st.one_of(plain, hive), True: hive, False: plain}[hive_style]


@st.composite
def file_slices(draw, max_slices: int = 40, partitions=None, with_logs: bool = False):
    """Synthetic slices (no table behind them); :func:`planning_inputs` uses a real table instead."""
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
        logs: tuple[LogFile, ...] = ()
        if with_logs and (not has_base or draw(st.booleans())):
            logs = (LogFile(f".{file_id}_{instant}.log.1_0-1-{index}", file_id, instant, 1, f"0-1-{index}", draw(st.integers(1, 8 * MB))),)
        slices.append(FileSlice(partition, file_id, instant, base, logs))
    return tuple(slices)


def stats_from_seed(seed: int, file_slice: FileSlice) -> SliceStats:
    """Footer stats from one drawn number (one draw per slice keeps generation and shrinking fast)."""
    low = seed % 10_000
    high = low + (seed * 7919 + len(file_slice.file_id)) % 5_000 * (seed % 3 != 0)
    col_low = float((seed * 104729) % 2_000_000 - 1_000_000)
    return SliceStats(1 + seed % 1_000_000, f"key-{low:06d}", f"key-{high:06d}", {"ts": (low, high), "amount": (col_low, col_low + 100)})


@st.composite
def slice_stats(draw, file_slice: FileSlice):
    low = draw(st.integers(0, 10_000))
    high = low + draw(st.integers(0, 5_000))
    rows = draw(st.integers(1, 1_000_000))
    col_low = draw(st.floats(-1e6, 1e6, allow_nan=False))
    return SliceStats(rows, f"key-{low:06d}", f"key-{high:06d}", {"ts": (low, high), "amount": (col_low, col_low + 100)})


# ------------------------------------------------------------------------------------------- options


@st.composite
def size_options(draw):
    """Size keys, drawn so that several slices fit under the small-file limit and into one group."""
    limit = draw(st.sampled_from([10 * MB, 300 * MB, 1024 * MB]))
    return {
        SMALL_FILE_LIMIT: limit,
        MAX_BYTES: draw(st.sampled_from([limit // 2, 2 * limit, 16 * limit])),
        TARGET: draw(st.sampled_from([max(MB, limit // 8), limit, 4 * limit])),
        MAX_GROUPS: draw(st.integers(1, 40)),
    }


def _matching_regexes(partitions: list[str]) -> list[str]:
    """Regexes that select at least one of ``partitions`` (and usually not all)."""
    candidates = [".*", "2024/01/.*", "2024/0[12]/.*", "part=e.*", "part=(us|eu)", "part=.*"]
    return [r for r in candidates if any(re.fullmatch(r, p) for p in partitions)]


@st.composite
def partition_filter_options(draw, partitions: tuple[str, ...]):
    """A partition filter selecting at least one of ``partitions``, and the scheduler's clock for it."""
    ordered = sorted(partitions)
    options: dict = {}
    candidates = ordered
    how = draw(st.sampled_from(["all", "regex", "selected"]))
    if how == "regex" and _matching_regexes(ordered):
        options[REGEX] = draw(st.sampled_from(_matching_regexes(ordered)))
        candidates = [p for p in ordered if re.fullmatch(options[REGEX], p)]
    elif how == "selected":
        chosen = draw(st.lists(st.sampled_from(ordered), min_size=1, max_size=len(ordered), unique=True))
        options[SELECTED] = ",".join(chosen)
        candidates = sorted(chosen)
    mode = draw(st.sampled_from(["NONE", "RECENT_DAYS", "SELECTED_PARTITIONS", "DAY_ROLLING"]))
    options[FILTER_MODE] = mode
    now = FIXED_NOW
    if mode == "RECENT_DAYS":
        options[SKIP_LATEST] = draw(st.integers(0, len(candidates) - 1))
        options[LOOKBACK] = draw(st.integers(0, 4))
    elif mode == "SELECTED_PARTITIONS":
        begin = draw(st.sampled_from(candidates))
        options[BEGIN] = begin
        options[END] = draw(st.sampled_from([p for p in candidates if p >= begin]))
    elif mode == "DAY_ROLLING":
        now = FIXED_NOW.replace(hour=draw(st.integers(0, len(candidates) - 1)))
    return options, now


@st.composite
def clustering_options(draw, partitions: tuple[str, ...] = ()):
    """Size keys and a partition filter (compat: the filter selects at least one of ``partitions`` if given)."""
    options = draw(size_options())
    if partitions:
        options.update(draw(partition_filter_options(tuple(partitions)))[0])
    return options


# ------------------------------------------------------------------------------------------- inputs


def _setting(options: dict, key: str):
    from ..config import load_config

    return load_config(overrides=options).get(key)


def selected_partitions(case: PlanningInput) -> tuple[str, ...]:
    from ..config import load_config
    from ..plan.eligibility import select_partitions

    return select_partitions(list(case.all_partitions), load_config(overrides=case.options), now=case.now).partitions


def expected_eligible(case: PlanningInput, partitions=None) -> list[FileSlice]:
    """The standard eligible slices: selected partition, not pending, base file below small.file.limit."""
    limit = int(_setting(case.options, SMALL_FILE_LIMIT))
    chosen = set(selected_partitions(case) if partitions is None else partitions)
    return [s for s in case.slices if s.partition in chosen and s.group_id not in case.pending and s.base_file_size < limit]


def check_non_trivial(case: PlanningInput) -> None:
    """The guard: raise :class:`KitGenerationError` if ``case`` would test (almost) nothing."""
    __tracebackhide__ = True
    problems = []
    partitions = selected_partitions(case)
    eligible = expected_eligible(case, partitions)
    if case.table_path is None:
        problems.append("no table (table=None)")
    if len({s.partition for s in case.slices}) < 2:
        problems.append("slices of fewer than 2 partitions")
    if not partitions:
        problems.append("the partition filter selects no partition")
    if len(eligible) < MIN_ELIGIBLE:
        limit = _setting(case.options, SMALL_FILE_LIMIT)
        problems.append(f"{len(eligible)} eligible slice(s) (small.file.limit={limit})")
    if not case.pending:
        problems.append("no pending file group")
    if problems:
        raise KitGenerationError(f"conformance kit generated a trivial example: {'; '.join(problems)} ({case.describe()})")


@st.composite
def planning_inputs(draw, max_slices: int = 24, with_logs: bool = False, options=None, log_only: bool = False,
                    tables=tuple(PLAN_TABLES)):  # fmt: skip
    """A non-trivial scheduling situation over a real kit table (see the module docstring).

    ``options``: a hypothesis strategy of options replacing the drawn size keys (the partition filter is still
    drawn unless it sets ``filter.mode``); ``with_logs``: some slices get log files (MOR); ``log_only``: some
    slices have log files only; ``max_slices`` bounds the slices taken from the table.
    """
    name = draw(st.sampled_from(list(tables)))
    table_path, table_slices = plan_table(name)
    partitions = tuple(sorted({s.partition for s in table_slices}))
    chosen = dict(draw(options)) if options is not None else draw(size_options())
    now = FIXED_NOW
    if FILTER_MODE not in chosen and not any(k in chosen for k in (REGEX, SELECTED)):
        filter_options, now = draw(partition_filter_options(partitions))
        chosen.update(filter_options)
    provisional = PlanningInput((), {}, {}, chosen, partitions, table_path, now)
    selected = set(selected_partitions(provisional))
    limit = int(_setting(chosen, SMALL_FILE_LIMIT))
    max_file = int(_setting(chosen, "hoodie.parquet.max.file.size"))

    eligible_size = st.one_of(st.integers(KB, min(4 * MB, limit - 1)), st.integers(KB, limit - 1))
    big_size = st.integers(limit, 4 * limit)
    large_eligible = st.integers(limit // 2, limit - 1)
    by_partition: dict[str, list[FileSlice]] = {}
    for file_slice in table_slices:
        by_partition.setdefault(file_slice.partition, []).append(file_slice)
    per_partition = max(3, math.ceil(max_slices / len(partitions)))
    slices, pending, stats = [], {}, {}
    first_selected = min(selected) if selected else None
    # often one selected partition has no slice at all, and another only slices above small.file.limit
    others = [p for p in sorted(selected) if p != first_selected]
    empty = draw(st.sampled_from(others)) if others and len(partitions) > 2 and draw(st.booleans()) else None
    others = [p for p in others if p != empty]
    ineligible = draw(st.sampled_from(others)) if others and draw(st.booleans()) else None
    for partition in partitions:
        if partition == empty:
            continue
        for slot, real in enumerate(by_partition[partition][:per_partition]):
            # by construction: every other partition has a slice, the first two slices of every other selected
            # partition are eligible, the third of the first selected partition is pending; the rest are drawn
            forced_eligible = partition in selected and slot < 2 and partition != ineligible
            forced_pending = partition == first_selected and slot == 2
            if not (forced_eligible or forced_pending or slot == 0 or draw(st.booleans())):
                continue
            instant = real.base_instant
            shape = "base"
            if with_logs and not forced_eligible:  # (a log-only slice is eligible: none in the ineligible partition)
                log_only_here = log_only and partition != ineligible
                shape = draw(st.sampled_from(["base", "base", "mor"] + (["log-only"] if log_only_here else [])))
            if forced_eligible and partition == first_selected and draw(st.booleans()):
                size = draw(large_eligible)  # two of these exceed max.bytes.per.group when it is half the limit
            elif partition == ineligible:
                size = draw(big_size)
            else:
                size = draw(eligible_size) if forced_eligible or draw(st.integers(0, 3)) else draw(big_size)
            base = replace(real.base_file, size=size) if shape != "log-only" and real.base_file else None
            logs: tuple[LogFile, ...] = ()
            if shape in ("mor", "log-only"):
                log_size = draw(st.integers(KB, max(KB, min(max_file, limit))))
                logs = (LogFile(f".{real.file_id}_{instant}.log.1_0-1-{slot}", real.file_id, instant, 1, f"0-1-{slot}", log_size),)
            file_slice = FileSlice(partition, real.file_id, instant, base, logs)
            slices.append(file_slice)
            if forced_pending or (not forced_eligible and draw(st.integers(0, 5)) == 0):
                pending[file_slice.group_id] = draw(st.sampled_from(INSTANTS))
            stats[file_slice] = stats_from_seed(draw(st.integers(0, 2**20)), file_slice)
    pending_slices = tuple((s, pending[s.group_id]) for s in slices if s.group_id in pending)
    case = PlanningInput(tuple(slices), stats, pending, chosen, partitions, table_with_pending(name, pending_slices), now)
    check_non_trivial(case)
    return case


def edge_inputs(tables=tuple(PLAN_TABLES)) -> list[tuple[str, PlanningInput]]:
    """``(what, input)``: the valid inputs :func:`planning_inputs` never generates (its guard wants something to
    plan) but a scheduler hands over all the same: an empty table, partitions without a slice, nothing eligible,
    every file group pending, a partition filter that selects nothing, one lone slice. A strategy must plan
    nothing (or something valid) on them, without an error."""
    cases = []
    for name in tables:
        path, table_slices = plan_table(name)
        partitions = tuple(sorted({s.partition for s in table_slices}))
        first = [s for s in table_slices if s.partition == partitions[0]]
        options = {SMALL_FILE_LIMIT: 10 * MB, MAX_BYTES: 20 * MB, TARGET: 10 * MB}
        big = tuple(replace(s, base_file=replace(s.base_file, size=10 * MB + s.base_file.size))
                    for s in table_slices if s.base_file is not None)  # fmt: skip
        pending = {s.group_id: INSTANTS[0] for s in table_slices}
        pending_path = table_with_pending(name, tuple((s, INSTANTS[0]) for s in table_slices))
        for what, slices, case_pending, case_options, case_path in (
            ("an empty table (no slice)", (), {}, options, path),
            (f"slices of one partition, {len(partitions) - 1} without a slice", tuple(first), {}, options, path),
            ("no eligible slice (every base file above small.file.limit)", big, {}, options, path),
            ("every file group pending", table_slices, pending, options, pending_path),
            ("a partition filter selecting no partition", table_slices, {}, {**options, REGEX: "no-such"}, path),
            ("one lone slice", tuple(first[:1]), {}, options, path),
        ):
            stats = {s: stats_from_seed(i, s) for i, s in enumerate(slices)}
            case = PlanningInput(slices, stats, case_pending, case_options, partitions, case_path)
            cases.append((f"{what}, table {name}", case))
    return cases


__all__ = [
    "FIXED_NOW", "KitGenerationError", "PlanningInput", "check_non_trivial", "clustering_options", "edge_inputs",
    "expected_eligible", "file_slices", "kit_dir", "load_kit_table", "partition_filter_options", "partition_names", "plan_table",
    "planning_inputs", "selected_partitions", "size_options", "slice_stats",
]  # fmt: skip
