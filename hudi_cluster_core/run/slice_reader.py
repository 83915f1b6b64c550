"""Reading a clustering group's input slices: every row in the table's latest schema, a base file alone with
pyarrow, a slice with log files merged by hudi-rs's file-group reader; whole, or streamed in batches.

:meth:`GroupTask.slice_reader <.task.GroupTask.slice_reader>` gives a task its reader; the out-of-core sort
streams slices through it and reports what was read to the task's progress.
"""

from __future__ import annotations

import posixpath
import uuid
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import PlanError
from ..io.evolution import SchemaMismatch, conform, renamed, same_values
from ..io.storage import Storage
from ..plan.avro_plan import InputSlice
from ..table.naming import parse_base_file, parse_log_file
from ..table.schema import ReadSchema, RenameTree
from ..write.base_file import TEMP_DIR

if TYPE_CHECKING:
    from .progress_channel import UnitReporter


class SliceReader:
    """Reads input slices of one table, every row in the table's latest schema (``read_schema.target``; the files'
    own when the table records none): a base file alone with pyarrow, a slice with log files merged by hudi-rs's
    file-group reader for the table (the table's schema, its completed instants).

    hudi-rs 0.5.0 cannot merge a slice without a base file (``Failed to read base file schema ''``), so a
    log-only slice is merged against a zero-row parquet file of the table's schema; and a base file written under
    an older schema is handed to it already in the latest one (our widening, Java's, not hudi-rs's), written the
    same way. Those files live under ``.hoodie/.temp/<T>/`` (never data files; the rollback and the commit clear
    the folder) and are deleted right after the read."""

    def __init__(self, storage: Storage, instant_time: str, read_schema: ReadSchema | None = None,
                 progress: UnitReporter | None = None):  # fmt: skip
        self.progress = progress
        self.base_uri = storage.base_uri
        self.instant_time = instant_time
        self.storage = storage
        self.read_schema = read_schema
        # hudi-rs reaches the store itself: the same endpoint, region and credentials, given explicitly
        self.rs_options = storage.hudi_rs_options()
        self.rs_uri = storage.hudi_rs_uri()  # the base URI in a form hudi-rs takes (wasbs:// it does not)
        self._rs_table: Any = None
        self._rs_reader: Any = None

    @property
    def target(self) -> pa.Schema | None:
        return self.read_schema.target if self.read_schema else None

    def read(self, input_slice: InputSlice) -> pa.Table:
        """The slice's rows, all at once."""
        rows = self._read(input_slice, None)
        if self.progress is not None:
            self.progress.read(_slice_key(input_slice), rows.num_rows, 1.0, restart=True)
        return rows

    def stream(self, input_slice: InputSlice, batch_rows: int) -> Iterator[pa.Table]:
        """The slice's rows in batches, never the whole slice: a base file by row group (pyarrow); a slice with
        log files by hudi-rs's streaming file-group reader, which holds the log records and streams the base
        file merged against them (the same rows as :meth:`read`)."""
        return self._read(input_slice, batch_rows, counted=True)

    def _counted(self, input_slice: InputSlice, batches: Iterator[pa.Table], total: int) -> Iterator[pa.Table]:
        """``batches`` told to the task's progress: each its share of ``total`` rows (the base file's footer's;
        0 for a merged slice, whose rows are known at its end), the whole slice once its last batch is out."""
        progress = self.progress
        assert progress is not None
        key = _slice_key(input_slice)
        progress.read(key, 0, 0.0, restart=True)
        told = 0.0
        for batch in batches:
            part = min(1.0 - told, batch.num_rows / total) if total else 0.0
            told += part
            progress.read(key, batch.num_rows, part)
            yield batch
        progress.read(key, 0, 1.0 - told)

    def _read(self, input_slice: InputSlice, batch_rows: int | None, *, counted: bool = False) -> Any:
        where = f"file group {input_slice.partition}/{input_slice.file_id}: "
        # a CDC table's change logs (``.cdc``) are log files of the slice in Hudi's view, not its data: Hudi's
        # readers skip them when they merge, and so do we
        input_slice = replace(input_slice, log_files=tuple(p for p in input_slice.log_files if not p.endswith(".cdc")))
        if not input_slice.log_files:
            if input_slice.base_file is None:
                raise PlanError(
                    f"file group {input_slice.partition}/{input_slice.file_id} has no base file and no log files"
                )
            renames = self._renames(input_slice.base_file)
            if batch_rows is None:
                return self._conform(renamed(pq.read_table(input_slice.base_file, filesystem=self.storage.fs), renames),
                                     where)  # fmt: skip
            source = pq.ParquetFile(input_slice.base_file, filesystem=self.storage.fs)
            batches = (self._conform(renamed(pa.Table.from_batches([b]), renames), where)
                       for b in source.iter_batches(batch_size=batch_rows))  # fmt: skip
            if counted and self.progress is not None:  # the footer read already: no other read of the file
                return self._counted(input_slice, batches, source.metadata.num_rows)
            return batches
        self._check_mergeable(input_slice)
        if batch_rows is None:
            with self._merge_input(input_slice) as (base, logs):
                return self._conform(pa.Table.from_batches([self._reader().read_file_slice_from_paths(base, logs)]), where)
        merged = self._merged_batches(input_slice, batch_rows, where)
        return self._counted(input_slice, merged, 0) if counted and self.progress is not None else merged

    def _merged_batches(self, input_slice: InputSlice, batch_rows: int, where: str) -> Iterator[pa.Table]:
        from hudi import HudiReadOptions

        options = HudiReadOptions().with_batch_size(batch_rows)
        with self._merge_input(input_slice) as (base, logs):
            for batch in self._reader().read_file_slice_from_paths_stream(base, logs, options):
                yield self._conform(pa.Table.from_batches([batch]), where)

    @contextmanager
    def _merge_input(self, input_slice: InputSlice) -> Iterator[tuple[str, list[str]]]:
        """(base file, log files) as hudi-rs takes them (relative paths), a written base file deleted after."""
        written = self._base_for_hudi_rs(input_slice)
        try:
            yield self._relative(written or input_slice.base_file or ""), [self._relative(p) for p in input_slice.log_files]
        finally:
            if written:
                self.storage.delete_file(written)

    def base_columns(self, base_file: str, columns: list[str], batch_rows: int) -> Iterator[pa.Table]:
        """Only ``columns`` of a base file (sort keys, to sample), in the table's latest schema when known."""
        renames = self._renames(base_file)
        in_file = {new: old for old, (new, _) in renames.items() if new}
        source = pq.ParquetFile(base_file, filesystem=self.storage.fs)
        present = [in_file.get(c, c) for c in columns if in_file.get(c, c) in source.schema_arrow.names]
        target = pa.schema([(self.target or source.schema_arrow).field(c) for c in columns])
        for batch in source.iter_batches(batch_size=batch_rows, columns=present):
            try:
                yield conform(renamed(pa.Table.from_batches([batch]), renames), target, f"{base_file}: ")
            except SchemaMismatch as exc:
                raise PlanError(str(exc)) from None

    def _conform(self, table: pa.Table, where: str) -> pa.Table:
        if self.target is None:
            return table.replace_schema_metadata(None)
        try:
            return conform(table, self.target, where)
        except SchemaMismatch as exc:
            raise PlanError(str(exc)) from None

    def _renames(self, path: str) -> RenameTree:
        if not self.read_schema or not self.read_schema.versions:
            return {}
        parsed = parse_base_file(posixpath.basename(path))
        return self.read_schema.renames(parsed.instant if parsed else "0")

    def _check_mergeable(self, input_slice: InputSlice) -> None:
        """hudi-rs merges log records by column name: a log file written before columns were renamed or dropped
        under schema on read would lose their values there, so such a slice is refused (its base file is
        handed to hudi-rs already renamed)."""
        if not self.read_schema or not self.read_schema.versions:
            return
        for path in input_slice.log_files:
            parsed = parse_log_file(posixpath.basename(path))
            if parsed and self.read_schema.renames(parsed.instant):
                raise PlanError(
                    f"file group {input_slice.partition}/{input_slice.file_id}: log file {posixpath.basename(path)} "
                    "was written before columns were renamed or dropped (hoodie.schema.on.read.enable), and "
                    "hudi-cluster cannot merge it; compact the table with Apache Hudi first"
                )

    def _reader(self) -> Any:
        """hudi-rs's file-group reader of the table: its latest schema, and (before table version 8) only log
        blocks of completed instants."""
        if self._rs_reader is None:
            self._rs_reader = self._table().create_file_group_reader_with_options(None, self.rs_options)
        return self._rs_reader

    def _table(self) -> Any:
        if self._rs_table is None:
            from hudi import HudiTable as RsTable

            self._rs_table = RsTable(self.rs_uri, self.rs_options)
        return self._rs_table

    def _relative(self, path: str) -> str:
        base = self.storage.base.rstrip("/") + "/"
        return path[len(base) :] if path.startswith(base) else path

    def _base_for_hudi_rs(self, input_slice: InputSlice) -> str | None:
        """The path of a base file of the latest schema written for hudi-rs, or None when the slice's own serves."""
        target = self.target or self._table().get_schema_with_meta_fields()
        if input_slice.base_file is None:
            return self._write_temp(target.empty_table())
        if self.target is None or same_values(pq.read_schema(input_slice.base_file, filesystem=self.storage.fs),
                                              self.target):  # fmt: skip
            return None  # hudi-rs reads it as it is
        rows = self._read(replace(input_slice, log_files=()), 1 << 20)  # not counted in the task's progress
        return self._write_temp(self.target.empty_table(), rows)

    def _write_temp(self, first: pa.Table, more: Iterator[pa.Table] = iter(())) -> str:
        path = self.storage.join(TEMP_DIR, self.instant_time, f"read-base-{uuid.uuid4().hex}.parquet")
        self.storage.mkdirs(posixpath.dirname(path))
        with self.storage.fs.open_output_stream(path) as sink, pq.ParquetWriter(sink, first.schema, compression="none") as writer:
            writer.write_table(first)
            for rows in more:
                writer.write_table(rows)
        return path


def _slice_key(input_slice: InputSlice) -> tuple[str, str]:
    return input_slice.partition, input_slice.file_id
