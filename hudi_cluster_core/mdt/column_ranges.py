"""Column ranges (min, max, counts, sizes) of files and partitions, as Hudi 1.1.1 stores them in the metadata table.

One :class:`ColumnRange` is Hudi's ``HoodieColumnRangeMetadata``: read from a parquet footer (:mod:`.footers`) or
from a ``HoodieMetadataColumnStats`` record (:func:`from_avro`), merged over row groups and files
(``HoodieColumnRangeMetadata.merge``: min of mins, max of maxes, counts and sizes summed), and written back as a
record (:meth:`ColumnRange.avro`).

How a value is stored depends on the index version (``HoodieIndexVersion``; :mod:`.value_types` says which one a
table has):

* **V2** (table version 9): the record's ``valueType`` names a ``ValueType`` (ordinal below) and the value is the
  primitive of that type, in the wrapper record the type fixes (``ValueType`` / ``PrimitiveWrapperType``).
  ``NULL`` (ordinal 1) is the type of a range with no value at all: Hudi writes it for a log file whose block held
  no record of the column (a delete block), with null min/max and every count 0.
* **V1** (table version 8, and tables upgraded from it, whose index definition says ``V1``): ``valueType`` is null
  and the wrapper follows the Java class of the value (``HoodieAvroWrapperUtils.wrapValueIntoAvro``): dates in a
  ``DateWrapper``, decimals in a ``DecimalWrapper`` (bytes, decimal(30,15): the value rescaled to 15 digits), strings,
  ints, longs (timestamps too), floats, doubles, booleans and bytes in their primitive wrappers. A V1 range keeps its
  wrapper in ``ValueType.v1_wrapper``; its decimals are held as :class:`~decimal.Decimal`.

=====================  ========  ===========================================================
ValueType              ordinal   stored as
=====================  ========  ===========================================================
V1 / NULL              0 / 1     see above
BOOLEAN INT LONG       2 3 4     Boolean/Int/LongWrapper
FLOAT DOUBLE           5 6       Float/DoubleWrapper
STRING                 7         StringWrapper
BYTES FIXED            8 9       BytesWrapper (raw bytes)
DECIMAL "p,s"          10        BytesWrapper: the unscaled value, Java ``BigInteger.toByteArray``
UUID                   11        StringWrapper (canonical text)
DATE TIME_MILLIS       12 13     IntWrapper (days, ms)
TIME_MICROS            14        LongWrapper
TIMESTAMP_* (UTC)      15-17     LongWrapper (ms, us, ns)
LOCAL_TIMESTAMP_*      18-20     LongWrapper (ms, us, ns)
=====================  ========  ===========================================================

Order is Java's: strings by UTF-16 code units, bytes as signed bytes, doubles by ``Double.compare`` (-0.0 < 0.0,
NaN greatest), decimals by value, UUIDs by their halves as signed longs (``UUID.compareTo``).

A record this code can't read as Hudi wrote it (an ordinal past 20, a wrapper its type does not use, a decimal
without its precision and scale) raises :class:`UnusableStats`; callers then rebuild or leave out that range.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

_NS = "org.apache.hudi.avro.model."

# ValueType ordinals (Hudi 1.1.1's ``ValueType``, in declaration order)
V1, NULL, BOOLEAN, INT, LONG, FLOAT, DOUBLE, STRING, BYTES, FIXED, DECIMAL, UUID = range(12)
DATE, TIME_MILLIS, TIME_MICROS = 12, 13, 14
TIMESTAMPS = range(15, 21)  # TIMESTAMP_MILLIS/MICROS/NANOS, LOCAL_TIMESTAMP_MILLIS/MICROS/NANOS
WRAPPERS = {
    BOOLEAN: "BooleanWrapper", INT: "IntWrapper", LONG: "LongWrapper", FLOAT: "FloatWrapper",
    DOUBLE: "DoubleWrapper", STRING: "StringWrapper", BYTES: "BytesWrapper", FIXED: "BytesWrapper",
    DECIMAL: "BytesWrapper", UUID: "StringWrapper", DATE: "IntWrapper", TIME_MILLIS: "IntWrapper",
    TIME_MICROS: "LongWrapper", **dict.fromkeys(TIMESTAMPS, "LongWrapper"),
}  # fmt: skip
# V1 wrapper -> the V2 type whose primitive and order its values have (dates as days, timestamps as raw longs)
V1_WRAPPERS = {
    "BooleanWrapper": BOOLEAN, "IntWrapper": INT, "LongWrapper": LONG, "FloatWrapper": FLOAT,
    "DoubleWrapper": DOUBLE, "StringWrapper": STRING, "BytesWrapper": BYTES, "DateWrapper": DATE,
    "DecimalWrapper": DECIMAL, "TimestampMicrosWrapper": 16, "LocalDateWrapper": DATE,
}  # fmt: skip
V1_DECIMAL_SCALE, V1_DECIMAL_PRECISION = 15, 30  # DecimalWrapper's decimal(30,15)


class UnusableStats(ValueError):
    """A column-stats record this code can't read as Hudi would (unknown type, wrapper or decimal info)."""


@dataclass(frozen=True)
class ValueType:
    ordinal: int
    additional_info: str | None = None  # "precision,scale" for decimals
    v1_wrapper: str | None = None  # V1 only: the wrapper of its values (None: it has none)

    @property
    def wrapper(self) -> str | None:
        return self.v1_wrapper if self.ordinal == V1 else WRAPPERS.get(self.ordinal)

    @property
    def scale(self) -> int:
        if self.ordinal == V1:
            return V1_DECIMAL_SCALE
        return int((self.additional_info or "0,0").split(",")[1])

    @property
    def precision(self) -> int:
        if self.ordinal == V1:
            return V1_DECIMAL_PRECISION
        return int((self.additional_info or "0,0").split(",")[0])

    @property
    def kind(self) -> int:
        """The V2 ordinal whose values and order this type's have (a V1 type's by its wrapper; NULL for none)."""
        return V1_WRAPPERS.get(self.v1_wrapper or "", NULL) if self.ordinal == V1 else self.ordinal

    def avro(self) -> dict[str, Any] | None:
        """``HoodieValueTypeInfo``; null for V1 (``V1EmptyMetadata.getValueTypeInfo``)."""
        return None if self.ordinal == V1 else {"typeOrdinal": self.ordinal, "additionalInfo": self.additional_info}


V1_TYPE = ValueType(V1)


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


def java_bytes(number: int) -> bytes:
    """``BigInteger.toByteArray``: the shortest big-endian two's complement form (at least one byte)."""
    bits = (number if number >= 0 else ~number).bit_length()
    return number.to_bytes(bits // 8 + 1, "big", signed=True)


def _wrap(value_type: ValueType, value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if value_type.v1_wrapper == "DecimalWrapper":  # rescaled to 15 digits (tryUpcastDecimal), Java's bytes
        value = java_bytes(int(value.scaleb(V1_DECIMAL_SCALE)))
    return {"-type": _NS + str(value_type.wrapper), "value": value}


def _unwrap(wrapped: Any) -> tuple[str | None, Any]:
    """(wrapper record name or None if untold, value) of a min/max as fastavro or :meth:`ColumnRange.avro` gives it."""
    if wrapped is None:
        return None, None
    if isinstance(wrapped, tuple):  # fastavro's (record name, record) with return_record_name
        return wrapped[0].rsplit(".", 1)[-1], wrapped[1]["value"]
    name = wrapped.get("-type")
    return (name.rsplit(".", 1)[-1] if name else None), wrapped["value"]


def _value_type(stats: Mapping[str, Any], wrappers: set[str]) -> ValueType:
    info = stats.get("valueType")
    if info is None:  # V1: the wrapper tells the values' class
        if len(wrappers) > 1 or not wrappers <= set(V1_WRAPPERS):
            raise UnusableStats(f"V1 stats with wrappers {sorted(wrappers)}")
        return ValueType(V1, v1_wrapper=next(iter(wrappers), None))
    ordinal, extra = info.get("typeOrdinal"), info.get("additionalInfo")
    if not isinstance(ordinal, int) or not V1 <= ordinal <= max(TIMESTAMPS):
        raise UnusableStats(f"value type ordinal {ordinal!r} is not one Hudi 1.1.1 knows")
    if ordinal == V1:
        return _value_type({**stats, "valueType": None}, wrappers)
    if ordinal == DECIMAL:
        try:
            precision, scale = (int(part) for part in str(extra).split(","))
        except ValueError:
            raise UnusableStats(f"decimal stats without 'precision,scale' ({extra!r})") from None
        extra = f"{precision},{scale}"
    expected = {WRAPPERS[ordinal]} if ordinal != NULL else set()
    if not wrappers <= expected:
        raise UnusableStats(f"value type {ordinal} stored in {sorted(wrappers)}")
    return ValueType(ordinal, extra if ordinal == DECIMAL else None)


def from_avro(stats: Mapping[str, Any]) -> ColumnRange:
    """A ``HoodieMetadataColumnStats`` record read back (fastavro, wrappers as ``(name, record)`` or dicts)."""
    (low_wrapper, low), (high_wrapper, high) = _unwrap(stats.get("minValue")), _unwrap(stats.get("maxValue"))
    value_type = _value_type(stats, {w for w in (low_wrapper, high_wrapper) if w is not None})
    if value_type.kind == UUID:
        try:
            [uuid.UUID(v) for v in (low, high) if v is not None]
        except ValueError:
            raise UnusableStats(f"UUID stats {low!r}, {high!r} are no UUIDs") from None
    if value_type.v1_wrapper == "DecimalWrapper":  # fastavro decodes the decimal(30,15); raw bytes if not
        low, high = (v if v is None or isinstance(v, Decimal) else
                     Decimal(int.from_bytes(v, "big", signed=True)).scaleb(-V1_DECIMAL_SCALE) for v in (low, high))  # fmt: skip
    return ColumnRange(stats.get("fileName") or "", stats.get("columnName") or "", low, high,
                       int(stats.get("nullCount") or 0), int(stats.get("valueCount") or 0),
                       int(stats.get("totalSize") or 0), int(stats.get("totalUncompressedSize") or 0), value_type)  # fmt: skip


# ------------------------------------------------------------------------------------------------ ordering


def java_key(value_type: ValueType, value: Any) -> Any:
    """A Python sort key that orders ``value`` as Java's ``compareTo`` orders Hudi's in-memory value."""
    kind = value_type.kind
    if kind == STRING:
        return value.encode("utf-16-be")
    if kind == UUID:  # UUID.compareTo: the two halves as signed longs
        raw = uuid.UUID(value).bytes
        return int.from_bytes(raw[:8], "big", signed=True), int.from_bytes(raw[8:], "big", signed=True)
    if kind == DECIMAL:
        if isinstance(value, Decimal):  # V1
            return value
        return Decimal(int.from_bytes(value, "big", signed=True)).scaleb(-value_type.scale)
    if kind in (BYTES, FIXED):
        return bytes(b ^ 0x80 for b in value), len(value)  # signed bytes, as ByteBuffer.compareTo
    if kind in (FLOAT, DOUBLE):
        return (math.isnan(value), 0.0 if math.isnan(value) else value, math.copysign(1.0, value))
    return value


def has_values(column_range: ColumnRange) -> bool:
    return column_range.min is not None or column_range.max is not None


def merge(left: ColumnRange | None, right: ColumnRange) -> ColumnRange:
    """Hudi's ``HoodieColumnRangeMetadata.merge``: ``left``'s name and type, min of mins, max of maxes, sums. Ranges
    of one type only, except that a range without values (NULL-typed, all nulls) takes the other's type."""
    if left is None:
        return right
    if left.column != right.column:
        raise ValueError(f"can't merge stats of column {left.column!r} with {right.column!r}")
    value_type = left.value_type
    if left.value_type != right.value_type:
        if has_values(left) and has_values(right):
            raise ValueError(f"column {left.column!r}: value types {left.value_type} and {right.value_type} differ")
        value_type = left.value_type if has_values(left) else right.value_type

    def pick(a: Any, b: Any, smaller: bool) -> Any:
        if a is None or b is None:
            return b if a is None else a
        ka, kb = java_key(value_type, a), java_key(value_type, b)
        if smaller:
            return a if ka < kb else b
        return a if ka > kb else b

    return replace(left, min=pick(left.min, right.min, True), max=pick(left.max, right.max, False),
                   null_count=left.null_count + right.null_count, value_count=left.value_count + right.value_count,
                   total_size=left.total_size + right.total_size, value_type=value_type,
                   total_uncompressed_size=left.total_uncompressed_size + right.total_uncompressed_size)  # fmt: skip


def merge_all(ranges: Iterable[ColumnRange]) -> ColumnRange | None:
    merged: ColumnRange | None = None
    for column_range in ranges:
        merged = merge(merged, column_range)
    return merged
