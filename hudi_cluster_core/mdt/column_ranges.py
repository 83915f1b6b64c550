"""Column ranges (min, max, counts, sizes) of files and partitions, as Hudi 1.1.1 stores them in the metadata table.

One :class:`ColumnRange` is Hudi's ``HoodieColumnRangeMetadata``: read from a parquet footer
(``ParquetUtils.readColumnStatsFromMetadata``), merged over row groups and files (``HoodieColumnRangeMetadata.merge``:
min of mins, max of maxes, counts and sizes summed), and written as a ``HoodieMetadataColumnStats`` record.

Values are kept as the primitive the record stores (index version 2, ``ValueType``): the value type follows the
parquet column's logical type, else its physical type, and picks the wrapper record:

=====================================  =========  ==========  =========================================
parquet column                         ValueType  ordinal     stored as
=====================================  =========  ==========  =========================================
BOOLEAN / INT32 / INT64                BOOLEAN..  2 / 3 / 4   Boolean/Int/LongWrapper
FLOAT / DOUBLE                         FLOAT..    5 / 6       Float/DoubleWrapper
BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY      BYTES/FIXED 8 / 9      BytesWrapper (raw bytes)
STRING                                 STRING     7           StringWrapper
DECIMAL(p, s)                          DECIMAL    10, "p,s"   BytesWrapper: unscaled value, Java
                                                              ``BigInteger.toByteArray`` (minimal two's complement)
UUID                                   UUID       11          StringWrapper (canonical text)
DATE                                   DATE       12          IntWrapper (days)
TIME(ms / us)                          TIME_*     13 / 14     Int/LongWrapper
TIMESTAMP(ms/us/ns, UTC)               TIMESTAMP_* 15 / 16 / 17  LongWrapper
TIMESTAMP(ms/us/ns, local)             LOCAL_*    18 / 19 / 20  LongWrapper
=====================================  =========  ==========  =========================================

Any other logical type (``INT(8)``, ``JSON``, ``ENUM``, ...) makes Hudi's footer reader throw, and Hudi then stores
**no** stats for the whole file (it logs and returns an empty list); :func:`footer_ranges` returns ``[]`` then too.
A column chunk without min/max (all nulls) has null min/max and ``nullCount = valueCount``.

Order is Java's: strings by UTF-16 code units, bytes as signed bytes, doubles by ``Double.compare`` (-0.0 < 0.0,
NaN greatest), decimals by value.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

import numpy
import pyarrow.parquet as pq

_NS = "org.apache.hudi.avro.model."

# ValueType ordinal -> wrapper record of its primitive (``ValueType`` / ``PrimitiveWrapperType`` in Hudi 1.1.1)
BOOLEAN, INT, LONG, FLOAT, DOUBLE, STRING, BYTES, FIXED, DECIMAL, UUID = 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
DATE, TIME_MILLIS, TIME_MICROS = 12, 13, 14
WRAPPERS = {
    BOOLEAN: "BooleanWrapper", INT: "IntWrapper", LONG: "LongWrapper", FLOAT: "FloatWrapper",
    DOUBLE: "DoubleWrapper", STRING: "StringWrapper", BYTES: "BytesWrapper", FIXED: "BytesWrapper",
    DECIMAL: "BytesWrapper", UUID: "StringWrapper", DATE: "IntWrapper", TIME_MILLIS: "IntWrapper",
    TIME_MICROS: "LongWrapper", 15: "LongWrapper", 16: "LongWrapper", 17: "LongWrapper", 18: "LongWrapper",
    19: "LongWrapper", 20: "LongWrapper",
}  # fmt: skip
_TIMESTAMP = {("milliseconds", True): 15, ("microseconds", True): 16, ("nanoseconds", True): 17,
              ("milliseconds", False): 18, ("microseconds", False): 19, ("nanoseconds", False): 20}  # fmt: skip
_PHYSICAL = {"BOOLEAN": BOOLEAN, "INT32": INT, "INT64": LONG, "FLOAT": FLOAT, "DOUBLE": DOUBLE,
             "BYTE_ARRAY": BYTES, "FIXED_LEN_BYTE_ARRAY": FIXED}  # fmt: skip


class UnsupportedColumn(ValueError):
    """A parquet column type Hudi's stats reader rejects (it then keeps no stats for the file)."""


@dataclass(frozen=True)
class ValueType:
    ordinal: int
    additional_info: str | None = None  # "precision,scale" for decimals

    @property
    def wrapper(self) -> str:
        return WRAPPERS[self.ordinal]

    @property
    def scale(self) -> int:
        return int((self.additional_info or "0,0").split(",")[1])

    def avro(self) -> dict[str, Any]:
        return {"typeOrdinal": self.ordinal, "additionalInfo": self.additional_info}


@dataclass(frozen=True)
class ColumnRange:
    """Stats of one column over one file (``name`` = file name) or one partition (``name`` = partition path)."""

    name: str
    column: str
    min: Any
    max: Any
    null_count: int
    value_count: int
    total_size: int
    total_uncompressed_size: int
    value_type: ValueType

    def avro(self, *, tight_bound: bool = False, deleted: bool = False) -> dict[str, Any]:
        """The ``HoodieMetadataColumnStats`` record (wrappers tagged for the Avro union)."""
        return {
            "fileName": self.name, "columnName": self.column,
            "minValue": _wrap(self.value_type, self.min), "maxValue": _wrap(self.value_type, self.max),
            "valueCount": self.value_count, "nullCount": self.null_count, "totalSize": self.total_size,
            "totalUncompressedSize": self.total_uncompressed_size, "isDeleted": deleted,
            "isTightBound": tight_bound, "valueType": self.value_type.avro(),
        }  # fmt: skip


def _wrap(value_type: ValueType, value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    return {"-type": _NS + value_type.wrapper, "value": value}


def from_avro(stats: Mapping[str, Any]) -> ColumnRange:
    """A ``HoodieMetadataColumnStats`` record read back (fastavro, wrappers as dicts with ``value``)."""
    info = stats.get("valueType") or {}
    value_type = ValueType(int(info.get("typeOrdinal", 0)), info.get("additionalInfo"))

    def unwrap(wrapped: Any) -> Any:
        if isinstance(wrapped, tuple):  # fastavro's (record name, record) with return_record_name
            wrapped = wrapped[1]
        return None if wrapped is None else wrapped["value"]

    return ColumnRange(stats.get("fileName") or "", stats.get("columnName") or "", unwrap(stats.get("minValue")),
                       unwrap(stats.get("maxValue")), int(stats.get("nullCount") or 0),
                       int(stats.get("valueCount") or 0), int(stats.get("totalSize") or 0),
                       int(stats.get("totalUncompressedSize") or 0), value_type)  # fmt: skip


# ------------------------------------------------------------------------------------------------ ordering


def java_key(value_type: ValueType, value: Any) -> Any:
    """A Python sort key that orders ``value`` as Java's ``compareTo`` orders Hudi's in-memory value."""
    kind = value_type.ordinal
    if kind in (STRING, UUID):
        return value.encode("utf-16-be")
    if kind == DECIMAL:
        return Decimal(int.from_bytes(value, "big", signed=True)).scaleb(-value_type.scale)
    if kind in (BYTES, FIXED):
        return bytes(b ^ 0x80 for b in value), len(value)  # signed bytes, as ByteBuffer.compareTo
    if kind in (FLOAT, DOUBLE):
        return (math.isnan(value), 0.0 if math.isnan(value) else value, math.copysign(1.0, value))
    return value


def merge(left: ColumnRange | None, right: ColumnRange) -> ColumnRange:
    """Hudi's ``HoodieColumnRangeMetadata.merge``: ``left``'s name and type, min of mins, max of maxes, sums."""
    if left is None:
        return right
    if left.column != right.column:
        raise ValueError(f"can't merge stats of column {left.column!r} with {right.column!r}")
    if left.value_type.ordinal != right.value_type.ordinal:
        raise ValueError(f"column {left.column!r}: value types {left.value_type} and {right.value_type} differ")

    def pick(a: Any, b: Any, smaller: bool) -> Any:
        if a is None or b is None:
            return b if a is None else a
        ka, kb = java_key(left.value_type, a), java_key(left.value_type, b)
        if smaller:
            return a if ka < kb else b
        return a if ka > kb else b

    return replace(left, min=pick(left.min, right.min, True), max=pick(left.max, right.max, False),
                   null_count=left.null_count + right.null_count, value_count=left.value_count + right.value_count,
                   total_size=left.total_size + right.total_size,
                   total_uncompressed_size=left.total_uncompressed_size + right.total_uncompressed_size)  # fmt: skip


def merge_all(ranges: Iterable[ColumnRange]) -> ColumnRange | None:
    merged: ColumnRange | None = None
    for column_range in ranges:
        merged = merge(merged, column_range)
    return merged


# ---------------------------------------------------------------------------------------- the table's type

_AVRO_LOGICAL = {("int", "date"): DATE, ("int", "time-millis"): TIME_MILLIS, ("long", "time-micros"): TIME_MICROS,
                 ("long", "timestamp-millis"): 15, ("long", "timestamp-micros"): 16, ("long", "timestamp-nanos"): 17,
                 ("long", "local-timestamp-millis"): 18, ("long", "local-timestamp-micros"): 19,
                 ("long", "local-timestamp-nanos"): 20, ("string", "uuid"): UUID}  # fmt: skip
_AVRO_PRIMITIVE = {"boolean": BOOLEAN, "int": INT, "long": LONG, "float": FLOAT, "double": DOUBLE, "string": STRING,
                   "bytes": BYTES, "fixed": FIXED}  # fmt: skip
_WIDER = {INT: (LONG, FLOAT, DOUBLE), LONG: (FLOAT, DOUBLE), FLOAT: (DOUBLE,)}


def value_type_of_avro(avro_type: Any) -> ValueType | None:
    """Hudi's ``ValueType.fromSchema`` for a field's Avro type (nullable unions unwrapped); None if unknown."""
    branches = [t for t in avro_type if t != "null"] if isinstance(avro_type, list) else [avro_type]
    if len(branches) != 1:
        return None
    spec = branches[0] if isinstance(branches[0], dict) else {"type": branches[0]}
    kind, logical = str(spec.get("type")), spec.get("logicalType")
    if logical == "decimal" and kind in ("bytes", "fixed"):
        return ValueType(DECIMAL, f"{spec['precision']},{spec.get('scale', 0)}")
    if logical is not None and (kind, logical) in _AVRO_LOGICAL:
        return ValueType(_AVRO_LOGICAL[kind, logical])
    return ValueType(_AVRO_PRIMITIVE[kind]) if logical is None and kind in _AVRO_PRIMITIVE else None


def promoted(column_range: ColumnRange, target: ValueType) -> ColumnRange:
    """``column_range`` in the table's type ``target`` (Hudi's ``standardizeJavaTypeAndPromote`` for the widenings
    schema evolution allows: int to long/float/double, long to float/double, float to double); anything else that
    differs is an error, named."""
    source = column_range.value_type
    if source == target:
        return column_range
    if target.ordinal in _WIDER.get(source.ordinal, ()):
        def widen(value: Any) -> Any:
            if value is None or target.ordinal == LONG:
                return value
            # Java widens a float to double through its decimal text (Double.valueOf(f + "")): the shortest text
            # that reads back as the same float32
            return float(str(numpy.float32(value))) if source.ordinal == FLOAT else float(value)

        return replace(column_range, min=widen(column_range.min), max=widen(column_range.max), value_type=target)
    raise ValueError(f"column {column_range.column!r} of {column_range.name}: its stats are of type {source}, the "
                     f"table's is {target}; only int/long/float widenings are promoted")


# ------------------------------------------------------------------------------------------------ footers


def value_type_of(column: Any) -> ValueType:
    """The ValueType of a pyarrow ``ColumnSchema`` (its logical type, else its physical type)."""
    logical = column.logical_type
    name = logical.type if logical is not None else "NONE"
    if name == "NONE":
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


def java_bytes(number: int) -> bytes:
    """``BigInteger.toByteArray``: the shortest big-endian two's complement form (at least one byte)."""
    bits = (number if number >= 0 else ~number).bit_length()
    return number.to_bytes(bits // 8 + 1, "big", signed=True)


def _primitive(value_type: ValueType, raw: Any) -> Any:
    """The stored primitive of a footer min/max (pyarrow's ``min_raw`` / ``max_raw``)."""
    kind = value_type.ordinal
    if kind == STRING:
        return raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
    if kind == UUID:
        return str(uuid.UUID(bytes=bytes(raw)))
    if kind == DECIMAL:
        unscaled = int.from_bytes(raw, "big", signed=True) if isinstance(raw, bytes) else int(raw)
        return java_bytes(unscaled)
    if kind in (BYTES, FIXED):
        return bytes(raw)
    if kind == BOOLEAN:
        return bool(raw)
    if kind in (FLOAT, DOUBLE):
        return float(raw)
    return int(raw)


def footer_ranges(metadata: pq.FileMetaData, file_name: str, columns: Sequence[str]) -> list[ColumnRange]:
    """Hudi's column ranges of ``columns`` (top-level names) over one parquet file's row groups, in ``columns``
    order; ``[]`` when Hudi's reader would fail on the file (a column type it rejects)."""
    wanted = {name: i for i, name in enumerate(columns)}
    ranges: dict[str, ColumnRange] = {}
    try:
        for group in range(metadata.num_row_groups):
            row_group = metadata.row_group(group)
            for index in range(row_group.num_columns):
                chunk = row_group.column(index)
                if chunk.path_in_schema not in wanted:
                    continue
                value_type = value_type_of(metadata.schema.column(index))
                low = high = None
                nulls = chunk.num_values  # no statistics at all: Hudi counts every value as null
                if chunk.is_stats_set:
                    stats = chunk.statistics
                    if stats.has_min_max:
                        low, high = _primitive(value_type, stats.min_raw), _primitive(value_type, stats.max_raw)
                    if stats.has_min_max or stats.has_null_count:
                        nulls = int(stats.null_count)
                part = ColumnRange(file_name, chunk.path_in_schema, low, high, nulls, chunk.num_values,
                                   chunk.total_compressed_size, chunk.total_uncompressed_size, value_type)  # fmt: skip
                ranges[part.column] = merge(ranges.get(part.column), part)
    except UnsupportedColumn:
        return []
    return [ranges[name] for name in columns if name in ranges]
