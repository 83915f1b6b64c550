"""Hudi z-order / Hilbert keys: doc examples, pure-Python transcriptions of BinaryUtil and davidmoten's
HilbertCurve as oracles, ordering properties."""

from __future__ import annotations

import datetime
import decimal
import itertools
import math
import struct

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_cluster_core.errors import PlanError
from hudi_cluster_core.io.curves import (
    curve_sort_indices,
    hilbert_keys,
    hilbert_longs,
    hilbert_transposed,
    hudi_dimension_order,
    zorder_keys,
    zorder_words,
)

LONG_MAX = 2**63 - 1

# ---------------------------------------------------------------------------------------------------------
# Oracles (Java semantics with Python ints)


def to_bytes_long(v: int) -> bytes:
    return (v & (2**64 - 1)).to_bytes(8, "big")


def padding_to_8(b: bytes) -> bytes:
    return b[:8] if len(b) >= 8 else bytes(8 - len(b)) + b


def ref_long_to_8(v: int) -> bytes:
    return to_bytes_long(v ^ (1 << 63))


def ref_int_to_8(v: int) -> bytes:
    return padding_to_8(((v ^ (1 << 31)) & 0xFFFFFFFF).to_bytes(4, "big"))


def ref_double_to_8(d: float) -> bytes:
    raw = bytearray(struct.pack(">d", d))
    if d > 0:
        raw[0] ^= 0x80
    if d < 0:
        raw = bytearray(~b & 0xFF for b in raw)
    return bytes(raw)


def ref_interleave(columns: list[bytes]) -> bytes:
    """BinaryUtil.interleaving(columns, 8) bit by bit (bit 0 = MSB of byte 0)."""
    out = bytearray(8 * len(columns))
    pos = 0
    for step in range(64):
        for col in columns:
            bit = (col[step // 8] >> (7 - step % 8)) & 1
            out[pos // 8] |= bit << (7 - pos % 8)
            pos += 1
    return bytes(out)


def java_long(v: int) -> int:
    v &= 2**64 - 1
    return v - 2**64 if v >> 63 else v


def ref_transposed_index(bits: int, point: list[int]) -> list[int]:
    """davidmoten HilbertCurve.transposedIndex, transcribed on (signed) Python ints."""
    m = 1 << (bits - 1)
    x = list(point)
    n = len(x)
    q = m
    while q > 1:
        p = q - 1
        for i in range(n):
            if x[i] & q:
                x[0] ^= p
            else:
                t = (x[0] ^ x[i]) & p
                x[0] ^= t
                x[i] ^= t
        q >>= 1
    for i in range(1, n):
        x[i] ^= x[i - 1]
    t = 0
    q = m
    while q > 1:
        if x[n - 1] & q:
            t ^= q - 1
        q >>= 1
    return [v ^ t for v in x]


def ref_hilbert_index(bits: int, point: list[int]) -> int:
    """HilbertCurve.index = toIndex(transposedIndex(...)): bit (bits-1) of every dim first."""
    x = ref_transposed_index(bits, point)
    index = 0
    for level in range(bits - 1, -1, -1):
        for v in x:
            index = (index << 1) | ((v >> level) & 1)
    return index


def ref_hilbert_bytes(point: list[int]) -> bytes:
    """HilbertCurveUtils.indexBytes(HilbertCurve.bits(63).dimensions(n), point, 63)."""
    index = ref_hilbert_index(63, point)
    as_bytes = index.to_bytes(index.bit_length() // 8 + 1, "big")  # BigInteger.toByteArray, index >= 0
    return as_bytes[:63] if len(as_bytes) >= 63 else bytes(63 - len(as_bytes)) + as_bytes


def double_to_long_bits(d: float) -> int:  # Double.doubleToLongBits: one canonical NaN
    return 0x7FF8000000000000 if math.isnan(d) else struct.unpack(">q", struct.pack(">d", d))[0]


def hexes(words) -> list[str]:
    return [f"{int(w):016x}" for w in words]


# ---------------------------------------------------------------------------------------------------------
# Byte mapping per type (docs/format.md#space-filling-curves, the table)


def test_doc_examples():
    assert hexes(zorder_words(pa.array([-1], pa.int32()))) == ["000000007fffffff"]
    assert hexes(zorder_words(pa.array(["abc"]))) == ["0000000000616263"]
    assert hilbert_longs(pa.array(["abc"])).tolist() == [6382179]


def test_double_sign_rules():
    values = [1.5, -1.5, 0.0, -0.0, float("inf"), float("-inf"), 5e-324]
    words = zorder_words(pa.array(values, pa.float64()))
    assert hexes(words) == [ref_double_to_8(v).hex() for v in values]
    assert hexes(words[:4]) == ["bff8000000000000", "4007ffffffffffff", "0000000000000000", "8000000000000000"]
    # Hudi's quirk: 0.0 maps to all zeros and so sorts below every negative number.
    assert words[2] < words[1]
    nan = zorder_words(pa.array([float("nan")]))
    assert hexes(nan) == [struct.pack(">d", float("nan")).hex()]  # raw bits, unchanged


def test_null_substitutions():
    def z(values, type_):
        return hexes(zorder_words(pa.array(values, type_)))

    assert z([None], pa.int64()) == ["ffffffffffffffff"]  # Long.MAX_VALUE ^ sign
    assert z([None], pa.int32()) == ["00000000ffffffff"]  # Integer.MAX_VALUE
    assert z([None], pa.int16()) == ["0000000080007fff"]  # Short.MAX_VALUE through intTo8Byte
    assert z([None], pa.int8()) == ["000000000000007f"]  # Byte.MAX_VALUE
    assert z([None], pa.float64()) == [ref_double_to_8(1.7976931348623157e308).hex()]
    assert z([None], pa.float32()) == [ref_double_to_8(float(np.finfo(np.float32).max)).hex()]
    assert z([None], pa.string()) == ["0000000000000000"]
    assert z([None], pa.binary()) == ["0000000000000000"]
    assert z([None, True, False], pa.bool_()) == ["0000000080000000", "0000000080000001", "0000000080000000"]
    assert z([None], pa.date32()) == ["ffffffffffffffff"]
    assert z([None], pa.timestamp("us")) == ["ffffffffffffffff"]
    assert z([None], pa.decimal128(10, 2)) == ["ffffffffffffffff"]
    for type_ in (pa.int8(), pa.int32(), pa.int64(), pa.float64(), pa.string(), pa.binary(), pa.date32()):
        assert hilbert_longs(pa.array([None], type_)).tolist() == [LONG_MAX], type_
    assert hilbert_longs(pa.array([None, True, False])).tolist() == [0, LONG_MAX, 0]


def test_integer_and_temporal_mappings():
    assert hexes(zorder_words(pa.array([-1, 0, 5], pa.int64()))) == [ref_long_to_8(v).hex() for v in (-1, 0, 5)]
    assert hexes(zorder_words(pa.array([-7, 7], pa.int16()))) == [ref_int_to_8(v).hex() for v in (-7, 7)]
    assert hexes(zorder_words(pa.array([-1, 1], pa.int8()))) == ["00000000000000ff", "0000000000000001"]
    assert hilbert_longs(pa.array([-1, 1], pa.int8())).tolist() == [255, 1]  # unsigned byte
    assert hilbert_longs(pa.array([-1], pa.int32())).tolist() == [2**64 - 1]  # (long) -1, as bits
    assert hilbert_longs(pa.array([1.5], pa.float32())).tolist() == [0x3FF8000000000000]
    assert hilbert_longs(pa.array([float("nan")], pa.float32())).tolist() == [0x7FF8000000000000]
    day = datetime.date(1970, 1, 2)
    assert hexes(zorder_words(pa.array([day]))) == [ref_long_to_8(86_400_000).hex()]
    assert hilbert_longs(pa.array([day])).tolist() == [86_400_000]
    ts = pa.array([-1, 1999, 1_700_000_000_123_456], pa.timestamp("us", tz="UTC"))
    assert hilbert_longs(ts).tolist() == [2**64 - 1, 1, 1_700_000_000_123]  # floor to millis, like getTime()
    ns = pa.array([1_700_000_000_123_456_789], pa.timestamp("ns"))
    assert hilbert_longs(ns).tolist() == [1_700_000_000_123]
    dec = pa.array([decimal.Decimal(v) for v in ("-1.5", "2.7", "-0.4", "123456789.99")], pa.decimal128(12, 2))
    assert hexes(zorder_words(dec)) == [ref_long_to_8(v).hex() for v in (-1, 2, 0, 123456789)]
    big = pa.array([decimal.Decimal(2**70 + 5), decimal.Decimal(-(2**64) - 3)], pa.decimal128(38, 0))
    assert hilbert_longs(big).tolist() == [5, 2**64 - 3]  # BigDecimal.longValue keeps the low 64 bits


def test_string_and_binary_mappings():
    values = ["", "a", "abcdefgh", "abcdefghijk", "é€", "\U0001f600xyz12"]
    expected = [padding_to_8(v.encode()).hex() for v in values]
    assert hexes(zorder_words(pa.array(values))) == expected
    assert hexes(zorder_words(pa.array(values, pa.large_string()))) == expected
    assert hexes(zorder_words(pa.array(values).dictionary_encode())) == expected
    assert hexes(zorder_words(pa.chunked_array([pa.array(values[:2]), pa.array(values[2:])]))) == expected
    assert hexes(zorder_words(pa.array(["x"] + values)[1:])) == expected  # sliced
    raw = [b"\x01\x02", b"\xff" * 9, b""]
    assert hexes(zorder_words(pa.array(raw, pa.binary()))) == [padding_to_8(b).hex() for b in raw]
    assert hexes(zorder_words(pa.array(raw, pa.large_binary()))) == [padding_to_8(b).hex() for b in raw]
    fixed = pa.array([b"\x01\x02\x03", b"\xff\x00\x01"], pa.binary(3))
    assert hexes(zorder_words(fixed)) == ["0000000000010203", "0000000000ff0001"]
    with pytest.raises(TypeError):
        zorder_words(pa.array([[1]]))


# ---------------------------------------------------------------------------------------------------------
# Vectorised == oracles

longs = st.integers(-(2**63), 2**63 - 1)
edge_longs = st.sampled_from([0, 1, -1, LONG_MAX, -(2**63), 2**62, 2**62 - 1, -(2**62)])


@settings(max_examples=200, deadline=None)
@given(
    st.integers(2, 9).flatmap(
        lambda d: st.lists(st.lists(longs | edge_longs, min_size=d, max_size=d), min_size=1, max_size=12)
    )
)
def test_hilbert_keys_equal_reference(points):
    dims = len(points[0])
    table = pa.table({f"c{j}": pa.array([p[j] for p in points], pa.int64()) for j in range(dims)})
    keys = hilbert_keys(table, table.column_names).to_pylist()
    assert keys == [ref_hilbert_bytes(p) for p in points]


@settings(max_examples=100, deadline=None)
@given(
    bits=st.integers(1, 63),
    points=st.integers(2, 5).flatmap(
        lambda d: st.lists(st.lists(st.integers(0, 2**63 - 1), min_size=d, max_size=d), min_size=1, max_size=8)
    ),
)
def test_hilbert_transform_any_bits_equals_reference(bits, points):
    mask = (1 << bits) - 1
    points = [[v & mask for v in p] for p in points]
    columns = [np.array([p[j] for p in points], np.uint64) for j in range(len(points[0]))]
    vectorised = hilbert_transposed(columns, bits)
    for row, point in enumerate(points):
        reference = [v & ((1 << 64) - 1) for v in ref_transposed_index(bits, point)]
        assert [int(col[row]) & mask for col in vectorised] == [v & mask for v in reference]


@pytest.mark.parametrize("bits,dims", [(1, 2), (3, 2), (4, 2), (2, 3), (3, 3), (2, 4)])
def test_reference_is_a_hilbert_curve(bits, dims):
    """Consecutive indices are unit steps apart and every cell is visited once (validates the oracle)."""
    cells = list(itertools.product(range(1 << bits), repeat=dims))
    by_index = sorted(cells, key=lambda c: ref_hilbert_index(bits, list(c)))
    assert sorted(ref_hilbert_index(bits, list(c)) for c in cells) == list(range(len(cells)))
    for a, b in zip(by_index, by_index[1:]):
        assert sum(abs(x - y) for x, y in zip(a, b)) == 1


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 15).flatmap(
        lambda n: st.tuples(
            st.lists(st.none() | longs, min_size=n, max_size=n),
            st.lists(st.none() | st.floats(allow_nan=True, width=64), min_size=n, max_size=n),
            st.lists(st.none() | st.text(max_size=10), min_size=n, max_size=n),
            st.lists(st.none() | st.integers(-(2**31), 2**31 - 1), min_size=n, max_size=n),
        )
    )
)
def test_zorder_keys_equal_reference(cols):
    ints, doubles, strings, int32s = cols
    table = pa.table(
        {"l": pa.array(ints, pa.int64()), "d": pa.array(doubles, pa.float64()),
         "s": pa.array(strings, pa.string()), "i": pa.array(int32s, pa.int32())}
    )
    keys = zorder_keys(table, ["l", "d", "s", "i"]).to_pylist()
    for row in range(table.num_rows):
        parts = [
            ref_long_to_8(LONG_MAX if ints[row] is None else ints[row]),
            ref_double_to_8(1.7976931348623157e308 if doubles[row] is None else doubles[row]),
            padding_to_8(b"" if strings[row] is None else strings[row].encode()),
            ref_int_to_8(2**31 - 1 if int32s[row] is None else int32s[row]),
        ]
        assert keys[row] == ref_interleave(parts)
    hkeys = hilbert_keys(table, ["l", "d", "s", "i"]).to_pylist()
    for row in range(table.num_rows):
        d, s = doubles[row], strings[row]
        point = [
            LONG_MAX if ints[row] is None else ints[row],
            LONG_MAX if d is None else double_to_long_bits(d),
            LONG_MAX if s is None else java_long(int.from_bytes(padding_to_8(s.encode()), "big")),
            LONG_MAX if int32s[row] is None else int32s[row],
        ]
        assert hkeys[row] == ref_hilbert_bytes(point)


# ---------------------------------------------------------------------------------------------------------
# Ordering properties


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(longs, longs), min_size=2, max_size=40))
def test_zorder_quadrants_sort_by_high_bits(points):
    table = pa.table({"a": [p[0] for p in points], "b": [p[1] for p in points]})
    order = curve_sort_indices(table, ["a", "b"], "z-order").to_pylist()
    # the first two interleaved bits are a's and b's sign-flipped MSBs: quadrant (a>=0, b>=0) -> 3, ...
    quadrants = [2 * (points[i][0] >= 0) + (points[i][1] >= 0) for i in order]
    assert quadrants == sorted(quadrants)


def assert_permutation(indices, n):
    assert sorted(indices.to_pylist()) == list(range(n))


@settings(max_examples=100, deadline=None)
@given(
    st.integers(0, 25).flatmap(
        lambda n: st.tuples(
            st.lists(st.none() | st.integers(-5, 5), min_size=n, max_size=n),
            st.lists(st.none() | st.floats(allow_nan=True, allow_infinity=True), min_size=n, max_size=n),
            st.lists(st.none() | st.text(alphabet="ab\u00e9", max_size=3), min_size=n, max_size=n),
        )
    ),
    st.sampled_from(["linear", "LINEAR", "z-order", "ZORDER", "zorder", "hilbert", "HILBERT"]),
)
def test_sort_indices_are_permutations_and_linear_is_spark_order(cols, layout):
    ints, doubles, strings = cols
    table = pa.table({"i": pa.array(ints, pa.int64()), "d": pa.array(doubles, pa.float64()),
                      "s": pa.array(strings, pa.string())})
    for columns in (["i"], ["i", "d"], ["s", "i", "d"]):
        indices = curve_sort_indices(table, columns, layout)
        assert_permutation(indices, table.num_rows)
        if layout.lower() == "linear" or len(columns) == 1:
            def spark_key(row):  # nulls first, NaN above all numbers, strings by UTF-8 bytes
                out = []
                for c in columns:
                    v = table.column(c)[row].as_py()
                    if v is None:
                        out.append((0, 0, 0))
                    elif isinstance(v, float) and math.isnan(v):
                        out.append((1, 1, 0))
                    else:
                        out.append((1, 0, v.encode() if isinstance(v, str) else v))
                return out
            assert indices.to_pylist() == sorted(range(table.num_rows), key=spark_key)


def test_curve_orders_follow_keys():
    rng = np.random.default_rng(3)
    table = pa.table({"x": rng.integers(-1000, 1000, 500), "y": rng.normal(size=500), "z": rng.integers(0, 9, 500)})
    for layout, key_fn in (("z-order", zorder_keys), ("hilbert", hilbert_keys)):
        keys = key_fn(table, ["x", "y", "z"]).to_pylist()
        order = curve_sort_indices(table, ["x", "y", "z"], layout).to_pylist()
        assert [keys[i] for i in order] == sorted(keys)
        assert order == sorted(range(500), key=lambda i: keys[i])  # stable for ties


def test_layout_names():
    table = pa.table({"a": [2, 1], "b": [1, 2]})
    for name in ("z-order", "Z-Order", "ZORDER", "zorder", "Hilbert", " HILBERT ", "linear"):
        assert_permutation(curve_sort_indices(table, ["a", "b"], name), 2)
    for bad in ("spiral", "Z_ORDER", "z order", ""):  # the spellings hoodie.layout.optimize.strategy rejects
        with pytest.raises(ValueError, match="accepted: LINEAR, ZORDER, HILBERT"):
            curve_sort_indices(table, ["a", "b"], bad)
    with pytest.raises(PlanError, match="sort.columns=a,nope: nope not in the table; columns: a, b"):
        curve_sort_indices(table, ["a", "nope"], "hilbert")


# ---------------------------------------------------------------------------------------------------------
# Dimension order = java.util.HashMap<Integer, StructField> iteration over schema positions


def test_dimension_order_is_schema_position_for_small_tables():
    names = ["_hoodie_commit_time", "a", "b", "c"]
    assert hudi_dimension_order(names, ["c", "a"]) == ["a", "c"]
    table = pa.table({"a": [1, 2, 3], "b": [3.0, -1.0, 2.0]})
    assert zorder_keys(table, ["b", "a"]).equals(zorder_keys(table, ["a", "b"]))
    assert hilbert_keys(table, ["b", "a"]).equals(hilbert_keys(table, ["a", "b"]))


def test_dimension_order_wraps_at_hashmap_capacity():
    names = [f"f{i}" for i in range(40)]
    # capacity 16: position 17 lands in bucket 1, before position 3 (bucket 3)
    assert hudi_dimension_order(names, ["f3", "f17"]) == ["f17", "f3"]
    # same bucket (1 and 17): insertion (sort-column) order
    assert hudi_dimension_order(names, ["f17", "f1"]) == ["f17", "f1"]
    # 13 columns resize the map to 32 buckets: 17 is then its own bucket after 3
    thirteen = [f"f{i}" for i in (17, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14)]
    assert hudi_dimension_order(names, thirteen)[:2] == ["f3", "f4"]
    assert hudi_dimension_order(names, thirteen)[-1] == "f17"
    with pytest.raises(ValueError):
        hudi_dimension_order(names, ["f1", "f1"])


def test_many_dimensions_and_many_batches(monkeypatch):
    """Generic interleave (> 8 columns), Hilbert truncation (>= 8 columns) and the threaded batch path."""
    import hudi_cluster_core.io.curves as curves

    rng = np.random.default_rng(11)
    table = pa.table({f"c{j}": rng.integers(-(2**63), 2**63 - 1, 50, dtype=np.int64) for j in range(10)})
    names = table.column_names
    whole = (zorder_keys(table, names).to_pylist(), hilbert_keys(table, names).to_pylist())
    monkeypatch.setattr(curves, "_ROWS_PER_BATCH", 7)
    monkeypatch.setattr(curves, "_THREADS", 3)
    assert (zorder_keys(table, names).to_pylist(), hilbert_keys(table, names).to_pylist()) == whole
    for row in range(table.num_rows):
        values = [table.column(c)[row].as_py() for c in names]
        assert whole[0][row] == ref_interleave([ref_long_to_8(v) for v in values])
        assert whole[1][row] == ref_hilbert_bytes(values)
    order = curve_sort_indices(table, names[:3], "hilbert").to_pylist()
    keys = hilbert_keys(table, names[:3]).to_pylist()
    assert order == sorted(range(50), key=lambda i: keys[i])


def test_empty_table():
    table = pa.table({"a": pa.array([], pa.int64()), "b": pa.array([], pa.string())})
    assert len(zorder_keys(table, ["a", "b"])) == 0
    assert len(hilbert_keys(table, ["a", "b"])) == 0
    for layout in ("linear", "z-order", "hilbert"):
        assert curve_sort_indices(table, ["a", "b"], layout).to_pylist() == []
