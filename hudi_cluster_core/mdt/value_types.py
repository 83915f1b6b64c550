"""Which value type a column's stats take, and turning stats of one type into another, as far as that is exact.

**The table's type.** Partition stats take the type the table schema gives the column (Hudi's
``getColumnRangeInPartition``): under index V2 the ``ValueType`` of its Avro type (``ValueType.fromSchema``),
under V1 the wrapper of the Java class Hudi's V1 footer reader yields for it (:mod:`.footers`).

**Converting a range** (:func:`convert`) to another type, for stats written before the column's type changed or
in another index version: a range without values (NULL-typed, all nulls) takes any type with its counts, and
values are converted only where the order survives, so min and max stay bounds:

* the same kind of value in either version (V1 ``DateWrapper`` days and V2 ``DATE``, V1 ``LongWrapper`` and a V2
  timestamp, V1 ``IntWrapper`` and V2 ``TIME_MILLIS``, bytes and fixed, ...);
* the widenings schema evolution allows (int to long, float or double; long to float or double; float to double:
  under V2 through the float's decimal text, as ``Double.valueOf(f + "")``, under V1 exactly, as
  ``coerceToComparable``); ints and longs to decimals, decimals to another precision or scale (rounded outwards
  when a scale shrinks), timestamps to another unit of the same zone kind;
* nothing else: Hudi would cast int to string, string to decimal or date (``castToString``, ``parseInt``) and get
  bounds in the wrong order, or throw; :func:`convert` returns None instead and the caller rebuilds or leaves out.
"""

from __future__ import annotations

import math
from dataclasses import replace
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, InvalidOperation
from typing import Any

import numpy

from .column_ranges import (
    BOOLEAN, BYTES, DATE, DECIMAL, DOUBLE, FIXED, FLOAT, INT, LONG, STRING, TIME_MICROS, TIME_MILLIS, TIMESTAMPS,
    UUID, V1, V1_DECIMAL_PRECISION, V1_DECIMAL_SCALE, ColumnRange, ValueType, has_values, java_bytes,
)  # fmt: skip

_AVRO_LOGICAL = {("int", "date"): DATE, ("int", "time-millis"): TIME_MILLIS, ("long", "time-micros"): TIME_MICROS,
                 ("long", "timestamp-millis"): 15, ("long", "timestamp-micros"): 16, ("long", "timestamp-nanos"): 17,
                 ("long", "local-timestamp-millis"): 18, ("long", "local-timestamp-micros"): 19,
                 ("long", "local-timestamp-nanos"): 20, ("string", "uuid"): UUID}  # fmt: skip
_AVRO_PRIMITIVE = {"boolean": BOOLEAN, "int": INT, "long": LONG, "float": FLOAT, "double": DOUBLE, "string": STRING,
                   "bytes": BYTES, "fixed": FIXED}  # fmt: skip
# V2 kind -> the V1 wrapper of the Java class Hudi's V1 footer reader gives such a column (FIXED: none, a Binary)
_V1_OF = {BOOLEAN: "BooleanWrapper", INT: "IntWrapper", LONG: "LongWrapper", FLOAT: "FloatWrapper",
          DOUBLE: "DoubleWrapper", STRING: "StringWrapper", BYTES: "BytesWrapper", DECIMAL: "DecimalWrapper",
          UUID: "StringWrapper", DATE: "DateWrapper", TIME_MILLIS: "IntWrapper", TIME_MICROS: "LongWrapper",
          **dict.fromkeys(TIMESTAMPS, "LongWrapper")}  # fmt: skip
_INTS = {INT, DATE, TIME_MILLIS}  # Java ints of one meaning each, stored as IntWrapper
_WIDER = {INT: (LONG, FLOAT, DOUBLE, DECIMAL), LONG: (FLOAT, DOUBLE, DECIMAL), FLOAT: (DOUBLE,)}
_UNITS = {15: 3, 16: 6, 17: 9, 18: 3, 19: 6, 20: 9}  # timestamp ordinal -> decimal digits of a second


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


def table_type(avro_type: Any, version: int) -> ValueType | None:
    """The type a column of ``avro_type`` has in the stats of index ``version``; None if Hudi can't index it there
    (V1: a fixed that is no decimal, a decimal ``DecimalWrapper`` can't hold: ``isColumnTypeSupportedV1``)."""
    v2 = value_type_of_avro(avro_type)
    if v2 is None or version >= 2:
        return v2
    if v2.ordinal == DECIMAL and (v2.scale > V1_DECIMAL_SCALE
                                  or v2.precision + V1_DECIMAL_SCALE - v2.scale > V1_DECIMAL_PRECISION):  # fmt: skip
        return None
    wrapper = _V1_OF.get(v2.ordinal)
    return ValueType(V1, v1_wrapper=wrapper) if wrapper else None


def _to_number(value_type: ValueType, value: Any) -> Any:
    """A decimal's value as a Decimal (V2 stores the unscaled bytes); anything else as it is."""
    if value_type.kind == DECIMAL and not isinstance(value, Decimal):
        return Decimal(int.from_bytes(value, "big", signed=True)).scaleb(-value_type.scale)
    return value


def _decimal(target: ValueType, number: Decimal, low: bool) -> Any:
    """``number`` in decimal type ``target``, rounded outwards (down for a min); None if it does not fit."""
    try:
        scaled = number.quantize(Decimal(1).scaleb(-target.scale), ROUND_FLOOR if low else ROUND_CEILING)
    except InvalidOperation:
        return None
    unscaled = int(scaled.scaleb(target.scale))
    if len(str(abs(unscaled))) > target.precision:
        return None
    return scaled if target.ordinal == V1 else java_bytes(unscaled)


def _converter(source: ValueType, target: ValueType) -> Any:
    """A function (value, is_min) -> value in ``target``, or None when no conversion keeps the order."""
    s, t = source.kind, target.kind
    same = s == t or {s, t} <= {BYTES, FIXED} or (s in _INTS and t in _INTS and INT in (s, t))
    if s in (LONG, TIME_MICROS, *TIMESTAMPS) and t in (LONG, TIME_MICROS, *TIMESTAMPS):
        if LONG in (s, t) or s == t:
            same = True  # a V1 long of a timestamp or time column is its raw value
        elif s in _UNITS and t in _UNITS and (s < 18) == (t < 18):  # another unit, same zone kind
            shift = _UNITS[t] - _UNITS[s]
            return lambda v, low: v * 10**shift if shift >= 0 else (v // 10**-shift if low else -(-v // 10**-shift))
    if t == DECIMAL and (s == DECIMAL or s in (INT, LONG)):
        return lambda v, low: _decimal(target, Decimal(_to_number(source, v)), low)
    if same:
        return lambda v, low: v
    if t not in _WIDER.get(s, ()):
        return None
    if s == FLOAT and target.ordinal != V1:  # Double.valueOf(f + ""): the shortest text that reads back as the float
        return lambda v, low: v if math.isnan(v) or math.isinf(v) else float(str(numpy.float32(v)))
    if t == FLOAT:  # Java's (float) of an int or long: the nearest float
        return lambda v, low: float(numpy.float32(v))
    return lambda v, low: v if t == LONG else float(v)


def convert(column_range: ColumnRange, target: ValueType) -> ColumnRange | None:
    """``column_range`` as stats of type ``target`` (module docstring); None when that can't be done exactly."""
    if column_range.value_type == target:
        return column_range
    if not has_values(column_range):
        return replace(column_range, value_type=target)
    if target.ordinal == V1 and target.v1_wrapper is None:
        return None
    convert_value = _converter(column_range.value_type, target)
    if convert_value is None:
        return None
    low = None if column_range.min is None else convert_value(column_range.min, True)
    high = None if column_range.max is None else convert_value(column_range.max, False)
    if (low is None) != (column_range.min is None) or (high is None) != (column_range.max is None):
        return None
    return replace(column_range, min=low, max=high, value_type=target)
