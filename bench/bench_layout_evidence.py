"""What clustering does to bench_layout's table, predicted and then measured (issue 23's closing figures).

    .venv/bin/python bench/bench_layout_evidence.py --quick     # 200,000 rows in 100 files
    .venv/bin/python bench/bench_layout_evidence.py             # 2,000,000 rows in 200 files

Input: ``bench_layout.py``'s table (``id``, ``x`` and ``y`` uniform in [0, 1), a payload; many small files, each
spanning the whole x-y square), a fresh copy per layout. For each of linear, z-order and Hilbert (DIRECT build,
sort columns x,y, one group, ``--target-bytes`` per file: about 10 output files):

1. ``hudi-cluster report --columns x,y --json --plot DIR`` (a process of its own, as a user runs it): the layout
   before;
2. the dry run (``cluster(..., dry_run=True)``): its predicted files per point and 1% range query on x and y
   after the plan, and its predicted output files and bytes;
3. the real run, then ``report --json --plot DIR --before <last instant before the run>``: the figures after (the
   PNGs show before beside after);
4. the errors (predicted - measured) / measured, in %, of files per query (measured by ``report`` on the new
   files' footers) and of output files and bytes (the files the run wrote, as stored).

For the z-order run, our run metrics (``ClusterResult.to_dict()``) are printed next to the metrics deltalake's
``DeltaTable.optimize.z_order(["x", "y"])`` returns for the same rows as a Delta table (``write_deltalake``, one
append per small file, gzip), at the same target size. Results: ``bench/out/bench_layout_evidence.json``; PNGs
under ``bench/out/layout_evidence/<layout>/{before,after}/``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/common.py, whatever the working directory
import common  # noqa: E402  (also puts the repository root on sys.path)
from bench_layout import LAYOUTS, build_inputs, delta_files, footer_boxes, hudi_files, our_options  # noqa: E402

OUT_JSON = common.OUT_DIR / "bench_layout_evidence.json"
PLOTS = common.OUT_DIR / "layout_evidence"
COLUMNS = ("x", "y")


def report(base: Path, plots: Path, *extra: str) -> dict:
    """``hudi-cluster report`` as a user runs it: its JSON, and the charts it wrote (path, pixel size)."""
    command = [sys.executable, "-m", "hudi_cluster_core.cli", "report", str(base), "--columns", ",".join(COLUMNS),
               "--json", "--plot", str(plots), *extra]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=common.REPO_ROOT, timeout=600)
    if done.returncode:
        raise SystemExit(f"report failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def png_facts(directory: Path) -> dict[str, dict]:
    """Each PNG's pixel size (its IHDR chunk) and bytes."""
    facts = {}
    for path in sorted(directory.glob("*.png")):
        head = path.read_bytes()[:24]
        facts[path.name] = {"width": int.from_bytes(head[16:20], "big"), "height": int.from_bytes(head[20:24], "big"),
                            "bytes": path.stat().st_size}  # fmt: skip
    return facts


def chart_bars(base: Path, as_of: str | None, before_instant: str | None) -> dict[str, dict]:
    """The charts ``report --plot`` draws, built again in this process to count their bars: per PNG name, its
    pixel size and the bars per panel (before, after)."""
    import tempfile

    from hudi_cluster_core.report.layout_report import build_report
    from hudi_cluster_core.report.plots import AFTER_COLOR, BEFORE_COLOR, write_charts
    from hudi_cluster_core.table import load_table

    table = load_table(str(base))
    after = build_report(table, COLUMNS, as_of=as_of)
    before = build_report(table, COLUMNS, as_of=before_instant) if before_instant else None
    with tempfile.TemporaryDirectory() as scratch:
        charts = write_charts(after, before, scratch)
    return {c.path.name: {"width": c.width, "height": c.height, "bars_before": c.bars.get(BEFORE_COLOR, 0),
                          "bars_after": c.bars.get(AFTER_COLOR, 0)} for c in charts}  # fmt: skip


def report_files_per_query(figures: dict) -> dict[str, tuple[float, float]]:
    """column -> (point, 1% range) files per query of a non-partitioned table's report."""
    (partition,) = figures["partitions"]
    return {c["column"]: (c["point_query_files"], c["range_query_files"]) for c in partition["columns"]}


def error(predicted: float, measured: float) -> float:
    return round(100 * (predicted - measured) / measured, 1) if measured else float("nan")


def run_layout(label: str, strategy: str, method: str, source: Path, target: int, spark) -> dict:
    from hudi_cluster_core.api import cluster
    from hudi_cluster_core.table import load_table

    copy = common.fresh_copy(source, f"evidence_{strategy}")
    options = our_options(strategy, method, target)
    plots = PLOTS / label
    common.remove(plots)
    last_before = load_table(str(copy)).timeline.completed()[-1].time
    before = report(copy, plots / "before")
    bars_before = chart_bars(copy, None, None)

    started = time.perf_counter()
    dry = cluster(str(copy), "scheduleAndExecute", options, dry_run=True)
    dry_seconds = time.perf_counter() - started
    predicted = {q["column"]: (q["point_query_files"][1], q["range_query_files"][1]) for q in dry.files_per_query}
    predicted_files = sum(g["predicted_output_files"] for g in dry.groups)
    predicted_bytes = sum(g["predicted_output_bytes"] for g in dry.groups)

    done = cluster(str(copy), "scheduleAndExecute", options, spark=spark)
    if not done.completed_file:
        raise SystemExit(f"{label}: the run did not complete: {done.message}")
    after = report(copy, plots / "after", "--before", last_before)
    written = [Path(p).stat().st_size for p in hudi_files(copy) if Path(p).name.endswith(f"{done.instant_time}.parquet")]
    measured = report_files_per_query(after)
    bars_after = chart_bars(copy, None, last_before)
    common.remove(copy)

    per_column = {c: {"before": report_files_per_query(before)[c], "predicted": predicted[c], "measured": measured[c],
                      "point_error_pct": error(predicted[c][0], measured[c][0]),
                      "range_error_pct": error(predicted[c][1], measured[c][1])} for c in COLUMNS}  # fmt: skip
    return {
        "strategy": strategy, "build_method": method, "dry_run_seconds": round(dry_seconds, 2),
        "dry_run_message": dry.message, "files_per_query": per_column,
        "output": {"predicted_files": predicted_files, "written_files": len(written), "predicted_bytes": predicted_bytes,
                   "written_bytes": sum(written), "files_error_pct": error(predicted_files, len(written)),
                   "bytes_error_pct": error(predicted_bytes, sum(written))},
        "report_before": before, "report_after": after,
        "plots": {side: {name: {**png, **bars[name]} for name, png in png_facts(plots / side).items()}
                  for side, bars in (("before", bars_before), ("after", bars_after))},
        "run_metrics": done.to_dict(),
    }  # fmt: skip


def delta_z_order(source: Path, target: int) -> dict:
    """The metrics dict deltalake's z-order returns for the same rows (a fresh copy of the Delta input)."""
    from deltalake import DeltaTable, WriterProperties

    copy = common.fresh_copy(source, "evidence_delta")
    started = time.perf_counter()
    metrics = DeltaTable(str(copy)).optimize.z_order(list(COLUMNS), target_size=target,
                                                     writer_properties=WriterProperties(compression="GZIP"))  # fmt: skip
    seconds = time.perf_counter() - started
    files_per_query = footer_files_per_query(delta_files(copy))
    common.remove(copy)
    return {"metrics": metrics, "seconds": round(seconds, 2), "files_per_query": files_per_query}


def footer_files_per_query(paths: list[str]) -> dict[str, tuple[float, float]]:
    """column -> (point, 1% range) files per query of these files, by the report's query model on their footers'
    min/max (a Delta table's files: ``report`` reads Hudi tables only)."""
    from hudi_cluster_core.report.overlap import RANGE_QUERY_FRACTION, expected_files

    boxes, _ = footer_boxes(paths)
    rows = [pq.read_metadata(p).num_rows for p in paths]
    result = {}
    for index, column in enumerate(COLUMNS):
        lows, highs = boxes[:, 2 * index], boxes[:, 2 * index + 1]
        result[column] = (expected_files(lows, highs, rows), expected_files(lows, highs, rows, RANGE_QUERY_FRACTION))
    return result


def print_report(result: dict) -> None:
    rows = []
    for label, r in result["layouts"].items():
        for column, f in r["files_per_query"].items():
            rows.append((label, column, f"{f['before'][0]:.2f}", f"{f['predicted'][0]:.2f}", f"{f['measured'][0]:.2f}",
                         f"{f['point_error_pct']:+.1f}%", f"{f['before'][1]:.2f}", f"{f['predicted'][1]:.2f}",
                         f"{f['measured'][1]:.2f}", f"{f['range_error_pct']:+.1f}%"))  # fmt: skip
    print("\nFiles per query (point; 1% range), before -> predicted by the dry run / measured by report after:")
    print(common.fmt_table(["layout", "column", "point before", "predicted", "measured", "error",
                            "range before", "predicted", "measured", "error"], rows))  # fmt: skip
    print("\nOutput files and bytes, predicted by the dry run / written by the run:")
    print(common.fmt_table(["layout", "files predicted", "written", "error", "bytes predicted", "written", "error"], [
        (label, o["predicted_files"], o["written_files"], f"{o['files_error_pct']:+.1f}%", f"{o['predicted_bytes']:,}",
         f"{o['written_bytes']:,}", f"{o['bytes_error_pct']:+.1f}%")
        for label, r in result["layouts"].items() for o in [r["output"]]]))  # fmt: skip
    print("\nCharts (report --plot):")
    for label, r in result["layouts"].items():
        for side, pngs in r["plots"].items():
            for name, png in pngs.items():
                bars = (f"{png['bars_before']} before (orange), {png['bars_after']} after (blue)" if png["bars_before"]
                        else f"{png['bars_after']} (one panel)")  # fmt: skip
                print(f"  {label}/{side}/{name}: {png['width']}x{png['height']} px, {png['bytes']:,} bytes; bars: {bars}")
    ours = {k: v for k, v in result["layouts"]["z-order"]["run_metrics"].items() if k not in ("groups", "partitions")}
    print("\nz-order: our run metrics (ClusterResult.to_dict(), groups and partitions left out):")
    print(json.dumps(ours, indent=1))
    delta = result["delta_z_order"]
    print(f"\nz-order: deltalake optimize.z_order() on the same rows ({delta['seconds']:.1f} s; ours "
          f"{result['layouts']['z-order']['run_metrics']['duration_s']['total']:.1f} s, one run each):")  # fmt: skip
    print(json.dumps(delta["metrics"], indent=1))
    print("files per query (point; 1% range) on deltalake's files: " + ", ".join(
        f"{c} {p:.2f}; {r:.2f}" for c, (p, r) in delta["files_per_query"].items()))


def main(argv=None) -> int:
    from hudi_cluster_core.run.spark import get_spark

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="200,000 rows in 100 files, 1 MiB target")
    parser.add_argument("--rows", type=int, help="rows (default 2,000,000; --quick 200,000)")
    parser.add_argument("--files", type=int, help="small input files (default 200; --quick 100)")
    parser.add_argument("--target-bytes", type=int, help="target file size (default 8 MiB; --quick 1 MiB: ~10 files)")
    parser.add_argument("--layouts", default="linear,z-order,hilbert", help="of linear, z-order, hilbert")
    parser.add_argument("--parallelism", type=int, default=2, help="Spark local[N] (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reps", type=int, help="accepted (run_all.py passes it on); one run per layout: no timings")
    args = parser.parse_args(argv)
    args.rows = args.rows or (200_000 if args.quick else 2_000_000)
    args.files = args.files or (100 if args.quick else 200)
    args.target_bytes = args.target_bytes or (1 if args.quick else 8) * 1024**2

    hudi_source, delta_source, info = build_inputs(args.rows, args.files, args.seed)
    info.update(hudi_bytes=common.dir_bytes(hudi_source), delta_bytes=common.dir_bytes(delta_source))
    target = args.target_bytes
    spark = get_spark(f"local[{args.parallelism}]")
    chosen = [x.strip() for x in args.layouts.split(",")]
    result = {"benchmark": "bench_layout_evidence", "machine": common.machine(), "code": common.code_fingerprint(),
              "input": info, "settings": {"target_file_bytes": target, "columns": list(COLUMNS),
                                          "spark_master": f"local[{args.parallelism}]"}, "layouts": {}}  # fmt: skip
    for label, strategy, method in LAYOUTS[:3]:
        if label in chosen:
            result["layouts"][label] = run_layout(label, strategy, method, hudi_source, target, spark)
            print(f"[bench_layout_evidence] {label} done", flush=True)
    if "z-order" in result["layouts"]:
        result["delta_z_order"] = delta_z_order(delta_source, target)
    common.write_json(OUT_JSON, result)
    print_report(result)
    print(f"\nwritten {OUT_JSON}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
