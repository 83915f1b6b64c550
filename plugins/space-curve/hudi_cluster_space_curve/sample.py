"""Hudi's SAMPLE curve build method (``RangeSampleSort``): the curve is built on range ranks, not raw bytes.

DIRECT feeds a value's leading bytes to the curve, so data that uses only a sliver of its type's range (doubles
in [0, 1), strings sharing a prefix) lands on very few curve cells. SAMPLE fixes that: it samples rows, takes
range boundaries per column from the sample (Spark's ``RangePartitioner.determineBounds``), replaces every value
by its boundary rank (how many boundaries lie below it) and interleaves the ranks. The ranks spread evenly
over the data actually present whatever its type or skew.

Kept from Hudi: ``sample.size`` rows and at most ``sample.size`` ranges per column; rank = number of
boundaries strictly below the value (``RawDecisionBound.getBound``); a null ranks one above the highest value
rank; dimensions follow the sort-column order; ranks are interleaved as equal-width unsigned integers (what
Hudi's ``intTo8Byte`` + ``interleaving`` amount to for non-negative ranks).
Deliberately different: the sample is seeded per group (deterministic, so a retried task writes the same
files); ranks are stretched onto the whole bit range without random jitter (Hudi stretches narrower columns
to the widest one's range, with jitter; see :func:`stretched_ranks`); values are ranked in their type's order
(Hudi compares doubles through ``doubleToLongBits`` as signed longs, reversing the order of negative doubles).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hudi_cluster_core.sdk import hilbert_transposed

_MAX_RANK_BITS = 62  # ranks are shifted inside uint64; sample.size < 2^31 keeps them far below this


def _flat(column) -> pa.Array:
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    return column.dictionary_decode() if pa.types.is_dictionary(column.type) else column


def sample_positions(num_rows: int, sample_size: int, seed: int) -> np.ndarray:
    """Ascending row positions of a uniform sample without replacement (all rows when they are few)."""
    if num_rows <= sample_size:
        return np.arange(num_rows, dtype=np.int64)
    chosen = np.random.default_rng(seed).choice(num_rows, size=sample_size, replace=False)
    return np.sort(chosen).astype(np.int64)


def range_boundaries(sample, max_ranges: int) -> pa.Array:
    """Ascending, distinct cut values splitting the sample's non-null values into up to ``max_ranges`` equal
    shares: Spark's ``determineBounds`` with unit weights (cut where the running count reaches k * step)."""
    values = _flat(sample).drop_null()
    ranges = min(max_ranges, len(values))
    if ranges <= 1:
        return values.slice(0, 0)
    ordered = values.take(pc.sort_indices(values))
    step = len(values) / ranges
    cuts = np.ceil(np.arange(1, ranges) * step).astype(np.int64) - 1
    return pc.unique(ordered.take(pa.array(cuts)))  # first occurrences keep the ascending order


def _numeric_view(column: pa.Array) -> np.ndarray | None:
    """The values as numpy numbers in the type's own order, or None when only Arrow can order them."""
    t = column.type
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t):
        return column.to_numpy(zero_copy_only=False)
    if pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_time(t) or pa.types.is_duration(t):
        return column.cast(pa.int64() if t.bit_width == 64 else pa.int32()).to_numpy(zero_copy_only=False)
    return None


def _ranks_by_merge(values: pa.Array, bounds: pa.Array) -> np.ndarray:
    """Boundaries below each value for types numpy cannot order (strings, binaries, decimals): one Arrow sort of
    boundaries and values together, values before equal boundaries, then a running count of boundaries."""
    n, b = len(values), len(bounds)
    merged = pa.table({
        "v": pa.concat_arrays([bounds.cast(values.type), values]),
        "is_bound": np.concatenate([np.ones(b, np.int8), np.zeros(n, np.int8)]),
    })  # fmt: skip
    order = pc.sort_indices(merged, sort_keys=[("v", "ascending"), ("is_bound", "ascending")]).to_numpy()
    bounds_so_far = np.cumsum(merged.column("is_bound").to_numpy()[order], dtype=np.int64)
    at_value = order >= b
    ranks = np.empty(n, np.int64)
    ranks[order[at_value] - b] = bounds_so_far[at_value]
    return ranks


def boundary_ranks(column, bounds: pa.Array) -> np.ndarray:
    """Rank of every value: the number of ``bounds`` strictly below it (0..len(bounds)); nulls len(bounds)+1."""
    column = _flat(column)
    ranks = np.full(len(column), len(bounds) + 1, np.uint64)
    valid = column.is_valid().to_numpy(zero_copy_only=False) if column.null_count else None
    values = column.filter(valid) if valid is not None else column
    numbers, cuts = _numeric_view(values), _numeric_view(bounds.cast(values.type))
    if numbers is not None and cuts is not None:
        found = np.searchsorted(cuts, numbers, side="left")  # NaN sorts last in both numpy and Arrow
    else:
        found = _ranks_by_merge(values, bounds)
    if valid is None:
        ranks[:] = found
    else:
        ranks[valid] = found
    return ranks


def stretched_ranks(rank_columns: list[np.ndarray], rank_counts: list[int], bits: int) -> list[np.ndarray]:
    """Each column's ranks scaled onto the full ``bits``-bit range (order kept, distinct ranks stay distinct).

    Every dimension then weighs the same in the curve (Hudi stretches to the widest column's range), and a
    rank quantile lands on the curve's binary cell boundaries: the first bit splits the rows in halves, the
    first two in quarters, ... so equal-sized files cover equal cells.
    """
    full = np.uint64(1 << bits)
    return [r * full // np.uint64(count) for r, count in zip(rank_columns, rank_counts)]


def interleaved_words(dims: list[np.ndarray], bits: int) -> list[np.ndarray]:
    """The bits of every dimension interleaved MSB first (top bit of dim 0, of dim 1, ..., next bit ...), as
    big-endian uint64 words: comparing the word lists compares the interleaved keys."""
    rows = len(dims[0])
    words = [np.zeros(rows, np.uint64) for _ in range((len(dims) * bits + 63) // 64)]
    scratch = np.empty(rows, np.uint64)
    position = 0
    for level in range(bits - 1, -1, -1):
        for values in dims:
            np.right_shift(values, np.uint64(level), out=scratch)
            np.bitwise_and(scratch, np.uint64(1), out=scratch)
            np.left_shift(scratch, np.uint64(63 - position % 64), out=scratch)
            np.bitwise_or(words[position // 64], scratch, out=words[position // 64])
            position += 1
    return words


def sample_bounds(sample: pa.Table, columns: list[str], sample_size: int) -> list[pa.Array]:
    """Each sort column's range boundaries, from the sample rows."""
    return [range_boundaries(sample.column(name), sample_size) for name in columns]


def curve_words_from_bounds(table: pa.Table, columns: list[str], layout: str, bounds: list[pa.Array]) -> list[np.ndarray]:
    """Per-row curve keys (uint64 word columns) from fixed boundaries: a row's key depends on the row alone."""
    rank_columns = [boundary_ranks(table.column(name), b) for name, b in zip(columns, bounds)]
    rank_counts = [len(b) + 2 for b in bounds]  # values 0..len(bounds), then the null rank
    bits = max(1, (max(rank_counts) - 1).bit_length())
    if bits > _MAX_RANK_BITS:
        raise ValueError(f"{bits}-bit ranks: lower hoodie.layout.optimize.build.curve.sample.size")
    dims = stretched_ranks(rank_columns, rank_counts, bits)
    if layout == "hilbert":
        dims = hilbert_transposed(dims, bits)  # Skilling's transform; the index interleaves its output
    elif layout != "z-order":
        raise ValueError(f"layout {layout!r}: the SAMPLE method builds z-order or hilbert curves")
    return interleaved_words(dims, bits)


def sample_curve_words(
    table: pa.Table, columns: list[str], layout: str, *, sample_size: int, seed: int
) -> list[np.ndarray]:
    """Per-row curve keys (as uint64 word columns) of the SAMPLE method, for ``layout`` z-order or hilbert."""
    sample = table.select(columns).take(pa.array(sample_positions(table.num_rows, sample_size, seed)))
    return curve_words_from_bounds(table, columns, layout, sample_bounds(sample, columns, sample_size))


def _words_table(words: list[np.ndarray]) -> pa.Table:
    return pa.table({f"w{i}": w for i, w in enumerate(words)})


def _ascending(keys: pa.Table) -> pa.Array:
    return pc.sort_indices(keys, sort_keys=[(name, "ascending") for name in keys.column_names])


@dataclass(frozen=True)
class SampleCurveKey:
    """The SAMPLE curve as the core's sort key (:class:`hudi_cluster_core.run.spill.SortKey`).

    A group sorted in memory samples its own rows (seeded, as :func:`sample_sort_indices`). A group sorted out
    of core first gets ``sample_size`` rows spread evenly over the group (``with_sample``): every row's key is
    then its ranks against those fixed boundaries, so batches, spill files and key ranges agree on the order."""

    columns: list[str]
    layout: str
    sample_size: int
    seed: int
    bounds: tuple[pa.Array, ...] | None = None

    def with_sample(self, rows: pa.Table) -> "SampleCurveKey":
        return replace(self, bounds=tuple(sample_bounds(rows, self.columns, self.sample_size)))

    def keys(self, table: pa.Table) -> pa.Table:
        if self.bounds is None:
            raise ValueError("SampleCurveKey.keys before with_sample: per-row keys need the group's boundaries")
        return _words_table(curve_words_from_bounds(table, self.columns, self.layout, list(self.bounds)))

    def order(self, table: pa.Table) -> pa.Array:
        if self.bounds is None:
            return sample_sort_indices(table, self.columns, self.layout, sample_size=self.sample_size, seed=self.seed)
        return _ascending(self.keys(table))


def sample_sort_indices(table: pa.Table, columns: list[str], layout: str, *, sample_size: int, seed: int) -> pa.Array:
    """Stable row order by the SAMPLE curve key."""
    return _ascending(_words_table(sample_curve_words(table, columns, layout, sample_size=sample_size, seed=seed)))
