"""Key ranges of a clustering group: boundaries from a sample of sort keys, and each row's range.

A group too big for one task's memory, or big enough to keep several cores busy, is cut into ranges of its
sort key. The keys are :func:`hudi_cluster_core.sort.curves.sort_key_table` rows (linear values, or z-order /
Hilbert curve words), which depend on the row alone, so every task of the group computes the same key for a
row and the same boundaries from the same sample. Range ``i`` holds the keys ``b[i-1] <= key < b[i]``: equal
keys always land in one range, so the ranges written one after the other keep the group's sort order.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

Select = Callable[[pa.Table], np.ndarray]  # which rows of a group batch a task writes (a split group's key ranges)


def _ascending(keys: pa.Table) -> list[tuple[str, str]]:
    return [(name, "ascending") for name in keys.column_names]


def choose_boundaries(sample_keys: pa.Table, ranges: int, shares: Sequence[float] | None = None) -> pa.Table:
    """Up to ``ranges - 1`` ascending, distinct key rows that cut ``sample_keys`` into ``ranges`` shares of about
    equal size (fewer when the sample has fewer distinct keys). An empty table means one range. ``shares``: the
    ``ranges - 1`` cuts as ascending fractions of the sample instead (ranges of unequal size)."""
    rows = sample_keys.num_rows
    if ranges <= 1 or rows == 0:
        return sample_keys.slice(0, 0)
    ordered = sample_keys.take(pc.sort_indices(sample_keys, sort_keys=_ascending(sample_keys)))
    fractions = np.arange(1, ranges) / ranges if shares is None else np.asarray(shares, float)
    cuts = np.unique(np.clip(np.ceil(fractions * rows).astype(np.int64), 0, rows - 1))
    candidates = ordered.take(pa.array(cuts))
    # sorted, so equal candidates are neighbours: keep the first (an equal second would make an empty range)
    same_as_previous = np.ones(max(0, len(cuts) - 1), bool)
    for name in candidates.column_names:
        same_as_previous &= _equal_neighbours(candidates.column(name).combine_chunks())
    return candidates.filter(pa.array(np.concatenate([[True], ~same_as_previous])))


def _equal_neighbours(column: pa.Array) -> np.ndarray:
    """``column[i + 1]`` is the same key as ``column[i]``: equal values, both null, or both NaN."""
    if len(column) < 2:
        return np.ones(0, bool)
    later, earlier = column.slice(1), column.slice(0, len(column) - 1)
    same = pc.fill_null(pc.equal(later, earlier), False)
    same = pc.or_(same, pc.and_(later.is_null(), earlier.is_null()))
    if pa.types.is_floating(column.type):  # NaN != NaN in Arrow, but two NaNs are one key
        same = pc.or_(same, pc.fill_null(pc.and_(pc.is_nan(later), pc.is_nan(earlier)), False))
    return same.to_numpy(zero_copy_only=False)


def range_of_rows(keys: pa.Table, boundaries: pa.Table) -> np.ndarray:
    """For every row of ``keys``, the number of ``boundaries`` at or below its key: its range, 0..len(boundaries).

    One Arrow sort of the boundaries and the rows together (a boundary before the rows equal to it), then a
    running count of the boundaries met."""
    b, n = boundaries.num_rows, keys.num_rows
    if b == 0 or n == 0:
        return np.zeros(n, np.int64)
    if boundaries.schema != keys.schema:
        boundaries = boundaries.cast(keys.schema)
    merged = pa.concat_tables([boundaries, keys]).append_column(
        "__row", pa.array(np.concatenate([np.zeros(b, np.int8), np.ones(n, np.int8)]))
    )
    order = pc.sort_indices(merged, sort_keys=_ascending(merged)).to_numpy()
    bounds_so_far = np.cumsum(order < b, dtype=np.int64)
    at_row = order >= b
    ranges = np.empty(n, np.int64)
    ranges[order[at_row] - b] = bounds_so_far[at_row]
    return ranges


def stride_positions(total: int, wanted: int) -> np.ndarray:
    """``wanted`` evenly spaced positions in ``range(total)`` (all of them when there are fewer): a deterministic
    sample, so every task of a group draws the same one."""
    if total <= wanted:
        return np.arange(total, dtype=np.int64)
    return np.unique((np.arange(wanted, dtype=np.int64) * total) // wanted)
