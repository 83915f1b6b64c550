"""A 64-bit hash of every value of an Arrow array, vectorised with numpy, for the rewrite check (run/digest.py).

``value_hashes(array)`` gives ``(hashes, valid)``: one uint64 per slot and the slots' validity (None: no nulls;
a null slot's hash is 0). Equal values hash equal whatever the chunking, slicing or buffer layout; a value
changed anywhere in it (a nested field, a list element, a null at any depth) changes the hash with
probability 1 - 2^-64 for all practical purposes. This is a checksum against accidents, not a cryptographic hash.

Equality is the value as written, with the type promotions a group's rows may go through between reading and
writing (``pa.concat_tables(promote_options="permissive")``, the slice reader's casts to the group's schema)
made invisible, so a widened column is not a changed one:

* integers of every width, and floats holding an integral value, hash as that int64 (int32 ``5`` = int64 ``5``
  = float64 ``5.0``); other floats hash their float64 bits (NaN payloads and -0.0 are kept apart from other
  values; float16/32 widen exactly);
* string, large_string, binary, views and fixed_size_binary hash their bytes alike;
* timestamps, times, durations and dates hash as nanoseconds (a unit change is invisible; wraps at 2^64);
* decimals hash as decimal256(76, 38) when they fit it (precision and scale widening are invisible);
* dictionaries hash their decoded values;
* a struct is the set of its non-null fields by name (a field added as null is invisible; field order too);
  lists, large lists, fixed-size lists and maps hash their elements in order, nulls included.

Other types (unions, ...) fall back to hashing each value's Python repr (slow, correct).
"""

from __future__ import annotations

import hashlib
from typing import Optional

import numpy as np
import pyarrow as pa

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


def value_hashes(array: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, Valid]:
    """``(hashes, valid)`` of ``array``'s slots: see the module's docstring."""
    if isinstance(array, pa.ChunkedArray):
        parts = [value_hashes(chunk) for chunk in array.chunks]
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
    if pa.types.is_string(t) or pa.types.is_binary(t):
        return _var_bytes(array, np.int32)
    if pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        return _var_bytes(array, np.int64)
    if pa.types.is_binary_view(t) or pa.types.is_string_view(t):
        return _var_bytes(array.cast(pa.large_binary()), np.int64)
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
    offsets = np.arange(len(array) + 1, dtype=np.int64) * width
    return bytes_hashes(data, offsets)


def _var_bytes(array: pa.Array, offset_type) -> np.ndarray:
    buffers = array.buffers()
    offsets = np.frombuffer(buffers[1], offset_type, count=len(array) + 1, offset=array.offset * np.dtype(offset_type).itemsize)
    offsets = offsets.astype(np.int64)
    data = np.frombuffer(buffers[2], np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    return bytes_hashes(data[offsets[0] : offsets[-1]], offsets - offsets[0])


def bytes_hashes(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The hash of each byte string ``data[offsets[i]:offsets[i+1]]``: ``fmix(sum_k mix(w_k) * R^k + length * L)``
    over its 8-byte little-endian words ``w_k`` (the last one zero-padded). The position enters as a power of R
    (a change of one word always changes the sum; a swap of two is missed with probability ~2^-49). Strings of
    one length take a 2-D path without gathers; both paths compute the same numbers."""
    n = len(offsets) - 1
    lengths = np.diff(offsets)
    if n and (lengths == lengths[0]).all():
        width = int(lengths[0])
        per_string = -(-width // 8)
        matrix = np.empty((n, per_string * 8), np.uint8)
        matrix[:, :width] = data[: n * width].reshape(n, width)
        matrix[:, width:] = 0
        mixed = _mix_word(matrix.view("<u8"))
        mixed *= _powers(per_string)[0]
        sums = np.zeros(n, U64)
        for k in range(per_string):  # column by column: numpy sums a short inner axis slowly
            sums += mixed[:, k]
    else:
        counts = (lengths + 7) >> 3
        word_offsets = np.zeros(n + 1, np.int64)
        np.cumsum(counts, out=word_offsets[1:])
        total = int(word_offsets[-1])
        powers, inverse = _powers(total + 1)  # + 1: an empty last string's words start at index total
        powers = powers[:total]
        # word g of string i starts at byte offsets[i] + 8 * (g - word_offsets[i]): one repeat per word
        starts = np.repeat(offsets[:-1] - 8 * word_offsets[:-1], counts)
        starts += np.arange(0, 8 * total, 8, dtype=np.int64)
        words = _load_words(data, starts)
        has_words = counts > 0
        last = word_offsets[1:][has_words] - 1
        tail_bits = ((lengths[has_words] - (counts[has_words] - 1) * 8) * 8).astype(U64)  # 8..64 data bits
        words[last] &= np.where(tail_bits >= U64(64), ~U64(0), (U64(1) << (tail_bits & U64(63))) - U64(1))
        mixed = _mix_word(words)
        mixed *= powers  # R^g for the global word index g; R^-word_offsets[i] below makes it R^k
        sums = _segment_sums(mixed, word_offsets) * inverse[word_offsets[:-1]]
    sums += lengths.astype(U64) * _LEN
    sums += _BYTES_TAG
    return fmix(sums)


def _load_words(data: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The little-endian 8-byte words of ``data`` at byte positions ``starts`` (consumed), from two aligned loads
    each (numpy gathers from an aligned, contiguous array several times faster than from unaligned windows)."""
    padded = np.zeros((len(data) + 23) // 8 * 8, np.uint8)  # two words of slack past the end
    padded[: len(data)] = data
    aligned = padded.view("<u8")
    index = starts >> 3
    words = aligned.take(index)
    index += 1
    high = aligned.take(index)
    starts &= 7
    starts <<= 3
    shift = starts.view(U64)
    words >>= shift
    np.subtract(U64(64), shift, out=shift)
    high <<= shift  # numpy shifts by 64 to 0: an aligned word takes nothing from the next one
    words |= high
    return words


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


def _mix_word(x: np.ndarray) -> np.ndarray:
    """A cheap bijective mix of each word, in place (multiply, then fold the high bits down)."""
    x *= _WORD
    x ^= x >> U64(29)
    return x


def _segment_sums(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``values[offsets[i]:offsets[i+1]].sum()`` per segment, mod 2^64 (empty segments: 0)."""
    running = np.zeros(len(values) + 1, U64)
    np.cumsum(values, dtype=U64, out=running[1:])
    return running[offsets[1:]] - running[offsets[:-1]]


def _struct(array: pa.StructArray) -> np.ndarray:
    total = np.zeros(len(array), U64)
    for index in range(array.type.num_fields):
        hashes, valid = value_hashes(array.field(index))  # .field() applies the struct's offset
        hashes = fmix(hashes * _ELEMENT + name_seed(array.type.field(index).name))
        if valid is not None:
            hashes[~valid] = 0  # a null field counts as absent: a field added by schema evolution is invisible
        total += hashes
    return fmix(total + _STRUCT_TAG)


def _list(values: pa.Array, offsets: np.ndarray) -> np.ndarray:
    """Elements ``values[offsets[i]:offsets[i+1]]`` (absolute offsets into ``values``) in order, nulls included."""
    first, last = int(offsets[0]), int(offsets[-1])
    hashes, valid = value_hashes(values.slice(first, last - first))
    if valid is not None:
        hashes[~valid] = NULL_ELEMENT
    offsets = offsets - first
    counts = np.diff(offsets)
    position = np.arange(last - first, dtype=np.int64) - np.repeat(offsets[:-1], counts)
    mixed = fmix(hashes * _ELEMENT + (position.astype(U64) + U64(1)) * _INDEX)
    return fmix(_segment_sums(mixed, offsets) + counts.astype(U64) * _LEN + _LIST_TAG)


def _python(array: pa.Array) -> np.ndarray:
    def one(value) -> int:
        return int.from_bytes(hashlib.blake2b(repr(value).encode(), digest_size=8).digest(), "little")

    return np.fromiter((one(v) for v in array.to_pylist()), U64, count=len(array))
