"""PNG charts of a layout report (``--plot DIR``): the file-size histogram, and per column each file's [min, max]
as a horizontal bar; with a second report, before (orange) beside after (blue).

matplotlib is optional (``pip install 'hudi-cluster[report]'``) and imported only here, when charts are asked for.
Figures have fixed sizes (``SIZE_FIGURE`` and ``range_figure_size``, at ``DPI``), so a chart's pixel size is known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from .layout_report import LayoutReport, size_histogram

DPI = 100
SIZE_FIGURE = (8.0, 4.5)  # inches
BEFORE_COLOR, AFTER_COLOR = "#ff7f0e", "#1f77b4"
MAX_FILES_DRAWN = 200  # files per range chart panel: beyond this bars would be thinner than a pixel row


@dataclass(frozen=True)
class Chart:
    path: Path
    width: int
    height: int
    bars: dict[str, int]  # color -> bars drawn in it


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        raise ConfigError("--plot needs matplotlib: pip install matplotlib (or hudi-cluster[report])") from None
    return plt


def _ticker():
    import matplotlib.ticker

    return matplotlib.ticker


def require_matplotlib() -> None:
    """ConfigError (one line, exit 2) when matplotlib is not installed."""
    _pyplot()


def range_figure_size(files: int) -> tuple[float, float]:
    """Inches: a quarter inch per file row, between 3 and 12 inches tall."""
    return (8.0, max(3.0, min(12.0, 0.25 * files + 1.5)))


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "column"


def _panels(after: LayoutReport, before: LayoutReport | None) -> list[tuple[str, LayoutReport, str]]:
    return ([("before", before, BEFORE_COLOR)] if before else []) + [("after" if before else "", after, AFTER_COLOR)]


def size_chart(after: LayoutReport, before: LayoutReport | None, directory: Path) -> Chart:
    plt = _pyplot()
    panels = _panels(after, before)
    figure, axes = plt.subplots(1, len(panels), figsize=SIZE_FIGURE, dpi=DPI, squeeze=False)
    bars: dict[str, int] = {}
    for ax, (label, report, color) in zip(axes[0], panels):
        sizes = [s for p in report.partitions for s in p.file_sizes]
        drawn = [(low, high, n) for low, high, n in size_histogram(sizes) if n]
        # bins are of equal width; bars fill 80% of theirs so neighbours stay apart (one bin: a bar 10% of its size)
        low, high = (drawn[0][0], drawn[0][1]) if drawn else (0, 1)
        width = (high - low) * 0.8 if high > low else max(1.0, 0.1 * low)
        ax.bar([(low + high) / 2 for low, high, _ in drawn], [n for _, _, n in drawn], width=width, color=color)
        # whole bytes with separators, slanted: sizes a few bytes apart would otherwise print as one run of digits
        ax.xaxis.set_major_formatter(_ticker().FuncFormatter(lambda value, _: f"{value:,.0f}"))
        ax.tick_params(axis="x", labelrotation=30)
        ax.set_xlabel("base file size (bytes)")
        ax.set_ylabel("files")
        ax.set_title(f"{label} file sizes".strip())
        bars[color] = bars.get(color, 0) + len(drawn)
    path = directory / "file-sizes.png"
    figure.tight_layout()  # labels inside the fixed-size canvas
    figure.savefig(path, dpi=DPI)
    plt.close(figure)
    return Chart(path, int(SIZE_FIGURE[0] * DPI), int(SIZE_FIGURE[1] * DPI), bars)


def range_chart(column: str, after: LayoutReport, before: LayoutReport | None, directory: Path) -> Chart:
    plt = _pyplot()
    panels = _panels(after, before)
    ranges = {label: [r for (p, c), spans in sorted(report.spans.items()) if c == column for r in sorted(spans)][:MAX_FILES_DRAWN]
              for label, report, _ in panels}  # fmt: skip
    size = range_figure_size(max(len(r) for r in ranges.values()))
    figure, axes = plt.subplots(1, len(panels), figsize=size, dpi=DPI, squeeze=False)
    bars: dict[str, int] = {}
    for ax, (label, _, color) in zip(axes[0], panels):
        spans = ranges[label]
        extent = (max(h for _, h in spans) - min(l for l, _ in spans)) if spans else 1.0
        thinnest = (extent or 1.0) * 0.005  # a file of one value still shows
        ax.barh(range(len(spans)), [max(h - l, thinnest) for l, h in spans], left=[l for l, _ in spans], height=0.6,
                color=color)  # fmt: skip
        ax.set_ylim(-0.7, max(len(spans), 1) - 0.3)
        ax.set_yticks([])
        ax.set_xlabel(f"{column} (value, or rank of the value for text)")
        ax.set_title(f"{label} {column}: file ranges".strip())
        bars[color] = bars.get(color, 0) + len(spans)
    path = directory / f"ranges-{_safe(column)}.png"
    figure.tight_layout()  # labels inside the fixed-size canvas
    figure.savefig(path, dpi=DPI)
    plt.close(figure)
    return Chart(path, int(size[0] * DPI), int(size[1] * DPI), bars)


def write_charts(after: LayoutReport, before: LayoutReport | None, directory: str | Path) -> list[Chart]:
    """The file-size histogram and one range chart per column, written into ``directory`` (created)."""
    target = Path(directory)
    _pyplot()  # the missing-matplotlib line before anything is created
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"--plot {directory}: can't create the directory ({exc.strerror})") from None
    charts = [size_chart(after, before, target)]
    for column in after.columns:
        if any(c == column for _, c in after.spans) or (before and any(c == column for _, c in before.spans)):
            charts.append(range_chart(column, after, before, target))
    return charts
