"""Files per query on a plan's sort columns, before -> after: predicted for a plan (a dry run), measured once it
has run (the new files' footers). Only the partitions the plan rewrites count; footers only, no data read."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from ..config.catalogue import SORT_COLUMNS, column_names
from ..plan.avro_plan import StoredPlan
from ..plan.footer_stats import footer_stats_provider
from ..table import FileGroupId, HudiTable
from .overlap import RANGE_QUERY_FRACTION, expected_files, positions
from .predict import CurveOrder, FileRanges, PlannedRewrite, QueryFiles, predict_files_per_query


def _sort_columns(plan: StoredPlan) -> list[str]:
    text = plan.strategy_params.get(SORT_COLUMNS)
    return list(column_names(text)) if text else []


def _file_ranges(table: HudiTable, partitions: set[str], columns: Sequence[str]) -> dict[Hashable, FileRanges]:
    stats = footer_stats_provider(table.storage)
    files: dict[Hashable, FileRanges] = {}
    slices = [s for s in table.view().latest_file_slices(partitions=partitions) if s.base_file is not None]
    for file_slice, st in stats.read_all(slices).items():  # every footer at once, concurrently
        ranges = {c: st.columns[c] for c in columns if c in st.columns}
        if "_hoodie_record_key" in columns and st.min_record_key is not None:
            ranges["_hoodie_record_key"] = (st.min_record_key, st.max_record_key or st.min_record_key)
        files[file_slice.group_id] = FileRanges(file_slice.partition, st.num_rows, ranges)
    return files


def predicted_files_per_query(table: HudiTable, plan: StoredPlan, layout: str = "LINEAR",
                              curve_order: CurveOrder | None = None) -> list[QueryFiles]:  # fmt: skip
    """The plan's effect on files per query, by :func:`.predict.predict_files_per_query`; [] without sort columns
    (a rewrite without a sort keeps every range as wide as its group's). ``curve_order``: the layout's curve on
    sample values (the writer's sort keys), for z-order and Hilbert."""
    columns = _sort_columns(plan)
    if not columns or not plan.groups:
        return []
    files = _file_ranges(table, {g.partition for g in plan.groups}, columns)
    groups = [PlannedRewrite(tuple(FileGroupId(g.partition, s.file_id) for s in g.slices), g.num_output_file_groups)
              for g in plan.groups]  # fmt: skip
    return predict_files_per_query(files, groups, columns, layout, curve_order=curve_order)


def _measured(files: dict[Hashable, FileRanges], column: str) -> tuple[float, float, int]:
    """(point, 1% range query files, rows) row-weighted over partitions, of the files as they are."""
    point = ranged = 0.0
    total = 0
    for partition in sorted({f.partition for f in files.values()}):
        members = [f for f in files.values() if f.partition == partition and column in f.ranges]
        if not members:
            continue
        places = positions([f.ranges[column][0] for f in members] + [f.ranges[column][1] for f in members])
        lows, highs, rows = places[: len(members)], places[len(members) :], [f.rows for f in members]
        point += expected_files(lows, highs, rows) * sum(rows)
        ranged += expected_files(lows, highs, rows, RANGE_QUERY_FRACTION) * sum(rows)
        total += sum(rows)
    return (point / total, ranged / total, total) if total else (0.0, 0.0, 0)


def measured_files_per_query(before: list[QueryFiles], table: HudiTable, plan: StoredPlan) -> list[QueryFiles]:
    """``before``'s figures with the after side measured on the table as it now is (the plan executed)."""
    columns = [q.column for q in before]
    if not columns:
        return []
    files = _file_ranges(table.reload(), {g.partition for g in plan.groups}, columns)
    result = []
    for q in before:
        point, ranged, rows = _measured(files, q.column)
        result.append(QueryFiles(q.column, q.point_before, point if rows else q.point_after, q.range_before,
                                 ranged if rows else q.range_after))  # fmt: skip
    return result
