"""How much the files of one partition overlap on one column, and how many files a query on it must open.

Two sets of figures, both from each file's [min, max] on the column (docs/layout-report.md defines them):

* :func:`overlap_figures`: Apache Hudi's own, as its ``show_metadata_column_stats_overlap`` procedure
  (``ShowColumnStatsOverlapProcedure``) computes them: for every distinct min or max value of the files, the number
  of files whose range covers it; their average, their maximum and four percentiles taken by index.
* :func:`expected_files`: the expected number of files a point query, or a range query spanning a fraction of
  the column's span, must open when the queried value is drawn from the column's values as the files' ranges
  approximate them (each file's rows spread evenly over its range).

Values are compared in the column's own order; :func:`positions` turns them into numbers (the values themselves
when numeric, else their rank among the distinct values), on which the query model measures spans.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np

PERCENTILES = (50, 75, 95, 99)
RANGE_QUERY_FRACTION = 0.01  # a "1% range query" spans 1% of the column's span in the partition
_CHUNK = 256  # query windows evaluated at once: bounds the (windows x files) matrix to a few MB


@dataclass(frozen=True)
class OverlapFigures:
    """Hudi's overlap figures of one column in one partition."""

    average: float
    maximum: int
    percentiles: tuple[int, int, int, int]  # 50th, 75th, 95th, 99th
    values: int  # distinct min/max values counted ("Total value number")


def _percentile(counts: list[int], percentile: int) -> int:
    """The count at index ``floor(p / 100 * (n - 1))`` of the ascending counts: no interpolation, as Hudi does."""
    return counts[int(percentile / 100.0 * (len(counts) - 1))]


def overlap_figures(ranges: Sequence[tuple[Any, Any]]) -> OverlapFigures | None:
    """Hudi's overlap figures of files' (min, max) ranges, values in the column's order; None without a range.

    A sweep over the min and max points in value order (a min before a max of the same value) keeps the number
    of open ranges; each distinct value records the count once: at a min, the count after every min of that value;
    at a value that is only a max, the count before the range closes. Both are the number of files whose range
    covers the value."""
    points = sorted([(low, 0) for low, _ in ranges] + [(high, 1) for _, high in ranges], key=lambda p: (p[0], p[1]))
    if not points:
        return None
    counts: dict[Any, int] = {}
    current = maximum = 0
    for value, is_max in points:
        if not is_max:
            current += 1
            maximum = max(maximum, current)
            counts[value] = current
        else:
            counts.setdefault(value, current)
            current -= 1
    ordered = sorted(counts.values())
    p50, p75, p95, p99 = (_percentile(ordered, p) for p in PERCENTILES)
    return OverlapFigures(sum(ordered) / len(ordered), maximum, (p50, p75, p95, p99), len(ordered))


def _number(value: Any) -> float | None:
    """A value's place on a numeric axis, or None for a value without one (strings, bytes)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, Decimal)):
        return float(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None  # NaN and infinities have no span: ranks instead
    if isinstance(value, dt.datetime):
        return value.timestamp()
    if isinstance(value, dt.date):
        return float(value.toordinal())
    return None


def positions(values: Sequence[Any]) -> list[float]:
    """Numbers for ``values`` (all of one column, in its order): the values themselves when every one is numeric
    (dates as days, timestamps as seconds), else each value's rank among the distinct values, so spans of strings
    are measured in distinct boundaries."""
    numbers = [_number(v) for v in values]
    if all(n is not None for n in numbers):
        return [float(n) for n in numbers]  # type: ignore[arg-type]
    rank = {v: float(i) for i, v in enumerate(sorted(set(values)))}
    return [rank[v] for v in values]


def expected_files(lows: Sequence[float], highs: Sequence[float], rows: Sequence[int], fraction: float = 0.0,
                   *, windows: tuple[Sequence[float], Sequence[float]] | None = None) -> float:  # fmt: skip
    """The expected number of files a query opens: the value ``v`` is drawn from the mixture of the files'
    rows, each file's rows spread evenly over its [low, high] (all at ``low`` when low == high), weighted by its
    row count; the query covers [v - w/2, v + w/2] with ``w = fraction`` of the span (max high - min low); a file
    is opened when its range meets the query, i.e. ``v`` lies in [low - w/2, high + w/2].

    ``windows`` (lows, highs) counts other files against the same value distribution (a layout after
    clustering, measured against the rows as they are)."""
    low, high = np.asarray(lows, dtype=float), np.asarray(highs, dtype=float)
    if low.size == 0:
        return 0.0
    weight = np.asarray(rows, dtype=float)
    weight = weight / weight.sum() if weight.sum() > 0 else np.full(low.size, 1.0 / low.size)
    half = fraction * float(high.max() - low.min()) / 2
    window_low, window_high = (low, high) if windows is None else (np.asarray(windows[0], float), np.asarray(windows[1], float))
    width = high - low
    spread = width > 0
    safe_width = np.where(spread, width, 1.0)
    total = 0.0
    for start in range(0, window_low.size, _CHUNK):
        lo = (window_low[start : start + _CHUNK] - half)[:, None]
        hi = (window_high[start : start + _CHUNK] + half)[:, None]
        covered = np.clip(np.minimum(hi, high) - np.maximum(lo, low), 0.0, None) / safe_width
        at_point = (low >= lo) & (low <= hi)
        total += float((np.where(spread, covered, at_point) @ weight).sum())
    return total
