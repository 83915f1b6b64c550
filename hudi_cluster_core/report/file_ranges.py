"""Each latest base file's [min, max] per column, from parquet footers or from the metadata table's column stats.

Footers: only the footer is read (no data page), through :func:`hudi_cluster_core.mdt.footers.footer_ranges`,
the same reader that builds the column stats we write, so both sources give Hudi's ranges. Metadata table: the
``column_stats`` record of each (file, column), merged as Hudi's reader merges them; a file the index has no
record for is read from its footer instead (a file written before the index was built, say).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pyarrow.parquet as pq

from ..errors import ConfigError
from ..mdt import index_keys
from ..mdt.column_ranges import (
    BOOLEAN, DATE, DECIMAL, DOUBLE, FLOAT, INT, LONG, TIME_MICROS, TIME_MILLIS, TIMESTAMPS, ColumnRange, UnusableStats,
    java_key,
)  # fmt: skip
from ..mdt.column_stats import COLUMN_STATS_PARTITION, META_COLUMNS, index_version, indexed_columns, merged_range
from ..mdt.footers import footer_ranges
from ..mdt.partition_reader import read_partition
from ..table import FileSlice, HudiTable
from ..table.metadata_table import metadata_partitions
from ..table.schema import table_schema

Source = Literal["auto", "footers", "metadata"]
_NUMERIC = {BOOLEAN, INT, LONG, FLOAT, DOUBLE, DECIMAL, DATE, TIME_MILLIS, TIME_MICROS, *TIMESTAMPS}


@dataclass(frozen=True)
class ColumnSpan:
    """One file's range on one column: ``low``/``high`` order as the column's values do (Java's order), and are
    numbers for numeric columns (what the query model measures spans with)."""

    low: Any
    high: Any


@dataclass(frozen=True)
class FileColumns:
    partition: str
    name: str
    size: int
    rows: int
    spans: dict[str, ColumnSpan] = field(default_factory=dict)


def span_of(column_range: ColumnRange) -> ColumnSpan | None:
    """The span of a range with values, in a form that orders as Java does; None for an all-null column."""
    if column_range.min is None or column_range.max is None:
        return None
    kind = column_range.value_type.kind
    if kind in (FLOAT, DOUBLE):  # Java orders NaN above every number
        return ColumnSpan(*(math.inf if math.isnan(v) else v for v in (column_range.min, column_range.max)))
    if kind in _NUMERIC and kind != DECIMAL:
        return ColumnSpan(column_range.min, column_range.max)
    return ColumnSpan(java_key(column_range.value_type, column_range.min), java_key(column_range.value_type, column_range.max))


def data_columns(metadata: pq.FileMetaData) -> list[str]:
    """The top-level primitive columns of a parquet file, meta columns left out (Hudi's procedure's default)."""
    names = [metadata.schema.column(i).path for i in range(metadata.num_columns)]
    return [n for n in names if "." not in n and n not in META_COLUMNS]


def _footer(table: HudiTable, file_slice: FileSlice) -> pq.FileMetaData:
    assert file_slice.base_file is not None
    path = table.storage.join(file_slice.relative_path(file_slice.base_file.name))
    with table.storage.fs.open_input_file(path) as handle:
        return pq.ParquetFile(handle).metadata


def _resolve_source(table: HudiTable, source: Source) -> Literal["footers", "metadata"]:
    has_index = COLUMN_STATS_PARTITION in metadata_partitions(table.storage)
    if source == "metadata" and not has_index:
        raise ConfigError(f"--source metadata: the table at {table.base_path} has no column_stats index in its "
                          f"metadata table; use --source footers")  # fmt: skip
    if source == "auto":
        return "metadata" if has_index else "footers"
    return source


def read_file_columns(table: HudiTable, columns: Sequence[str] | None, source: Source = "auto",
                      as_of: str | None = None) -> tuple[list[FileColumns], list[str], str]:  # fmt: skip
    """(files, columns, source used): every latest base file of the table (as of a completed instant) with its
    spans on ``columns`` (default: every top-level data column), read from ``source``."""
    slices = [s for s in table.view().latest_file_slices(as_of=as_of) if s.base_file is not None]
    chosen = _resolve_source(table, source)
    footers = {s.group_id: _footer(table, s) for s in slices} if chosen == "footers" else {}
    known: list[str] = []
    if footers:
        known = data_columns(next(iter(footers.values())))
    elif slices:
        known = data_columns(_footer(table, slices[-1]))
    if chosen == "metadata":
        indexed = set(indexed_columns(table.storage, table.config.props, table_schema(table)))
        if columns is None:
            known = [c for c in known if c in indexed]
    wanted = list(columns) if columns is not None else known
    missing = [c for c in wanted if c not in known and (chosen != "metadata" or c not in indexed)]
    if missing and slices:
        raise ConfigError(f"--columns: {', '.join(missing)} not among the table's columns ({', '.join(known)})")
    version = index_version(table.storage, table.config.props)
    records = _index_records(table, slices, wanted) if chosen == "metadata" else {}
    files = []
    for file_slice in slices:
        assert file_slice.base_file is not None
        name = file_slice.base_file.name
        ranges: dict[str, ColumnRange] = {}
        for column in wanted:
            found = records.get((file_slice.partition, name, column))
            if found is not None:
                ranges[column] = found
        absent = [c for c in wanted if c not in ranges]
        metadata = footers.get(file_slice.group_id)
        if absent:
            metadata = metadata or _footer(table, file_slice)
            ranges.update({r.column: r for r in footer_ranges(metadata, name, absent, version)})
        rows = metadata.num_rows if metadata is not None else max((r.value_count for r in ranges.values()), default=0)
        spans = {c: s for c, r in ranges.items() if (s := span_of(r)) is not None}
        files.append(FileColumns(file_slice.partition, name, file_slice.base_file_size, rows, spans))
    return files, wanted, chosen


def _index_records(table: HudiTable, slices: Sequence[FileSlice], columns: Sequence[str]) -> dict[tuple[str, str, str], ColumnRange]:
    """(partition, file, column) -> the file's merged column_stats record, for every record the index has."""
    wanted = {index_keys.column_stats_key(c, s.partition, s.base_file.name): (s.partition, s.base_file.name, c)
              for s in slices if s.base_file is not None for c in columns}  # fmt: skip
    found = read_partition(table.storage, COLUMN_STATS_PARTITION, wanted.__contains__)
    ranges = {}
    for key, records in found.items():
        try:
            merged = merged_range(records)
        except UnusableStats:
            continue  # read from the footer instead
        if merged is not None:
            ranges[wanted[key]] = merged
    return ranges
