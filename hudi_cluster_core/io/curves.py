"""Sort orders of Hudi's layout optimisation: linear, and space-curve keys (DIRECT build method) byte for byte.

Facts (docs/format.md#space-filling-curves; Hudi `SpaceCurveSortingHelper`, `BinaryUtil`, `HilbertCurveUtils`;
davidmoten `HilbertCurve`):

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
import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..config.sort_columns import check_sort_columns
from ..errors import PlanError
from ..layout import Curve, curve_name, parse_layout  # noqa: F401 - parse_layout re-exported: the one layout parser
from .curve_bits import HILBERT_BITS, HILBERT_INDEX_BYTES, hilbert_transposed  # noqa: F401 - re-exported
from .curve_bits import hilbert_index_bytes, interleave_bytes
from .curve_values import LONG_MAX, flat, hilbert_longs, zorder_words  # noqa: F401 - re-exported

# The curve's parts live by concept: values -> words (curve_values), words -> index bytes (curve_bits); this
# module orders rows by them.
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
    return _batched_rows(words, interleave_bytes, 8 * len(ordered))


def _hilbert_matrix(table: pa.Table, columns: list[str], field_names: list[str] | None = None) -> np.ndarray:
    ordered = _curve_columns(table, columns, field_names)
    longs = np.stack([hilbert_longs(table.column(c)) for c in ordered], axis=1)
    return _batched_rows(longs, hilbert_index_bytes, HILBERT_INDEX_BYTES)


def zorder_keys(table: pa.Table, columns: list[str]) -> pa.Array:
    """Hudi's z-order value per row: binary of 8 * len(columns) bytes, compared unsigned-lexicographically."""
    return _as_binary_array(_zorder_matrix(table, columns))


def hilbert_keys(table: pa.Table, columns: list[str]) -> pa.Array:
    """Hudi's Hilbert value per row: binary of 63 bytes (`HilbertCurve.bits(63)` index, Hudi's padding)."""
    return _as_binary_array(_hilbert_matrix(table, columns))


def _linear_keys(table: pa.Table, columns: list[str]) -> pa.Table:
    """Spark's ascending sort keys: per column its validity (nulls first), then its values (Arrow puts NaN
    above every number, as Spark does). Explicit validity keys avoid Arrow's null placement, which would also
    move NaNs to the front."""
    keys: dict[str, pa.Array] = {}
    for n, name in enumerate(columns):
        column = flat(table.column(name))
        keys[f"v{n}"] = column.is_valid()
        keys[f"k{n}"] = column
    return pa.table(keys)


def _curve_words(table: pa.Table, columns: list[str], curve: Curve, field_names: list[str] | None) -> np.ndarray:
    """The curve bytes of every row as (rows, words) big-endian uint64 words (zero-padded to whole words)."""
    if curve == "z-order":
        matrix = _zorder_matrix(table, columns, field_names)
    else:
        matrix = _hilbert_matrix(table, columns, field_names)
        if len(columns) <= 7:  # only the last 8 * dims bytes can be non-zero (see hilbert_index_bytes)
            matrix = matrix[:, HILBERT_INDEX_BYTES - 8 * len(columns) :]
    rows, width = matrix.shape
    if width % 8:
        matrix = np.concatenate([matrix, np.zeros((rows, 8 - width % 8), np.uint8)], axis=1)
    return np.ascontiguousarray(matrix).view(">u8")


def curve_sort_indices(table: pa.Table, columns: list[str], layout: str) -> pa.Array:
    """Row indices in the order Hudi's layout optimisation writes them (stable for equal keys).

    ``layout``: any spelling :func:`hudi_cluster_core.layout.parse_layout` accepts (ValueError otherwise)."""
    curve: Curve = curve_name(layout)
    columns = list(columns)
    if not columns:
        return pa.array(np.arange(table.num_rows, dtype=np.uint64))
    check_sort_columns(columns, table.schema.names, error=PlanError)
    if curve == "linear" or len(columns) == 1:
        keys = _linear_keys(table, columns)
        return pc.sort_indices(keys, sort_keys=[(name, "ascending") for name in keys.column_names])
    # Arrow sorts by the words column after column (constant words dropped), several times faster than
    # comparing binaries or numpy's lexsort.
    words = _curve_words(table, columns, curve, None)
    rows = len(words)
    varying = [k for k in range(words.shape[1]) if rows and (words[:, k] != words[0, k]).any()]
    if not varying:
        return pa.array(np.arange(rows, dtype=np.uint64))
    by_word = pa.table({f"w{k}": words[:, k].astype(np.uint64) for k in varying})
    return pc.sort_indices(by_word, sort_keys=[(f"w{k}", "ascending") for k in varying])


def sort_key_table(
    table: pa.Table, columns: list[str], layout: str = "linear", *, field_names: list[str] | None = None
) -> pa.Table:
    """The sort key of every row as plain columns whose ascending lexicographic order is :func:`sort_rows`'s order.

    Linear (or one column): per sort column its validity (nulls first) then its values. Z-order/Hilbert: the
    curve bytes as big-endian uint64 words. A row's key depends on that row alone (DIRECT curves take the
    values' own bits, no per-batch normalisation), so keys of different batches, tasks and samples of one group
    compare consistently. ``field_names``: the full record schema's names when ``table`` holds only some columns
    (Hudi's curve dimension order follows the columns' schema positions)."""
    curve: Curve = curve_name(layout)
    columns = list(columns)
    if curve == "linear" or len(columns) == 1:
        return _linear_keys(table, columns)
    words = _curve_words(table, columns, curve, field_names)
    return pa.table({f"w{k}": words[:, k].astype(np.uint64) for k in range(words.shape[1])})


def sort_rows(table: pa.Table, columns: list[str], layout: str = "linear") -> pa.Table:
    """``table`` ordered by ``columns`` in ``layout`` (Spark's order for linear: nulls first, NaN last; Hudi's
    curve bytes for z-order and Hilbert); unchanged when no columns are given."""
    if not columns or table.num_rows < 2:
        return table
    return table.take(curve_sort_indices(table, columns, layout))
