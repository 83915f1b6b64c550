"""One clustering group as a Spark task: read its rows into Arrow, write Hudi base files.

A :class:`GroupTask` is pickled to the executor; the execution strategy's ``execute_group`` hook receives it.
Rows never leave Arrow: base files are read with pyarrow and written with pyarrow, so the JVM only schedules.
Reading the input slices (pyarrow, hudi-rs's merge, the table's latest schema) is :mod:`.slice_reader`'s; this
module is what a strategy calls: the group's rows in, base files out, and what the task tells the rewrite check
and the progress on the way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

import pyarrow as pa

from ..errors import PlanError
from ..failpoints import corrupt, failpoint
from ..io.storage import Storage
from ..plan.avro_plan import InputSlice, PlanGroup
from ..table.keygen import KeyGenerator
from ..table.schema import ReadSchema
from ..write.base_file import META_COLUMNS, ParquetOptions, WriteContext, write_base_file
from ..write.rolling import RollingWriter
from ..sort import out_of_core
from .slice_reader import SliceReader
from .virtual_keys import record_key_sort

if TYPE_CHECKING:
    import numpy as np

    from .digest import GroupDigest, Select
    from .progress_channel import UnitReporter


ONE_FILE = 1 << 62  # a target no file reaches: the writer never rolls


@dataclass(frozen=True)
class GroupTask:
    base_uri: str
    instant_time: str
    group: PlanGroup
    strategy: Any  # the execution strategy object (picklable)
    params: Any  # its validated params model instance (or None)
    raw_params: Mapping[str, str] = field(default_factory=dict)
    settings: Mapping[str, str] = field(default_factory=dict)  # the job's merged Hudi configuration
    options: ParquetOptions = field(default_factory=ParquetOptions)
    target_file_max_bytes: int = 1024 * 1024 * 1024
    preserve_hoodie_metadata: bool = True
    write_token: str = "0-0-0"  # set on the executor from the Spark task identity (``write_token_for``)
    # drawn once per execution of the plan and added to the Spark task's attempt id in the write token: a second
    # Spark application numbers its tasks alike, so two runs of one plan (one held up past its heartbeat, one that
    # took the instant over) would name the files of a plan-named file id (a bucket) alike, and overwrite or delete
    # each other's
    token_salt: int = 0
    storage_options: Mapping[str, str] = field(default_factory=dict)  # resolved on the driver (object stores)
    memory_budget: int = 1024**3  # bytes of rows one task sorts in memory (hudi.cluster.task.memory.bytes)
    spill_dir: str | None = None  # local directory for spill files (None: the system's temp directory)
    unit: int = 0  # which of the group's ``units`` key ranges this task writes (in-group parallelism)
    units: int = 1
    cpu_threads: int = 0  # Arrow's CPU threads in this task (0: the worker's own); the cores no other task needs
    read_schema: ReadSchema | None = None  # the table's latest schema: every row read is in it
    key_generator: KeyGenerator | None = None  # virtual keys (hoodie.populate.meta.fields=false): record keys from it
    # the rewrite check's record of this Spark task (run/digest.py); set on the executor, shared by copies
    digest: GroupDigest | None = field(default=None, repr=False, compare=False)
    # the progress this Spark task sends the driver as it reads and writes (run/progress_channel.py); on the executor
    progress: UnitReporter | None = field(default=None, repr=False, compare=False)

    @property
    def partition(self) -> str:
        return self.group.partition

    @property
    def num_output_file_groups(self) -> int:
        return self.group.num_output_file_groups

    @property
    def storage(self) -> Storage:
        return Storage(self.base_uri, self.storage_options)

    def with_write_token(self, token: str) -> "GroupTask":
        return replace(self, write_token=token)

    def write_token_for(self, partition_index: int, stage_id: int, attempt_id: int) -> str:
        """Hudi's write token of the Spark task (``partition-stage-attempt``), its attempt id salted per execution."""
        return f"{partition_index}-{stage_id}-{attempt_id + self.token_salt}"

    def with_digest(self, digest: GroupDigest) -> "GroupTask":
        return replace(self, digest=digest)

    def with_progress(self, reporter: UnitReporter) -> "GroupTask":
        return replace(self, progress=reporter)

    def input_bytes(self) -> int:
        storage = self.storage
        return sum(storage.size(path) for s in self.group.slices for path in (s.base_file, *s.log_files) if path)

    def write_sorted(self, columns: Sequence[str], layout: str = "linear", *, key: Any = None) -> list[dict]:
        """Write the group's rows sorted by ``columns`` in ``layout`` as base files rolled at
        ``target_file_max_bytes``; returns their write stats. Within ``memory_budget``: a larger group spills
        to local disk, and a group split across tasks (``units > 1``) writes only this task's key ranges.
        Strategies that write this way say so with the ``execution_splits_group`` hook. ``key``: another row
        order (a :class:`~hudi_cluster_core.sort.spill.SortKey` that depends on each row alone)."""
        key = key or record_key_sort(self.key_generator, list(columns), layout)
        return out_of_core.write_sorted(self, list(columns), layout, key)

    def input_batches(self) -> Iterator[pa.Table]:
        """The group's rows in batches of one schema (the group's), slice by slice, never a whole slice in memory.
        Rows read this way are not the rewrite check's input unless given to :meth:`note_input`."""
        return (batch for _, batch in out_of_core.slice_batches(self, out_of_core.group_schema(self)))

    def record_keys(self, rows: pa.Table) -> pa.ChunkedArray:
        """The record keys of ``rows`` (``_hoodie_record_key``, or the key generator's for virtual keys)."""
        return self._context().record_keys(rows)

    def _context(self) -> WriteContext:
        return WriteContext(self.base_uri, self.instant_time, self.partition, self.write_token, self.options,
                            self.key_generator)  # fmt: skip

    @property
    def _restamps(self) -> bool:
        # Hudi stamps the clustering instant only into populated meta fields; virtual keys leave them null
        return not self.preserve_hoodie_metadata and self.key_generator is None

    def rolling_writer(self, bytes_per_row_hint: float | None = None, *, file_id: str | None = None) -> RollingWriter:
        """A writer of ordered rows into base files rolled at ``target_file_max_bytes`` (see ``write``);
        ``bytes_per_row_hint``: compressed bytes a row is expected to take, to size the first row group.
        ``file_id``: one file of that id, never rolled (a bucket is one file group, whatever its size)."""
        context = self._context()
        restamp = self._restamp_from if self._restamps else None
        target = self.target_file_max_bytes if file_id is None else ONE_FILE
        observe = _observers(self.digest.note_output if self.digest is not None else None,
                             self._note_written if self.progress is not None else None)
        return RollingWriter(self.storage, context, target, restamp, bytes_per_row_hint, file_id, observe)

    def _note_written(self, rows: pa.Table) -> None:
        if self.progress is not None:
            self.progress.written(rows.num_rows)

    def _restamp_from(self, table: pa.Table, first_row: int) -> pa.Table:
        return _restamp(table, self.instant_time, self.write_token, first_row)

    def slice_reader(self) -> SliceReader:
        """The reader of this group's input slices (:mod:`.slice_reader`), reporting to the task's progress."""
        return SliceReader(self.storage, self.instant_time, self.read_schema, self.progress)

    def _check_whole_group(self) -> None:
        if self.units > 1:
            raise PlanError(
                f"group {self.group.index} is split across {self.units} tasks by key range, but the execution "
                "strategy reads the whole group; only strategies that write with task.write_sorted() may answer "
                "execution_splits_group=True"
            )

    def read_slices(self) -> list[tuple[InputSlice, pa.Table]]:
        """``(slice, its rows)`` for every slice of the group, in plan order, Hudi's meta columns included.

        Every slice shape is read: a base file alone (pyarrow), a base file with log files and a log-only slice
        (no base file, as MOR and bucket tables have) merged by hudi-rs's file-group reader (updates, deletes,
        ordering field). A slice with neither base nor log files is a :class:`PlanError`."""
        self._check_whole_group()
        reader = self.slice_reader()
        slices = [(input_slice, reader.read(input_slice)) for input_slice in self.group.slices]
        if self.digest is not None:  # the rewrite check's input (a slice read twice counts once)
            self.digest.note_slices(slices)
        return slices

    def note_input(self, rows: pa.Table, mine: np.ndarray | None = None, select: Select | None = None) -> None:
        """For code that reads rows other than through :meth:`read_slices` / :meth:`read_arrow` (e.g.
        ``out_of_core.slice_batches``): ``rows`` are to be written (``mine``: those of them this task writes, as
        ``select`` picks them). The rewrite check compares what was noted with what was written."""
        if self.digest is not None:
            self.digest.note_input(rows, mine, select)

    def read_arrow(
        self, slices: list[tuple[InputSlice, pa.Table]] | None = None, *, _whole_group: bool = False
    ) -> pa.Table:
        """All rows of the group (of ``slices`` when given, as :meth:`read_slices` returned them) as one table,
        meta columns included, in slice order. The whole group is in memory: :meth:`write_sorted` is the
        bounded-memory way."""
        if not _whole_group:
            self._check_whole_group()
        tables = [rows for _, rows in (self.read_slices() if slices is None else slices)]
        if not tables:
            raise PlanError(f"group {self.group.index} has no slices")
        # one schema when the table records one; a table without (no commit has a schema) unifies its files'
        table = pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]
        missing = [c for c in META_COLUMNS if c not in table.column_names]
        if missing:
            raise PlanError(f"group {self.group.index}: input files lack Hudi meta columns {missing}")
        return table

    def write(
        self, table: pa.Table, num_files: int | None = None, *, file_ids: Sequence[str] | None = None
    ) -> list[dict]:
        """Write ``table`` as base files of contiguous rows in the group's partition; returns their write stats.

        By default files roll at ``target_file_max_bytes`` written, as Hudi's writers roll them. ``num_files``
        files of equal row counts instead, or one per entry of ``file_ids`` when the strategy chooses the output
        file ids (a bucket index names its file groups); never more files than rows, and one (empty) file for an
        empty table. Without preserved metadata the rows are stamped with the clustering instant and fresh
        sequence numbers (counted from 0 in each call), as Hudi does."""
        table = corrupt(table)  # tests only (HUDI_CLUSTER_CORRUPT): the rewrite check must stop it
        if num_files is None and file_ids is None:
            writer = self.rolling_writer()
            try:
                writer.write(table)
                return writer.close()
            except BaseException:
                writer.abort()
                raise
        if file_ids is not None:
            file_ids = list(file_ids)
            _check_file_ids(file_ids, num_files, self.group.index)
        wanted = len(file_ids) if file_ids is not None else (num_files or self.num_output_file_groups)
        count = max(1, min(wanted, max(table.num_rows, 1)))
        if self._restamps:
            table = _restamp(table, self.instant_time, self.write_token)
        context = self._context()
        storage = self.storage
        rows_per_file = math.ceil(table.num_rows / count) if table.num_rows else 0
        stats = []
        for index in range(count):
            chunk = table.slice(index * rows_per_file, rows_per_file) if rows_per_file else table
            if self.digest is not None:
                self.digest.note_output(chunk)
            self._note_written(chunk)
            stats.append(write_base_file(storage, context, chunk, file_id=file_ids[index] if file_ids else None))
            failpoint("task-after-first-file")
        return stats


def _check_file_ids(file_ids: list[str], num_files: int | None, group_index: int) -> None:
    if not file_ids:
        raise PlanError(f"group {group_index}: write(file_ids=[]) names no output file")
    if num_files is not None and num_files != len(file_ids):
        raise PlanError(f"group {group_index}: write(num_files={num_files}) with {len(file_ids)} file_ids")
    bad = [f for f in file_ids if not f or "_" in f or "." in f or "/" in f]
    if bad:
        raise PlanError(
            f"group {group_index}: output file id {bad[0]!r}; accepted: no '_', '.' or '/' (Hudi splits names on them)"
        )
    if len(set(file_ids)) != len(file_ids):
        raise PlanError(f"group {group_index}: output file ids repeat: {file_ids}")


def _observers(*observers: Callable[[pa.Table], None] | None) -> Callable[[pa.Table], None] | None:
    """One callback calling each of ``observers`` given (None when none is)."""
    given = [o for o in observers if o is not None]
    if len(given) <= 1:
        return given[0] if given else None

    def observe(rows: pa.Table) -> None:
        for observer in given:
            observer(rows)

    return observe


def _restamp(table: pa.Table, instant_time: str, write_token: str, first_row: int = 0) -> pa.Table:
    """Without preserved metadata Hudi stamps rows with the clustering instant and a fresh sequence number."""
    task_partition = write_token.split("-", 1)[0]
    n = table.num_rows
    commit = pa.array([instant_time] * n, pa.string())
    seqno = pa.array([f"{instant_time}_{task_partition}_{i}" for i in range(first_row, first_row + n)], pa.string())
    table = table.set_column(table.schema.get_field_index("_hoodie_commit_time"), "_hoodie_commit_time", commit)
    return table.set_column(table.schema.get_field_index("_hoodie_commit_seqno"), "_hoodie_commit_seqno", seqno)
