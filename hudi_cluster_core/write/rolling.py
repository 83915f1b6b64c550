"""Base files rolled by size: rows streamed in their final order, no file over the target.

Hudi's writers roll a base file when its written size reaches ``hoodie.clustering.plan.strategy.target.file.max.bytes``
(``HoodieBaseParquetWriter.canWrite``); :class:`RollingWriter` goes further and keeps every whole file, footer
included, at or below the target: a file whose footer (the record-key bloom filter alone is ~431 KB at Hudi's
defaults, :mod:`.footer_size`) would not fit its rows is never written over it. Only one row larger than the
target makes a file over it. Row groups are sized to land near the target: the compressed bytes per row seen so
far say how many rows still fit (before the first row group: the input files' data bytes per row when the caller
knows them, else the in-memory size, which overestimates; a first row group from such a guess is a quarter of
the room, so the guess is measured before the file fills; when the room is at most ``MEASURE_IN_MEMORY_BYTES`` of
rows, they are measured written in memory instead, and the file keeps one row group). Every file is a complete
Hudi base file, as :func:`~hudi_cluster_core.write.base_file.write_base_file` writes it: its marker first,
``_hoodie_file_name`` set (with meta fields), the bloom filter and min/max record keys of exactly its rows in the
footer.

Rows are gathered into row groups across write calls: every row group costs its column chunks' headers and
dictionaries and a footer entry per column, which at a few-KB target is a good part of a file, so a row group
per small write would close files early. Rows wait (as Arrow) until a row group's worth has come, until the file
is full or at its planned share, or until :meth:`RollingWriter.close`; the room a file has counts them as written,
at their estimated bytes. A file's last row group, when few in memory, is written in memory before it goes out:
rows that would take the file over the target (compressing worse than estimated) go to the next file.
A row group's worth is ``hoodie.parquet.block.size`` of rows in memory, and at least 100 rows: parquet-mr, Hudi's
writer, buffers that many records before it first checks a row group's size (``InternalParquetRecordWriter``).
Memory: the rows of one write call, at most one row group's worth of waiting rows (slices of earlier calls, which
keep those calls' buffers), and the record keys of the open file (for its bloom filter).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import pyarrow as pa

from ..failpoints import corrupt, failpoint
from ..io.file_budget import FILL, ROLL_SLACK
from ..io.storage import Storage
from .base_file import WriteContext, footer_for_keys, new_base_file, parquet_writer, write_stat
from .footer_size import FooterModel, chunk_bytes, fixed_data_bytes, footer_model, long_values

__all__ = ["FILL", "MEASURE_IN_MEMORY_BYTES", "MIN_ROW_GROUP_ROWS", "ROLL_SLACK", "RollingWriter"]

# Rows that fit an unmeasured file and take at most this many bytes in memory are measured written in memory rather
# than as a first quarter in the file (at a few-KB target a second row group's fixed chunk bytes and footer entries
# would leave no room for the other three quarters); so is a file's last row group of at most this many bytes. The
# CPU of compressing them twice is paid by small files only
MEASURE_IN_MEMORY_BYTES = 1 << 20
# parquet-mr checks a row group's buffered size first after this many records: no row group (but a file's last)
# holds fewer
MIN_ROW_GROUP_ROWS = 100


@dataclass
class _OpenFile:
    file_id: str
    name: str
    relative: str
    sink: pa.NativeFile
    writer: object
    started: float
    rows: int = 0
    row_groups: int = 0
    keys: list = field(default_factory=list)
    # rows gathered for the row group not written yet, in order: their count and their bytes in memory
    waiting: list[pa.Table] = field(default_factory=list)
    waiting_rows: int = 0
    waiting_bytes: float = 0.0
    waiting_cost: float = 0.0  # their estimated compressed bytes
    memory_bytes: int = 0  # the written rows' bytes in memory


class RollingWriter:
    """Writes ordered row batches as base files of about ``target_bytes`` each; :meth:`close` returns their
    write stats, in the order written. ``restamp(rows, first_row)`` rewrites meta columns of each batch (rows
    not preserving Hudi's metadata get the clustering instant and fresh sequence numbers). ``observe(rows)`` sees
    every chunk as it goes to the parquet writer (the rewrite check, run/digest.py)."""

    def __init__(
        self, storage: Storage, context: WriteContext, target_bytes: int,
        restamp: Callable[[pa.Table, int], pa.Table] | None = None, bytes_per_row_hint: float | None = None,
        file_id: str | None = None, observe: Callable[[pa.Table], None] | None = None,
    ):  # fmt: skip
        self.storage = storage
        self.context = context
        self.target_bytes = max(1, int(target_bytes))
        self.restamp = restamp
        self.stats: list[dict] = []
        self._file: _OpenFile | None = None
        self._schema: pa.Schema | None = None
        # measured on the file being written; until then the input's (the same rows, the same codec), if known
        self._compressed_per_row: float | None = bytes_per_row_hint
        self._measured = False  # per-row bytes measured on written rows, not guessed
        self._compressed_ratio = 0.0  # measured too: compressed bytes per byte in memory (for longer rows)
        self._measured_rows = 0  # the rows the cost per row was last measured on
        self._footer: FooterModel | None = None
        self._footer_error = 0  # how much a finished file's footer outgrew the model: added to later estimates
        self._fixed = 0  # a file's column chunk bytes before any row: not a cost of its rows
        self._long_values = 0  # the longest string values seen, summed over columns (their statistics' bytes)
        self._sample_values = 0  # the same of the row the footer model was measured on
        self._rows_seen = 0
        self._rows_finished = 0  # rows in the files finished so far
        self.file_id = file_id  # the one file's id when the caller names it (a bucket index's file group)
        self.observe = observe
        self._expected_rows: int | None = None  # rows still to come and files planned for them (``expect``)
        self._planned_files = 0
        self._row_cap: int | None = None  # the open file's share of the expected rows

    def expect(self, rows: int, files: int) -> None:
        """``rows`` rows are to come, planned as ``files`` files (the plan's numOutputFileGroups): files then
        close at an equal share of the rows still to come (recomputed per file), or earlier when full, so a plan
        whose estimate holds is written as planned, with files of equal rows rather than full files and a
        remainder. Files past the planned count roll at the target alone. Call it before the rows."""
        self._expected_rows = max(0, rows) if files > 0 else None
        self._planned_files = max(0, files)

    def write(self, table: pa.Table) -> None:
        table = corrupt(table)  # tests only (HUDI_CLUSTER_CORRUPT): the rewrite check must stop it
        if self._schema is None:
            self._schema = table.schema
        if self.restamp is not None and table.num_rows:
            table = self.restamp(table, self._rows_seen)
        self._rows_seen += table.num_rows
        self._note_long_values(table)
        in_memory_per_row = max(1.0, table.nbytes / table.num_rows) if table.num_rows else 1.0
        group_bytes = max(self.context.options.row_group_bytes, MIN_ROW_GROUP_ROWS * in_memory_per_row)
        offset = 0
        while offset < table.num_rows:
            if self._file is None:
                self._open()
            open_file = self._file
            assert open_file is not None
            per_row = self._per_row(in_memory_per_row)
            # the open row group takes rows up to a row group's worth, counting those already waiting
            group_left = max(1, int((group_bytes - open_file.waiting_bytes) // in_memory_per_row))
            wanted = min(group_left, table.num_rows - offset)
            if self._row_cap is not None:
                wanted = min(wanted, max(0, self._row_cap - open_file.rows - open_file.waiting_rows))
            rows = self._rows_that_fit(open_file, table, per_row, wanted) if wanted else 0
            if rows == 0 and (open_file.rows or open_file.waiting_rows):
                if not self._measure_waiting(open_file):
                    self._finish(open_file)  # full: the rows go to the next file
                continue
            rows = max(1, rows)  # one row larger than the target still makes a file (of its own)
            measuring = not self._measured
            if measuring and rows * in_memory_per_row <= MEASURE_IN_MEMORY_BYTES:
                # measured on all the rows the row group may take (few in memory): more rows, a truer cost per row
                sample = min(wanted, max(rows, int(MEASURE_IN_MEMORY_BYTES // in_memory_per_row)))
                self._measure_in_memory(open_file, table.slice(offset, sample))
                per_row = self._per_row(in_memory_per_row)
                rows = max(1, self._rows_that_fit(open_file, table, per_row, wanted))
                measuring = False
            elif measuring:
                rows = max(1, rows // 4)  # a guessed size per row: measure a quarter before filling the file
            open_file.waiting.append(table.slice(offset, rows))
            open_file.waiting_rows += rows
            open_file.waiting_bytes += rows * in_memory_per_row
            open_file.waiting_cost += rows * per_row
            offset += rows
            if measuring or open_file.waiting_bytes + in_memory_per_row > group_bytes:
                self._write_waiting(open_file)  # a quarter to measure, or a whole row group
            capped = self._row_cap is not None and open_file.rows + open_file.waiting_rows >= self._row_cap
            full = self._room(open_file, table) < ROLL_SLACK * self.target_bytes
            if capped or (full and not self._measure_waiting(open_file)):
                self._finish(open_file)

    def _per_row(self, in_memory_per_row: float) -> float:
        """The compressed bytes a row of ``in_memory_per_row`` bytes in memory is expected to take: once measured,
        the costliest measured, or more for rows larger in memory than those measured."""
        if not self._measured or self._compressed_per_row is None:
            return self._compressed_per_row or in_memory_per_row
        return max(self._compressed_per_row, self._compressed_ratio * in_memory_per_row)

    def _room(self, open_file: _OpenFile, table: pa.Table, more_rows: int = 1) -> float:
        """Bytes of column chunks the open file can still take in its open row group (``more_rows`` rows' keys
        added to its footer): the rows waiting for that row group count as written, at their estimated bytes."""
        waiting = open_file.waiting_rows
        footer = self._footer_bytes(table, open_file.rows + waiting + more_rows, open_file.row_groups + 1)
        # the open row group's column chunks cost their headers before any row (``_fixed``), and the file its
        # leading magic before its first row group: neither is in a row's bytes
        start = 4 if open_file.sink.tell() == 0 else 0
        return self.target_bytes * FILL - open_file.sink.tell() - start - self._fixed - footer - open_file.waiting_cost

    def _measure_in_memory(self, open_file: _OpenFile, rows: pa.Table) -> float:
        """What a row of ``rows`` costs compressed, past a row group's fixed bytes: ``rows`` written in memory.
        Returns their compressed bytes past the fixed ones."""
        named = self.context.named(rows, open_file.name).replace_schema_metadata(None)
        compressed = max(0, chunk_bytes(named, self.context.options) - self._fixed)
        self._compressed_per_row = max(1.0, compressed / named.num_rows)
        self._compressed_ratio = compressed / max(1, named.nbytes)
        self._measured = True
        self._measured_rows = named.num_rows
        return compressed

    def _measure_waiting(self, open_file: _OpenFile) -> bool:
        """The rows waiting for the open row group measured written in memory, when they are few in memory and at
        least twice the rows the cost per row was measured on (which overestimates a larger row group's: its
        dictionaries and pages hold more rows): whether the estimate was renewed, the file then taking more."""
        if open_file.waiting_rows < 2 * self._measured_rows or open_file.waiting_bytes > MEASURE_IN_MEMORY_BYTES:
            return False
        open_file.waiting_cost = self._measure_in_memory(open_file, self._waiting_table(open_file))
        return True

    def _rows_that_fit(self, open_file: _OpenFile, table: pa.Table, per_row: float, wanted: int) -> int:
        """The most rows, up to ``wanted``, that keep the open file (footer included) within the target: the
        footer grows with the keys (a DYNAMIC_V0 bloom filter adds rows), so the fit is searched."""
        low, high = 0, wanted
        while low < high:
            middle = (low + high + 1) // 2
            if middle * per_row <= self._room(open_file, table, middle):
                low = middle
            else:
                high = middle - 1
        return low

    def _footer_bytes(self, table: pa.Table, keys: int, row_groups: int) -> int:
        if self.target_bytes >= 1 << 61:  # a writer that never rolls needs no footer estimate
            return 0
        if self._footer is None:
            sample = self.context.named(table.slice(0, 1), "x" * 80).replace_schema_metadata(None)
            longest = max((len(k) for k in self.context.record_keys(table.slice(0, 64)).to_pylist() if k), default=0)
            self._footer = footer_model(sample, self.context.options, 4 * longest + 16)
            self._sample_values = long_values(sample)
            self._fixed = fixed_data_bytes(self.context.named(table.slice(0, 2), "x" * 80).replace_schema_metadata(None),
                                           self.context.options)  # fmt: skip
        # min/max statistics of long strings: the model measured one row; longer values seen since cost more
        excess = max(0, self._long_values - self._sample_values)
        return self._footer.bytes(keys, row_groups) + self._footer_error + 2 * excess * (row_groups + 1)

    def _note_long_values(self, table: pa.Table) -> None:
        if self.target_bytes < 1 << 61:
            self._long_values = max(self._long_values, long_values(table))

    def close(self) -> list[dict]:
        """Finish the open file; an input without rows still gets one (empty) file, as ``GroupTask.write`` does."""
        while self._file is not None:  # rows the last file could not hold start another
            self._finish(self._file)
        if not self.stats and self._schema is not None:
            self._open()
            assert self._file is not None
            self._write_chunk(self._file, self._schema.empty_table())
            self._finish(self._file)
        return self.stats

    def abort(self) -> None:
        """Stop without a footer; the partial file keeps its marker, so the rollback finds and deletes it."""
        open_file, self._file = self._file, None
        if open_file is not None:
            try:
                if hasattr(open_file.writer, "abort"):  # no footer, now or when the writer is collected
                    open_file.writer.abort()
                open_file.sink.close()
            except Exception:  # noqa: BLE001 - already failing; the marker names the file for the rollback
                pass

    def _open(self) -> None:
        if self.file_id is not None and self.stats:
            raise ValueError(f"file {self.file_id} would roll: a writer with a named file id writes one file")
        self._row_cap = None
        if self._expected_rows is not None and self._planned_files > len(self.stats):
            left = self._planned_files - len(self.stats)
            self._row_cap = max(1, math.ceil((self._expected_rows - self._rows_finished) / left))
        file_id, name, relative = new_base_file(self.storage, self.context, self.file_id)
        sink = self.storage.fs.open_output_stream(self.storage.join(relative))
        self._file = _OpenFile(file_id, name, relative, sink, None, time.monotonic())

    def _write_waiting(self, open_file: _OpenFile) -> None:
        """The rows waiting for the open row group, written as one row group."""
        if not open_file.waiting:
            return
        rows = self._waiting_table(open_file)
        open_file.waiting, open_file.waiting_rows, open_file.waiting_bytes, open_file.waiting_cost = [], 0, 0.0, 0.0
        self._write_chunk(open_file, rows)

    @staticmethod
    def _waiting_table(open_file: _OpenFile) -> pa.Table:
        pieces = [piece.replace_schema_metadata(None) for piece in open_file.waiting]
        schema = pieces[0].schema  # write calls may differ in nullability: one schema, as the file's writer casts
        return pa.concat_tables([p if p.schema == schema else p.cast(schema) for p in pieces])

    def _write_chunk(self, open_file: _OpenFile, chunk: pa.Table) -> None:
        chunk = self.context.named(chunk, open_file.name).replace_schema_metadata(None)
        if open_file.writer is None:
            open_file.writer = parquet_writer(open_file.sink, chunk.schema, self.context.options, sample=chunk)
        elif chunk.schema != open_file.writer.schema:  # type: ignore[attr-defined]
            chunk = chunk.cast(open_file.writer.schema)  # type: ignore[attr-defined]
        if self.observe is not None:
            self.observe(chunk)
        open_file.writer.write_table(chunk, row_group_size=max(1, chunk.num_rows))  # type: ignore[attr-defined]
        open_file.keys.append(self.context.record_keys(chunk))
        open_file.rows += chunk.num_rows
        open_file.row_groups += 1
        open_file.memory_bytes += chunk.nbytes
        written = open_file.sink.tell()
        if open_file.rows and written > 64:  # a row group is out: measure what a row costs compressed
            # the file's average so far, never below what an earlier row group of this file measured; the last row
            # group's own bytes per row are not taken: rows that compress worse at a file's end are what
            # _rows_over catches (the writers' sizes and the plan's counts were measured with this rule)
            average = (written - 4 - self._fixed) / open_file.rows
            seen = self._compressed_per_row if self._measured and open_file.row_groups > 1 else 0.0
            self._compressed_per_row = max(1.0, average, seen)
            self._measured_rows = open_file.rows
            ratio = (written - 4 - self._fixed) / max(1, open_file.memory_bytes)
            self._compressed_ratio = max(ratio, self._compressed_ratio if open_file.row_groups > 1 else 0.0)
            self._measured = True

    def _finish(self, open_file: _OpenFile) -> None:
        """Close the open file; rows waiting for it that turn out not to fit go first into a new open file."""
        left = self._rows_over(open_file)
        self._write_waiting(open_file)
        self._file = None
        self._rows_finished += open_file.rows
        keys = pa.chunked_array([c for k in open_file.keys for c in k.chunks], open_file.keys[0].type)
        open_file.writer.add_key_value_metadata(footer_for_keys(keys, self.context.options))  # type: ignore[attr-defined]
        data_end = open_file.sink.tell()
        open_file.writer.close()  # type: ignore[attr-defined]
        open_file.sink.close()
        size = self.storage.size(self.storage.join(open_file.relative))
        if self._footer is not None:  # a footer larger than modelled: later files reserve the difference
            modelled = self._footer.bytes(open_file.rows, open_file.row_groups) + self._footer_error
            self._footer_error += max(0, size - data_end - modelled)
        self.stats.append(write_stat(open_file.file_id, open_file.relative, self.context.partition, open_file.rows,
                                     size, open_file.started))  # fmt: skip
        failpoint("task-after-first-file")
        if left is not None:
            self._open()
            assert self._file is not None
            per_row = self._per_row(max(1.0, left.nbytes / left.num_rows))
            self._file.waiting, self._file.waiting_rows = [left], left.num_rows
            self._file.waiting_bytes, self._file.waiting_cost = float(left.nbytes), left.num_rows * per_row

    def _rows_over(self, open_file: _OpenFile) -> pa.Table | None:
        """The last rows waiting for the open file's row group that would take it over the target, taken out of
        it (None when all fit). The rows were counted at their estimated bytes, which rows compressing worse than
        those measured exceed: when they are few in memory, they are written in memory first (the file keeps at
        least one row)."""
        if not open_file.waiting or open_file.waiting_bytes > MEASURE_IN_MEMORY_BYTES or self.target_bytes >= 1 << 61:
            return None
        rows = self._waiting_table(open_file)
        named = self.context.named(rows, open_file.name).replace_schema_metadata(None)
        start = 4 if open_file.sink.tell() == 0 else 0
        keep = rows.num_rows
        while True:
            data = chunk_bytes(named.slice(0, keep), self.context.options)
            footer = self._footer_bytes(rows, open_file.rows + keep, open_file.row_groups + 1)
            room = self.target_bytes - open_file.sink.tell() - start - footer
            least = 0 if open_file.rows else 1
            if data <= room or keep <= least:
                break
            keep = max(least, min(keep - 1, int(keep * max(0, room) / data)))
        if keep == rows.num_rows:
            return None
        kept = rows.slice(0, keep)
        open_file.waiting, open_file.waiting_rows = ([kept] if keep else []), keep
        open_file.waiting_bytes = float(kept.nbytes)
        return rows.slice(keep)
