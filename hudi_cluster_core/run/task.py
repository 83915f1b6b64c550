"""One clustering group as a Spark task: read its rows into Arrow, write Hudi base files.

A :class:`GroupTask` is pickled to the executor; the execution strategy's ``execute_group`` hook receives it.
Rows never leave Arrow: base files are read with pyarrow and written with pyarrow, so the JVM only schedules.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import PlanError
from ..failpoints import failpoint
from ..write.base_file import META_COLUMNS, ParquetOptions, WriteContext, write_base_file
from ..io.storage import Storage
from ..plan.avro_plan import PlanGroup


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
    write_token: str = "0-0-0"  # set on the executor from the Spark task identity

    @property
    def partition(self) -> str:
        return self.group.partition

    @property
    def num_output_file_groups(self) -> int:
        return self.group.num_output_file_groups

    @property
    def storage(self) -> Storage:
        return Storage(self.base_uri)

    def with_write_token(self, token: str) -> "GroupTask":
        return replace(self, write_token=token)

    def input_bytes(self) -> int:
        storage = self.storage
        return sum(storage.info(path).size for s in self.group.slices for path in (s.base_file, *s.log_files) if path)

    def read_arrow(self) -> pa.Table:
        """All rows of the group's slices, meta columns included, in file order."""
        storage = self.storage
        tables = []
        for input_slice in self.group.slices:
            if input_slice.log_files:
                tables.append(self._read_merged(input_slice))
            elif input_slice.base_file is None:
                raise PlanError(f"file group {input_slice.partition}/{input_slice.file_id} has no base file and no log files")
            else:
                tables.append(pq.read_table(input_slice.base_file, filesystem=storage.fs))
        table = pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]
        missing = [c for c in META_COLUMNS if c not in table.column_names]
        if missing:
            raise PlanError(f"group {self.group.index}: input files lack Hudi meta columns {missing}")
        return table

    def _read_merged(self, input_slice) -> pa.Table:
        """A MOR slice's base file merged with its log files (updates, deletes, ordering field), by hudi-rs."""
        from hudi import HudiFileGroupReader

        storage = self.storage
        base = storage.base.rstrip("/") + "/"
        relative = [p[len(base):] if p.startswith(base) else p for p in (input_slice.base_file or "", *input_slice.log_files)]
        batch = HudiFileGroupReader(self.base_uri).read_file_slice_from_paths(relative[0], list(relative[1:]))
        return pa.Table.from_batches([batch])

    def write(self, table: pa.Table, num_files: int | None = None) -> list[dict]:
        """Write ``table`` as ``num_files`` base files of contiguous rows (default: the plan's output count)."""
        count = max(1, min(num_files or self.num_output_file_groups, max(table.num_rows, 1)))
        if not self.preserve_hoodie_metadata:
            table = _restamp(table, self.instant_time, self.write_token)
        context = WriteContext(self.base_uri, self.instant_time, self.partition, self.write_token, self.options)
        storage = self.storage
        rows_per_file = math.ceil(table.num_rows / count) if table.num_rows else 0
        stats = []
        for index in range(count):
            chunk = table.slice(index * rows_per_file, rows_per_file) if rows_per_file else table
            stats.append(write_base_file(storage, context, chunk))
            failpoint("task-after-first-file")
        return stats


def _restamp(table: pa.Table, instant_time: str, write_token: str) -> pa.Table:
    """Without preserved metadata Hudi stamps rows with the clustering instant and a fresh sequence number."""
    task_partition = write_token.split("-", 1)[0]
    n = table.num_rows
    commit = pa.array([instant_time] * n, pa.string())
    seqno = pa.array([f"{instant_time}_{task_partition}_{i}" for i in range(n)], pa.string())
    table = table.set_column(table.schema.get_field_index("_hoodie_commit_time"), "_hoodie_commit_time", commit)
    return table.set_column(table.schema.get_field_index("_hoodie_commit_seqno"), "_hoodie_commit_seqno", seqno)
