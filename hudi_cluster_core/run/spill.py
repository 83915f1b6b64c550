"""Runs of rows spilled to local disk by key range, and their sorted write within a memory allowance.

:mod:`.outofcore` routes a group's rows into key ranges (:class:`RangeSpill`); each range is then written in
key order by :func:`write_run`. A range holds at most ``allowance`` bytes of rows in memory when it is sorted:
one whose rows turn out larger (the size estimate was off, the sample unlucky) is cut again, from a sample of its
own spill file, until every piece fits. Sorted rows go to the writer one row group at a time (a ``take`` of the
next slice of the sort order), so a range is never held twice.

Memory of a task therefore stays at about ``allowance`` (one range) plus its sort order, one output row group
and the open output file's record keys (for its bloom filter; bounded by the target file size, not the group).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Protocol

import numpy as np
import pyarrow as pa

from ..io.curves import curve_sort_indices, sort_key_table
from .ranges import choose_boundaries, range_of_rows, stride_positions

# A range sorted in memory holds the rows, its sort order and one sorted row group at a time: half the budget
# for the rows leaves the other half for the sort keys, the output row group, the open file's record keys and
# the allocator's slack.
RANGE_SHARE = 2
# Ranges are cut to this share of the allowance, so the sample's error (and the few ranges of a small group)
# leaves the largest range near the same size whatever the group's size: peak memory stays flat.
RANGE_FILL = 0.85
# Sampled rows per range: the largest of n ranges is then within a few percent of the mean.
SAMPLE_ROWS_PER_RANGE = 1024
# A range cut again gets pieces a bit below the allowance, so the sample's error rarely needs a third cut.
RESPLIT_HEADROOM = 1.25
# Past this many cuts a range is all one key (equal keys never split): it is sorted in memory as it is.
MAX_RESPLITS = 4
SPILL_BATCH_ROWS = 65536
CHUNK_FILL = 0.97


class SortKey(Protocol):
    """A row order that depends on each row alone, so keys of different batches compare consistently.

    A key fitted to the data (Hudi's SAMPLE curves rank values against a sample) asks for ``sample_size`` rows
    of its columns: the out-of-core path draws them from the group and uses ``with_sample(rows)`` for every row;
    a group sorted in memory is ordered by the unfitted key's ``order`` (which samples the rows it is given)."""

    @property
    def columns(self) -> list[str]:
        """The columns the key reads (all a sample needs)."""

    @property
    def sample_size(self) -> int:
        """Rows of sample the key is fitted to; 0: it needs none."""

    def with_sample(self, rows: pa.Table) -> "SortKey":
        """The key fitted to ``rows`` (``sample_size`` rows of ``columns`` spread over the group)."""

    def keys(self, table: pa.Table) -> pa.Table:
        """Plain key columns whose ascending lexicographic order is the row order."""

    def order(self, table: pa.Table) -> pa.Array:
        """Row indices of ``table`` in key order (stable for equal keys)."""


@dataclass(frozen=True)
class ColumnsKey:
    """The sort columns in a layout (linear, DIRECT z-order or Hilbert) as :mod:`..io.curves` orders them."""

    columns: list[str]
    layout: str
    field_names: list[str] | None = None  # the record schema's names (Hudi's curve dimension order)
    sample_size: int = 0

    def with_sample(self, rows: pa.Table) -> "ColumnsKey":
        return self

    def keys(self, table: pa.Table) -> pa.Table:
        return sort_key_table(table, self.columns, self.layout, field_names=self.field_names)

    def order(self, table: pa.Table) -> pa.Array:
        return curve_sort_indices(table, self.columns, self.layout)  # which checks the columns are the table's


@dataclass
class Run:
    """One key range's rows: in memory (``table``) or in an Arrow IPC spill file (``path``)."""

    index: int = 0  # its range among its siblings
    rows: int = 0
    nbytes: int = 0
    path: str | None = None
    table: pa.Table | None = None

    def batches(self) -> Iterator[pa.Table]:
        if self.table is not None:
            yield from (pa.Table.from_batches([b]) for b in self.table.to_batches(max_chunksize=SPILL_BATCH_ROWS))
            return
        assert self.path is not None
        with pa.OSFile(self.path) as source:
            reader = pa.ipc.open_file(source)
            for index in range(reader.num_record_batches):
                yield pa.Table.from_batches([reader.get_batch(index)])

    def load(self, schema: pa.Schema) -> pa.Table:
        """The rows, handed over: the spill file is read (not memory-mapped, whose pages would count twice)
        and deleted."""
        if self.table is not None:
            rows, self.table = self.table, None
            return rows
        if self.path is None:
            return schema.empty_table()
        with pa.OSFile(self.path) as source:
            rows = pa.ipc.open_file(source).read_all()
        self.discard()
        return rows

    def discard(self) -> None:
        if self.path is not None and os.path.exists(self.path):
            os.remove(self.path)
        self.path, self.table = None, None


class RangeSpill:
    """Rows by local range ``0..buckets-1``: held in memory while all of them are within ``keep_in_memory``
    bytes, then one IPC spill file (lz4) per range. Counts every range's rows and Arrow bytes."""

    def __init__(self, directory: str, schema: pa.Schema, buckets: int, *, prefix: str = "range",
                 keep_in_memory: int = 0):  # fmt: skip
        self.directory = directory
        self.schema = schema
        self.prefix = prefix
        self.keep_in_memory = keep_in_memory
        self.runs = [Run(index) for index in range(buckets)]
        self.held: dict[int, list[pa.Table]] = {}
        self.held_bytes = 0
        self.writers: dict[int, Any] = {}
        self.options = pa.ipc.IpcWriteOptions(compression="lz4")

    def add(self, batch: pa.Table, local: np.ndarray) -> None:
        """Route ``batch``'s rows to ``local[i]``; rows outside ``0..buckets-1`` belong to other tasks."""
        mine = (local >= 0) & (local < len(self.runs))
        if not mine.any():
            return
        if len(self.runs) == 1:
            self._put(0, batch if mine.all() else batch.filter(pa.array(mine)))
            return
        # one take groups the batch's rows by range (stable: slice order kept), then each range is a slice
        order = np.flatnonzero(mine)[np.argsort(local[mine], kind="stable")]
        grouped, ranges = batch.take(pa.array(order)), local[order]
        starts = np.flatnonzero(np.concatenate([[True], ranges[1:] != ranges[:-1]]))
        for start, end in zip(starts, np.append(starts[1:], len(ranges))):
            self._put(int(ranges[start]), grouped.slice(int(start), int(end - start)))

    def _put(self, bucket: int, rows: pa.Table) -> None:
        run = self.runs[bucket]
        run.rows += rows.num_rows
        run.nbytes += rows.nbytes
        if not self.writers and self.held_bytes + rows.nbytes <= self.keep_in_memory:
            self.held.setdefault(bucket, []).append(rows)
            self.held_bytes += rows.nbytes
            return
        for held_bucket, tables in self.held.items():  # past the allowance: what memory held goes first
            for table in tables:
                self._writer(held_bucket).write_table(table)
        self.held, self.held_bytes = {}, 0
        self._writer(bucket).write_table(rows)

    def _writer(self, bucket: int) -> Any:
        writer = self.writers.get(bucket)
        if writer is None:
            path = self.runs[bucket].path = os.path.join(self.directory, f"{self.prefix}-{bucket:05d}.arrow")
            writer = self.writers[bucket] = pa.ipc.new_file(path, self.schema, options=self.options)
        return writer

    def filled(self) -> list[Run]:
        """The ranges holding rows, in key order (spill files closed, ready to read)."""
        for writer in self.writers.values():
            writer.close()
        self.writers = {}
        for bucket, tables in self.held.items():
            self.runs[bucket].table = pa.concat_tables(tables)
        self.held, self.held_bytes = {}, 0
        return [run for run in self.runs if run.rows]


def sample_rows(batches: Iterator[pa.Table], total_rows: int, wanted: int, columns: list[str]) -> pa.Table:
    """``columns`` of ``wanted`` evenly spaced rows of ``batches`` (``total_rows`` rows in all; at least one batch)."""
    positions = stride_positions(total_rows, wanted)
    parts: list[pa.Table] = []
    start = 0
    for batch in batches:
        end = start + batch.num_rows
        lo, hi = np.searchsorted(positions, [start, end])
        if hi > lo or not parts:  # the first batch's (maybe empty) pick gives an empty sample its columns
            parts.append(batch.select(columns).take(pa.array(positions[lo:hi] - start)))
        start = end
    return pa.concat_tables(parts)


def write_run(run: Run, key: SortKey, writer: Any, allowance: int, directory: str, schema: pa.Schema,
              depth: int = 0) -> None:  # fmt: skip
    """Write ``run``'s rows in key order to ``writer`` holding at most about ``allowance`` bytes of rows: a
    larger run is cut into key ranges from a sample of its own rows, each written in turn."""
    if run.nbytes > allowance and depth < MAX_RESPLITS and run.rows > 1:
        pieces = math.ceil(run.nbytes * RESPLIT_HEADROOM / allowance)
        sample = sample_rows(run.batches(), run.rows, pieces * SAMPLE_ROWS_PER_RANGE, key.columns)
        boundaries = choose_boundaries(key.keys(sample), pieces)
        if boundaries.num_rows:  # else every sampled row has one key: no cut can split it
            spill = RangeSpill(directory, schema, boundaries.num_rows + 1, prefix=f"{_name(run)}-{depth + 1}")
            for batch in run.batches():
                spill.add(batch, range_of_rows(key.keys(batch), boundaries))
            run.discard()
            for piece in spill.filled():
                write_run(piece, key, writer, allowance, directory, schema, depth + 1)
            return
    write_ordered(run.load(schema), key, writer)


def _name(run: Run) -> str:
    return os.path.splitext(os.path.basename(run.path))[0] if run.path else "memory"


def write_ordered(rows: pa.Table, key: SortKey, writer: Any, row_group_bytes: int | None = None) -> None:
    """``rows`` to ``writer`` in key order, one output row group's worth of rows taken at a time (the sorted
    copy of all the rows never exists)."""
    if rows.num_rows < 2:
        writer.write(rows)
        return
    order = key.order(rows)
    group_bytes = row_group_bytes or writer.context.options.row_group_bytes
    # a little under a row group, so the writer (which sizes row groups by each piece's own bytes per row) never
    # leaves a few-row remainder group behind every piece
    step = max(1, int(CHUNK_FILL * group_bytes // max(1.0, rows.nbytes / rows.num_rows)))
    for start in range(0, rows.num_rows, step):
        writer.write(rows.take(order.slice(start, step)))


def routed(batches: Iterator[pa.Table], key: SortKey, boundaries: pa.Table, first: int, spill: RangeSpill,
           note: Callable[[pa.Table, np.ndarray, "KeyRanges"], None] | None = None) -> RangeSpill:  # fmt: skip
    """Every batch's rows into ``spill``'s ranges (range ``first`` is its local range 0); ``note(batch, mine,
    ranges)`` is told which rows stay with this task (``GroupTask.note_input``: the rewrite check)."""
    ranges = KeyRanges(key, boundaries, first, len(spill.runs))
    for batch in batches:
        local = ranges.local(batch)
        if note is not None:
            note(batch, (local >= 0) & (local < ranges.count), ranges)
        spill.add(batch, local)
    return spill


@dataclass(frozen=True)
class KeyRanges:
    """Ranges ``first .. first + count - 1`` of ``boundaries``: the rows one task of a split group keeps."""

    key: SortKey
    boundaries: pa.Table
    first: int
    count: int

    def local(self, batch: pa.Table) -> np.ndarray:
        """Each row's range, counted from ``first`` (outside ``0 .. count - 1``: another task's)."""
        return range_of_rows(self.key.keys(batch), self.boundaries) - self.first

    def __call__(self, batch: pa.Table) -> np.ndarray:
        local = self.local(batch)
        return (local >= 0) & (local < self.count)
