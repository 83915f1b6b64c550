"""The layout report without Spark: Hudi's overlap arithmetic on hand-made ranges, the query-files model, the
charts (real PNGs of the documented size showing one bar per file or non-empty size bin) and bad input."""

from __future__ import annotations

import math
import struct
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_cluster_core.cli import main
from hudi_cluster_core.report.layout_report import build_report, size_histogram
from hudi_cluster_core.report.overlap import expected_files, overlap_figures, positions
from hudi_cluster_core.report.plots import AFTER_COLOR, BEFORE_COLOR, DPI, SIZE_FIGURE, range_figure_size
from hudi_cluster_core.report.predict import FileRanges, PlannedRewrite, predict_files_per_query
from hudi_cluster_core.table import load_table


def test_overlap_figures_of_the_example_in_hudis_procedure():
    """a 1-5, b 3-7, c 7-8: values 1, 3, 5, 7, 8 are covered by 1, 2, 2, 2, 1 files."""
    figures = overlap_figures([(1, 5), (3, 7), (7, 8)])
    assert figures is not None
    assert (figures.average, figures.maximum, figures.percentiles, figures.values) == (1.6, 2, (2, 2, 2, 2), 5)
    # ten disjoint files and one spanning them all: the percentiles are taken by index, without interpolation
    wide = overlap_figures([(10 * i, 10 * i + 5) for i in range(10)] + [(0, 95)])
    assert wide is not None and wide.maximum == 2 and wide.percentiles == (2, 2, 2, 2)
    assert overlap_figures([(1, 1), (1, 1)]).percentiles == (2, 2, 2, 2)  # type: ignore[union-attr]
    assert overlap_figures([]) is None


def test_expected_files_of_simple_layouts():
    assert expected_files([0, 10, 20], [9, 19, 29], [5, 5, 5]) == pytest.approx(1.0)  # disjoint
    assert expected_files([0, 0, 0, 0], [10, 10, 10, 10], [1, 2, 3, 4]) == pytest.approx(4.0)  # one range, 4 files
    assert expected_files([1, 2, 3], [1, 2, 3], [1, 1, 1]) == pytest.approx(1.0)  # single-value files
    # two halves of [0, 100]: a 1% range (width 1) meets the other half when v is within 0.5 of 50
    assert expected_files([0, 50], [50, 100], [1, 1], 0.01) == pytest.approx(2 * 50.5 / 100)
    # rows weigh: a point in the big file's range [0, 10] is also in the small file's [5, 15] half the time
    assert expected_files([0, 5], [10, 15], [9, 1]) == pytest.approx(0.9 * 1.5 + 0.1 * 1.5)


def test_positions_are_values_when_numeric_else_ranks():
    assert positions([3, 1.5, 2]) == [3.0, 1.5, 2.0]
    assert positions(["b", "a", "c", "a"]) == [1.0, 0.0, 2.0, 0.0]
    assert positions([1.0, math.inf, 2.0]) == [0.0, 2.0, 1.0]  # NaN read as +inf (Java's order): no span, ranks


def test_predicted_linear_rewrite_of_overlapping_files_leaves_one_file_per_point():
    files = {i: FileRanges("p", 100, {"a": (0, 100)}) for i in range(4)}
    files[9] = FileRanges("p", 100, {"a": (200, 300)})  # left alone
    [figures] = predict_files_per_query(files, [PlannedRewrite((0, 1, 2, 3), 4)], ["a"])
    assert figures.point_before == pytest.approx((4 * 0.8 + 1 * 0.2))
    assert figures.point_after == pytest.approx(1.0, abs=0.02)
    assert figures.range_after < figures.range_before


def _writer_curve(layout: str):
    """The writer's own curve order on sample values (what the driver hands the prediction)."""
    import pyarrow.compute as pc

    from hudi_cluster_core.sort.curves import sort_key_table

    def order(samples):
        keys = sort_key_table(pa.table(dict(samples)), list(samples), layout)
        return pc.sort_indices(keys, sort_keys=[(k, "ascending") for k in keys.column_names]).to_numpy()

    return order


@pytest.mark.parametrize("layout", ["z-order", "hilbert"])
def test_predicted_curve_rewrite_splits_inputs_that_all_span_one_box(layout):
    """Rows appended at random: every input spans the whole x-y square. A curve cuts the square into regions, so
    each output spans part of it on each column (ordering whole inputs would make every output span it all)."""
    files = {i: FileRanges("p", 1000, {"x": (0, 1 << 20), "y": (0, 1 << 20)}) for i in range(16)}
    for curve in (None, _writer_curve(layout)):  # ranks of the samples, then Hudi's own curve bits
        figures = predict_files_per_query(files, [PlannedRewrite(tuple(range(16)), 4)], ["x", "y"], layout,
                                          curve_order=curve)  # fmt: skip
        assert [f.column for f in figures] == ["x", "y"]
        for f in figures:
            assert f.point_before == pytest.approx(16.0)
            # 4 outputs along a 2-d curve: the square in quadrants, each column halved: a point meets 2 files (the
            # samples' cut points fall near, not on, the quadrants' edges); whole inputs in curve order gave 4
            assert f.point_after == pytest.approx(2.0, abs=0.25), (layout, curve, f)
            assert f.point_after <= f.range_after < 2.5


def test_predicted_curve_rewrite_keeps_long_max_value_the_largest_long():
    """Files holding only Long.MAX_VALUE or only Long.MIN_VALUE in ``a``: the samples of the first stay the largest
    longs (a float's nearest of Long.MAX_VALUE, 2**63, would wrap to the lowest and look like the second), so the
    writer's curve puts each value in a file of its own."""
    top, bottom = (2**63 - 1, 2**63 - 1), (-(2**63), -(2**63))
    files = {i: FileRanges("p", 1000, {"a": top if i < 4 else bottom, "b": (0, 1 << 20)}) for i in range(8)}
    [a, _] = predict_files_per_query(files, [PlannedRewrite(tuple(range(8)), 2)], ["a", "b"], "z-order",
                                     curve_order=_writer_curve("z-order"))  # fmt: skip
    assert a.point_before == pytest.approx(4.0) and a.point_after == pytest.approx(1.0), a


@pytest.mark.parametrize("layout", ["z-order", "hilbert"])
def test_a_dry_run_predicts_files_per_query_of_the_writers_curve_order(tmp_path, layout):
    """A dry run (no Spark) on random rows in files that each span the whole x-y square: its prediction after a
    curve layout is within 15% of the files per query of the table's own rows put in the writer's curve order
    (``sort.curves``, what a task sorts by) and cut into the planned files of equal rows."""
    from hudi_cluster_core.api import cluster
    from hudi_cluster_core.sort.curves import curve_sort_indices
    from hudi_cluster_core.writer.append import append

    base = tmp_path / "t"
    rng = np.random.default_rng(5)
    for commit in range(4):
        rows = pa.table({"id": [f"k{commit}-{i:05d}" for i in range(8000)], "x": rng.random(8000), "y": rng.random(8000)})
        append(base, rows, table_name="curve", record_key="id", files_per_partition=4, metadata_enable=False)
    options = {"hoodie.clustering.plan.strategy.class": "space-curve", "hoodie.layout.optimize.strategy": layout,
               "hoodie.clustering.plan.strategy.sort.columns": "x,y",
               "hoodie.clustering.plan.strategy.max.bytes.per.group": str(1 << 30),
               "hoodie.clustering.plan.strategy.target.file.max.bytes": str(60_000),
               "hoodie.index.bloom.num_entries": "100", "hoodie.bloom.index.filter.dynamic.max.entries": "200"}
    dry = cluster(str(base), "scheduleAndExecute", options, dry_run=True)
    outputs = dry.output_files
    assert dry.input_file_groups == 16 and outputs >= 6, dry.output_files
    predicted = {q["column"]: q["point_query_files"] for q in dry.files_per_query}

    files = [p for p in base.rglob("*.parquet") if ".hoodie" not in p.parts]
    rows = pa.concat_tables(pq.read_table(p) for p in files)
    ordered = rows.take(curve_sort_indices(rows, ["x", "y"], layout))
    cuts = np.linspace(0, ordered.num_rows, outputs + 1).astype(int)
    for column in ("x", "y"):
        values = ordered.column(column).to_numpy()
        lows = [values[a:b].min() for a, b in zip(cuts, cuts[1:])]
        highs = [values[a:b].max() for a, b in zip(cuts, cuts[1:])]
        written = expected_files(lows, highs, list(np.diff(cuts)))
        before, after = predicted[column]
        assert before == pytest.approx(16.0, abs=0.1)
        assert after == pytest.approx(written, rel=0.15), (layout, column, after, written)


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> tuple[str, list[str]]:
    """(path, instants): 4 appends of 40 rows to 2 partitions, each commit a file per partition whose 'amount'
    range overlaps the previous commit's."""
    root = tmp_path_factory.mktemp("report")
    rng = np.random.default_rng(7)
    for batch in range(4):
        amounts = 30.0 * batch + rng.random(40) * 60
        rows = pa.table({"id": [f"k{batch}-{i}" for i in range(40)], "region": ["us", "eu"] * 20,
                         "amount": amounts, "name": [f"n{int(a):04d}" for a in amounts]})  # fmt: skip
        pq.write_table(rows, root / f"in{batch}.parquet")
        assert main(["append", "--base-path", str(root / "t"), "--input", str(root / f"in{batch}.parquet"),
                     "--record-key", "id", "--partition-field", "region"]) == 0  # fmt: skip
    base = str(root / "t")
    return base, [i.time for i in load_table(base).timeline.completed()]


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", f"{path} is no PNG"
    return struct.unpack(">II", head[16:24])


def _mask(image: np.ndarray, color: str) -> np.ndarray:
    rgb = np.array([int(color[i : i + 2], 16) / 255 for i in (1, 3, 5)])
    return np.all(np.abs(image[:, :, :3] - rgb) < 0.02, axis=2)


def _runs(flags: np.ndarray) -> int:
    return int(np.count_nonzero(flags[1:] & ~flags[:-1]) + flags[0])


def _range_bars(path: Path, color: str) -> int:
    """Horizontal bars: runs of pixel rows holding the bar colour."""
    import matplotlib.image

    return _runs(_mask(matplotlib.image.imread(path), color).any(axis=1))


def _histogram_bars(path: Path, color: str) -> int:
    """Vertical bars standing on one axis: runs of the bar colour along the pixel row just above the axis."""
    import matplotlib.image

    mask = _mask(matplotlib.image.imread(path), color)
    bottom = int(np.nonzero(mask.any(axis=1))[0].max()) - 2
    return _runs(mask[bottom])


def test_charts_are_pngs_of_their_size_with_a_bar_per_file(table, tmp_path, capsys):
    base, instants = table
    out = tmp_path / "charts"
    assert main(["report", base, "--columns", "amount,name", "--plot", str(out)]) == 0
    assert "partition eu: 4 base file(s)" in capsys.readouterr().out
    report = build_report(load_table(base), ["amount"])
    assert _png_size(out / "file-sizes.png") == (SIZE_FIGURE[0] * DPI, SIZE_FIGURE[1] * DPI)
    sizes = [s for p in report.partitions for s in p.file_sizes]
    assert _histogram_bars(out / "file-sizes.png", AFTER_COLOR) == sum(1 for *_, n in size_histogram(sizes) if n)
    for column in ("amount", "name"):
        chart = out / f"ranges-{column}.png"
        assert _png_size(chart) == tuple(int(v * DPI) for v in range_figure_size(8))
        assert _range_bars(chart, AFTER_COLOR) == 8 and _range_bars(chart, BEFORE_COLOR) == 0


def test_before_an_instant_draws_both_layouts(table, tmp_path, capsys):
    base, instants = table
    out = tmp_path / "charts"
    assert main(["report", base, "--columns", "amount", "--before", instants[1], "--plot", str(out)]) == 0
    text = capsys.readouterr().out
    assert " -> " in text
    chart = out / "ranges-amount.png"
    assert _range_bars(chart, BEFORE_COLOR) == 4 and _range_bars(chart, AFTER_COLOR) == 8
    assert _png_size(chart) == tuple(int(v * DPI) for v in range_figure_size(8))


@pytest.mark.parametrize("argv, message", [
    (["--columns", "amount,nope"], "--columns: nope not among the table's columns"),
    (["--columns", "amount,,name"], "--columns 'amount,,name': expected comma-separated column names"),
    (["--before", "20000101000000000"], "--before 20000101000000000: not a completed instant"),
    (["--source", "metadata"], "--source metadata: the table at"),
])  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(table, capsys, argv, message):
    base, _ = table
    assert main(["report", base, *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_plot_without_matplotlib_is_one_line(table, tmp_path, capsys, monkeypatch):
    base, _ = table
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # what an environment without it gives: ImportError
    assert main(["report", base, "--columns", "amount", "--plot", str(tmp_path / "charts")]) == 2
    out, err = capsys.readouterr()
    assert out == ""  # said before any work
    assert "--plot needs matplotlib: pip install matplotlib" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "charts").exists()
