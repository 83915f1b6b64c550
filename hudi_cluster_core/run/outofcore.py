"""A group's rows sorted within a per-task memory budget, and one key range of a group for in-group parallelism.

``GroupTask.write_sorted`` lands here. A group whose rows fit the budget (and that is not split across tasks) is
read, sorted and written in memory, as before. Otherwise the task works as a distribution sort:

1. **Boundaries.** Every task of the group reads the same deterministic sample (evenly spaced rows of the sort
   columns only, from the base files' footers on) and cuts it into ``units * buckets`` key ranges
   (:mod:`.ranges`); sort keys depend on the row alone, so all tasks agree on every row's range.
2. **Route.** The group is read slice by slice in batches (a MOR slice merged by hudi-rs, a base file streamed
   by row group); each row goes to its range. A task keeps only its own ranges (its unit), in memory when they
   fit the budget, else in one Arrow IPC spill file per range on local disk (lz4).
3. **Sort and write.** Range by range, in key order: sorted in memory (each range is about a budget share) and
   streamed to a :class:`~hudi_cluster_core.write.rolling.RollingWriter`, which rolls files at the target size.

Ranges never share a key, so a group's files, each task's in range order, hold the group's sort order. Memory
per task: about the budget (one range sorted at a time) plus a read batch (a MOR slice is merged whole). Limits:
rows of one sort key that alone exceed the budget are still sorted in memory (a range cannot split equal keys).
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import ConfigError, PlanError
from ..io.curves import sort_key_table, sort_rows
from ..write.base_file import META_COLUMNS
from .ranges import choose_boundaries, range_of_rows, stride_positions

if TYPE_CHECKING:
    from .task import GroupTask

# hudi-cluster's own keys (Apache Hudi has no such settings; they sit outside its namespaces on purpose)
MEMORY_KEY = "hudi.cluster.task.memory.bytes"
SPILL_DIR_KEY = "hudi.cluster.task.spill.dir"
SPLIT_MIN_KEY = "hudi.cluster.task.split.min.bytes"
DEFAULT_TASK_MEMORY = 1024**3
# An in-memory sort holds the rows, their sorted copy and the sort keys: a range gets a third of the budget.
SORT_OVERHEAD = 3
# Below this many bytes (in memory) per task a split costs more (every task reads the whole group) than it saves.
MIN_UNIT_BYTES = 64 * 1024**2
# A log file's rows take several times its size once merged into Arrow (Avro blocks, often compressed).
LOG_INFLATION = 4
READ_BATCH_ROWS = 65536
SAMPLE_ROWS_PER_RANGE = 256
MAX_SAMPLE_ROWS = 200_000


def memory_budget(settings: Mapping[str, str], pyspark_memory: str | None = None) -> int:
    """The per-task budget in bytes: ``hudi.cluster.task.memory.bytes`` (default 1 GiB), at most 3/4 of Spark's
    ``spark.executor.pyspark.memory`` when that caps the Python worker."""
    budget = _bytes_setting(settings, MEMORY_KEY, DEFAULT_TASK_MEMORY)
    cap = _spark_bytes(pyspark_memory) if pyspark_memory else None
    return min(budget, cap * 3 // 4) if cap else budget


def check_settings(settings: Mapping[str, str]) -> None:
    """Raise :class:`ConfigError` for a bad value of our own keys, before a run writes anything."""
    memory_budget(settings)
    split_min_bytes(settings)


def split_min_bytes(settings: Mapping[str, str]) -> int:
    """``hudi.cluster.task.split.min.bytes``: the fewest in-memory bytes of a group per task when it is split."""
    return _bytes_setting(settings, SPLIT_MIN_KEY, MIN_UNIT_BYTES)


def _bytes_setting(settings: Mapping[str, str], key: str, default: int) -> int:
    raw = settings.get(key)
    if raw in (None, ""):
        return default
    text = str(raw).strip()
    if not text.isdigit() or int(text) < 1024:
        raise ConfigError(f"{key}={raw!r}: accepted: a plain number of bytes, at least 1024")
    return int(text)


def _spark_bytes(text: str) -> int | None:
    """Spark's memory strings (``512m``, ``2g``; plain numbers are MiB)."""
    units = {"k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
    text = text.strip().lower().rstrip("b")
    if text[-1:] in units and text[:-1].isdigit():
        return int(text[:-1]) * units[text[-1]]
    return int(text) * 1024**2 if text.isdigit() else None


@dataclass(frozen=True)
class GroupSize:
    rows: int  # rows in the base files (log rows are not counted)
    memory_bytes: int  # estimated Arrow size of all the group's rows
    data_bytes: int  # the base files' column chunks, compressed (footers excluded)
    schema: pa.Schema | None  # the base files' schemas unified (None when the group has no base file)


def measure_group(task: GroupTask) -> GroupSize:
    """Rows and in-memory size from the base files' footers (uncompressed sizes); log files by their size."""
    storage = task.storage
    rows = memory = data = 0
    schemas = []
    for input_slice in task.group.slices:
        if input_slice.base_file:
            meta = pq.read_metadata(input_slice.base_file, filesystem=storage.fs)
            rows += meta.num_rows
            for index in range(meta.num_row_groups):
                row_group = meta.row_group(index)
                memory += row_group.total_byte_size
                data += sum(row_group.column(c).total_compressed_size for c in range(row_group.num_columns))
            schemas.append(meta.schema.to_arrow_schema())
        memory += sum(storage.size(p) * LOG_INFLATION for p in input_slice.log_files)
    schema = pa.unify_schemas(schemas, promote_options="permissive") if schemas else None
    return GroupSize(rows, memory, data, schema.remove_metadata() if schema is not None else None)


def units_for_group(size: GroupSize, *, idle_cores: int, read_parallelism: int, min_unit_bytes: int = MIN_UNIT_BYTES) -> int:
    """Tasks to split a group across: enough to use ``idle_cores``, never below ``min_unit_bytes`` of rows each,
    at most ``hoodie.clustering.group.read.parallelism``."""
    by_size = size.memory_bytes // max(1, min_unit_bytes)
    return int(max(1, min(idle_cores, by_size, read_parallelism)))


def write_sorted(task: GroupTask, columns: list[str], layout: str) -> list[dict]:
    """Write the task's rows (all of the group, or its unit's key ranges) sorted, files rolled at the target."""
    size = measure_group(task)
    per_unit = size.memory_bytes / max(1, task.units)
    buckets = max(1, math.ceil(per_unit * SORT_OVERHEAD / task.memory_budget))
    writer = task.rolling_writer(size.data_bytes / size.rows if size.rows else None)
    try:
        if task.units == 1 and buckets == 1:
            writer.write(sort_rows(task.read_arrow(_whole_group=True), columns, layout))
            return writer.close()
        schema = _target_schema(task, size)
        if not columns:  # nothing to sort: the rows stream through in slice order
            if task.units > 1:
                raise PlanError(f"group {task.group.index}: split across {task.units} tasks without sort columns")
            for batch in _group_batches(task, schema):
                writer.write(batch)
            return writer.close()
        boundaries = _sample_boundaries(task, columns, layout, task.units * buckets, size, schema)
        if task.units == 1:  # a group without rows still gets its one (empty) file, as GroupTask.write gives it
            writer.write(schema.empty_table())
        first = task.unit * buckets
        with tempfile.TemporaryDirectory(prefix="hudi-cluster-spill-", dir=_spill_root(task)) as spill:
            ranges = _RangeSpill(spill, schema, buckets)
            for batch in _group_batches(task, schema):
                keys = sort_key_table(batch, columns, layout, field_names=schema.names)
                local = range_of_rows(keys, boundaries) - first
                ranges.add(batch, local)
            for bucket in ranges.filled():
                # one range in memory at a time: its rows, then their sorted copy (the rows freed before writing)
                ordered = sort_rows(ranges.take(bucket), columns, layout)
                writer.write(ordered)
                del ordered
                pa.default_memory_pool().release_unused()  # give the freed range back before the next one
        return writer.close()
    except BaseException:
        writer.abort()
        raise


def _spill_root(task: GroupTask) -> str | None:
    """``hudi.cluster.task.spill.dir``, else the executor's Spark local directory (Spark hands it to Python
    workers as ``SPARK_LOCAL_DIRS`` and deletes it when the executor stops), else the system's temp dir."""
    if task.spill_dir:
        return task.spill_dir
    local = [d for d in os.environ.get("SPARK_LOCAL_DIRS", "").split(",") if d and os.path.isdir(d)]
    return local[0] if local else None


class _RangeSpill:
    """A task's rows by local range: kept in memory for a single range, else one IPC file per range."""

    def __init__(self, directory: str, schema: pa.Schema, buckets: int):
        self.directory = directory
        self.schema = schema
        self.buckets = buckets
        self.in_memory: list[pa.Table] = []
        self.writers: dict[int, pa.ipc.RecordBatchFileWriter] = {}
        self.options = pa.ipc.IpcWriteOptions(compression="lz4")

    def add(self, batch: pa.Table, local: np.ndarray) -> None:
        mine = (local >= 0) & (local < self.buckets)
        if not mine.any():
            return
        if self.buckets == 1:
            self.in_memory.append(batch.filter(pa.array(mine)))
            return
        # one take groups the batch's rows by range (stable: slice order kept), then each range is a slice
        order = np.flatnonzero(mine)[np.argsort(local[mine], kind="stable")]
        grouped, ranges = batch.take(pa.array(order)), local[order]
        starts = np.flatnonzero(np.concatenate([[True], ranges[1:] != ranges[:-1]]))
        for start, end in zip(starts, np.append(starts[1:], len(ranges))):
            bucket, rows = int(ranges[start]), grouped.slice(int(start), int(end - start))
            writer = self.writers.get(int(bucket))
            if writer is None:
                path = os.path.join(self.directory, f"range-{int(bucket):05d}.arrow")
                writer = self.writers[int(bucket)] = pa.ipc.new_file(path, self.schema, options=self.options)
            writer.write_table(rows)

    def filled(self) -> list[int]:
        """The ranges holding rows, in key order (spill files closed, ready to read)."""
        if self.buckets == 1:
            return [0]
        for writer in self.writers.values():
            writer.close()
        return sorted(self.writers)

    def take(self, bucket: int) -> pa.Table:
        """A range's rows, handed over: the spill file is read (not memory-mapped, whose pages would count
        twice) and deleted, the in-memory rows dropped."""
        if self.buckets == 1:
            rows = pa.concat_tables(self.in_memory) if self.in_memory else self.schema.empty_table()
            self.in_memory = []
            return rows
        path = os.path.join(self.directory, f"range-{bucket:05d}.arrow")
        with pa.OSFile(path) as source:
            rows = pa.ipc.open_file(source).read_all()
        os.remove(path)
        return rows


def _target_schema(task: GroupTask, size: GroupSize) -> pa.Schema:
    """One schema for every batch (spill files and output files need one): the base files' schemas unified, and
    the table's latest schema (hudi-rs) when log files may add columns."""
    schemas = [size.schema] if size.schema is not None else []
    if any(s.log_files for s in task.group.slices) or not schemas:
        from hudi import HudiTable as RsTable

        schemas.append(RsTable(task.base_uri).get_schema_with_meta_fields())
    schema = pa.unify_schemas(schemas, promote_options="permissive").remove_metadata()
    missing = [c for c in META_COLUMNS if c not in schema.names]
    if missing:
        raise PlanError(f"group {task.group.index}: input files lack Hudi meta columns {missing}")
    return schema


def _conform(batch: pa.Table, schema: pa.Schema, where: str) -> pa.Table:
    if batch.schema.remove_metadata() == schema:
        return batch.replace_schema_metadata(None)
    extra = [c for c in batch.column_names if c not in schema.names]
    if extra:
        raise PlanError(f"{where}: columns {extra} are not in the group's schema ({', '.join(schema.names)})")
    widened = pa.concat_tables([schema.empty_table(), batch.replace_schema_metadata(None)], promote_options="permissive")
    return widened.select(schema.names).cast(schema)


def _group_batches(task: GroupTask, schema: pa.Schema) -> Iterator[pa.Table]:
    """The group's rows, slice by slice, in batches of the group's schema (meta columns included)."""
    reader = task.slice_reader()
    for input_slice in task.group.slices:
        where = f"file group {input_slice.partition}/{input_slice.file_id}"
        if input_slice.base_file and not input_slice.log_files:
            source = pq.ParquetFile(input_slice.base_file, filesystem=task.storage.fs)
            for record_batch in source.iter_batches(batch_size=READ_BATCH_ROWS):
                yield _conform(pa.Table.from_batches([record_batch]), schema, where)
        else:
            rows = reader.read(input_slice)
            for record_batch in rows.to_batches(max_chunksize=READ_BATCH_ROWS):
                yield _conform(pa.Table.from_batches([record_batch]), schema, where)
            del rows


def _sample_boundaries(task: GroupTask, columns: list[str], layout: str, ranges: int, size: GroupSize,
                       schema: pa.Schema) -> pa.Table:  # fmt: skip
    """Boundaries of ``ranges`` key ranges from evenly spaced rows of the base files' sort columns (every slice's
    rows, hudi-rs-merged, when the group has no base file): the same sample in every task of the group."""
    wanted = min(MAX_SAMPLE_ROWS, ranges * SAMPLE_ROWS_PER_RANGE)
    fields = pa.schema([schema.field(c) for c in columns])
    parts: list[pa.Table] = []
    if size.rows:
        positions = stride_positions(size.rows, wanted)
        start = 0
        for input_slice in task.group.slices:
            if not input_slice.base_file:
                continue
            source = pq.ParquetFile(input_slice.base_file, filesystem=task.storage.fs)
            for record_batch in source.iter_batches(batch_size=READ_BATCH_ROWS, columns=columns):
                end = start + record_batch.num_rows
                lo, hi = np.searchsorted(positions, [start, end])
                if hi > lo:
                    picked = pa.Table.from_batches([record_batch]).take(pa.array(positions[lo:hi] - start))
                    parts.append(_conform(picked, fields, "sample"))
                start = end
    else:
        for batch in _group_batches(task, schema):
            picked = batch.take(pa.array(stride_positions(batch.num_rows, SAMPLE_ROWS_PER_RANGE)))
            parts.append(picked.select(columns))
    sample = pa.concat_tables(parts) if parts else fields.empty_table()
    return choose_boundaries(sort_key_table(sample, columns, layout, field_names=schema.names), ranges)
