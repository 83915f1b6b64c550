"""A 64-bit code of every value of an Arrow array, vectorised with numpy, for the rewrite check (run/digest.py).

``value_codes(array)`` gives ``(codes, valid)``: one uint64 per slot and the slots' validity (None: no nulls; a
null slot's code is 0). A number's code is the number itself (injective); bytes and containers get a hash that
is not finalised (a consumer mixes every code with :func:`fmix` anyway, so finalising here would be paid twice).
Equal values get equal codes whatever the chunking, slicing or buffer layout; a value changed anywhere in it (a
nested field, a list element, a null at any depth) changes the code with probability 1 - 2^-64 for all practical
purposes. This is a checksum against accidents, not a cryptographic hash.

Equality is the value as written, with the type promotions a group's rows may go through between reading and
writing (``pa.concat_tables(promote_options="permissive")``, the slice reader's casts to the group's schema)
made invisible, so a widened column is not a changed one:

* integers of every width, and floats holding an integral value, are that int64 (int32 ``5`` = int64 ``5``
  = float64 ``5.0``); other floats are their float64 bits (NaN payloads and -0.0 are kept apart from other
  values; float16/32 widen exactly);
* string, large_string, binary, views and fixed_size_binary hash their bytes alike;
* timestamps, times, durations and dates are nanoseconds (a unit change is invisible; wraps at 2^64);
* decimals hash as decimal256(76, 38) when they fit it (precision and scale widening are invisible);
* dictionaries hash their decoded values;
* a struct is the set of its non-null fields by name (a field added as null is invisible; field order too);
  lists, large lists, fixed-size lists and maps hash their elements in order, nulls included.

Other types (unions, ...) fall back to hashing each value's Python repr (slow, correct).
"""

from __future__ import annotations

import hashlib
import threading
from typing import Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

U64 = np.uint64
Valid = Optional[np.ndarray]  # a bool array, or None when every slot is valid

# odd 64-bit constants (from splitmix64 / murmur3 / xxhash) and tags that keep kinds of values apart
_M1, _M2 = U64(0xFF51AFD7ED558CCD), U64(0xC4CEB9FE1A85EC53)
_WORD, _LEN = U64(0xBF58476D1CE4E5B9), U64(0x94D049BB133111EB)
_ELEMENT, _INDEX = U64(0x2545F4914F6CDD1D), U64(0x9FB21C651E98DF25)
_BYTES_TAG = U64(0x6A09E667F3BCC908)
_FLOAT_TAG, _LIST_TAG, _STRUCT_TAG = U64(0x3C6EF372FE94F82B), U64(0xA54FF53A5F1D36F1), U64(0x510E527FADE682D1)
NULL_ELEMENT = U64(0x1F83D9ABFB41BD6B)  # a null inside a list: its position counts
_NS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
_DECIMAL = pa.decimal256(76, 38)


def fmix(x: np.ndarray) -> np.ndarray:
    """murmur3's 64-bit finaliser, in place on a uint64 array (a bijection that spreads every input bit)."""
    x ^= x >> U64(33)
    x *= _M1
    x ^= x >> U64(33)
    x *= _M2
    x ^= x >> U64(33)
    return x


def name_seed(name: str) -> np.uint64:
    """A constant per column or field name."""
    return U64(int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "little"))


def value_codes(array: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, Valid]:
    """``(codes, valid)`` of ``array``'s slots: see the module's docstring."""
    if isinstance(array, pa.ChunkedArray):
        if array.num_chunks == 1:
            return value_codes(array.chunk(0))
        parts = [value_codes(chunk) for chunk in array.chunks]
        if not parts:
            return np.zeros(0, U64), None
        valid = None
        if any(v is not None for _, v in parts):
            valid = np.concatenate([np.ones(len(h), bool) if v is None else v for h, v in parts])
        return np.concatenate([h for h, _ in parts]), valid
    if isinstance(array.type, pa.ExtensionType):
        array = array.storage
    if pa.types.is_dictionary(array.type):  # decoded: a null in the dictionary is a null slot
        array = array.dictionary_decode()
    hashes = _hashes(array)
    valid = _validity(array)
    if valid is not None:
        hashes[~valid] = 0
    return hashes, valid


def _validity(array: pa.Array) -> Valid:
    if pa.types.is_null(array.type):
        return np.zeros(len(array), bool)
    if array.null_count == 0:
        return None
    return np.asarray(array.is_valid(), bool)


def _hashes(array: pa.Array) -> np.ndarray:
    """A uint64 array of its own (callers write into it); null slots hold anything."""
    t = array.type
    n = len(array)
    if pa.types.is_null(t) or n == 0:
        return np.zeros(n, U64)
    if pa.types.is_boolean(t):
        return _fixed(array.cast(pa.uint8()), np.uint8).astype(U64)
    if pa.types.is_integer(t):
        return _fixed(array, t.to_pandas_dtype()).astype(np.int64).view(U64)
    if pa.types.is_floating(t):
        return _floats(_fixed(array, t.to_pandas_dtype()).astype(np.float64))
    if pa.types.is_timestamp(t) or pa.types.is_duration(t) or pa.types.is_time(t):
        return _fixed(array, np.int32 if t.bit_width == 32 else np.int64).astype(np.int64).view(U64) * U64(_NS[t.unit])
    if pa.types.is_date32(t):
        return _fixed(array, np.int32).astype(np.int64).view(U64) * U64(86400 * 10**9)
    if pa.types.is_date64(t):
        return _fixed(array, np.int64).view(U64) * U64(10**6)
    if pa.types.is_decimal(t):
        if t.precision - t.scale <= 38 and 0 <= t.scale <= 38 and t != _DECIMAL:
            return _hashes(array.cast(_DECIMAL))
        return _fixed_bytes(array, t.byte_width) ^ name_seed(f"decimal scale {t.scale}")
    if pa.types.is_fixed_size_binary(t):
        return _fixed_bytes(array, t.byte_width)
    if pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        return _var_bytes(array)
    if pa.types.is_binary_view(t) or pa.types.is_string_view(t):
        return _var_bytes(array.cast(pa.large_binary()))
    if pa.types.is_struct(t):
        return _struct(array)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
        return _list(array.values, np.asarray(array.offsets).astype(np.int64))
    if pa.types.is_fixed_size_list(t):
        size = t.list_size
        return _list(array.values, (np.arange(n + 1, dtype=np.int64) + array.offset) * size)
    if pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        return _hashes(array.cast(pa.large_list(t.value_field)))
    return _python(array)


def _fixed(array: pa.Array, dtype) -> np.ndarray:
    """The values buffer of a fixed-width primitive array, as numpy (zero copy; null slots hold anything)."""
    dtype = np.dtype(dtype)
    return np.frombuffer(array.buffers()[1], dtype, count=len(array), offset=array.offset * dtype.itemsize)


def _floats(values: np.ndarray) -> np.ndarray:
    """Integral floats as their int64 (what an int column widened to float holds), others by their bits."""
    with np.errstate(invalid="ignore", over="ignore"):
        as_int = values.astype(np.int64)
        integral = (as_int.astype(np.float64) == values) & ~((values == 0) & np.signbit(values))
    return np.where(integral, as_int.view(U64), values.view(U64) ^ _FLOAT_TAG)


def _fixed_bytes(array: pa.Array, width: int) -> np.ndarray:
    data = np.frombuffer(array.buffers()[1], np.uint8, count=len(array) * width, offset=array.offset * width)
    return _equal_lengths(data, len(array), width)


def _equal_lengths(data: np.ndarray, n: int, width: int) -> np.ndarray:
    """:func:`matrix_hashes` of ``n`` strings of ``width`` bytes each, back to back in ``data``."""
    if width % 8:
        matrix = np.zeros((n, -(-width // 8) * 8), np.uint8)
        matrix[:, :width] = data.reshape(n, width)
        data = matrix.reshape(-1)
    return matrix_hashes(data.view("<u8").reshape(n, -1), np.full(n, width, np.int64))


def _var_bytes(array: pa.Array) -> np.ndarray:
    """Strings padded with zero bytes to whole words by Arrow, so each starts at a word boundary and the words are
    read in place, without a gather: to the longest string's words when that costs at most about twice the data
    (``ascii_rpad``, which counts bytes, then a (strings, words) matrix), else each to its own (a join with pads).
    Zero words add nothing to the sum, so both give the same numbers."""
    offsets = _offsets(array)
    lengths = np.diff(offsets)
    n = len(array)
    if not n:
        return np.zeros(0, U64)
    if lengths[0] and (lengths == lengths[0]).all():  # keys, timestamps as text: no padding pass
        return _equal_lengths(np.frombuffer(array.buffers()[2], np.uint8)[offsets[0] : offsets[-1]], n, int(lengths[0]))
    width = -(-int(lengths.max()) // 8) * 8
    if 0 < width * n <= 2 * int(offsets[-1] - offsets[0]) + 8 * n:
        large = pa.types.is_large_string(array.type) or pa.types.is_large_binary(array.type)
        text = pa.Array.from_buffers(pa.large_string() if large else pa.string(), n, array.buffers(),
                                     array.null_count, array.offset)  # fmt: skip  (bytes as they are, unchecked)
        padded = pc.ascii_rpad(text.fill_null("") if array.null_count else text, width=width, padding="\0")
        padded_offsets = _offsets(padded)
        if (np.diff(padded_offsets) == width).all():
            data = np.frombuffer(padded.buffers()[2], np.uint8)[padded_offsets[0] : padded_offsets[-1]]
            return matrix_hashes(data.view("<u8").reshape(n, width // 8), lengths)
    if array.type not in _PADS:  # "", "\0", ... "\0" * 7 and an empty separator, of the array's type
        _PADS[array.type] = (pa.array([b"\0" * i for i in range(8)]).cast(array.type), pa.scalar(b"").cast(array.type))
    pads, nothing = _PADS[array.type]
    padded = pc.binary_join_element_wise(array, pads.take(pa.array((-lengths & 7).astype(np.int8))), nothing)
    padded_offsets = _offsets(padded)
    words = np.frombuffer(padded.buffers()[2] or b"", "<u8", count=int(padded_offsets[-1] - padded_offsets[0]) // 8,
                          offset=int(padded_offsets[0]))  # fmt: skip
    return bytes_hashes(words, (padded_offsets - padded_offsets[0]) >> 3, lengths)


def _offsets(array: pa.Array) -> np.ndarray:
    large = pa.types.is_large_string(array.type) or pa.types.is_large_binary(array.type)
    kind = np.int64 if large else np.int32
    size = np.dtype(kind).itemsize
    return np.frombuffer(array.buffers()[1], kind, count=len(array) + 1, offset=array.offset * size).astype(np.int64)


_PADS: dict[pa.DataType, tuple[pa.Array, pa.Scalar]] = {}


def bytes_hashes(words: np.ndarray, word_offsets: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The hash of each byte string, ``sum_k mix(w_k) * R^k + length * L + T`` over its 8-byte little-endian
    words ``w_k`` (the last one zero-padded): ``words[word_offsets[i]:word_offsets[i+1]]`` are string i's, of
    ``lengths[i]`` bytes. The position enters as a power of R (a change of one word always changes the sum; a swap
    of two is missed with probability ~2^-49)."""
    running = _running_sums(words)
    sums = running[word_offsets[1:]] - running[word_offsets[:-1]]
    sums *= _powers(len(words) + 1)[1][word_offsets[:-1]]  # R^-(first word's g): from R^g to R^k
    return _bytes_final(sums, lengths)


def matrix_hashes(matrix: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """:func:`bytes_hashes` of strings of as many words each, the rows of a (strings, words) uint64 matrix."""
    strings, words = matrix.shape
    running = _running_sums(matrix.reshape(-1))
    sums = running[words::words] - running[: strings * words : words]
    sums *= _powers(strings * words + 1)[1][: strings * words : words]
    return _bytes_final(sums, lengths)


def _running_sums(words: np.ndarray) -> np.ndarray:
    """``[0, t_0, t_0 + t_1, ...]`` of the terms ``t_g = mix(w_g) * R^g`` (g: the word's index in ``words``), in
    scratch space: the arrays of one block are reused, not faulted in afresh (numpy asks the OS for every large
    array, and touching its pages again costs as much as the arithmetic)."""
    total = len(words)
    mixed, shifted, running = _scratch(0, total), _scratch(1, total), _scratch(2, total + 1)
    np.multiply(words, _WORD, out=mixed)
    np.right_shift(mixed, U64(29), out=shifted)
    mixed ^= shifted
    mixed *= _powers(total)[0]
    running[0] = 0
    np.cumsum(mixed, out=running[1:])
    return running


_SCRATCH = threading.local()
SCRATCH_BYTES = 1 << 24  # kept per slot and thread between calls (3 slots); a larger block allocates afresh


def _scratch(slot: int, count: int) -> np.ndarray:
    kept = _SCRATCH.__dict__.setdefault("arrays", {})
    array = kept.get(slot)
    if array is None or len(array) < count:
        array = np.empty(max(count, 2 * len(array) if array is not None else 0), U64)
        if array.nbytes <= SCRATCH_BYTES:
            kept[slot] = array
    return array[:count]


def _bytes_final(sums: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    sums += lengths.astype(U64) * _LEN
    sums += _BYTES_TAG
    return sums


_R = U64(0x9E3779B97F4A7C13)  # odd, = 3 mod 8: R^d - 1 has at most 2 + log2(d) factors of two
_POWERS = (np.ones(1, U64), np.ones(1, U64))


def _powers(count: int) -> tuple[np.ndarray, np.ndarray]:
    """``(R^g, R^-g)`` for g in ``0..count-1`` (mod 2^64), cached and grown by doubling."""
    global _POWERS
    powers, inverse = _POWERS
    if len(powers) < count:
        size = max(count, 2 * len(powers), 1024)
        steps = np.full(size, _R, U64)
        steps[0] = 1
        powers = np.cumprod(steps, dtype=U64)
        steps[1:] = U64(pow(int(_R), -1, 1 << 64))
        inverse = np.cumprod(steps, dtype=U64)
        _POWERS = (powers, inverse)
    return powers[:count], inverse[:count]


def _segment_sums(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``values[offsets[i]:offsets[i+1]].sum()`` per segment, mod 2^64 (empty segments: 0)."""
    running = np.zeros(len(values) + 1, U64)
    np.cumsum(values, dtype=U64, out=running[1:])
    return running[offsets[1:]] - running[offsets[:-1]]


def _struct(array: pa.StructArray) -> np.ndarray:
    total = np.zeros(len(array), U64)
    for index in range(array.type.num_fields):
        hashes, valid = value_codes(array.field(index))  # .field() applies the struct's offset
        hashes = fmix(hashes * _ELEMENT + name_seed(array.type.field(index).name))
        if valid is not None:
            hashes[~valid] = 0  # a null field counts as absent: a field added by schema evolution is invisible
        total += hashes
    total += _STRUCT_TAG
    return total


def _list(values: pa.Array, offsets: np.ndarray) -> np.ndarray:
    """Elements ``values[offsets[i]:offsets[i+1]]`` (absolute offsets into ``values``) in order, nulls included."""
    first, last = int(offsets[0]), int(offsets[-1])
    hashes, valid = value_codes(values.slice(first, last - first))
    if valid is not None:
        hashes[~valid] = NULL_ELEMENT
    offsets = offsets - first
    counts = np.diff(offsets)
    position = np.arange(last - first, dtype=np.int64) - np.repeat(offsets[:-1], counts)
    mixed = fmix(hashes * _ELEMENT + (position.astype(U64) + U64(1)) * _INDEX)
    sums = _segment_sums(mixed, offsets)
    sums += counts.astype(U64) * _LEN
    sums += _LIST_TAG
    return sums


def _python(array: pa.Array) -> np.ndarray:
    def one(value) -> int:
        return int.from_bytes(hashlib.blake2b(repr(value).encode(), digest_size=8).digest(), "little")

    return np.fromiter((one(v) for v in array.to_pylist()), U64, count=len(array))
