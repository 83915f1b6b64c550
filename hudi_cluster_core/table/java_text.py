"""Column values as the text Java prints for them, where Apache Hudi's key generators print record keys.

Hudi's key generators (``KeyGenUtils`` over ``HoodieAvroUtils.getNestedFieldValAsString``) turn a field's Avro
value into text with ``String.valueOf``, after ``convertValueForAvroLogicalTypes`` made a ``LocalDate`` of a
``date`` and a ``BigDecimal`` of a ``decimal``. So a key part's text is Java's, not Python's or Arrow's, and
:func:`java_text` gives it column at a time (checked value for value against the JVM and against the keys Apache
Hudi 1.1.1 writes in ``tests/test_keygen.py``):

* strings as they are; integers and booleans as Java prints them (``-5``, ``true``), which Arrow's cast matches;
* decimals as ``BigDecimal.toString``: plain while the scale is positive and the adjusted exponent is at least
  -6, else scientific (``0E-10``, ``-1.000E-7``); Arrow's decimal-to-string follows the same rule;
* dates as ``LocalDate.toString`` (``2020-01-02``, ``-0001-11-28``; a year past 9999 takes a ``+``);
* timestamps (Avro ``timestamp-micros``/``-millis``, ``local-timestamp-*``) and times as the stored number in
  their own unit, since Hudi converts them only with ``...consistent.logical.timestamp.enabled``: then a
  ``timestamp-*`` value prints as ``java.sql.Timestamp.toString`` in the JVM's time zone (here the process's);
* doubles and floats as ``Double.toString``/``Float.toString`` on Java 17 (:mod:`..io.java_float`): plain from
  10^-3 up to 10^7, else ``d.dddE[-]n``, with the digits Java 17 prints (not always the shortest: JDK-4511638,
  fixed in JDK 19, where Hudi on a newer JVM would print a few keys differently).

Binary, list, map and struct values have no usable text (Java prints a buffer's identity): a key field of those
types is refused.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc

from ..io.java_float import java_to_string

_LAST_4_DIGIT_DAY = 2932896  # 9999-12-31 in days since 1970-01-01: later years print with a sign


class UnprintableType(ValueError):
    """A type whose values Hudi cannot print as a key part."""


def java_text(values: pa.Array, consistent_timestamps: bool = False) -> pa.Array:
    """``values`` as Java prints them (nulls stay null), a string array of the same length."""
    kind = values.type
    if pa.types.is_dictionary(kind):
        return java_text(values.dictionary_decode(), consistent_timestamps)
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
        return values.cast(pa.string())
    if pa.types.is_integer(kind) or pa.types.is_boolean(kind) or pa.types.is_decimal(kind):
        return pc.cast(values, pa.string())
    if pa.types.is_date32(kind) or pa.types.is_date64(kind):
        days = values.cast(pa.date32())
        text = pc.cast(days, pa.string())
        late = pc.greater(days.cast(pa.int32()), _LAST_4_DIGIT_DAY)
        return pc.if_else(late, pc.binary_join_element_wise("+", text, ""), text)
    if pa.types.is_timestamp(kind):
        if consistent_timestamps and kind.tz is not None and kind.unit in ("ms", "us"):
            return _sql_timestamps(values)
        return pc.cast(values.cast(pa.int64()), pa.string())
    if pa.types.is_time(kind):
        return pc.cast(values.cast(pa.int64() if kind.bit_width == 64 else pa.int32()), pa.string())
    if pa.types.is_floating(kind):
        single = kind == pa.float32()
        return pa.array([None if v is None else java_floating(v, single) for v in values.to_pylist()], pa.string())
    raise UnprintableType(f"{kind} values have no key text in Apache Hudi (Java prints no value for them)")


def java_floating(value: float, single: bool = False) -> str:
    """``Double.toString(value)`` (``Float.toString`` when ``single``), as Java 17 prints it."""
    return java_to_string(value, single)


def java_big_decimal(value: Decimal) -> str:
    """``BigDecimal.toString`` of ``value`` (its own digits and exponent): the reference Arrow's cast follows."""
    sign, digit_tuple, exponent = value.as_tuple()
    assert isinstance(exponent, int), "finite decimals only"
    digits = "".join(map(str, digit_tuple)) or "0"
    scale = -exponent
    adjusted = -scale + len(digits) - 1
    minus = "-" if sign else ""
    if scale == 0:
        return minus + digits
    if scale > 0 and adjusted >= -6:
        if len(digits) > scale:
            return f"{minus}{digits[:-scale]}.{digits[-scale:]}"
        return f"{minus}0.{'0' * (scale - len(digits))}{digits}"
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{minus}{mantissa}E{'+' if adjusted > 0 else ''}{adjusted}"


def _sql_timestamps(values: pa.Array) -> pa.Array:
    """``new java.sql.Timestamp(millis).toString()`` in the local time zone: ``yyyy-mm-dd hh:mm:ss.f``, the
    fraction without trailing zeros (at least one digit). Hudi divides micros by 1000 with Java's truncation."""
    unit = values.type.unit
    out: list[str | None] = []
    for raw in values.cast(pa.int64()).to_pylist():
        if raw is None:
            out.append(None)
            continue
        millis = raw if unit == "ms" else (abs(raw) // 1000) * (1 if raw >= 0 else -1)  # Java's division truncates
        moment = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(milliseconds=millis)
        local = moment.astimezone()
        fraction = f"{local.microsecond // 1000:03d}".rstrip("0") or "0"
        out.append(f"{local:%Y-%m-%d %H:%M:%S}.{fraction}")
    return pa.array(out, pa.string())
