"""``hudi-cluster report``: per partition and column, how much the latest base files overlap and how many files a
query opens; per partition, the file sizes, the small files and the bytes still in log files.

``to_json`` is the machine-readable form other tools read: exactly
``{"partitions": [{"partition", "files", "columns": [{"column", "average_overlap", "max_overlap", "p50", "p75",
"p95", "p99", "point_query_files", "range_query_files"}]}]}``; nothing else goes in it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..byte_units import human_bytes
from ..table import HudiTable
from .file_ranges import FileColumns, Source, read_file_columns
from .overlap import RANGE_QUERY_FRACTION, expected_files, overlap_figures, positions

DEFAULT_SMALL_FILE_BYTES = 100 * 1024**2  # hoodie.parquet.small.file.limit's default: what a writer tops up
SIZE_BINS = 10


@dataclass(frozen=True)
class ColumnFigures:
    column: str
    average_overlap: float
    max_overlap: int
    p50: int
    p75: int
    p95: int
    p99: int
    point_query_files: float
    range_query_files: float


@dataclass(frozen=True)
class PartitionReport:
    partition: str
    files: int
    columns: tuple[ColumnFigures, ...]
    file_sizes: tuple[int, ...]
    small_files: int
    log_bytes: int


@dataclass(frozen=True)
class LayoutReport:
    base_path: str
    source: str  # "footers" or "metadata"
    columns: tuple[str, ...]
    partitions: tuple[PartitionReport, ...]
    spans: dict[tuple[str, str], list[tuple[float, float]]]  # (partition, column) -> files' ranges as positions

    def to_json(self) -> dict:
        return {"partitions": [
            {"partition": p.partition, "files": p.files, "columns": [
                {"column": c.column, "average_overlap": c.average_overlap, "max_overlap": c.max_overlap,
                 "p50": c.p50, "p75": c.p75, "p95": c.p95, "p99": c.p99,
                 "point_query_files": c.point_query_files, "range_query_files": c.range_query_files}
                for c in p.columns]}
            for p in self.partitions]}  # fmt: skip


def column_figures(column: str, files: Sequence[FileColumns]) -> tuple[ColumnFigures, list[tuple[float, float]]] | None:
    """One column's figures over one partition's files (those with values in it), and their ranges as positions."""
    with_values = [f for f in files if column in f.spans]
    figures = overlap_figures([(f.spans[column].low, f.spans[column].high) for f in with_values])
    if figures is None:
        return None
    places = positions([f.spans[column].low for f in with_values] + [f.spans[column].high for f in with_values])
    lows, highs = places[: len(with_values)], places[len(with_values) :]
    rows = [f.rows for f in with_values]
    p50, p75, p95, p99 = figures.percentiles
    return ColumnFigures(column, figures.average, figures.maximum, p50, p75, p95, p99,
                         expected_files(lows, highs, rows), expected_files(lows, highs, rows, RANGE_QUERY_FRACTION),
                         ), list(zip(lows, highs))  # fmt: skip


def build_report(table: HudiTable, columns: Sequence[str] | None = None, source: Source = "auto",
                 as_of: str | None = None, small_file_bytes: int = DEFAULT_SMALL_FILE_BYTES) -> LayoutReport:  # fmt: skip
    files, chosen_columns, used = read_file_columns(table, columns, source, as_of)
    log_bytes: dict[str, int] = {}
    for file_slice in table.view().latest_file_slices(as_of=as_of):
        log_bytes[file_slice.partition] = log_bytes.get(file_slice.partition, 0) + file_slice.log_files_size
    by_partition: dict[str, list[FileColumns]] = {}
    for f in files:
        by_partition.setdefault(f.partition, []).append(f)
    partitions, spans = [], {}
    for partition in sorted(set(by_partition) | set(log_bytes)):
        members = by_partition.get(partition, [])
        figures = []
        for column in chosen_columns:
            found = column_figures(column, members)
            if found is not None:
                figures.append(found[0])
                spans[(partition, column)] = found[1]
        sizes = tuple(sorted(f.size for f in members))
        partitions.append(PartitionReport(partition, len(members), tuple(figures), sizes,
                                          sum(1 for s in sizes if s < small_file_bytes), log_bytes.get(partition, 0)))  # fmt: skip
    return LayoutReport(table.base_path, used, tuple(chosen_columns), tuple(partitions), spans)


def size_histogram(sizes: Sequence[int], bins: int = SIZE_BINS) -> list[tuple[int, int, int]]:
    """(low, high, files) of ``bins`` equal-width bins over the sizes (one bin when all are equal)."""
    if not sizes:
        return []
    low, high = min(sizes), max(sizes)
    if low == high:
        return [(low, high, len(sizes))]
    width = (high - low) / bins
    counts = [0] * bins
    for size in sizes:
        counts[min(int((size - low) / width), bins - 1)] += 1
    return [(int(low + i * width), int(low + (i + 1) * width), n) for i, n in enumerate(counts)]


def report_text(report: LayoutReport, before: LayoutReport | None = None) -> str:
    """The report for a terminal; with ``before``, each figure as before -> after."""
    earlier = {(p.partition, c.column): c for p in (before.partitions if before else ()) for c in p.columns}
    lines = [f"{report.base_path}: {len(report.partitions)} partition(s), ranges from {report.source}"]
    for p in report.partitions:
        lines.append(f"partition {p.partition or '(none)'}: {p.files} base file(s), {p.small_files} small, "
                     f"{human_bytes(sum(p.file_sizes))} in base files, {human_bytes(p.log_bytes)} in log files")  # fmt: skip
        for low, high, n in (b for b in size_histogram(p.file_sizes) if b[2]):
            lines.append(f"  size {human_bytes(low):>9} - {human_bytes(high):>9}  {'#' * min(n, 60)} {n}")
        for c in p.columns:
            was = earlier.get((p.partition, c.column))

            def shown(now: float, then: float | None, digits: int = 2) -> str:
                return f"{then:.{digits}f} -> {now:.{digits}f}" if then is not None else f"{now:.{digits}f}"

            lines.append(f"  {c.column}: overlap avg {shown(c.average_overlap, was.average_overlap if was else None)}, "
                         f"max {shown(c.max_overlap, was.max_overlap if was else None, 0)}, p50/75/95/99 "
                         f"{c.p50}/{c.p75}/{c.p95}/{c.p99}; files per query: point "
                         f"{shown(c.point_query_files, was.point_query_files if was else None)}, 1% range "
                         f"{shown(c.range_query_files, was.range_query_files if was else None)}")  # fmt: skip
    return "\n".join(lines)
