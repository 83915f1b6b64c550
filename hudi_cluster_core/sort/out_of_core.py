"""A group's rows sorted within a per-task memory budget, and one key range of a group for in-group parallelism.

``GroupTask.write_sorted`` lands here (the ``sort-and-size``, ``space-curve`` and ``single-file-sort`` strategies;
the consistent-bucket execution uses the same pieces). A group whose rows fit half the budget (and that is not
split across tasks) is read, sorted and written in memory. Otherwise the task works as a distribution sort:

1. **Boundaries.** Every task of the group reads the same deterministic sample (evenly spaced rows of the key
   columns only, from the base files' footers on) and cuts it into ``units * buckets`` key ranges
   (:mod:`.key_ranges`); sort keys depend on the row alone, so all tasks agree on every row's range. A key fitted to
   the data (Hudi's SAMPLE curves) is fitted first, to its own sample of the same kind.
2. **Route.** The group is read slice by slice in batches (:func:`slice_batches`: a base file by row group, a MOR
   slice merged by hudi-rs's streaming reader, never a whole slice); each row goes to its range. A task keeps only
   its own ranges (its unit), in memory while they fit half the budget, else in one Arrow IPC spill file per
   range on local disk (lz4) (:class:`.spill.RangeSpill`).
3. **Sort and write.** Range by range, in key order (:func:`.spill.write_run`): a range larger than half the
   budget (the estimate or the sample was off) is cut again from its own sample; a range that fits is sorted and
   handed to a :class:`~hudi_cluster_core.write.rolling.RollingWriter` one row group at a time.

Ranges never share a key, so a group's files, each task's in range order, hold the group's sort order. Memory
per task: half the budget of rows, their sort order, up to two output row groups (the rows being handed over and
those the writer gathers for its open row group), the open file's record keys (bounded by the target file size)
and a MOR slice's log records (hudi-rs holds them while it streams the base file).
Limits: rows of one sort key that alone exceed the budget are still sorted in memory (equal keys never split).
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Protocol

import pyarrow as pa
import pyarrow.parquet as pq

from ..config import catalogue
from ..config.sort_columns import check_sort_columns
from ..errors import PlanError
from ..write.base_file import META_COLUMNS
from .key_ranges import Select, choose_boundaries
from .spill import RANGE_FILL, RANGE_SHARE, SAMPLE_ROWS_PER_RANGE, ColumnsKey, RangeSpill, SortKey, routed, sample_rows, write_run
from .spill import write_ordered

if TYPE_CHECKING:
    import numpy as np

    from ..io.storage import Storage
    from ..plan.avro_plan import InputSlice, PlanGroup
    from ..table.schema import ReadSchema
    from ..write.rolling import RollingWriter

# Below this many bytes (in memory) per task a split costs more (every task reads the whole group) than it saves:
# the default of hudi.cluster.task.split.min.bytes.
MIN_UNIT_BYTES: int = catalogue.BY_KEY[catalogue.TASK_SPLIT_MIN_BYTES].default
# A log file's rows take several times its size once merged into Arrow (Avro blocks, often compressed).
LOG_INFLATION = 4
READ_BATCH_ROWS = 65536
PROBE_ROWS = 8192  # rows read to learn the Arrow bytes of a row
MAX_SAMPLE_ROWS = 200_000


class Task(Protocol):
    """What this module uses of a :class:`~hudi_cluster_core.run.task.GroupTask`, whose ``write_sorted`` lands
    here (so this module does not import it)."""

    @property
    def base_uri(self) -> str: ...
    @property
    def group(self) -> PlanGroup: ...
    @property
    def storage(self) -> Storage: ...
    @property
    def memory_budget(self) -> int: ...
    @property
    def spill_dir(self) -> str | None: ...
    @property
    def unit(self) -> int: ...
    @property
    def units(self) -> int: ...
    @property
    def read_schema(self) -> ReadSchema | None: ...
    def slice_reader(self) -> Any: ...  # run.slice_reader's SliceReader of the task's input slices
    def rolling_writer(self, bytes_per_row_hint: float | None = None, *, file_id: str | None = None) -> RollingWriter: ...
    def note_input(self, rows: pa.Table, mine: np.ndarray | None = None, select: Select | None = None) -> None: ...
    def read_arrow(self, slices: Any = None, *, _whole_group: bool = False) -> pa.Table: ...


def memory_budget(settings: Mapping[str, str], pyspark_memory: str | None = None) -> int:
    """The per-task budget in bytes: ``hudi.cluster.task.memory.bytes`` (default 1 GiB), at most 3/4 of Spark's
    ``spark.executor.pyspark.memory`` when that caps the Python worker."""
    budget: int = catalogue.read(settings, catalogue.TASK_MEMORY_BYTES)
    cap = _spark_bytes(pyspark_memory) if pyspark_memory else None
    return min(budget, cap * 3 // 4) if cap else budget


def split_min_bytes(settings: Mapping[str, str]) -> int:
    """``hudi.cluster.task.split.min.bytes``: the fewest in-memory bytes of a group per task when it is split."""
    value: int = catalogue.read(settings, catalogue.TASK_SPLIT_MIN_BYTES)
    return value


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
    log_memory_bytes: int = 0  # the part of memory_bytes estimated from log file sizes


def measure_group(task: Task) -> GroupSize:
    """Rows and in-memory size from the base files' footers (uncompressed sizes); log files by their size."""
    storage = task.storage
    rows = memory = data = logs = 0
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
        logs += sum(storage.size(p) * LOG_INFLATION for p in input_slice.log_files)
    schema = pa.unify_schemas(schemas, promote_options="permissive") if schemas else None
    return GroupSize(rows, memory + logs, data, schema.remove_metadata() if schema is not None else None, logs)


def units_for_group(size: GroupSize, *, idle_cores: int, read_parallelism: int, min_unit_bytes: int = MIN_UNIT_BYTES) -> int:
    """Tasks to split a group across: enough to use ``idle_cores``, never below ``min_unit_bytes`` of rows each,
    at most ``hoodie.clustering.group.read.parallelism``."""
    by_size = size.memory_bytes // max(1, min_unit_bytes)
    return int(max(1, min(idle_cores, by_size, read_parallelism)))


def write_sorted(task: Task, columns: list[str], layout: str, key: SortKey | None = None) -> list[dict]:
    """Write the task's rows (all of the group, or its unit's key ranges) sorted, files rolled at the target.

    ``key``: the row order (default: ``columns`` in ``layout``); it must depend on each row alone."""
    size = measure_group(task)
    writer = task.rolling_writer(size.data_bytes / size.rows if size.rows else None)
    try:
        _write_sorted(task, size, columns, layout, key, writer)
        return writer.close()
    except BaseException:
        writer.abort()
        raise


def _write_sorted(task: Task, size: GroupSize, columns: list[str], layout: str, key: SortKey | None,
                  writer: RollingWriter) -> None:  # fmt: skip
    allowance = range_allowance(task)
    per_unit = _arrow_bytes(task, size) / max(1, task.units)
    buckets = 1 if per_unit <= allowance else math.ceil(per_unit / (allowance * RANGE_FILL))
    planned = task.group.num_output_file_groups
    if task.units == 1 and buckets == 1:
        rows = task.read_arrow(_whole_group=True)
        in_memory: SortKey = key or ColumnsKey(columns, layout, rows.column_names)
        writer.expect(rows.num_rows, planned)
        write_ordered(rows, in_memory, writer)
        return
    schema = _target_schema(task, size)
    if not columns:  # nothing to sort: the rows stream through in slice order
        if task.units > 1:
            raise PlanError(f"group {task.group.index}: split across {task.units} tasks without sort columns")
        if not any(s.log_files for s in task.group.slices):  # the footers' rows are the rows (no log merge)
            writer.expect(size.rows, planned)
        for batch in _group_batches(task, schema):
            task.note_input(batch)
            writer.write(batch)
        return
    check_sort_columns(columns, schema.names, error=PlanError)
    files = unit_files(planned, task.units)
    key, boundaries = _sample_boundaries(task, key or ColumnsKey(columns, layout, schema.names), task.units * buckets,
                                         size, schema, range_shares(files, buckets))  # fmt: skip
    writer.write(schema.empty_table())  # a task without rows still writes one (empty) file, as GroupTask.write does
    with spill_directory(task) as spill_dir:
        spill = RangeSpill(spill_dir, schema, buckets, keep_in_memory=allowance)
        runs = routed(_group_batches(task, schema), key, boundaries, task.unit * buckets, spill,
                      task.note_input).filled()  # fmt: skip
        writer.expect(sum(run.rows for run in runs), files[task.unit])
        for run in runs:
            # one range in memory at a time (cut again when it is larger than the allowance)
            write_run(run, key, writer, allowance, spill_dir, schema)
            pa.default_memory_pool().release_unused()  # give the freed range back before the next one


def unit_files(planned: int, units: int) -> list[int]:
    """The plan's output files of a group split across ``units`` tasks, as each task's share: whole files, in
    key order, adding up to ``planned`` (a task's key ranges then hold its files' rows, as Hudi gives each output
    file group its own partition of the sorted rows)."""
    cuts = [math.floor(planned * unit / units + 0.5) for unit in range(units + 1)]
    return [high - low for low, high in zip(cuts, cuts[1:])]


def range_shares(files: list[int], buckets: int) -> list[float] | None:
    """Where the group's ``len(files) * buckets`` key ranges are cut, as fractions of its rows: each task's
    ranges hold its share of the planned files, cut into ``buckets`` equal ranges. None (equal ranges) when a
    task would get no file."""
    planned = sum(files)
    if len(files) == 1 or not planned or min(files) == 0:
        return None
    shares: list[float] = []
    done = 0
    for count in files:
        shares.extend((done + count * bucket / buckets) / planned for bucket in range(buckets))
        done += count
    return shares[1:]


def _arrow_bytes(task: Task, size: GroupSize) -> float:
    """The group's rows in Arrow: rows times the Arrow bytes per row of the first base file's first batch (a
    footer's uncompressed sizes miss what dictionary pages save: a repeated string costs its full length per row
    in Arrow), plus the log files' estimate."""
    first = next((s.base_file for s in task.group.slices if s.base_file), None)
    if first is None or not size.rows:
        return size.memory_bytes
    batch = next(pq.ParquetFile(first, filesystem=task.storage.fs).iter_batches(batch_size=PROBE_ROWS), None)
    if batch is None or not batch.num_rows:
        return size.memory_bytes
    return size.rows * batch.nbytes / batch.num_rows + size.log_memory_bytes


def range_allowance(task: Task) -> int:
    """Bytes of rows (in Arrow) one key range may hold in memory while it is sorted: a share of the budget."""
    return max(1, task.memory_budget // RANGE_SHARE)


def spill_directory(task: Task) -> tempfile.TemporaryDirectory:
    """A fresh directory for the task's spill files, deleted with everything in it when the task is done."""
    return tempfile.TemporaryDirectory(prefix="hudi-cluster-spill-", dir=_spill_root(task))


def group_schema(task: Task) -> pa.Schema:
    """The one schema of every batch of :func:`slice_batches` (base files' schemas and the table's, unified)."""
    return _target_schema(task, measure_group(task))


def _spill_root(task: Task) -> str | None:
    """``hudi.cluster.task.spill.dir``, else the executor's Spark local directory (Spark hands it to Python
    workers as ``SPARK_LOCAL_DIRS`` and deletes it when the executor stops), else the system's temp dir."""
    if task.spill_dir:
        return task.spill_dir
    local = [d for d in os.environ.get("SPARK_LOCAL_DIRS", "").split(",") if d and os.path.isdir(d)]
    return local[0] if local else None


def _target_schema(task: Task, size: GroupSize) -> pa.Schema:
    """One schema for every batch (spill files and output files need one): the table's latest schema; for a table
    that records none, the base files' schemas unified, and hudi-rs's when log files may add columns."""
    if task.read_schema is not None:
        return task.read_schema.target
    schemas = [size.schema] if size.schema is not None else []
    if any(s.log_files for s in task.group.slices) or not schemas:
        from hudi import HudiTable as RsTable

        storage = task.storage  # hudi-rs reaches the store with the settings shipped to the task, as the reader does
        schemas.append(RsTable(storage.hudi_rs_uri(), storage.hudi_rs_options()).get_schema_with_meta_fields())
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


def _group_batches(task: Task, schema: pa.Schema) -> Iterator[pa.Table]:
    return (batch for _, batch in slice_batches(task, schema))


def slice_batches(task: Task, schema: pa.Schema) -> Iterator[tuple[InputSlice, pa.Table]]:
    """``(slice, rows)`` for the group's rows, slice by slice in batches of the group's schema (meta columns
    included), never a whole slice: a MOR slice is merged by hudi-rs's streaming reader (its log records in
    memory, the base file streamed); small batches are joined up to ``READ_BATCH_ROWS`` rows."""
    reader = task.slice_reader()
    for input_slice in task.group.slices:
        where = f"file group {input_slice.partition}/{input_slice.file_id}"
        pending: list[pa.Table] = []
        rows = 0
        for table in reader.stream(input_slice, READ_BATCH_ROWS):
            pending.append(table)
            rows += table.num_rows
            if rows >= READ_BATCH_ROWS:
                yield input_slice, _conform(pa.concat_tables(pending), schema, where)
                pending, rows = [], 0
        if pending:
            yield input_slice, _conform(pa.concat_tables(pending), schema, where)


def _sample_boundaries(task: Task, key: SortKey, ranges: int, size: GroupSize, schema: pa.Schema,
                       shares: list[float] | None = None) -> tuple[SortKey, pa.Table]:  # fmt: skip
    """The key fitted to the group (when it asks for a sample of ``key.sample_size`` rows) and the boundaries
    of ``ranges`` key ranges, both from evenly spaced rows of the base files' key columns (every slice's rows,
    hudi-rs-merged, when the group has no base file): the same samples in every task of the group."""
    if key.sample_size:
        key = key.with_sample(_sample(task, key.columns, key.sample_size, size, schema))
    sample = _sample(task, key.columns, min(MAX_SAMPLE_ROWS, ranges * SAMPLE_ROWS_PER_RANGE), size, schema)
    return key, choose_boundaries(key.keys(sample), ranges, shares)


def _sample(task: Task, columns: list[str], wanted: int, size: GroupSize, schema: pa.Schema) -> pa.Table:
    if size.rows:
        fields = pa.schema([schema.field(c) for c in columns])
        return sample_rows(_base_key_batches(task, columns, fields), size.rows, wanted, columns)
    # no base file (log-only slices): one streamed pass counts the merged rows, a second one picks them
    total = sum(batch.num_rows for batch in _group_batches(task, schema))
    if not total:
        return schema.empty_table().select(columns)
    return sample_rows(_group_batches(task, schema), total, wanted, columns)


def _base_key_batches(task: Task, columns: list[str], fields: pa.Schema) -> Iterator[pa.Table]:
    reader = task.slice_reader()
    for input_slice in task.group.slices:
        if input_slice.base_file:
            for table in reader.base_columns(input_slice.base_file, columns, READ_BATCH_ROWS):
                yield _conform(table, fields, "sample")
