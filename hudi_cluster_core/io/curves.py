"""Hudi's space-filling-curve sort keys (DIRECT build method), reproduced byte for byte with numpy.

Facts (format doc section 11; Hudi `SpaceCurveSortingHelper`, `BinaryUtil`, `HilbertCurveUtils`; davidmoten
`HilbertCurve`):

* z-order: every sort column becomes 8 bytes (`mapColumnValueTo8Bytes`), `BinaryUtil.interleaving` takes the
  MSB of every column, then the next bit, ...; rows sort by the `8 * ncols` bytes, unsigned lexicographic.
* Hilbert: every column becomes a Java long (`mapColumnValueToLong`), `HilbertCurve.bits(63)` maps the point
  to a BigInteger index, whose `toByteArray()` is left-zero-padded, or cut to its first 63 bytes.
* One sort column: no curve, a plain range sort on it.
* Dimension order is NOT the sort-column order: Hudi keys the columns by their position in the DataFrame
  schema in a `java.util.HashMap<Integer, StructField>` and iterates that map, i.e. by `index & (capacity-1)`
  then insertion order (ascending schema position for tables under 16 columns). Pass the table with Hudi's
  record schema (meta columns first) so positions match.
"""

from __future__ import annotations

import concurrent.futures
import functools
import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import PlanError
from ..layout import Curve, curve_name, parse_layout  # noqa: F401 - parse_layout re-exported: the one layout parser

HILBERT_BITS = 63
HILBERT_INDEX_BYTES = 63
LONG_MAX = np.uint64(0x7FFFFFFFFFFFFFFF)
_SIGN_BIT_64 = np.uint64(1 << 63)
_SIGN_BIT_32 = np.uint64(1 << 31)
_INT32_BITS = np.uint64(0xFFFFFFFF)
_MILLIS_PER_DAY = 86_400_000
_ROWS_PER_BATCH = 32768
_THREADS = min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def hudi_dimension_order(field_names: list[str], columns: list[str]) -> list[str]:
    """Sort columns in the order Hudi feeds them to the curve (HashMap iteration over schema positions)."""
    if len(set(columns)) != len(columns):
        raise ValueError(f"duplicate sort columns {columns} (Hudi's Collectors.toMap rejects them)")
    positions = {c: field_names.index(c) for c in columns}  # KeyError-like ValueError for unknown columns
    capacity = 16  # HashMap default; it doubles once size exceeds 0.75 * capacity
    while len(columns) > capacity * 3 // 4:
        capacity *= 2

    def bucket(column):
        h = positions[column]  # Integer.hashCode, then HashMap.hash spreads the high half into the low
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(columns, key=lambda c: (bucket(c), columns.index(c)))


# ---------------------------------------------------------------------------------------------------------
# Column values -> 64-bit words (uint64 holding Java's bit pattern)


def _flat(column) -> pa.Array:
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
    column = _flat(column)
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
    column = _flat(column)
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


# ---------------------------------------------------------------------------------------------------------
# Bit interleaving and the Hilbert transform


def _interleave_bits(words: np.ndarray, bits_per_word: int) -> np.ndarray:
    """(rows, dims) uint64 -> (rows, dims*bits) uint8 bits, MSB first: bit k of every dim, then k-1, ...
    Generic (one byte per bit); `_interleave_bytes` is the fast path."""
    big_endian = words.astype(">u8").view(np.uint8).reshape(len(words), words.shape[1], 8)
    bits = np.unpackbits(big_endian, axis=2)[:, :, 64 - bits_per_word :]
    return bits.transpose(0, 2, 1).reshape(len(words), -1)


@functools.lru_cache(maxsize=None)
def _spread_table(dims: int) -> np.ndarray:
    """table[byte]: the byte's bits (MSB first) placed `dims` apart from the top of an 8*dims-bit block."""
    table = np.zeros(256, np.uint64)
    for value in range(256):
        spread = 0
        for b in range(8):
            if (value >> (7 - b)) & 1:
                spread |= 1 << (8 * dims - 1 - b * dims)
        table[value] = spread
    return table


def _interleave_bytes(words: np.ndarray) -> np.ndarray:
    """`BinaryUtil.interleaving` of the words' 8 big-endian bytes: (rows, dims) uint64 -> (rows, 8*dims)
    bytes. Byte k of every dim only feeds output bytes [k*dims, (k+1)*dims), so each byte level is one
    8*dims-bit block built from per-byte lookup tables (dims <= 8 keeps a block in a uint64)."""
    rows, dims = words.shape
    if dims > 8:
        return np.packbits(_interleave_bits(words, 64), axis=1)
    table = _spread_table(dims)
    big_endian = words.astype(">u8").view(np.uint8).reshape(rows, dims, 8)  # byte k of dim j: [:, j, k]
    out = np.empty((rows, 8, dims), np.uint8)
    block = np.empty(rows, np.uint64)
    for k in range(8):
        np.take(table, big_endian[:, 0, k], out=block)
        for j in range(1, dims):
            block |= np.take(table, big_endian[:, j, k]) >> np.uint64(j)
        out[:, k, :] = block.astype(">u8").view(np.uint8).reshape(rows, 8)[:, 8 - dims :]
    return out.reshape(rows, 8 * dims)


def hilbert_transposed(axes: list[np.ndarray], bits: int) -> list[np.ndarray]:
    """Skilling's AxesToTranspose (as in davidmoten's `HilbertCurve.transposedIndex`) over numpy columns.

    `axes` are uint64 arrays, one per dimension, already reduced to their low `bits` bits (the Java code
    never lets higher bits reach the index). Returns new arrays; the index interleaves their bits.
    """
    x = [a.copy() for a in axes]
    n = len(x)
    is_set = np.empty_like(x[0])
    flip = np.empty_like(x[0])
    t = np.empty_like(x[0])
    for level in range(bits - 1, 0, -1):  # q = 2^level from M = 2^(bits-1) down to 2
        p = np.uint64((1 << level) - 1)
        to_top = np.uint64(63 - level)
        for i in range(n):
            # is_set = all ones where bit `level` of x[i] is 1: move it to the sign bit, then an arithmetic
            # shift smears it (a branch-free per-row if/else).
            np.left_shift(x[i], to_top, out=is_set)
            np.right_shift(is_set.view(np.int64), 63, out=is_set.view(np.int64))
            # bit set: invert the low bits of x[0]
            np.bitwise_and(is_set, p, out=flip)
            np.bitwise_xor(x[0], flip, out=x[0])
            if i:
                # bit clear: exchange the low bits of x[0] and x[i] (mask p & ~is_set == p ^ flip)
                np.bitwise_xor(x[0], x[i], out=t)
                np.bitwise_xor(flip, p, out=flip)
                np.bitwise_and(t, flip, out=t)
                np.bitwise_xor(x[0], t, out=x[0])
                np.bitwise_xor(x[i], t, out=x[i])
    for i in range(1, n):  # Gray encode
        np.bitwise_xor(x[i], x[i - 1], out=x[i])
    # t ^= q - 1 for every set bit q > 1 of x[n-1]: bit j of t is the parity of x[n-1]'s bits above j,
    # a suffix-XOR computed by doubling.
    suffix = x[n - 1].copy()
    for step in (1, 2, 4, 8, 16, 32):
        suffix ^= suffix >> np.uint64(step)
    t = suffix >> np.uint64(1)
    for i in range(n):
        x[i] ^= t
    return x


_BIT_LENGTH = np.array([int(v).bit_length() for v in range(256)], np.int64)


def _hilbert_index_bytes(longs: np.ndarray) -> np.ndarray:
    """(rows, dims) Java longs -> (rows, 63) bytes of `HilbertCurveUtils.indexBytes(curve, point, 63)`."""
    rows, dims = longs.shape
    mask = np.uint64((1 << HILBERT_BITS) - 1)
    transposed = hilbert_transposed([longs[:, d] & mask for d in range(dims)], HILBERT_BITS)
    if dims <= 7:
        # The 63*dims-bit index fits 8*dims <= 56 bytes, so toByteArray never exceeds 63 bytes and Hudi's
        # padding is plain left-padding. Interleave the 63 bits as the top of 64-bit words, then drop the
        # `dims` trailing zero bits with a right shift of the whole byte string.
        interleaved = _interleave_bytes(np.stack([t << np.uint64(1) for t in transposed], axis=1))
        shifted = interleaved >> np.uint8(dims)
        shifted[:, 1:] |= interleaved[:, :-1] << np.uint8(8 - dims)
        out = np.zeros((rows, HILBERT_INDEX_BYTES), np.uint8)
        out[:, HILBERT_INDEX_BYTES - 8 * dims :] = shifted
        return out
    index_bits = _interleave_bits(np.stack(transposed, axis=1), HILBERT_BITS)
    total_bits = dims * HILBERT_BITS
    width = -(-total_bits // 8)
    padded_bits = np.zeros((rows, 8 * width), np.uint8)
    padded_bits[:, 8 * width - total_bits :] = index_bits
    magnitude = np.packbits(padded_bits, axis=1)  # (rows, width) big-endian, non-negative
    # BigInteger.toByteArray: minimal two's complement, bitLength // 8 + 1 bytes (a 0x00 sign byte when the
    # top bit is set). paddingToNByte then left-pads to 63 bytes, or keeps the FIRST 63 bytes when longer
    # (only possible from 8 dimensions up; it is what Hudi does, so we do it too).
    nonzero = magnitude != 0
    first = nonzero.argmax(axis=1)
    top = magnitude[np.arange(rows), first]
    bit_length = np.where(nonzero.any(axis=1), (width - first - 1) * 8 + _BIT_LENGTH[top], 0)
    length = bit_length // 8 + 1
    full_width = max(width + 1, HILBERT_INDEX_BYTES)
    framed = np.zeros((rows, full_width), np.uint8)
    framed[:, full_width - width :] = magnitude
    start = full_width - np.maximum(length, HILBERT_INDEX_BYTES)
    return np.take_along_axis(framed, start[:, None] + np.arange(HILBERT_INDEX_BYTES), axis=1)


def _batched_rows(words: np.ndarray, row_fn, out_width: int) -> np.ndarray:
    """Apply row_fn to cache-sized row batches on a thread pool (numpy releases the GIL)."""
    out = np.empty((len(words), out_width), np.uint8)

    def run(start):
        out[start : start + _ROWS_PER_BATCH] = row_fn(words[start : start + _ROWS_PER_BATCH])

    starts = range(0, len(words), _ROWS_PER_BATCH)
    if len(starts) <= 1 or _THREADS <= 1:
        for s in starts:
            run(s)
    else:
        with concurrent.futures.ThreadPoolExecutor(_THREADS) as pool:
            list(pool.map(run, starts))
    return out


def _as_binary_array(matrix: np.ndarray) -> pa.Array:
    rows, width = matrix.shape
    binary_type, offset_type = (pa.binary(), np.int32) if rows * width < 2**31 else (pa.large_binary(), np.int64)
    offsets = np.arange(rows + 1, dtype=offset_type) * width
    return pa.Array.from_buffers(binary_type, rows, [None, pa.py_buffer(offsets), pa.py_buffer(matrix)])


def _curve_columns(table: pa.Table, columns: list[str], field_names: list[str] | None = None) -> list[str]:
    if len(columns) < 2:
        raise ValueError("a space curve needs at least two columns (Hudi sorts a single column plainly)")
    return hudi_dimension_order(list(field_names or table.schema.names), list(columns))


def _zorder_matrix(table: pa.Table, columns: list[str], field_names: list[str] | None = None) -> np.ndarray:
    ordered = _curve_columns(table, columns, field_names)
    words = np.stack([zorder_words(table.column(c)) for c in ordered], axis=1)
    return _batched_rows(words, _interleave_bytes, 8 * len(ordered))


def _hilbert_matrix(table: pa.Table, columns: list[str], field_names: list[str] | None = None) -> np.ndarray:
    ordered = _curve_columns(table, columns, field_names)
    longs = np.stack([hilbert_longs(table.column(c)) for c in ordered], axis=1)
    return _batched_rows(longs, _hilbert_index_bytes, HILBERT_INDEX_BYTES)


def zorder_keys(table: pa.Table, columns: list[str]) -> pa.Array:
    """Hudi's z-order value per row: binary of 8 * len(columns) bytes, compared unsigned-lexicographically."""
    return _as_binary_array(_zorder_matrix(table, columns))


def hilbert_keys(table: pa.Table, columns: list[str]) -> pa.Array:
    """Hudi's Hilbert value per row: binary of 63 bytes (`HilbertCurve.bits(63)` index, Hudi's padding)."""
    return _as_binary_array(_hilbert_matrix(table, columns))


def _linear_sort_indices(table: pa.Table, columns: list[str]) -> pa.Array:
    """Spark's ascending sort: nulls first, NaN above every number. Explicit validity keys avoid Arrow's
    null placement, which would also move NaNs to the front."""
    keys, sort_keys = {}, []
    for n, name in enumerate(columns):
        column = _flat(table.column(name))
        keys[f"v{n}"] = column.is_valid()
        keys[f"k{n}"] = column
        sort_keys += [(f"v{n}", "ascending"), (f"k{n}", "ascending")]
    return pc.sort_indices(pa.table(keys), sort_keys=sort_keys)


def _byte_matrix_sort_indices(matrix: np.ndarray) -> pa.Array:
    """Stable unsigned-lexicographic row order of a (rows, width) uint8 matrix: the rows become big-endian
    uint64 words (constant words dropped) and Arrow sorts by them column after column, several times
    faster than comparing binaries or numpy's lexsort."""
    rows, width = matrix.shape
    if width % 8:
        matrix = np.concatenate([matrix, np.zeros((rows, 8 - width % 8), np.uint8)], axis=1)
    words = np.ascontiguousarray(matrix).view(">u8")
    varying = [k for k in range(words.shape[1]) if rows and (words[:, k] != words[0, k]).any()]
    if not varying:
        return pa.array(np.arange(rows, dtype=np.uint64))
    columns = pa.table({f"w{k}": words[:, k].astype(np.uint64) for k in varying})
    return pc.sort_indices(columns, sort_keys=[(f"w{k}", "ascending") for k in varying])


def curve_sort_indices(table: pa.Table, columns: list[str], layout: str) -> pa.Array:
    """Row indices in the order Hudi's layout optimisation writes them (stable for equal keys).

    ``layout``: any spelling :func:`hudi_cluster_core.layout.parse_layout` accepts (ValueError otherwise)."""
    curve: Curve = curve_name(layout)
    columns = list(columns)
    if not columns:
        return pa.array(np.arange(table.num_rows, dtype=np.uint64))
    missing = [c for c in columns if c not in table.schema.names]
    if missing:
        raise KeyError(f"sort columns not in the table: {missing}")
    if curve == "linear" or len(columns) == 1:
        return _linear_sort_indices(table, columns)
    if curve == "z-order":
        return _byte_matrix_sort_indices(_zorder_matrix(table, columns))
    keys = _hilbert_matrix(table, columns)
    if len(columns) <= 7:  # only the last 8 * dims bytes can be non-zero (see _hilbert_index_bytes)
        keys = keys[:, HILBERT_INDEX_BYTES - 8 * len(columns) :]
    return _byte_matrix_sort_indices(keys)


def sort_key_table(
    table: pa.Table, columns: list[str], layout: str = "linear", *, field_names: list[str] | None = None
) -> pa.Table:
    """The sort key of every row as plain columns whose ascending lexicographic order is :func:`sort_rows`'s order.

    Linear (or one column): per sort column its validity (nulls first) then its values (Arrow puts NaN above
    every number, as Spark does). Z-order/Hilbert: the curve bytes as big-endian uint64 words. A row's key
    depends on that row alone (DIRECT curves take the values' own bits, no per-batch normalisation), so keys
    of different batches, tasks and samples of one group compare consistently. ``field_names``: the full
    record schema's names when ``table`` holds only some columns (Hudi's curve dimension order follows the
    columns' schema positions)."""
    curve: Curve = curve_name(layout)
    columns = list(columns)
    if curve == "linear" or len(columns) == 1:
        keys: dict[str, pa.Array] = {}
        for n, name in enumerate(columns):
            column = _flat(table.column(name))
            keys[f"v{n}"] = column.is_valid()
            keys[f"k{n}"] = column
        return pa.table(keys)
    if curve == "z-order":
        matrix = _zorder_matrix(table, columns, field_names)
    else:
        matrix = _hilbert_matrix(table, columns, field_names)
        if len(columns) <= 7:  # only the last 8 * dims bytes can be non-zero (see _hilbert_index_bytes)
            matrix = matrix[:, HILBERT_INDEX_BYTES - 8 * len(columns) :]
    rows, width = matrix.shape
    if width % 8:
        matrix = np.concatenate([matrix, np.zeros((rows, 8 - width % 8), np.uint8)], axis=1)
    words = np.ascontiguousarray(matrix).view(">u8")
    return pa.table({f"w{k}": words[:, k].astype(np.uint64) for k in range(words.shape[1])})


def sort_rows(table: pa.Table, columns: list[str], layout: str = "linear") -> pa.Table:
    """``table`` ordered by ``columns`` in ``layout`` (Spark's order for linear: nulls first, NaN last; Hudi's
    curve bytes for z-order and Hilbert); unchanged when no columns are given."""
    if not columns or table.num_rows < 2:
        return table
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise PlanError(
            f"hoodie.clustering.plan.strategy.sort.columns names {missing}, not in the table; "
            f"columns: {', '.join(table.column_names)}"
        )
    return table.take(curve_sort_indices(table, columns, layout))
