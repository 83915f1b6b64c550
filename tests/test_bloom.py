"""Hudi bloom filter: bit-exact against real Hudi footers and against a pure-Python transcript of Hudi's
classes (MurmurHash, HashFunction, InternalBloomFilter, InternalDynamicBloomFilter)."""

from __future__ import annotations

import base64
import glob
import os
import random
import struct

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_cluster_core.io.bloom import (
    BLOOM_FILTER_FOOTER_KEY,
    BLOOM_FILTER_TYPE_CODE_FOOTER_KEY,
    DEFAULT_DYNAMIC_MAX_ENTRIES,
    DEFAULT_FPP,
    DEFAULT_NUM_ENTRIES,
    MAX_RECORD_KEY_FOOTER_KEY,
    MIN_RECORD_KEY_FOOTER_KEY,
    bloom_footer,
    bloom_might_contain,
    bloom_might_contain_many,
    bloom_sizing,
    build_bloom_filter,
    dynamic_rows_for_keys,
    record_key_min_max,
)

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")  # tests/fixtures/README.md
FIXTURE_FILES = sorted(glob.glob(os.path.join(FIXTURES, "**", "*.parquet"), recursive=True))
FOOTER_KEYS = (
    BLOOM_FILTER_FOOTER_KEY,
    BLOOM_FILTER_TYPE_CODE_FOOTER_KEY,
    MIN_RECORD_KEY_FOOTER_KEY,
    MAX_RECORD_KEY_FOOTER_KEY,
)

# ---------------------------------------------------------------------------------------------------------
# Oracle: Hudi's Java, transcribed with Python ints and explicit 32-bit wrap-around.


def i32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


def ushr(x: int, n: int) -> int:  # Java >>> on int
    return (x & 0xFFFFFFFF) >> n


def java_byte(b: int) -> int:  # byte -> int sign extension
    return b - 256 if b >= 128 else b


def hudi_murmur(data: bytes, seed: int) -> int:
    m, r = 0x5BD1E995, 24
    length = len(data)
    h = i32(seed ^ length)
    len4 = length >> 2
    for i in range(len4):
        i4 = i << 2
        k = java_byte(data[i4 + 3])
        k = i32(k << 8) | data[i4 + 2]
        k = i32(k << 8) | data[i4 + 1]
        k = i32(k << 8) | data[i4]
        k = i32(k * m)
        k = i32(k ^ ushr(k, r))
        k = i32(k * m)
        h = i32(h * m)
        h = i32(h ^ k)
    left = length - (len4 << 2)
    if left != 0:
        if left >= 3:
            h = i32(h ^ i32(java_byte(data[length - 3]) << 16))
        if left >= 2:
            h = i32(h ^ i32(java_byte(data[length - 2]) << 8))
        if left >= 1:
            h = i32(h ^ java_byte(data[length - 1]))
        h = i32(h * m)
    h = i32(h ^ ushr(h, 13))
    h = i32(h * m)
    h = i32(h ^ ushr(h, 15))
    return h


def java_rem(a: int, b: int) -> int:
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def oracle_positions(key: str, bit_size: int, num_hashes: int) -> list[int]:
    data = key.encode("utf-8")
    assert data, "HashFunction rejects empty keys"
    out, seed = [], 0
    for _ in range(num_hashes):
        seed = hudi_murmur(data, seed)
        out.append(abs(java_rem(seed, bit_size)))
    return out


class OracleBloom:
    def __init__(self, bit_size, num_hashes):
        self.bit_size, self.num_hashes, self.bits = bit_size, num_hashes, set()

    def add(self, key):
        self.bits.update(oracle_positions(key, self.bit_size, self.num_hashes))

    def write(self) -> bytes:
        out = bytearray((self.bit_size + 7) // 8)
        for pos in self.bits:
            out[pos >> 3] |= 1 << (pos & 7)
        return struct.pack(">iibi", -1, self.num_hashes, 1, self.bit_size) + bytes(out)


class OracleDynamicBloom:
    """InternalDynamicBloomFilter.add/getActiveStandardBF/write, step by step."""

    def __init__(self, bit_size, num_hashes, nr, max_nr):
        self.bit_size, self.num_hashes, self.nr, self.max_nr = bit_size, num_hashes, nr, max_nr
        self.current, self.reached_max, self.cursor = 0, False, 0
        self.matrix = [OracleBloom(bit_size, num_hashes)]
        self.row_log = []

    def _active(self):
        if self.reached_max:
            row = self.cursor % len(self.matrix)
            self.cursor += 1
            return row
        if self.current >= self.nr and len(self.matrix) * self.nr < self.max_nr:
            return None
        if self.current >= self.nr and len(self.matrix) * self.nr >= self.max_nr:
            self.reached_max = True
            return 0
        return len(self.matrix) - 1

    def add(self, key):
        row = self._active()
        if row is None:
            self.matrix.append(OracleBloom(self.bit_size, self.num_hashes))
            row, self.current = len(self.matrix) - 1, 0
        if key is not None:
            self.matrix[row].add(key)
        self.row_log.append(row)
        self.current += 1

    def write(self) -> bytes:
        head = struct.pack(">iibi", -1, self.num_hashes, 1, self.bit_size)
        head += struct.pack(">iii", self.nr, self.current, len(self.matrix))
        return head + b"".join(row.write() for row in self.matrix)


def oracle_filter(keys, filter_type, num_entries, fpp, max_entries) -> str:
    bit_size, num_hashes = bloom_sizing(num_entries, fpp)
    if filter_type == "SIMPLE":
        bloom = OracleBloom(bit_size, num_hashes)
    else:
        bloom = OracleDynamicBloom(bit_size, num_hashes, num_entries, max_entries)
    for key in keys:
        bloom.add(key)
    return base64.b64encode(bloom.write()).decode()


def java_string_order(s: str) -> bytes:  # String.compareTo compares UTF-16 code units
    return s.encode("utf-16-be")


def decode_header(serialized: str) -> dict:
    raw = base64.b64decode(serialized)
    version, num_hashes, hash_type, bit_size = struct.unpack_from(">iibi", raw)
    out = dict(version=version, num_hashes=num_hashes, hash_type=hash_type, bit_size=bit_size, size=len(raw))
    if len(raw) != 13 + (bit_size + 7) // 8:
        out["nr"], out["current"], out["rows"] = struct.unpack_from(">iii", raw, 13)
    return out


# ---------------------------------------------------------------------------------------------------------
# Real Hudi footers


def read_footer(path):
    meta = pq.read_metadata(path).metadata or {}
    return {k.decode(): v.decode() for k, v in meta.items()}


def test_fixtures_present():
    assert len(FIXTURE_FILES) >= 20, FIXTURES


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: os.path.relpath(p, FIXTURES))
def test_fixture_footer_rebuilt_bit_for_bit(path):
    footer = read_footer(path)
    keys = pq.read_table(path, columns=["_hoodie_record_key"]).column(0)  # file row order
    rebuilt = bloom_footer(keys)
    assert set(rebuilt) == set(FOOTER_KEYS)
    for key in FOOTER_KEYS:
        assert rebuilt[key] == footer[key], key
    # and the defaults Hudi used are the ones we default to
    header = decode_header(footer[BLOOM_FILTER_FOOTER_KEY])
    assert (header["bit_size"], header["num_hashes"], header["nr"]) == (2587966, 30, DEFAULT_NUM_ENTRIES)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: os.path.relpath(p, FIXTURES))
def test_fixture_filters_contain_their_keys_and_only_those(path):
    serialized = read_footer(path)[BLOOM_FILTER_FOOTER_KEY]
    keys = pq.read_table(path, columns=["_hoodie_record_key"]).column(0).to_pylist()
    assert all(bloom_might_contain(serialized, k) for k in keys)
    absent = [f"absent-{i}-{k}" for i, k in enumerate(keys * 50)]
    assert not bloom_might_contain_many(serialized, absent).any()


def test_oracle_reproduces_a_fixture():
    """The oracle itself is checked against Hudi, so the property tests below compare with Hudi's bits."""
    path = next(p for p in FIXTURE_FILES if "ec4ffa51" in p)
    keys = pq.read_table(path, columns=["_hoodie_record_key"]).column(0).to_pylist()
    expected = read_footer(path)[BLOOM_FILTER_FOOTER_KEY]
    assert oracle_filter(keys, "DYNAMIC_V0", DEFAULT_NUM_ENTRIES, DEFAULT_FPP, DEFAULT_DYNAMIC_MAX_ENTRIES) == expected


# ---------------------------------------------------------------------------------------------------------
# Vectorised builder == oracle

key_text = st.text(
    alphabet=st.one_of(
        st.characters(max_codepoint=0x7F),
        st.characters(min_codepoint=0x80, max_codepoint=0x7FF),
        st.characters(min_codepoint=0x800, max_codepoint=0xFFFF, blacklist_categories=("Cs",)),
        st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF),
    ),
    min_size=1,
    max_size=13,
)


@settings(max_examples=150, deadline=None)
@given(
    keys=st.lists(key_text, max_size=45),
    filter_type=st.sampled_from(["DYNAMIC_V0", "SIMPLE"]),
    num_entries=st.integers(1, 9),
    fpp=st.sampled_from([1e-9, 1e-3, 0.3]),
    max_entries=st.integers(-1, 40),
)
def test_vectorised_equals_oracle(keys, filter_type, num_entries, fpp, max_entries):
    kwargs = dict(filter_type=filter_type, num_entries=num_entries, fpp=fpp, dynamic_max_entries=max_entries)
    expected = oracle_filter(keys, filter_type, num_entries, fpp, max_entries)
    assert build_bloom_filter(keys, **kwargs) == expected
    assert build_bloom_filter(pa.array(keys, pa.string()), **kwargs) == expected
    for key in keys:
        assert bloom_might_contain(expected, key)


@pytest.mark.parametrize("length", range(1, 14))
def test_every_tail_length_with_high_bytes(length):
    # bytes >= 0x80 in every position: sign extension in blocks and in Hudi's reversed tail
    rng = random.Random(length)
    keys = ["".join(rng.choice("aZ9é€\U0001F600ÿ") for _ in range(length)) for _ in range(40)]
    keys = [k.encode()[:length].decode("utf-8", "ignore") or "x" for k in keys]
    assert build_bloom_filter(keys, filter_type="SIMPLE", num_entries=50) == oracle_filter(
        keys, "SIMPLE", 50, DEFAULT_FPP, 0
    )


def test_hudi_tail_order_differs_from_hadoop():
    # TXN-013 (7 bytes, 3-byte tail) is in a fixture; this pins the tail order on its own.
    positions = oracle_positions("TXN-013", 2587966, 30)
    footer = bloom_footer(["TXN-013"])[BLOOM_FILTER_FOOTER_KEY]
    raw = base64.b64decode(footer)[25 + 13 :]
    bits = np.unpackbits(np.frombuffer(raw, np.uint8), bitorder="little")
    assert set(np.flatnonzero(bits)) == set(positions)


def test_input_forms_agree():
    keys = [f"key-{i}-é" for i in range(300)]
    expected = build_bloom_filter(keys, num_entries=40, dynamic_max_entries=100)
    chunked = pa.chunked_array([pa.array(keys[:100]), pa.array(keys[100:])[0:200]])
    sliced = pa.array(["pad"] + keys + ["pad"])[1:301]
    dictionary = pa.array(keys).dictionary_encode()
    for form in (pa.array(keys), pa.array(keys, pa.large_string()), chunked, sliced, dictionary, iter(keys)):
        assert build_bloom_filter(form, num_entries=40, dynamic_max_entries=100) == expected


def test_empty_and_null_keys_are_rejected_like_hudi():
    with pytest.raises(ValueError):
        build_bloom_filter(["a", ""])
    with pytest.raises(ValueError):
        build_bloom_filter(pa.array(["a", None]))
    with pytest.raises(ValueError):
        bloom_might_contain(build_bloom_filter(["a"]), "")


def test_no_keys():
    footer = bloom_footer([])
    assert set(footer) == {BLOOM_FILTER_FOOTER_KEY, BLOOM_FILTER_TYPE_CODE_FOOTER_KEY}  # no min/max, as Hudi
    assert decode_header(footer[BLOOM_FILTER_FOOTER_KEY])["rows"] == 1
    assert footer[BLOOM_FILTER_FOOTER_KEY] == oracle_filter([], "DYNAMIC_V0", 60000, 1e-9, 100000)


def test_simple_footer_has_no_type_code():
    footer = bloom_footer(["a", "b"], filter_type="SIMPLE")
    assert set(footer) == {BLOOM_FILTER_FOOTER_KEY, MIN_RECORD_KEY_FOOTER_KEY, MAX_RECORD_KEY_FOOTER_KEY}
    assert decode_header(footer[BLOOM_FILTER_FOOTER_KEY])["size"] == 13 + 323496


# ---------------------------------------------------------------------------------------------------------
# Sizing, false positives, DYNAMIC_V0 growth


def test_default_sizing():
    assert bloom_sizing(DEFAULT_NUM_ENTRIES, DEFAULT_FPP) == (2587966, 30)


def test_false_positive_rate_at_capacity():
    rng = np.random.default_rng(7)
    present = [f"{x:032x}" for x in rng.integers(0, 2**62, DEFAULT_NUM_ENTRIES)]
    serialized = build_bloom_filter(present)
    assert bloom_might_contain_many(serialized, present).all()
    absent = [f"absent-{x:x}" for x in rng.integers(0, 2**62, 10_000)]
    # designed fpp 1e-9: any false positive in 10,000 probes would be a ~1e-5 event
    assert bloom_might_contain_many(serialized, absent).sum() == 0
    assert not any(bloom_might_contain(serialized, k) for k in absent[:200])


@pytest.mark.parametrize(
    "n_keys,rows,current",
    [(1, 1, 1), (60000, 1, 60000), (60001, 2, 1), (120000, 2, 60000), (120001, 2, 60001), (130000, 2, 70000)],
)
def test_dynamic_growth_with_defaults(n_keys, rows, current):
    keys = [f"k{i}" for i in range(n_keys)]
    header = decode_header(build_bloom_filter(keys))
    assert (header["rows"], header["current"], header["nr"]) == (rows, current, 60000)
    assert header["size"] == 25 + rows * (13 + 323496)


def test_dynamic_round_robin_rows_hold_the_right_keys():
    keys = [f"rr-{i}" for i in range(120006)]
    serialized = build_bloom_filter(keys)
    raw = base64.b64decode(serialized)
    row_bits = [
        np.unpackbits(np.frombuffer(raw, np.uint8, 323496, 25 + r * 323509 + 13), bitorder="little") for r in (0, 1)
    ]
    # 0..59999 row 0, 60000..119999 row 1, then row 0 (bound reached), row 0, row 1, row 0, row 1, row 0
    expected_rows = {0: 0, 59999: 0, 60000: 1, 119999: 1, 120000: 0, 120001: 0, 120002: 1, 120003: 0, 120004: 1}
    for index, row in expected_rows.items():
        positions = oracle_positions(keys[index], 2587966, 30)
        assert row_bits[row][positions].all(), index
        assert not row_bits[1 - row][positions].all(), index


@pytest.mark.parametrize("nr", [1, 2, 3, 7, 60000])
@pytest.mark.parametrize("max_nr", [-5, 0, 1, 5, 6, 7, 20, 100000])
def test_dynamic_row_assignment_matches_java_state_machine(nr, max_nr):
    n_keys = min(4 * max(max_nr, nr) + 11, 130001)
    oracle = OracleDynamicBloom(8, 1, nr, max_nr)
    for _ in range(n_keys):
        oracle.add(None)  # rows only
    rows, n_rows, current = dynamic_rows_for_keys(n_keys, nr, max_nr)
    assert rows.tolist() == oracle.row_log
    assert (n_rows, current) == (len(oracle.matrix), oracle.current)


# ---------------------------------------------------------------------------------------------------------
# min / max record key


def test_java_order_differs_from_code_point_order():
    keys = ["\uff21", "\U0001f600", "a"]
    assert record_key_min_max(keys) == ("a", "\uff21")  # U+1F600 is D83D DE00 in UTF-16: below U+FF21
    assert record_key_min_max(["\uff21", "\U0001f600"]) == ("\U0001f600", "\uff21")
    assert record_key_min_max(["\uff21", "\U0001f600"], key_order="utf8") == ("\uff21", "\U0001f600")


@settings(max_examples=200, deadline=None)
@given(st.lists(key_text | st.text(min_size=1, max_size=4), min_size=1, max_size=30))
def test_min_max_is_java_string_order(keys):
    assert record_key_min_max(keys) == (min(keys, key=java_string_order), max(keys, key=java_string_order))
    assert record_key_min_max(keys, key_order="utf8") == (min(keys), max(keys))
    footer = bloom_footer(keys, num_entries=5)
    assert footer[MIN_RECORD_KEY_FOOTER_KEY] == min(keys, key=java_string_order)
    assert footer[MAX_RECORD_KEY_FOOTER_KEY] == max(keys, key=java_string_order)


def test_threaded_small_batches_equal_oracle(monkeypatch):
    import hudi_cluster_core.io.bloom as bloom

    monkeypatch.setattr(bloom, "_BATCH_KEYS", 5)
    monkeypatch.setattr(bloom, "_HASH_THREADS", 3)
    rng = random.Random(5)
    keys = ["".join(rng.choice("xyzé€\U0001F600") for _ in range(rng.randint(1, 30))) for _ in range(400)]
    keys += [f"{i:08d}" for i in range(100)]  # equal-length, back-to-back keys: the reshape path
    expected = oracle_filter(keys, "DYNAMIC_V0", 90, 1e-4, 300)
    assert build_bloom_filter(keys, num_entries=90, fpp=1e-4, dynamic_max_entries=300) == expected
    assert bloom_might_contain_many(expected, keys).all()
