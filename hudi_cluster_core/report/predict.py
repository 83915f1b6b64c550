"""Files per query before -> after a plan: the layout after clustering simulated from the footer min/max of the
plan's input files, and the query model of :mod:`.overlap` applied to both.

The simulation (docs/layout-report.md, "Files per query after a plan"):

* files outside the plan keep their ranges;
* **linear** sort: a group's rows are sorted by the sort columns and cut into its planned number of output files,
  so on the first sort column the outputs cover contiguous ranges holding equal shares of the group's rows (the
  rows' values approximated by each input spread evenly over its range); on the other sort columns every output
  spans the whole group's range (within one value of the first column they are sorted, but across an output file
  they are not);
* **z-order / Hilbert**: each input's rows are stood for by sample points spread evenly over its box (its range on
  every sort column, the columns' samples paired at random: a Latin hypercube), the samples of the group are
  put in curve order and cut into the planned number of outputs of equal rows; an output spans its samples'
  range on every column. The order is the layout's own curve when the caller gives it (``curve_order``: the
  sort keys the writer uses, on the samples' values) and the columns are numbers; else a Z-order key of the
  samples' ranks, for both curves. Ordering whole inputs would not do: inputs that all span the same box (rows
  appended at random) would each become an output spanning it too.

Both layouts are measured against the rows as they are (the value distribution of the files before), so the
figures differ only by where the file boundaries fall.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..layout import parse_layout
from .overlap import RANGE_QUERY_FRACTION, expected_files, positions

_SAMPLES = 16  # points per input file standing for its rows when an output's boundaries are placed
_CURVE_BITS = 16
_CURVE_SAMPLES = 256  # points per input file in a curve's simulation, fewer in a group of many files:
_CURVE_SAMPLES_PER_GROUP = 100_000  # ... the group's samples are sorted in memory, once

CurveOrder = Callable[[Mapping[str, np.ndarray]], np.ndarray]
"""Sample values per sort column (int64 or float64 arrays of one length) -> the samples' indices in the order the
layout's curve puts them (the writer's own sort keys)."""


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


def _rank_z_order(samples: Mapping[str, np.ndarray]) -> np.ndarray:
    """Indices of the samples in the order of a Z-order key of their ranks (every column scaled to the same bits)."""
    columns = list(samples)
    bits = max(1, min(_CURVE_BITS, 64 // max(1, len(columns))))
    key = np.zeros(len(next(iter(samples.values()))), dtype=np.uint64)
    scaled = []
    for column in columns:
        values = samples[column]
        ranks = np.unique(values, return_inverse=True)[1].astype(np.uint64)
        top = max(int(ranks.max()) if ranks.size else 0, 1)
        scaled.append(ranks * np.uint64((1 << bits) - 1) // np.uint64(top))
    for bit in range(bits - 1, -1, -1):
        for ranks in scaled:
            key = (key << np.uint64(1)) | ((ranks >> np.uint64(bit)) & np.uint64(1))
    return np.argsort(key, kind="stable")


def _curve_outputs(members: Sequence[Hashable], place: Mapping[str, Mapping[Hashable, tuple[float, float]]],
                   files: Mapping[Hashable, FileRanges], outputs: int,
                   curve_order: CurveOrder | None) -> list[dict[str, tuple[float, float]]]:  # fmt: skip
    """Per output file of a curve-sorted group: its range per column (see the module's docstring)."""
    columns = [c for c in place if any(k in place[c] for k in members)]
    if not members or not columns:
        return []
    per_file = max(4, min(_CURVE_SAMPLES, _CURVE_SAMPLES_PER_GROUP // len(members)))
    rng = np.random.default_rng(len(members))  # the same plan predicts the same figures
    samples: dict[str, np.ndarray] = {}  # in the column's own values: what the curve orders
    places: dict[str, np.ndarray] = {}  # the same samples as positions: what the outputs' ranges are measured in
    numeric = True
    for column in columns:
        spans = place[column]
        # a file without values in a column (all null) is placed at the group's lowest value there
        floor = min(spans[k][0] for k in members if k in spans)
        lows = np.array([spans[k][0] if k in spans else floor for k in members])
        highs = np.array([spans[k][1] if k in spans else floor for k in members])
        strata = rng.permuted(np.tile(np.arange(per_file), (len(members), 1)), axis=1)
        places[column] = values = (lows[:, None] + (highs - lows)[:, None] * (strata + 0.5) / per_file).ravel()
        raw = [files[k].ranges[column] for k in members if column in files[k].ranges]
        if all(type(v) is int for r in raw for v in r):  # noqa: E721 - bool is no number on a curve
            # within int64 (a float's nearest of Long.MAX_VALUE is 2**63, which would wrap to the lowest long)
            samples[column] = np.clip(np.round(values), -(2.0**63), np.nextafter(2.0**63, 0)).astype(np.int64)
        elif all(type(v) in (int, float) and math.isfinite(v) for r in raw for v in r):  # noqa: E721
            samples[column] = values  # positions are the values themselves (not ranks: every value finite)
        else:  # text, dates, decimals: ranks stand in for the curve's own bits
            samples[column], numeric = values, False
    order = curve_order(samples) if curve_order is not None and numeric else _rank_z_order(samples)
    weights = np.repeat([max(files[k].rows, 1) / per_file for k in members], per_file)[order]
    done = np.cumsum(weights) - weights
    chunk = np.minimum(outputs - 1, (done * outputs / weights.sum()).astype(np.int64))
    result = []
    for index in range(outputs):
        chosen = order[chunk == index]
        if chosen.size:
            result.append({c: (float(places[c][chosen].min()), float(places[c][chosen].max())) for c in columns})
    return result


def _partition_figures(files: Mapping[Hashable, FileRanges], groups: Sequence[PlannedRewrite], columns: Sequence[str],
                       curve: bool, curve_order: CurveOrder | None = None,
                       ) -> dict[str, tuple[float, float, float, float, int]]:  # fmt: skip
    """column -> (point before, point after, range before, range after, rows) for one partition's files."""
    result = {}
    place: dict[str, dict[Hashable, tuple[float, float]]] = {}
    for column in columns:
        keys = [k for k, f in files.items() if column in f.ranges]
        values = positions([files[k].ranges[column][0] for k in keys] + [files[k].ranges[column][1] for k in keys])
        place[column] = {k: (values[i], values[len(keys) + i]) for i, k in enumerate(keys)}
    rewritten = {k for g in groups for k in g.inputs if k in files}
    curve_after = [_curve_outputs([k for k in g.inputs if k in files], place, files, max(1, g.outputs), curve_order)
                   if curve else [] for g in groups]  # fmt: skip
    for index, column in enumerate(columns):
        spans = place[column]
        if not spans:
            continue
        keys = list(spans)
        lows, highs = [spans[k][0] for k in keys], [spans[k][1] for k in keys]
        rows = [files[k].rows for k in keys]
        after = [spans[k] for k in keys if k not in rewritten]
        for group, outputs_of_curve in zip(groups, curve_after):
            members = [k for k in group.inputs if k in spans]
            if not members:
                continue
            outputs = max(1, group.outputs)
            if curve:
                after += [ranges[column] for ranges in outputs_of_curve if column in ranges]
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
                            columns: Sequence[str], layout: str = "LINEAR", *, every_partition: bool = False,
                            curve_order: CurveOrder | None = None) -> list[QueryFiles]:  # fmt: skip
    """Point and 1% range query files per column, before and after rewriting ``groups``, over the partitions the
    plan touches (``every_partition``: over all of ``files``' partitions), each partition weighted by its rows (a
    query targets one partition). ``curve_order``: the z-order or Hilbert order of sample values (see the module's
    docstring); without it, a Z-order of their ranks stands in."""
    curve = parse_layout(layout) != "LINEAR"
    touched = {files[k].partition for g in groups for k in g.inputs if k in files}
    if every_partition:
        touched = {f.partition for f in files.values()}
    totals: dict[str, np.ndarray] = {}
    for partition in sorted(touched):
        members = {k: f for k, f in files.items() if f.partition == partition}
        local = [PlannedRewrite(tuple(k for k in g.inputs if k in members), g.outputs) for g in groups]
        for column, (pb, pa, rb, ra, rows) in _partition_figures(members, [g for g in local if g.inputs], columns, curve,
                                                                       curve_order).items():
            totals.setdefault(column, np.zeros(5))
            totals[column] += np.array([pb * rows, pa * rows, rb * rows, ra * rows, rows], dtype=float)
    return [QueryFiles(c, *(float(v / t[4]) for v in t[:4])) for c, t in totals.items() if t[4] > 0]
