"""Apache Hudi's record-key bloom filter, bit for bit, built with numpy.

Hudi stores a bloom filter over the UTF-8 bytes of every `_hoodie_record_key` in each base file's footer
(`org.apache.hudi.bloomfilter`); its BLOOM index trusts it to skip files, so a wrong bit makes Hudi miss keys
and insert duplicates. Facts (docs/format.md#footer-metadata, #bloom-filter, Hudi's `common.bloom` package):

* sizing: `bitSize = ceil(n * -ln(fpp) / ln(2)^2)`, `numHashes = ceil(ln(2) * bitSize / n)`, hash type 1
  (Hudi's own MurmurHash2, whose 1-3 byte tail is XORed in the reverse order of Hadoop's);
* positions: `h = 0; repeat numHashes: h = murmur(key, seed=h); pos = abs(h % bitSize)` in Java `int`s;
* bits LSB-first in bytes; SIMPLE = 13-byte header + bits; DYNAMIC_V0 = header, `nr`, keys in the current
  row, row count, then every row as a SIMPLE filter; standard padded base64 of the whole.

The hashing is vectorised: keys are grouped by their number of 4-byte blocks, the seed-independent block and
tail mixing is done once per key, and the 30 chained hashes run over cache-sized batches of keys at once.
"""

from __future__ import annotations

import base64
import concurrent.futures
import functools
import math
import os
import struct

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

DEFAULT_NUM_ENTRIES = 60000
DEFAULT_FPP = 1e-9
DEFAULT_DYNAMIC_MAX_ENTRIES = 100000

BLOOM_FILTER_FOOTER_KEY = "org.apache.hudi.bloomfilter"
BLOOM_FILTER_TYPE_CODE_FOOTER_KEY = "hoodie_bloom_filter_type_code"
MIN_RECORD_KEY_FOOTER_KEY = "hoodie_min_record_key"
MAX_RECORD_KEY_FOOTER_KEY = "hoodie_max_record_key"

FILTER_TYPES = ("SIMPLE", "DYNAMIC_V0")
MURMUR_HASH_TYPE = 1  # org.apache.hudi.common.util.hash.Hash.MURMUR_HASH
_SERIAL_VERSION = -1  # InternalFilter.VERSION: negative marks the versioned layout
_HEADER = struct.Struct(">iibi")  # version, numHashes, hashType (byte), bitSize
_DYNAMIC_HEADER = struct.Struct(">iii")  # nr, keys in current row, row count
_MURMUR_M = np.uint32(0x5BD1E995)
_ONE = np.uint32(1)
# Keys hashed together: small enough that the per-batch uint32 vectors stay in L2 cache.
_BATCH_KEYS = 32768
_HASH_THREADS = min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def bloom_sizing(num_entries: int, fpp: float) -> tuple[int, int]:
    """(bitSize, numHashes) exactly as `BloomFilterUtils` computes them (same double operations)."""
    if num_entries <= 0 or not 0.0 < fpp < 1.0:
        raise ValueError(f"need num_entries > 0 and 0 < fpp < 1, got {num_entries}, {fpp}")
    log2_squared = math.log(2) * math.log(2)
    bit_size = math.ceil(num_entries * (-math.log(fpp) / log2_squared))
    num_hashes = math.ceil(math.log(2) * bit_size / num_entries)
    if bit_size >= 2**31:
        raise ValueError(f"bloom filter of {bit_size} bits does not fit a Java int")
    return bit_size, num_hashes


# ---------------------------------------------------------------------------------------------------------
# Keys as Arrow buffers


def _as_utf8_array(keys) -> pa.Array:
    """One contiguous large_string/large_binary array, no nulls."""
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks() if keys.num_chunks else pa.array([], keys.type)
    elif not isinstance(keys, pa.Array):
        keys = pa.array(list(keys), pa.large_string())
    if pa.types.is_dictionary(keys.type):
        keys = keys.dictionary_decode()
    if pa.types.is_string(keys.type) or pa.types.is_string_view(keys.type):
        keys = keys.cast(pa.large_string())
    elif pa.types.is_binary(keys.type) or pa.types.is_binary_view(keys.type):
        keys = keys.cast(pa.large_binary())
    if not (pa.types.is_large_string(keys.type) or pa.types.is_large_binary(keys.type)):
        raise TypeError(f"record keys must be strings, got {keys.type}")
    if keys.null_count:
        raise ValueError("record keys must not be null")
    return keys


def _key_buffers(keys: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(data bytes, int64 offsets with len(keys)+1 entries) straight from the Arrow buffers."""
    _, offsets_buf, data_buf = keys.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=np.int64)[keys.offset : keys.offset + len(keys) + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    return data, offsets


# ---------------------------------------------------------------------------------------------------------
# Hashing


def _unaligned_words(data: np.ndarray) -> np.ndarray:
    """words[i] = little-endian uint32 of data[i:i+4], for every byte offset i (a view, no copy)."""
    if len(data) < 4:
        return np.zeros(0, "<u4")
    return np.ndarray(shape=(len(data) - 3,), dtype="<u4", buffer=data, strides=(1,))


def _key_blocks(data, words, starts, lengths, n_blocks) -> np.ndarray:
    """The keys' 4-byte little-endian blocks as a (n_blocks, keys) uint32 matrix."""
    count = len(starts)
    back_to_back = count > 1 and starts[-1] - starts[0] == (count - 1) * lengths[0]
    if back_to_back and (lengths == lengths[0]).all():
        # Equal-length keys stored back to back (UUIDs, fixed-width ids): a reshape, no gather.
        rows = data[starts[0] : starts[0] + count * lengths[0]].reshape(count, lengths[0])
        return np.ascontiguousarray(rows[:, : 4 * n_blocks]).view("<u4").T.copy()
    return words[starts[None, :] + 4 * np.arange(n_blocks, dtype=np.int64)[:, None]]


def _hash_positions_batch(data, words, starts, lengths, n_blocks, bit_size, num_hashes) -> np.ndarray:
    """Bit positions (num_hashes, len(starts)) for keys that all have `n_blocks` 4-byte blocks."""
    count = len(starts)
    # Block mixing (k *= m; k ^= k >>> 24; k *= m) does not depend on the seed: do it once per key.
    blocks = _key_blocks(data, words, starts, lengths, n_blocks)
    blocks *= _MURMUR_M
    blocks ^= blocks >> 24
    blocks *= _MURMUR_M
    # Hudi's tail: h ^= b[end-3] << 16, b[end-2] << 8, b[end-1], each byte sign-extended (Java byte -> int),
    # then h *= m only when there is a tail. Also seed-independent, so it folds into one word and a factor.
    tail_len = lengths & 3
    ends = starts + lengths
    signed = data.view(np.int8)
    tail = np.zeros(count, np.int32)
    for back, shift in ((3, 16), (2, 8), (1, 0)):
        has = tail_len >= back
        byte = signed[np.where(has, ends - back, 0)].astype(np.int32)
        tail ^= np.where(has, byte << shift, 0).astype(np.int32)
    tail = tail.view(np.uint32)
    tail_factor = np.where(tail_len != 0, _MURMUR_M, _ONE).astype(np.uint32)
    length_word = lengths.astype(np.uint32)  # Java int length; keys are far below 2^31 bytes

    positions = np.empty((num_hashes, count), np.uint32)
    h = np.zeros(count, np.uint32)  # the first seed is 0
    scratch = np.empty(count, np.uint32)
    for i in range(num_hashes):
        np.bitwise_xor(h, length_word, out=h)  # h = seed ^ length
        for j in range(n_blocks):
            np.multiply(h, _MURMUR_M, out=h)
            np.bitwise_xor(h, blocks[j], out=h)
        np.bitwise_xor(h, tail, out=h)
        np.multiply(h, tail_factor, out=h)
        np.right_shift(h, 13, out=scratch)  # uint32 shifts are Java's >>>
        np.bitwise_xor(h, scratch, out=h)
        np.multiply(h, _MURMUR_M, out=h)
        np.right_shift(h, 15, out=scratch)
        np.bitwise_xor(h, scratch, out=h)
        # Java: Math.abs(h % bitSize) with h signed. |h % b| == |h| % b, and |h| as an unsigned 32-bit
        # value is min(h, -h mod 2^32) (covers Integer.MIN_VALUE, whose magnitude 2^31 fits in uint32).
        np.negative(h, out=scratch)
        np.minimum(h, scratch, out=positions[i])
    np.remainder(positions, np.uint32(bit_size), out=positions)
    return positions


def _for_each_hash_batch(data, offsets, bit_size, num_hashes, consume) -> None:
    """Call consume(key indices, positions[num_hashes, len(indices)]) for batches covering every key once.

    numpy releases the GIL inside ufuncs and fancy indexing, so batches are hashed, and consumed, on a small
    thread pool; `consume` must therefore only touch data that belongs to its own batch, or write
    idempotently (setting bloom bits to True).
    """
    lengths = np.diff(offsets)
    if len(lengths) and lengths.min() == 0:
        # HashFunction.hash throws "key length must be > 0"; Hudi never writes an empty record key.
        raise ValueError("Hudi cannot hash an empty record key")
    words = _unaligned_words(data)
    n_blocks = lengths >> 2
    # uint16 keys make numpy's stable argsort a radix sort.
    sortable = n_blocks.astype(np.uint16) if len(n_blocks) and n_blocks.max() < 2**16 else n_blocks
    by_blocks = np.argsort(sortable, kind="stable")
    group_starts = np.flatnonzero(np.diff(n_blocks[by_blocks])) + 1
    batches = [
        (group[first : first + _BATCH_KEYS], int(n_blocks[group[0]]))
        for group in np.split(by_blocks, group_starts)
        for first in range(0, len(group), _BATCH_KEYS)
    ]

    def hash_batch(batch) -> None:
        idx, blocks_in_batch = batch
        starts, batch_lengths = offsets[idx], lengths[idx]
        positions = _hash_positions_batch(data, words, starts, batch_lengths, blocks_in_batch, bit_size, num_hashes)
        consume(idx, positions)

    if len(batches) <= 1 or _HASH_THREADS <= 1:
        for batch in batches:
            hash_batch(batch)
        return
    with concurrent.futures.ThreadPoolExecutor(_HASH_THREADS) as pool:
        for _ in pool.map(hash_batch, batches):  # re-raises worker exceptions
            pass


# ---------------------------------------------------------------------------------------------------------
# DYNAMIC_V0 row assignment (InternalDynamicBloomFilter.getActiveStandardBF)


def dynamic_rows_for_keys(n_keys: int, entries_per_row: int, max_entries: int) -> tuple[np.ndarray, int, int]:
    """(row of every key in insertion order, row count, `currentNbRecord`) for a DYNAMIC_V0 filter.

    Rows fill `entries_per_row` keys each while `rows * entries_per_row < max_entries`; after that the next
    key goes to row 0 without advancing the round-robin cursor, and later keys go to rows 0, 1, ..., 0, 1.
    `currentNbRecord` resets only when a row is added, so it keeps counting once the bound is reached.
    """
    full_rows = max(1, -(-max_entries // entries_per_row))  # rows created before the bound is reached
    index = np.arange(n_keys, dtype=np.int64)
    rows_of_keys = index // entries_per_row
    bound = full_rows * entries_per_row
    if n_keys > bound:
        rows_of_keys[bound:] = np.maximum(index[bound:] - bound - 1, 0) % full_rows
    n_rows = min(full_rows, max(1, -(-n_keys // entries_per_row)))
    current_count = n_keys - (n_rows - 1) * entries_per_row
    return rows_of_keys, n_rows, current_count


# ---------------------------------------------------------------------------------------------------------
# Build / serialise / read


def _serialise_bits(bits: np.ndarray, bit_size: int, num_hashes: int) -> bytes:
    # InternalBloomFilter.write: header, then ceil(bitSize/8) bytes with bit i at byte i>>3, mask 1<<(i&7).
    return _HEADER.pack(_SERIAL_VERSION, num_hashes, MURMUR_HASH_TYPE, bit_size) + np.packbits(
        bits, bitorder="little"
    ).tobytes()


def build_bloom_filter(
    keys,
    *,
    filter_type: str = "DYNAMIC_V0",
    num_entries: int = DEFAULT_NUM_ENTRIES,
    fpp: float = DEFAULT_FPP,
    dynamic_max_entries: int = DEFAULT_DYNAMIC_MAX_ENTRIES,
) -> str:
    """The base64 text Hudi stores under `org.apache.hudi.bloomfilter` for `keys` added in this order."""
    if filter_type not in FILTER_TYPES:
        raise ValueError(f"filter_type must be one of {FILTER_TYPES}, got {filter_type!r}")
    bit_size, num_hashes = bloom_sizing(num_entries, fpp)
    data, offsets = _key_buffers(_as_utf8_array(keys))
    n_keys = len(offsets) - 1
    if filter_type == "SIMPLE":
        rows_of_keys, n_rows, current_count = np.zeros(n_keys, np.int64), 1, n_keys
    else:
        rows_of_keys, n_rows, current_count = dynamic_rows_for_keys(n_keys, num_entries, dynamic_max_entries)

    # One byte per bit while building: concurrent batches can set bits without read-modify-write races.
    bits = np.zeros((n_rows, bit_size), dtype=bool)
    flat_bits = bits.reshape(-1)

    def set_bits(idx, positions):
        if n_rows == 1:
            flat_bits[positions] = True
        else:  # one scatter for all rows: row r's bit p lives at r * bitSize + p
            flat_bits[positions + (rows_of_keys[idx] * bit_size)[None, :]] = True

    _for_each_hash_batch(data, offsets, bit_size, num_hashes, set_bits)

    if filter_type == "SIMPLE":
        payload = _serialise_bits(bits[0], bit_size, num_hashes)
    else:
        header = _HEADER.pack(_SERIAL_VERSION, num_hashes, MURMUR_HASH_TYPE, bit_size)
        payload = header + _DYNAMIC_HEADER.pack(num_entries, current_count, n_rows)
        payload += b"".join(_serialise_bits(bits[row], bit_size, num_hashes) for row in range(n_rows))
    return base64.b64encode(payload).decode("ascii")


@functools.lru_cache(maxsize=16)
def _parse_filter(serialized: str) -> tuple[int, int, np.ndarray]:
    """(bitSize, numHashes, bit matrix [rows, bitSize] as bool) of a SIMPLE or DYNAMIC_V0 filter."""
    raw = base64.b64decode(serialized)

    def header_at(pos: int) -> tuple[int, int]:
        version, num_hashes, hash_type, bit_size = _HEADER.unpack_from(raw, pos)
        if version != _SERIAL_VERSION or hash_type != MURMUR_HASH_TYPE:
            raise ValueError(f"unsupported bloom filter (version {version}, hash type {hash_type})")
        return bit_size, num_hashes

    def bits_at(pos: int, bit_size: int) -> np.ndarray:
        packed = np.frombuffer(raw, np.uint8, count=(bit_size + 7) // 8, offset=pos)
        return np.unpackbits(packed, bitorder="little")[:bit_size].astype(bool)

    bit_size, num_hashes = header_at(0)
    n_bytes = (bit_size + 7) // 8
    if len(raw) == _HEADER.size + n_bytes:  # SIMPLE: a dynamic filter is always longer than this
        return bit_size, num_hashes, _frozen(bits_at(_HEADER.size, bit_size)[None, :])
    _, _, n_rows = _DYNAMIC_HEADER.unpack_from(raw, _HEADER.size)
    row_size = _HEADER.size + n_bytes
    first_row = _HEADER.size + _DYNAMIC_HEADER.size
    if len(raw) != first_row + n_rows * row_size:
        raise ValueError("bloom filter length matches neither the SIMPLE nor the DYNAMIC_V0 layout")
    rows = []
    for row in range(n_rows):
        if header_at(first_row + row * row_size) != (bit_size, num_hashes):
            raise ValueError("DYNAMIC_V0 row header differs from the filter header")
        rows.append(bits_at(first_row + row * row_size + _HEADER.size, bit_size))
    return bit_size, num_hashes, _frozen(np.stack(rows))


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)  # shared through the parse cache
    return array


def bloom_might_contain_many(serialized: str, keys) -> np.ndarray:
    """Vectorised `mightContain` for many keys: a bool per key, False only if the key is surely absent."""
    bit_size, num_hashes, bits = _parse_filter(serialized)
    data, offsets = _key_buffers(_as_utf8_array(keys))
    result = np.zeros(len(offsets) - 1, dtype=bool)

    def test_keys(idx, positions):
        # A dynamic filter contains a key if any one row has all of the key's bits.
        result[idx] = np.logical_and.reduce(bits[:, positions], axis=1).any(axis=0)

    _for_each_hash_batch(data, offsets, bit_size, num_hashes, test_keys)
    return result


def bloom_might_contain(serialized: str, key: str) -> bool:
    """Hudi's `BloomFilter.mightContain` for either filter type (the parsed filter is cached)."""
    return bool(bloom_might_contain_many(serialized, [key])[0])


# ---------------------------------------------------------------------------------------------------------
# Footer

# Java's String.compareTo compares UTF-16 code units, so U+10000.. (surrogates D800-DFFF) sort below
# U+E000..U+FFFF, unlike UTF-8/code-point order. In UTF-8 those two groups differ only in the lead byte
# (EE/EF vs F0-F4; continuation bytes are 80-BF and never meet a lead byte at the first difference), so
# moving F0-F4 just below EE makes plain byte order equal Java's order.
_TO_UTF16_ORDER = np.arange(256, dtype=np.uint8)
_TO_UTF16_ORDER[0xF0:0xF5] = np.arange(0xEE, 0xF3)
_TO_UTF16_ORDER[0xEE:0xF0] = (0xF3, 0xF4)
_FROM_UTF16_ORDER = np.argsort(_TO_UTF16_ORDER).astype(np.uint8)


def record_key_min_max(keys, *, key_order: str = "java") -> tuple[str, str] | None:
    """(min, max) record key in Java `String.compareTo` order ("java", Avro write path) or in Spark
    `UTF8String` byte order ("utf8", Spark row-writer path); None for no keys."""
    array = _as_utf8_array(keys)
    if not len(array):
        return None
    if key_order not in ("java", "utf8"):
        raise ValueError(f"key_order must be 'java' or 'utf8', got {key_order!r}")
    data, offsets = _key_buffers(array)
    if key_order == "utf8" or not (data >= 0xEE).any():  # byte order already equals Java's order
        lo, hi = pc.min_max(array.cast(pa.large_binary())).values()
        return lo.as_py().decode("utf-8"), hi.as_py().decode("utf-8")
    remapped = pa.Array.from_buffers(
        pa.large_binary(),
        len(array),
        [None, pa.py_buffer(offsets - offsets[0]), pa.py_buffer(_TO_UTF16_ORDER[data[offsets[0] : offsets[-1]]])],
    )
    lo, hi = pc.min_max(remapped).values()
    back = [_FROM_UTF16_ORDER[np.frombuffer(v.as_py(), np.uint8)].tobytes().decode("utf-8") for v in (lo, hi)]
    return back[0], back[1]


def bloom_footer(
    keys,
    *,
    filter_type: str = "DYNAMIC_V0",
    num_entries: int = DEFAULT_NUM_ENTRIES,
    fpp: float = DEFAULT_FPP,
    dynamic_max_entries: int = DEFAULT_DYNAMIC_MAX_ENTRIES,
    key_order: str = "java",
) -> dict[str, str]:
    """The footer key/values `HoodieBloomFilterWriteSupport.finalizeMetadata` writes for these keys.

    Like Hudi, the type-code key is written only for DYNAMIC filters and min/max only when there are keys.
    `key_order`: "java" = `String.compareTo` (Avro write path); "utf8" = Spark `UTF8String` byte order,
    which Hudi's row-writer path (clustering/bulk-insert with the row writer) uses. They differ only for
    keys mixing U+E000..U+FFFF with characters above U+FFFF; "java" is the safe one, since the BLOOM
    index prunes files with `String.compareTo` against these bounds.
    """
    array = _as_utf8_array(keys)
    footer = {
        BLOOM_FILTER_FOOTER_KEY: build_bloom_filter(
            array,
            filter_type=filter_type,
            num_entries=num_entries,
            fpp=fpp,
            dynamic_max_entries=dynamic_max_entries,
        )
    }
    if filter_type.startswith("DYNAMIC"):
        footer[BLOOM_FILTER_TYPE_CODE_FOOTER_KEY] = filter_type
    min_max = record_key_min_max(array, key_order=key_order)
    if min_max is not None:
        footer[MIN_RECORD_KEY_FOOTER_KEY], footer[MAX_RECORD_KEY_FOOTER_KEY] = min_max
    return footer
