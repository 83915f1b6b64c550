"""The execution kit: ``execute_group`` run in-process (no Spark) on a :class:`GroupTask` over a real small table.

Checked for every generated group (``check_execution_strategy``; ``run_execution_kit`` runs it bounded and shrunk):

* the hook returns write stats of new files in the group's partition, and their ``numWrites`` match the files;
* **every input row written exactly once** (by record key), with its values; and the rewrite check a Spark task
  runs (``run/digest.py``) passes: rows read through the task (``read_slices``, ``read_arrow``, ``write_sorted``
  or ``note_input``), written unchanged;
* **meta columns and ``_hoodie_commit_time`` kept** (``_hoodie_commit_time``, ``_hoodie_commit_seqno``,
  ``_hoodie_record_key``, ``_hoodie_partition_path``; plans preserve Hudi metadata);
* **output file count follows the plan**: n = the plan's ``num_output_file_groups`` (Hudi's
  ``ceil(group bytes / target.file.max.bytes)``); the file count is within [ceil(n/2), 2n], or the files were
  rolled at the target (each file's row bytes at most 1.5 times the target's, all files but one at least half),
  or exactly what ``expected_files(task)`` says. The kit's ``target_file_max_bytes`` is what a file of the
  table costs before its rows (the data bytes of a one-row file: column chunk headers, dictionaries,
  statistics) plus the inputs' row bytes over n, so that rolling at it writes about n files even when, as in
  the kit's small tables, a file's fixed bytes outweigh its rows; "row bytes" are a file's data bytes less that
  fixed part;
* **the declared sort holds** (unless ``sorts=False``): with sort columns, rows are ordered within each file and
  the files are contiguous runs of that order; linear is a lexicographic order (nulls first), z-order and Hilbert
  the curve key of :mod:`hudi_cluster_core.sort.curves` (one sort column: linear). The sort columns come from the
  plan (``hoodie.clustering.plan.strategy.sort.columns`` in the group's strategy params), the layout from
  ``hoodie.layout.optimize.strategy``: a strategy that does not sort passes ``sorts=False``.

``run_execution_kit`` also holds the strategy's ``params_model`` to its declared bounds (``check_params_model``).

The input tables are written by the project's append writer: several commits, files per partition, two partitions,
columns of several types with duplicates, negatives and nulls.
"""

from __future__ import annotations

import math
import posixpath
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import strategies as st

from ..write.base_file import META_COLUMNS, ParquetOptions
from ..write.rolling import FILL
from ..plan.avro_plan import InputSlice, PlanGroup
from ..config import strategy_params
from ..config.catalogue import SORT_COLUMNS
from ..errors import RewriteMismatch
from ..run import digest
from ..run.task import GroupTask
from ..table import FileSlice, load_table
from .conformance import KitFailure, _checked_call, check_params_model, fail, run_kit
from .strategies import kit_dir

LAYOUT_KEY = "hoodie.layout.optimize.strategy"
LAYOUTS = ("linear", "z-order", "hilbert")
HOOK = "execute_group"
KEPT_META = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path")
SORT_CHOICES = (("x",), ("x", "y"), ("y", "s"), ("s", "n", "x"), ("_hoodie_record_key",), ("_hoodie_commit_time", "x"))


@dataclass(frozen=True)
class ExecutionInput:
    """One generated clustering group over a real table."""

    table_path: str
    slices: tuple[FileSlice, ...]
    sort_columns: tuple[str, ...]
    layout: str  # linear | z-order | hilbert
    num_output_file_groups: int
    instant_time: str

    @property
    def partition(self) -> str:
        return self.slices[0].partition

    def describe(self) -> str:
        return (f"{len(self.slices)} slice(s) of {self.partition!r}, sort {list(self.sort_columns)} {self.layout}, "
                f"{self.num_output_file_groups} output file(s)")  # fmt: skip

    def __repr__(self) -> str:
        return f"ExecutionInput({self.describe()})"

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(repr(self))


@lru_cache(maxsize=None)
def execution_table(seed: int, commits: int, files: int, rows: int) -> tuple[str, tuple[FileSlice, ...]]:
    """A small COW table (two partitions) written by the append writer; built once per spec and process."""
    import numpy as np

    from ..writer.append import append

    base = f"{kit_dir()}/exec-{seed}-{commits}-{files}-{rows}"
    rng = np.random.default_rng(seed)
    for commit in range(commits):
        n = rows * 2 * files
        x = rng.choice(np.round(rng.normal(0, 100, 8), 2), n) if seed % 2 else np.round(rng.normal(0, 100, n), 3)
        strings = ["", "a", "ab", "b", "zz", "héllo", "a\u00e9b", "long-string-value"]
        data = pa.table({
            "id": [f"k{seed}-{commit}-{i:04d}" for i in range(n)],
            "part": ["us" if i % 2 else "eu" for i in range(n)],
            "x": pa.array(x + 0.0, pa.float64()),
            "y": pa.array(rng.integers(-5, 6, n), pa.int64()),
            "s": pa.array([None if v == 0 and seed % 3 == 0 else strings[v % len(strings)] for v in rng.integers(0, 16, n)], pa.string()),
            "n": pa.array([None if v < 2 else int(v) for v in rng.integers(0, 40, n)], pa.int32()),
        })  # fmt: skip
        append(base, data, record_key="id", partition_field="part", files_per_partition=files,
               options=ParquetOptions(bloom_enabled=False))  # fmt: skip
    slices = tuple(sorted(load_table(base).view().latest_file_slices(), key=lambda s: (s.partition, s.base_instant, s.file_id)))
    return base, slices


_INSTANTS = iter(range(10**9))


@st.composite
def execution_inputs(draw, layouts=LAYOUTS, max_output_files: int = 4, sort: bool | str = True):
    """A group of 1+ real slices of one partition (usually several), a declared sort and an output file count.

    ``sort``: True draws sort columns or none, ``"required"`` always some, False none."""
    table_path, slices = execution_table(draw(st.integers(0, 5)), draw(st.integers(1, 3)), draw(st.integers(1, 3)),
                                         draw(st.sampled_from([1, 4, 12, 25])))  # fmt: skip
    partition = draw(st.sampled_from(sorted({s.partition for s in slices})))
    candidates = [s for s in slices if s.partition == partition]
    count = draw(st.integers(min(2, len(candidates)), len(candidates)))
    chosen = tuple(draw(st.permutations(candidates))[:count])
    columns = draw(st.sampled_from(SORT_CHOICES if sort == "required" else ((),) + SORT_CHOICES)) if sort else ()
    layout = draw(st.sampled_from(list(layouts)))
    outputs = draw(st.integers(1, max_output_files))
    instant = f"2027{next(_INSTANTS):013d}"
    return ExecutionInput(table_path, chosen, columns, layout, outputs, instant)


def group_task(strategy, case: ExecutionInput, *, group_metadata: Callable[[ExecutionInput], dict] | None = None,
               settings: dict | None = None) -> GroupTask:  # fmt: skip
    """The task ``build_tasks`` would make for ``case``'s group (target size per Hudi's output rule)."""
    table = load_table(case.table_path)
    storage = table.storage
    inputs = tuple(
        InputSlice(s.partition, s.file_id, storage.join(s.relative_path(s.base_file.name)) if s.base_file else None,
                   tuple(storage.join(s.relative_path(log.name)) for log in s.log_files))
        for s in case.slices
    )  # fmt: skip
    group = PlanGroup(0, case.partition, inputs, case.num_output_file_groups,
                      dict(group_metadata(case)) if group_metadata else {})  # fmt: skip
    # the target: a file's fixed bytes plus its share of the inputs' row bytes (column chunks, less each file's
    # fixed bytes; log files whole). Files roll on data bytes, and the kit's small files are mostly fixed bytes:
    # a target of the inputs' data bytes over n would let one file hold everything, or roll at every row.
    bases = [pq.read_metadata(s.base_file, filesystem=storage.fs) for s in inputs if s.base_file]
    fixed = file_overhead(storage, next((s.base_file for s in inputs if s.base_file), None))
    row_bytes = sum(_data_bytes(metadata) - fixed for metadata in bases)
    row_bytes += sum(storage.size(p) for s in inputs for p in s.log_files)
    rows = sum(metadata.num_rows for metadata in bases)
    # and the writer keeps whole files within the target: it fills FILL of it, less the footer it reserves; a file
    # of the kit's small tables is one row group, with its fixed bytes (FIXED_SHARES)
    share = FIXED_SHARES * fixed + max(1, math.ceil(max(row_bytes, rows) / case.num_output_file_groups))
    target = math.ceil((share + footer_reserve(storage, next((s.base_file for s in inputs if s.base_file), None))) / FILL)
    raw_params = {SORT_COLUMNS: ",".join(case.sort_columns)} if case.sort_columns else {}
    job = {LAYOUT_KEY: case.layout, **(settings or {})}
    params = strategy_params(strategy, dict(raw_params)) if getattr(strategy, "params_model", None) else None
    return GroupTask(storage.base_uri, case.instant_time, group, strategy, params, raw_params, job,
                     ParquetOptions(bloom_enabled=False), target, True, "0-1-0")  # fmt: skip


# the rolling writer's row groups in a file of the kit's small tables: one (it measures rows that few written in
# memory, and gathers the rows of its writes into one row group)
ROW_GROUPS = 1
# a file's fixed bytes the target leaves room for: its row group's, and as much again for the writer's cost per row
# measured on a file's first few rows, which overstates the kit table's (a 2-row file's second row adds ~180 B of
# column chunks where the table's rows average ~15 B)
FIXED_SHARES = ROW_GROUPS + 1
_OVERHEAD: dict[str, int] = {}
_RESERVE: dict[str, int] = {}


def footer_reserve(storage, base_file: str | None) -> int:
    """The footer bytes the rolling writer reserves in a file of ``base_file``'s rows (``ROW_GROUPS`` row
    groups), without bloom filter as the kit writes. Cached per file."""
    if base_file is None:
        return 0
    if base_file not in _RESERVE:
        from ..write.footer_size import footer_model, long_values

        rows = pq.read_table(base_file, filesystem=storage.fs)
        row = rows.slice(0, 1)
        longest = max((len(k) for k in row.column("_hoodie_record_key").to_pylist() if k), default=0)
        excess = max(0, long_values(rows) - long_values(row))  # longer statistics than the measured row's
        model = footer_model(row, ParquetOptions(bloom_enabled=False), 4 * longest + 16)
        _RESERVE[base_file] = model.bytes(1, ROW_GROUPS) + 2 * excess * (ROW_GROUPS + 1)  # as the writer reserves
    return _RESERVE[base_file]


def file_overhead(storage, base_file: str | None) -> int:
    """The data bytes of a one-row file of ``base_file``'s rows, written as the core writes base files: what a
    file of that table costs before its rows (0 without a base file). Cached per file."""
    if base_file is None:
        return 0
    if base_file not in _OVERHEAD:
        from ..write.base_file import parquet_writer

        row = pq.read_table(base_file, filesystem=storage.fs).slice(0, 1)
        sink = pa.BufferOutputStream()
        with parquet_writer(sink, row.schema, ParquetOptions(bloom_enabled=False), sample=row) as writer:
            writer.write_table(row)
        _OVERHEAD[base_file] = _data_bytes(pq.read_metadata(pa.BufferReader(sink.getvalue())))
    return _OVERHEAD[base_file]


def _read_inputs(task: GroupTask) -> pa.Table:
    """The group's rows as the core reads them (MOR slices merged by hudi-rs)."""
    return pa.concat_tables([rows for _, rows in task.read_slices()], promote_options="permissive")


def _key_order(columns: list[str], layout: str):
    """A function table -> list of comparable sort keys (one per row) for the declared order."""
    if layout != "linear" and len(columns) > 1:
        from ..sort import curves

        make = curves.zorder_keys if layout == "z-order" else curves.hilbert_keys
        return lambda table: make(table, columns).to_pylist()

    def linear(table: pa.Table):
        values = [table.column(c).to_pylist() for c in columns]
        # nulls first (Spark's ascending order); strings compare by code point, as UTF-8 bytes do
        return [tuple((v is not None, v) for v in row) for row in zip(*values)]

    return linear


def check_execution_strategy(strategy, case: ExecutionInput, *, group_metadata=None, settings: dict | None = None,
                             expected_files: Callable[[GroupTask], int | None] | None = None,
                             sorts: bool = True) -> list[dict]:  # fmt: skip
    """Run ``execute_group`` on ``case`` in-process and assert the execution invariants; returns the stats.

    ``sorts=False``: the strategy does not sort, the declared sort is not checked."""
    __tracebackhide__ = True
    task = group_task(strategy, case, group_metadata=group_metadata, settings=settings)
    expected = _read_inputs(task)
    checked = digest.armed(task)  # the rewrite check a Spark task runs (its own copy: the read above is not input)
    stats = _checked_call(strategy, HOOK, _on=case.describe(), task=checked)
    if not isinstance(stats, (list, tuple)) or not all(isinstance(s, dict) and "path" in s for s in stats):
        fail(strategy, HOOK, "returns the write stats of its files", f"returned {stats!r:.120}")
    storage = task.storage
    partition_dir = storage.join(case.partition) if case.partition else storage.base
    inputs = {p for s in task.group.slices for p in (s.base_file, *s.log_files) if p}
    files, data_sizes = [], []
    for stat in stats:
        path = storage.strip_scheme(stat["path"])
        if not path.startswith("/"):
            path = storage.join(path)
        if posixpath.dirname(path).rstrip("/") != partition_dir.rstrip("/"):
            fail(strategy, HOOK, "new files only in the group's partition", f"wrote {path} outside {partition_dir}")
        if path in inputs:
            fail(strategy, HOOK, "new files only in the group's partition", f"overwrote input file {posixpath.basename(path)}")
        table = pq.read_table(path, filesystem=storage.fs)
        if int(stat.get("numWrites", table.num_rows)) != table.num_rows:
            fail(strategy, HOOK, "write stats match the files",
                 f"{posixpath.basename(path)}: numWrites={stat.get('numWrites')}, {table.num_rows} rows")  # fmt: skip
        files.append((posixpath.basename(path), table))
        metadata = pq.read_metadata(path, filesystem=storage.fs)
        data_sizes.append((_data_bytes(metadata), metadata.num_row_groups))
    _check_rows(strategy, expected, files)
    _check_file_count(strategy, task, expected.num_rows, files, expected_files, data_sizes)
    if sorts and case.sort_columns:
        _check_sort(strategy, case, files)
    try:  # last: the invariants above name what went wrong more precisely when one of them fails
        digest.check(checked, list(stats))
    except RewriteMismatch as mismatch:
        fail(strategy, HOOK, "the rewrite check passes (rows read through the task, written unchanged)", str(mismatch))
    return list(stats)


def _check_rows(strategy, expected: pa.Table, files) -> None:
    __tracebackhide__ = True
    written: dict[str, list[tuple[str, dict]]] = {}
    for name, table in files:
        missing = [c for c in META_COLUMNS if c not in table.column_names]
        if missing:
            fail(strategy, HOOK, "meta columns kept", f"{name} lacks {missing}")
        for row in table.to_pylist():
            written.setdefault(row["_hoodie_record_key"], []).append((name, row))
    given = {row["_hoodie_record_key"]: row for row in expected.to_pylist()}
    dropped = sorted(set(given) - set(written))
    if dropped:
        fail(strategy, HOOK, "every input row written exactly once",
             f"{len(dropped)} of {len(given)} row(s) not written, e.g. keys {dropped[:3]}")  # fmt: skip
    twice = sorted(k for k, rows in written.items() if len(rows) > 1)
    if twice:
        fail(strategy, HOOK, "every input row written exactly once",
             f"{len(twice)} row(s) written more than once, e.g. key {twice[0]!r} in {[n[:12] for n, _ in written[twice[0]]]}")  # fmt: skip
    extra = sorted(set(written) - set(given))
    if extra:
        fail(strategy, HOOK, "every input row written exactly once", f"{len(extra)} row(s) not in the input, e.g. {extra[:3]}")
    for key, row in given.items():
        name, out = written[key][0]
        for column in KEPT_META:
            if out.get(column) != row.get(column):
                fail(strategy, HOOK, f"meta columns and {column} kept",
                     f"key {key!r} in {name[:12]}: {column} {row.get(column)!r} -> {out.get(column)!r}")  # fmt: skip
        changed = [c for c in row if not c.startswith("_hoodie_") and out.get(c) != row[c]]
        if changed:
            c = changed[0]
            fail(strategy, HOOK, "row values kept", f"key {key!r}: {c} {row[c]!r} -> {out.get(c)!r}")


def _check_file_count(strategy, task: GroupTask, rows: int, files, expected_files, sizes=()) -> None:
    __tracebackhide__ = True
    if expected_files is not None:
        wanted = expected_files(task)
        if wanted is not None and len(files) != wanted:
            fail(strategy, HOOK, "output file count as expected_files says", f"{len(files)} file(s), expected {wanted}")
        return
    planned = max(1, min(task.num_output_file_groups, rows))
    low, high = math.ceil(planned / 2), 2 * planned
    # files rolled at the target by data written (as Hudi rolls them): judged on row bytes (a file's data bytes
    # less its row groups' fixed bytes), none far above the target's, all but one at least half of it
    first = next((s.base_file for s in task.group.slices if s.base_file), None)
    fixed = file_overhead(task.storage, first)
    share = math.floor(task.target_file_max_bytes * FILL) - footer_reserve(task.storage, first) - FIXED_SHARES * fixed
    payload = [size - fixed * row_groups for size, row_groups in sizes]
    rolled = bool(payload) and all(p <= 1.5 * share for p in payload) and sum(p < share / 2 for p in payload) <= 1
    if not (rolled or low <= len(files) <= high):
        shown = ", ".join(str(p) for p in sorted(payload)[:6]) + (", ..." if len(payload) > 6 else "")
        fail(strategy, HOOK, "output file count follows the plan's numOutputFileGroups",
             f"{len(files)} file(s) for {rows} rows, the plan's numOutputFileGroups = {task.num_output_file_groups}: "
             f"accepted {low}..{high} files, or files rolled at the target (row bytes {share} B a file; theirs: "
             f"{shown})")  # fmt: skip


def _data_bytes(metadata) -> int:
    """A parquet file's column chunks, compressed: the bytes a writer rolls on (footer excluded)."""
    return sum(metadata.row_group(g).column(c).total_compressed_size
               for g in range(metadata.num_row_groups) for c in range(metadata.num_columns))  # fmt: skip


def _check_sort(strategy, case: ExecutionInput, files) -> None:
    __tracebackhide__ = True
    columns = list(case.sort_columns)
    layout = case.layout if len(columns) > 1 else "linear"
    order = _key_order(columns, layout)
    invariant = f"declared sort holds ({layout} on {','.join(columns)})"
    runs = []
    for name, table in files:
        if not table.num_rows:
            continue
        keys = order(table)
        for i, (a, b) in enumerate(zip(keys, keys[1:])):
            if b < a:
                fail(strategy, HOOK, invariant, f"{name[:12]}: row {i + 1} comes before row {i} in that order")
        runs.append((keys[0], keys[-1], name))
    runs.sort(key=lambda r: (r[0], r[1]))
    for (_, last, first_name), (start, _, second_name) in zip(runs, runs[1:]):
        if start < last:
            fail(strategy, HOOK, invariant, f"files {first_name[:12]} and {second_name[:12]} overlap in that order")


def run_execution_kit(strategy, *, max_examples: int = 15, layouts=LAYOUTS, max_output_files: int = 4,
                      group_metadata=None, settings: dict | None = None, expected_files=None, sorts: bool | str = True,
                      inputs=None) -> None:  # fmt: skip
    """Check ``strategy``'s params model, then ``max_examples`` generated groups over real tables (shrunk,
    bounded, quiet).

    ``sorts``: by default the plan's sort columns (drawn, or none) must hold in the output, so a strategy that
    does not sort passes ``sorts=False``, and one that needs sort columns ``"required"``; ``layouts``: the layouts
    it claims to honour (``hoodie.layout.optimize.strategy``); ``max_output_files`` bounds the planned output
    files (1 for single-file strategies); ``group_metadata(case)`` gives the plan group's extraMetadata;
    ``expected_files(task)`` an exact file count when the strategy has its own rule."""
    __tracebackhide__ = True
    check_params_model(strategy)
    run_kit(lambda case: check_execution_strategy(strategy, case, group_metadata=group_metadata, settings=settings,
                                                  expected_files=expected_files, sorts=bool(sorts)),
            inputs if inputs is not None else execution_inputs(layouts, max_output_files, sorts),
            max_examples=max_examples)  # fmt: skip


__all__ = ["ExecutionInput", "KitFailure", "check_execution_strategy", "execution_inputs", "execution_table",
           "group_task", "run_execution_kit"]  # fmt: skip
