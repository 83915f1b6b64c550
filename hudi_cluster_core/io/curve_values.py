"""Column values -> the 64-bit words Hudi's space curves are built from (DIRECT build method).

Facts (docs/format.md#space-filling-curves; Hudi ``SpaceCurveSortingHelper``, ``BinaryUtil``): z-order maps every value
to 8 bytes (``mapColumnValueTo8Bytes``: sign bits flipped so that unsigned byte order is value order, strings by
their first 8 bytes), Hilbert maps it to a Java long (``mapColumnValueToLong``). Both are held here as uint64
arrays carrying Java's bit pattern, nulls substituted as Hudi substitutes them.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

LONG_MAX = np.uint64(0x7FFFFFFFFFFFFFFF)
_SIGN_BIT_64 = np.uint64(1 << 63)
_SIGN_BIT_32 = np.uint64(1 << 31)
_INT32_BITS = np.uint64(0xFFFFFFFF)
_MILLIS_PER_DAY = 86_400_000


def flat(column) -> pa.Array:
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    return column


def _first_8_bytes_big_endian(column: pa.Array) -> np.ndarray:
    """`BinaryUtil.paddingTo8Byte` of strings/binaries read as a big-endian number; nulls give 0."""
    if pa.types.is_fixed_size_binary(column.type):
        width = column.type.byte_width
        offsets = (np.arange(len(column) + 1, dtype=np.int64) + column.offset) * width
        data_buf = column.buffers()[1]
    else:
        column = column.cast(pa.large_binary())
        _, offsets_buf, data_buf = column.buffers()
        offsets = np.frombuffer(offsets_buf, np.int64)[column.offset : column.offset + len(column) + 1]
    taken = np.minimum(np.diff(offsets), 8)
    if column.null_count:
        taken = np.where(column.is_valid().to_numpy(zero_copy_only=False), taken, 0)
    # Read 8 bytes at every value's start (zero padding behind the buffer keeps short tail values in
    # bounds), then shift the bytes beyond the value out: that is the left zero-padding of shorter values.
    used = int(offsets[-1])
    data = np.zeros(used + 8, np.uint8)
    if data_buf is not None:
        data[:used] = np.frombuffer(data_buf, np.uint8, count=used)
    eight_bytes = np.ndarray(shape=(used + 1,), dtype=">u8", buffer=data, strides=(1,))
    head = eight_bytes[offsets[:-1]].astype(np.uint64)
    shift = (8 * (8 - taken)).astype(np.uint64)
    return np.where(taken > 0, head >> np.minimum(shift, np.uint64(63)), np.uint64(0))


def _values(column: pa.Array, null_value, numpy_type) -> np.ndarray:
    filled = column.fill_null(null_value) if column.null_count else column
    return filled.to_numpy(zero_copy_only=False).astype(numpy_type, copy=False)


def _epoch_millis(column: pa.Array) -> np.ndarray:
    """java.sql.Date/Timestamp.getTime(): epoch millis, floored. Dates assume a UTC JVM (Hudi uses the JVM
    zone's midnight); Spark's Julian rebase of pre-1582 values is not reproduced."""
    t = column.type
    raw = _integers(column.cast(pa.int32() if pa.types.is_date32(t) else pa.int64()), 0)  # nulls -> 0
    if pa.types.is_date32(t):
        return raw * _MILLIS_PER_DAY
    if pa.types.is_date64(t):
        return raw
    return {"s": raw * 1000, "ms": raw, "us": raw // 1000, "ns": raw // 1_000_000}[t.unit]


_SPARK_INTEGER_KIND = {
    pa.int8(): "byte", pa.int16(): "short", pa.int32(): "int", pa.int64(): "long",
    # Spark reads unsigned Parquet integers widened: uint8 -> short, uint16 -> int, uint32 -> long; uint64 is
    # decimal(20,0) there, whose longValue() is the same 64 bits.
    pa.uint8(): "short", pa.uint16(): "int", pa.uint32(): "long", pa.uint64(): "long",
}


def _integers(column: pa.Array, null_value: int) -> np.ndarray:
    """int64 values, nulls replaced. Arrow's unsafe cast wraps uint64 like the Java long it becomes, and
    truncates decimals toward zero keeping the low 64 bits, exactly `Decimal.longValue()`."""
    return _values(column.cast(pa.int64(), safe=False), null_value, np.int64)


def zorder_words(column) -> np.ndarray:
    """`mapColumnValueTo8Bytes` as uint64 (the 8 bytes, big-endian), nulls substituted as Hudi does."""
    column = flat(column)
    t = column.type
    kind = _SPARK_INTEGER_KIND.get(t)
    if kind == "byte":  # byteTo8Byte: the raw byte, not sign-flipped (negative bytes sort high in Hudi)
        return _integers(column, 127).view(np.uint64) & np.uint64(0xFF)
    if kind in ("short", "int"):  # intTo8Byte: (v ^ 0x80000000) as 4 bytes, left-padded to 8
        null = 32767 if kind == "short" else 2**31 - 1
        return (_integers(column, null).view(np.uint64) & _INT32_BITS) ^ _SIGN_BIT_32
    if kind == "long":
        return _integers(column, 2**63 - 1).view(np.uint64) ^ _SIGN_BIT_64
    if pa.types.is_floating(t):  # doubleTo8Byte; floats are widened to double first
        null_value = float(np.finfo(np.float32).max) if t == pa.float32() else float(np.finfo(np.float64).max)
        values = _values(column, null_value, np.float64)
        raw = values.view(np.uint64)
        return np.where(values > 0, raw ^ _SIGN_BIT_64, np.where(values < 0, ~raw, raw))
    if pa.types.is_boolean(t):  # intTo8Byte(1 or 0); null is false
        return _values(column, False, np.uint64) ^ _SIGN_BIT_32
    if pa.types.is_date(t) or pa.types.is_timestamp(t):  # longTo8Byte(getTime())
        millis = _epoch_millis(column)
        if column.null_count:
            millis = np.where(column.is_valid().to_numpy(zero_copy_only=False), millis, 2**63 - 1)
        return millis.astype(np.int64).view(np.uint64) ^ _SIGN_BIT_64
    if pa.types.is_decimal(t):  # longTo8Byte(decimal.longValue()): see _integers
        return _integers(column, 2**63 - 1).view(np.uint64) ^ _SIGN_BIT_64
    if _is_stringish(t):  # utf8To8Byte / paddingTo8Byte; null -> "" or [0], both 8 zero bytes
        return _first_8_bytes_big_endian(column)
    raise TypeError(f"Hudi's z-order does not support column type {t}")


def hilbert_longs(column) -> np.ndarray:
    """`mapColumnValueToLong` as uint64 bit patterns; null -> Long.MAX_VALUE (booleans: null -> false)."""
    column = flat(column)
    t = column.type
    kind = _SPARK_INTEGER_KIND.get(t)
    valid = column.is_valid().to_numpy(zero_copy_only=False) if column.null_count else None
    if kind == "byte":  # convertBytesToLong(new byte[]{b}): the unsigned byte
        longs = _integers(column, 0).view(np.uint64) & np.uint64(0xFF)
    elif kind is not None:
        longs = _integers(column, 0).view(np.uint64)
    elif pa.types.is_floating(t):  # Double.doubleToLongBits: every NaN becomes the canonical one
        values = _values(column, 0.0, np.float64)
        longs = np.where(np.isnan(values), np.uint64(0x7FF8000000000000), values.view(np.uint64))
    elif pa.types.is_boolean(t):
        return np.where(_values(column, False, bool), LONG_MAX, np.uint64(0))
    elif pa.types.is_date(t) or pa.types.is_timestamp(t):
        longs = _epoch_millis(column).astype(np.int64).view(np.uint64)
    elif pa.types.is_decimal(t):
        longs = _integers(column, 0).view(np.uint64)
    elif _is_stringish(t):  # convertStringToLong / convertBytesToLong: the padded 8 bytes, big-endian
        longs = _first_8_bytes_big_endian(column)
    else:
        raise TypeError(f"Hudi's Hilbert curve does not support column type {t}")
    return longs if valid is None else np.where(valid, longs, LONG_MAX)


def _is_stringish(t) -> bool:
    return (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)
            or pa.types.is_string_view(t) or pa.types.is_binary_view(t))
