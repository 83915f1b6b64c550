"""Files per query before -> after a plan: the layout after clustering simulated from the footer min/max of the
plan's input files, and the query model of :mod:`.overlap` applied to both.

The simulation (docs/layout-report.md, "Files per query after a plan"):

* files outside the plan keep their ranges;
* **linear** sort: a group's rows are sorted by the sort columns and cut into its planned number of output files,
  so on the first sort column the outputs cover contiguous ranges holding equal shares of the group's rows (the
  rows' values approximated by each input spread evenly over its range); on the other sort columns every output
  spans the whole group's range (within one value of the first column they are sorted, but across an output file
  they are not);
* **z-order / Hilbert**: the inputs are put in the order of their range midpoints along the curve (a Z-order key
  of the midpoints' ranks within the group, for both curves) and cut into the planned number of outputs of equal
  rows; an output spans the union of its inputs' ranges on every column.

Both layouts are measured against the rows as they are (the value distribution of the files before), so the
figures differ only by where the file boundaries fall.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..layout import parse_layout
from .overlap import RANGE_QUERY_FRACTION, expected_files, positions

_SAMPLES = 16  # points per input file standing for its rows when an output's boundaries are placed
_CURVE_BITS = 16


@dataclass(frozen=True)
class FileRanges:
    """One base file: its partition, row count and (min, max) per column (columns without values left out)."""

    partition: str
    rows: int
    ranges: Mapping[str, tuple[Any, Any]]


@dataclass(frozen=True)
class PlannedRewrite:
    """One group of a plan: the keys of its input files and its number of output files."""

    inputs: tuple[Hashable, ...]
    outputs: int


@dataclass(frozen=True)
class QueryFiles:
    """Expected files a query on ``column`` opens (row-weighted over partitions), before and after the plan."""

    column: str
    point_before: float
    point_after: float
    range_before: float
    range_after: float

    def to_json(self) -> dict[str, Any]:
        return {"column": self.column, "point_query_files": [self.point_before, self.point_after],
                "range_query_files": [self.range_before, self.range_after]}  # fmt: skip


def _split_by_rows(lows: np.ndarray, highs: np.ndarray, rows: np.ndarray, outputs: int) -> list[tuple[float, float]]:
    """Contiguous ranges of equal row shares of inputs spread evenly over their ranges."""
    steps = (np.arange(_SAMPLES) + 0.5) / _SAMPLES
    points = (lows[:, None] + (highs - lows)[:, None] * steps[None, :]).ravel()
    weights = np.repeat(np.maximum(rows, 1) / _SAMPLES, _SAMPLES)
    order = np.argsort(points, kind="stable")
    points, cumulative = points[order], np.cumsum(weights[order])
    cuts = np.interp(np.arange(1, outputs) / outputs * cumulative[-1], cumulative, points)
    bounds = [float(lows.min()), *map(float, cuts), float(highs.max())]
    return [(bounds[i], bounds[i + 1]) for i in range(outputs)]


def _z_key(ranks: Sequence[int]) -> int:
    key = 0
    for bit in range(_CURVE_BITS - 1, -1, -1):
        for rank in ranks:
            key = (key << 1) | ((rank >> bit) & 1)
    return key


def _curve_chunks(members: list[Hashable], mids: Mapping[str, Mapping[Hashable, float]], rows: Mapping[Hashable, int],
                  outputs: int) -> list[list[Hashable]]:  # fmt: skip
    """The members in curve order, cut into ``outputs`` runs of about equal rows."""
    scale = (1 << _CURVE_BITS) - 1
    ranks: dict[Hashable, list[int]] = {m: [] for m in members}
    for column_mids in mids.values():
        values = sorted({column_mids.get(m, 0.0) for m in members})
        place = {v: i for i, v in enumerate(values)}
        for m in members:
            ranks[m].append(place[column_mids.get(m, 0.0)] * scale // max(len(values) - 1, 1))
    ordered = sorted(members, key=lambda m: (_z_key(ranks[m]), str(m)))
    total, done = sum(max(rows[m], 1) for m in ordered), 0
    chunks: list[list[Hashable]] = [[] for _ in range(outputs)]
    for m in ordered:
        chunks[min(outputs - 1, int(done * outputs / total))].append(m)
        done += max(rows[m], 1)
    return [c for c in chunks if c]


def _partition_figures(files: Mapping[Hashable, FileRanges], groups: Sequence[PlannedRewrite], columns: Sequence[str],
                       curve: bool) -> dict[str, tuple[float, float, float, float, int]]:  # fmt: skip
    """column -> (point before, point after, range before, range after, rows) for one partition's files."""
    result = {}
    place: dict[str, dict[Hashable, tuple[float, float]]] = {}
    for column in columns:
        keys = [k for k, f in files.items() if column in f.ranges]
        values = positions([files[k].ranges[column][0] for k in keys] + [files[k].ranges[column][1] for k in keys])
        place[column] = {k: (values[i], values[len(keys) + i]) for i, k in enumerate(keys)}
    rewritten = {k for g in groups for k in g.inputs if k in files}
    for index, column in enumerate(columns):
        spans = place[column]
        if not spans:
            continue
        keys = list(spans)
        lows, highs = [spans[k][0] for k in keys], [spans[k][1] for k in keys]
        rows = [files[k].rows for k in keys]
        after = [spans[k] for k in keys if k not in rewritten]
        for group in groups:
            members = [k for k in group.inputs if k in spans]
            if not members:
                continue
            outputs = max(1, group.outputs)
            if curve:
                mids = {c: {k: sum(place[c][k]) / 2 for k in group.inputs if k in place[c]} for c in columns}
                chunks = _curve_chunks([k for k in group.inputs if k in files], mids, {k: files[k].rows for k in files}, outputs)
                after += [(min(spans[k][0] for k in chunk if k in spans), max(spans[k][1] for k in chunk if k in spans))
                          for chunk in chunks if any(k in spans for k in chunk)]  # fmt: skip
            elif index == 0:
                after += _split_by_rows(np.array([spans[k][0] for k in members]), np.array([spans[k][1] for k in members]),
                                        np.array([files[k].rows for k in members], dtype=float), outputs)  # fmt: skip
            else:
                whole = (min(spans[k][0] for k in members), max(spans[k][1] for k in members))
                after += [whole] * outputs
        windows = ([a for a, _ in after], [b for _, b in after])
        result[column] = (expected_files(lows, highs, rows), expected_files(lows, highs, rows, windows=windows),
                          expected_files(lows, highs, rows, RANGE_QUERY_FRACTION),
                          expected_files(lows, highs, rows, RANGE_QUERY_FRACTION, windows=windows), sum(rows))  # fmt: skip
    return result


def predict_files_per_query(files: Mapping[Any, FileRanges], groups: Sequence[PlannedRewrite],
                            columns: Sequence[str], layout: str = "LINEAR", *,
                            every_partition: bool = False) -> list[QueryFiles]:  # fmt: skip
    """Point and 1% range query files per column, before and after rewriting ``groups``, over the partitions the
    plan touches (``every_partition``: over all of ``files``' partitions), each partition weighted by its rows (a
    query targets one partition)."""
    curve = parse_layout(layout) != "LINEAR"
    touched = {files[k].partition for g in groups for k in g.inputs if k in files}
    if every_partition:
        touched = {f.partition for f in files.values()}
    totals: dict[str, np.ndarray] = {}
    for partition in sorted(touched):
        members = {k: f for k, f in files.items() if f.partition == partition}
        local = [PlannedRewrite(tuple(k for k in g.inputs if k in members), g.outputs) for g in groups]
        for column, (pb, pa, rb, ra, rows) in _partition_figures(members, [g for g in local if g.inputs], columns, curve).items():
            totals.setdefault(column, np.zeros(5))
            totals[column] += np.array([pb * rows, pa * rows, rb * rows, ra * rows, rows], dtype=float)
    return [QueryFiles(c, *(float(v / t[4]) for v in t[:4])) for c, t in totals.items() if t[4] > 0]
