"""Column ranges of a parquet file from its footer, as Hudi 1.1.1's ``ParquetUtils.readColumnStatsFromMetadata``
reads them for an index version (:mod:`.column_ranges` says how each version stores values).

Per row group and requested column: min/max from the chunk's statistics, ``nullCount`` from them (every value
when the chunk has no statistics, as for Hudi's empty ``Statistics``), ``valueCount``, compressed and uncompressed
sizes; row groups merged. The value type:

* **V2**: the column's logical type, else its physical type (``ValueType.fromParquetPrimitiveType``). A logical
  type ``ValueType`` has no entry for (``INT(8)``, ``JSON``, ``ENUM``, ...) or an ``INT96`` column makes Hudi's
  reader throw, and Hudi then stores **no** stats for the whole file (it logs and returns an empty list):
  :func:`footer_ranges` returns ``[]`` then too.
* **V1** (``convertToNativeJavaType``): decimals as ``BigDecimal`` (``DecimalWrapper``), dates as
  ``java.sql.Date`` (``DateWrapper``), UTF-8 strings as ``String``, other byte arrays as ``ByteBuffer``
  (``BytesWrapper``), the rest as the physical type's Java class (timestamps as longs). A ``FIXED_LEN_BYTE_ARRAY``
  that is no decimal, or an ``INT96``, stays a parquet ``Binary``, which Hudi cannot wrap (its commit fails): that
  column gets no range here, so it never blocks one.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import pyarrow.parquet as pq

from .column_ranges import (
    BOOLEAN, BYTES, DATE, DECIMAL, DOUBLE, FIXED, FLOAT, INT, LONG, STRING, TIME_MICROS, TIME_MILLIS, UUID, V1,
    ColumnRange, ValueType, java_bytes, merge,
)  # fmt: skip

_TIMESTAMP = {("milliseconds", True): 15, ("microseconds", True): 16, ("nanoseconds", True): 17,
              ("milliseconds", False): 18, ("microseconds", False): 19, ("nanoseconds", False): 20}  # fmt: skip
_PHYSICAL = {"BOOLEAN": BOOLEAN, "INT32": INT, "INT64": LONG, "FLOAT": FLOAT, "DOUBLE": DOUBLE,
             "BYTE_ARRAY": BYTES, "FIXED_LEN_BYTE_ARRAY": FIXED}  # fmt: skip
_V1_PHYSICAL = {"BOOLEAN": "BooleanWrapper", "INT32": "IntWrapper", "INT64": "LongWrapper", "FLOAT": "FloatWrapper",
                "DOUBLE": "DoubleWrapper", "BYTE_ARRAY": "BytesWrapper"}  # fmt: skip


class UnsupportedColumn(ValueError):
    """A parquet column type Hudi's stats reader rejects."""


def value_type_of(column: Any, version: int = 2) -> ValueType:
    """The ValueType of a pyarrow ``ColumnSchema`` under index ``version`` (module docstring)."""
    logical = column.logical_type
    name = logical.type if logical is not None else "NONE"
    if version < 2:
        if name == "DECIMAL":
            return ValueType(V1, v1_wrapper="DecimalWrapper")
        if name == "DATE":
            return ValueType(V1, v1_wrapper="DateWrapper")
        if name == "STRING":
            return ValueType(V1, v1_wrapper="StringWrapper")
        if column.physical_type not in _V1_PHYSICAL:
            raise UnsupportedColumn(f"column {column.path}: {column.physical_type} values have no V1 wrapper in Hudi")
        return ValueType(V1, v1_wrapper=_V1_PHYSICAL[column.physical_type])
    if name == "NONE":
        if column.physical_type not in _PHYSICAL:
            raise UnsupportedColumn(f"column {column.path}: physical type {column.physical_type} has no column stats")
        return ValueType(_PHYSICAL[column.physical_type])
    if name == "STRING":
        return ValueType(STRING)
    if name == "DECIMAL":
        return ValueType(DECIMAL, f"{column.precision},{column.scale}")
    if name == "DATE":
        return ValueType(DATE)
    if name == "UUID":
        return ValueType(UUID)
    details = json.loads(logical.to_json())
    if name == "TIME" and details.get("timeUnit") in ("milliseconds", "microseconds"):
        return ValueType(TIME_MILLIS if details["timeUnit"] == "milliseconds" else TIME_MICROS)
    if name == "TIMESTAMP":
        return ValueType(_TIMESTAMP[details["timeUnit"], bool(details["isAdjustedToUTC"])])
    raise UnsupportedColumn(f"column {column.path}: logical type {logical} has no column stats in Hudi")


def _primitive(value_type: ValueType, raw: Any, scale: int) -> Any:
    """The stored primitive of a footer min/max (pyarrow's ``min_raw`` / ``max_raw``); ``scale``: a decimal's."""
    kind = value_type.kind
    if kind == STRING:
        return raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
    if kind == UUID:
        return str(uuid.UUID(bytes=bytes(raw)))
    if kind == DECIMAL:
        unscaled = int.from_bytes(raw, "big", signed=True) if isinstance(raw, bytes) else int(raw)
        return Decimal(unscaled).scaleb(-scale) if value_type.ordinal == V1 else java_bytes(unscaled)
    if kind in (BYTES, FIXED):
        return bytes(raw)
    if kind == BOOLEAN:
        return bool(raw)
    if kind in (FLOAT, DOUBLE):
        return float(raw)
    return int(raw)


def footer_ranges(metadata: pq.FileMetaData, file_name: str, columns: Sequence[str], version: int = 2) -> list[ColumnRange]:
    """Hudi's column ranges of ``columns`` (top-level names) over one parquet file's row groups under index
    ``version``, in ``columns`` order; ``[]`` when Hudi's V2 reader would fail on the file (module docstring)."""
    wanted = {name: i for i, name in enumerate(columns)}
    ranges: dict[str, ColumnRange] = {}
    skipped: set[str] = set()  # V1: columns Hudi can't wrap
    try:
        for group in range(metadata.num_row_groups):
            row_group = metadata.row_group(group)
            for index in range(row_group.num_columns):
                chunk = row_group.column(index)
                if chunk.path_in_schema not in wanted or chunk.path_in_schema in skipped:
                    continue
                schema = metadata.schema.column(index)
                try:
                    value_type = value_type_of(schema, version)
                except UnsupportedColumn:
                    if version >= 2:
                        raise
                    skipped.add(chunk.path_in_schema)
                    continue
                low = high = None
                nulls = chunk.num_values  # no statistics at all: Hudi counts every value as null
                if chunk.is_stats_set:
                    stats = chunk.statistics
                    if stats.has_min_max:
                        low = _primitive(value_type, stats.min_raw, schema.scale or 0)
                        high = _primitive(value_type, stats.max_raw, schema.scale or 0)
                    if stats.has_min_max or stats.has_null_count:
                        nulls = int(stats.null_count)
                part = ColumnRange(file_name, chunk.path_in_schema, low, high, nulls, chunk.num_values,
                                   chunk.total_compressed_size, chunk.total_uncompressed_size, value_type)  # fmt: skip
                ranges[part.column] = merge(ranges.get(part.column), part)
    except UnsupportedColumn:
        return []
    return [ranges[name] for name in columns if name in ranges and name not in skipped]
