"""The SAMPLE build method: boundaries from the sample, ranks monotone in value, curve keys on ranks."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_cluster_core.sort.curves import hilbert_transposed

from hudi_cluster_space_curve.sample import (
    boundary_ranks, interleaved_words, range_boundaries, sample_curve_words, sample_positions, stretched_ranks,
)  # fmt: skip

FLOATS = st.lists(st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True, width=64)), max_size=300)
INTS = st.lists(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)), max_size=300)
TEXTS = st.lists(st.one_of(st.none(), st.text(max_size=12)), max_size=300)


def _order_key(value):
    """Spark's ascending order of non-null values: NaN above every number, -0.0 equal to 0.0."""
    if isinstance(value, float) and math.isnan(value):
        return (1, 0.0)
    return (0, value)


def _check_monotone(values, arrow_type, sample_size):
    column = pa.array(values, arrow_type)
    bounds = range_boundaries(column.take(pa.array(sample_positions(len(values), sample_size, seed=7))), sample_size)
    ranks = boundary_ranks(column, bounds)
    null_rank = len(bounds) + 1
    present = sorted(((_order_key(v), int(r)) for v, r in zip(values, ranks) if v is not None))
    for (key_a, rank_a), (key_b, rank_b) in zip(present, present[1:]):
        assert rank_a <= rank_b, (key_a, rank_a, key_b, rank_b)
        if key_a == key_b:
            assert rank_a == rank_b, "equal values must share a rank"
    assert all(r <= len(bounds) for _, r in present)
    assert all(int(r) == null_rank for v, r in zip(values, ranks) if v is None)
    # the rank is the number of boundaries strictly below the value
    cuts = [_order_key(b) for b in bounds.to_pylist()]
    for key, rank in present:
        assert rank == sum(c < key for c in cuts)


@settings(max_examples=150, deadline=None)
@given(FLOATS, st.integers(1, 50))
def test_float_ranks_are_monotone_in_value(values, sample_size):
    _check_monotone(values, pa.float64(), sample_size)


@settings(max_examples=100, deadline=None)
@given(INTS, st.integers(1, 50))
def test_integer_ranks_are_monotone_in_value(values, sample_size):
    _check_monotone(values, pa.int64(), sample_size)


@settings(max_examples=100, deadline=None)
@given(TEXTS, st.integers(1, 50))
def test_string_ranks_are_monotone_in_value(values, sample_size):
    _check_monotone(values, pa.string(), sample_size)


def test_boundaries_are_ascending_distinct_sample_values():
    values = pa.array(np.random.default_rng(1).integers(0, 1000, 5000))
    bounds = range_boundaries(values, 100)
    cuts = bounds.to_numpy()
    assert len(cuts) <= 99 and np.all(np.diff(cuts) > 0)
    assert set(cuts) <= set(values.to_numpy())
    # equal shares: every range holds about 1% of the values
    shares = np.bincount(boundary_ranks(values, bounds).astype(np.int64)) / len(values)
    assert shares.max() < 0.02


def test_low_cardinality_and_all_null_columns():
    assert range_boundaries(pa.array([None, None], pa.float64()), 10).to_pylist() == []
    assert boundary_ranks(pa.array([None, None], pa.float64()), pa.array([], pa.float64())).tolist() == [1, 1]
    booleans = pa.array([True, False, None, True])
    assert boundary_ranks(booleans, range_boundaries(booleans, 10)).tolist() == [1, 0, 3, 1]  # bounds [false, true]; null: len + 1


def test_sample_is_deterministic_per_seed_and_all_rows_when_few():
    assert sample_positions(10, 20, seed=3).tolist() == list(range(10))
    first, again, other = (sample_positions(100_000, 500, seed=s) for s in (3, 3, 4))
    assert np.array_equal(first, again) and not np.array_equal(first, other)
    assert len(np.unique(first)) == 500 and np.all(np.diff(first) > 0)


def test_stretch_keeps_order_and_fills_the_bit_range():
    wide, narrow = np.arange(10, dtype=np.uint64), np.array([0, 1, 2, 1], np.uint64)
    scaled_wide, scaled_narrow = stretched_ranks([wide, narrow], [10, 3], bits=4)
    assert scaled_wide.tolist() == [0, 1, 3, 4, 6, 8, 9, 11, 12, 14]
    assert scaled_narrow.tolist() == [0, 5, 10, 5]


def _interleave_reference(values: list[int], bits: int) -> int:
    key = 0
    for level in range(bits - 1, -1, -1):
        for v in values:
            key = (key << 1) | ((v >> level) & 1)
    return key


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 5), st.integers(1, 30), st.data())
def test_interleaved_words_match_bit_by_bit_reference(dims, bits, data):
    rows = data.draw(st.lists(st.lists(st.integers(0, 2**bits - 1), min_size=dims, max_size=dims), min_size=1, max_size=20))
    columns = [np.array([r[d] for r in rows], np.uint64) for d in range(dims)]
    words = interleaved_words(columns, bits)
    width = 64 * len(words)
    for i, row in enumerate(rows):
        got = 0
        for w in words:
            got = (got << 64) | int(w[i])
        assert got == _interleave_reference(row, bits) << (width - dims * bits)


@pytest.mark.parametrize("bits", [1, 3, 5])
def test_hilbert_on_ranks_visits_neighbouring_cells(bits):
    """On a full grid, consecutive Hilbert keys (the core's transform, our interleave) are adjacent cells."""
    side = 1 << bits
    x, y = (a.ravel().astype(np.uint64) for a in np.meshgrid(np.arange(side), np.arange(side)))
    words = interleaved_words(hilbert_transposed([x, y], bits), bits)
    order = np.argsort(words[0], kind="stable")
    steps = np.abs(np.diff(x[order].astype(np.int64))) + np.abs(np.diff(y[order].astype(np.int64)))
    assert np.all(steps == 1)
    assert len(np.unique(words[0])) == side * side


def test_sample_zorder_is_interleaved_ranks_in_sort_column_order():
    rng = np.random.default_rng(5)
    table = pa.table({"a": rng.random(2000), "b": rng.integers(0, 50, 2000)})
    words = sample_curve_words(table, ["b", "a"], "z-order", sample_size=300, seed=9)
    ranks = []
    counts = []
    positions = pa.array(sample_positions(2000, 300, seed=9))
    for name in ("b", "a"):
        bounds = range_boundaries(table.column(name).take(positions), 300)
        ranks.append(boundary_ranks(table.column(name), bounds))
        counts.append(len(bounds) + 2)
    bits = (max(counts) - 1).bit_length()
    dims = stretched_ranks(ranks, counts, bits)
    for i in range(0, 2000, 97):
        assert int(words[0][i]) >> (64 - 2 * bits) == _interleave_reference([int(dims[0][i]), int(dims[1][i])], bits)
