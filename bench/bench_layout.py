"""Layout benchmark: how many files a two-column range query must open after clustering, per layout, and how
fast our z-order clustering is against delta-rs's ``optimize.z_order`` on the same rows.

    .venv/bin/python bench/bench_layout.py --quick     # 200,000 rows
    .venv/bin/python bench/bench_layout.py             # 2,000,000 rows (default)

Input: N rows (``id``, ``x`` and ``y`` uniform in [0, 1), a payload) in many small files, written by the append
writer (Hudi COW v9) and, as a Delta table, by one ``write_deltalake(mode="append")`` per file; gzip for both.
Every random small file spans the whole x-y square, so unclustered, every query opens every file.

Layout quality: for each layout (linear, z-order, Hilbert with Hudi's default DIRECT build, and the curves
with the SAMPLE build) a fresh copy is clustered by hudi-cluster (``space-curve`` plan, sort columns x,y) into
K files (one group, so one global order, as delta-rs's z-order). Then, for a fixed set of random queries each
selecting ~1% of the square (0.1 x 0.1), we count the files whose footer min/max of x and y meet the query:
the files a reader with min/max pruning must open. delta-rs's z-order output is measured the same way.

Throughput: our z-order (DIRECT) clustering vs delta-rs z-order on fresh copies, alternating which runs first,
median of ``--reps``; the ratio is ours / delta-rs (below 1: we are faster). Our time is the whole
``cluster(..., "scheduleAndExecute")`` call (plan, Spark task, commit) on a warm Spark session; delta-rs's is
``DeltaTable(path).optimize.z_order(["x", "y"])``. Results: ``bench/out/bench_layout.json``.

Prediction (``--predict``): for linear, z-order and Hilbert (DIRECT), the dry run's predicted output files and
bytes against the files the real run then writes, on a fresh copy each; the errors are (predicted - written) /
written. Results: ``bench/out/bench_layout_predict.json``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/common.py, whatever the working directory
import common  # noqa: E402  (also puts the repository root on sys.path)

OUT_JSON = common.OUT_DIR / "bench_layout.json"
PREDICT_JSON = common.OUT_DIR / "bench_layout_predict.json"
QUERY_SIDE = 0.1  # a 0.1 x 0.1 query selects ~1% of the uniform x-y square
LAYOUTS = [  # (label, hoodie.layout.optimize.strategy, hoodie.layout.optimize.curve.build.method)
    ("linear", "LINEAR", "DIRECT"),
    ("z-order", "ZORDER", "DIRECT"),
    ("hilbert", "HILBERT", "DIRECT"),
    ("z-order sample", "ZORDER", "SAMPLE"),
    ("hilbert sample", "HILBERT", "SAMPLE"),
]


# ------------------------------------------------------------------------------------------------ input tables

def point_rows(start: int, count: int, seed: int) -> pa.Table:
    rng = np.random.default_rng([seed, start])
    return pa.table({
        "id": pa.array([f"p{i:010d}" for i in range(start, start + count)]),
        "x": rng.random(count), "y": rng.random(count),
        "amount": np.round(rng.random(count) * 1000, 2),
        "qty": rng.integers(0, 100, count, dtype=np.int64),
    })  # fmt: skip


def build_inputs(rows: int, files: int, seed: int) -> tuple[Path, Path, dict]:
    """The cached Hudi and Delta tables: ``files`` small files of ``rows / files`` rows each."""
    from deltalake import WriterProperties, write_deltalake
    from hudi_cluster_core.writer.append import append

    if rows % files:
        raise SystemExit(f"--rows {rows} must be a multiple of --files {files}")
    per_file, files_per_commit = rows // files, min(files, 20)
    name = f"layout_r{rows}_f{files}_s{seed}_v1"
    hudi, delta = common.OUT_DIR / "tables" / f"hudi_{name}", common.OUT_DIR / "tables" / f"delta_{name}"
    if not (hudi / ".hoodie").is_dir():
        common.remove(hudi)
        started = time.perf_counter()
        for first in range(0, files, files_per_commit):
            batch = pa.concat_tables(point_rows(f * per_file, per_file, seed) for f in range(first, min(files, first + files_per_commit)))
            append(hudi, batch, table_name="bench_layout", record_key="id", files_per_partition=batch.num_rows // per_file)
        print(f"[bench_layout] wrote the Hudi input in {time.perf_counter() - started:.1f}s", flush=True)
    if not (delta / "_delta_log").is_dir():
        common.remove(delta)
        started = time.perf_counter()
        for f in range(files):
            write_deltalake(str(delta), point_rows(f * per_file, per_file, seed), mode="append",
                            writer_properties=WriterProperties(compression="GZIP"))  # fmt: skip
        print(f"[bench_layout] wrote the Delta input in {time.perf_counter() - started:.1f}s", flush=True)
    return hudi, delta, {"rows": rows, "files": files, "rows_per_file": per_file}


def hudi_files(base: Path) -> list[str]:
    from hudi import HudiTable

    return [str(base / s.base_file_relative_path()) for s in HudiTable(str(base)).get_file_slices()]


def delta_files(path: Path) -> list[str]:
    from deltalake import DeltaTable

    return [u.removeprefix("file://") for u in DeltaTable(str(path)).file_uris()]


# --------------------------------------------------------------------------------------------- files opened

def footer_boxes(paths: list[str]) -> tuple[np.ndarray, int]:
    """Per file (min x, max x, min y, max y) over its row groups, from footers only; and the total row count."""
    boxes, total = [], 0
    for path in paths:
        meta = pq.read_metadata(path)
        names = [meta.schema.column(i).name for i in range(meta.num_columns)]
        low, high = {"x": np.inf, "y": np.inf}, {"x": -np.inf, "y": -np.inf}
        for rg in range(meta.num_row_groups):
            for column in ("x", "y"):
                stats = meta.row_group(rg).column(names.index(column)).statistics
                low[column], high[column] = min(low[column], stats.min), max(high[column], stats.max)
        boxes.append((low["x"], high["x"], low["y"], high["y"]))
        total += meta.num_rows
    return np.array(boxes), total


def files_opened(paths: list[str], queries: np.ndarray, expected_rows: int) -> dict:
    boxes, total = footer_boxes(paths)
    if total != expected_rows:
        raise SystemExit(f"layout check: {total} rows in the files, expected {expected_rows}")
    qx, qy = queries[:, :1], queries[:, 1:]
    meets = (boxes[:, 1] >= qx) & (boxes[:, 0] <= qx + QUERY_SIDE) & (boxes[:, 3] >= qy) & (boxes[:, 2] <= qy + QUERY_SIDE)
    opened = meets.sum(axis=1)
    return {"files": len(paths), "mean_files_opened": float(opened.mean()), "max_files_opened": int(opened.max()),
            "fraction_opened": float(opened.mean() / len(paths))}  # fmt: skip


# --------------------------------------------------------------------------------------------- contenders

def our_options(strategy: str, method: str, target_bytes: int) -> dict[str, str]:
    return {
        "hoodie.clustering.plan.strategy.class": "space-curve",
        "hoodie.clustering.plan.strategy.sort.columns": "x,y",
        "hoodie.layout.optimize.strategy": strategy,
        "hoodie.layout.optimize.curve.build.method": method,
        "hoodie.clustering.plan.strategy.target.file.max.bytes": str(target_bytes),
        "hoodie.clustering.plan.strategy.max.bytes.per.group": str(4 * 1024**3),  # one group: one global order
    }  # fmt: skip


def run_ours(source: Path, name: str, options: dict, spark) -> tuple[float, Path]:
    from hudi_cluster_core.api import cluster

    copy = common.fresh_copy(source, name)
    common.settle()
    started = time.perf_counter()
    result = cluster(str(copy), "scheduleAndExecute", options, spark=spark)
    seconds = time.perf_counter() - started
    if not result.completed_file:
        raise SystemExit(f"hudi-cluster did not complete: {result.message}")
    return seconds, copy


def run_delta(source: Path, name: str, target_bytes: int) -> tuple[float, Path]:
    from deltalake import DeltaTable, WriterProperties

    copy = common.fresh_copy(source, name)
    common.settle()
    started = time.perf_counter()
    DeltaTable(str(copy)).optimize.z_order(["x", "y"], target_size=target_bytes,
                                           writer_properties=WriterProperties(compression="GZIP"))  # fmt: skip
    return time.perf_counter() - started, copy


def calibrate_delta_target(source: Path, k: int) -> tuple[int, list[float]]:
    """Untimed: a delta-rs target size giving about ``k`` output files (its sizes are estimates), so both
    tools are measured at the same file count. Doubles as delta-rs's warm-up."""
    target, seconds = common.dir_bytes(source) // k, []
    for attempt in range(4):
        elapsed, copy = run_delta(source, f"delta_calibrate_{attempt}", target)
        count = len(delta_files(copy))
        common.remove(copy)
        seconds.append(elapsed)
        if abs(count - k) <= max(1, k // 16):
            break
        target = int(target * count / k)
    return target, seconds


# ------------------------------------------------------------------------------------------------------- run

def run(args) -> dict:
    from hudi_cluster_core.run.spark import get_spark

    hudi_source, delta_source, info = build_inputs(args.rows, args.files, args.seed)
    info.update(hudi_bytes=common.dir_bytes(hudi_source), delta_bytes=common.dir_bytes(delta_source))
    queries = np.random.default_rng(args.seed + 1).random((args.queries, 2)) * (1 - QUERY_SIDE)
    spark = get_spark(f"local[{args.parallelism}]")
    target = -(-info["hudi_bytes"] // args.output_files)  # ceil: the plan asks for exactly K output files

    layouts = {"input": {**files_opened(hudi_files(hudi_source), queries, args.rows), "cluster_seconds": None}}
    layouts["input (delta)"] = {**files_opened(delta_files(delta_source), queries, args.rows), "cluster_seconds": None}
    for label, strategy, method in LAYOUTS:  # the first run also warms Spark's Python worker for the timed reps
        seconds, copy = run_ours(hudi_source, f"layout_{strategy}_{method}", our_options(strategy, method, target), spark)
        layouts[label] = {**files_opened(hudi_files(copy), queries, args.rows), "cluster_seconds": round(seconds, 2),
                          "strategy": strategy, "build_method": method}  # fmt: skip
        common.remove(copy)
        print(f"[bench_layout] {label:<15} {layouts[label]['mean_files_opened']:7.2f} of {layouts[label]['files']} files "
              f"opened per query; clustered in {seconds:.1f}s", flush=True)  # fmt: skip

    delta_target, calibration = calibrate_delta_target(delta_source, args.output_files)
    times: dict[str, list[float]] = {"hudi-cluster": [], "delta-rs": []}
    delta_layout = None
    for rep, order in enumerate(common.alternating_orders(list(times), args.reps)):
        for contender in order:
            if contender == "hudi-cluster":
                seconds, copy = run_ours(hudi_source, f"tp_ours_{rep}", our_options("ZORDER", "DIRECT", target), spark)
            else:
                seconds, copy = run_delta(delta_source, f"tp_delta_{rep}", delta_target)
                delta_layout = delta_layout or files_opened(delta_files(copy), queries, args.rows)
            times[contender].append(seconds)
            common.remove(copy)
        print(f"[bench_layout] rep {rep}: " + ", ".join(f"{c} {times[c][-1]:.2f}s" for c in order), flush=True)
    layouts["delta-rs z-order"] = {**delta_layout, "cluster_seconds": round(statistics.median(times["delta-rs"]), 2)}

    return {
        "benchmark": "bench_layout", "machine": common.machine(), "input": info,
        "settings": {"output_files": args.output_files, "queries": args.queries, "query_side": QUERY_SIDE,
                     "reps": args.reps, "spark_master": f"local[{args.parallelism}]", "our_target_file_bytes": target,
                     "delta_target_size": delta_target, "delta_calibration_seconds": [round(s, 2) for s in calibration]},
        "layouts": layouts,
        "throughput": {"hudi-cluster z-order": common.stats(times["hudi-cluster"]), "delta-rs z-order": common.stats(times["delta-rs"]),
                       "ratio_ours_over_delta": common.ratio(times["hudi-cluster"], times["delta-rs"])},
    }  # fmt: skip


def run_predict(args) -> dict:
    """Predicted (dry run) against written (the run) output files and bytes, per layout."""
    from hudi_cluster_core.api import cluster
    from hudi_cluster_core.run.spark import get_spark

    hudi_source, _, info = build_inputs(args.rows, args.files, args.seed)
    spark = get_spark(f"local[{args.parallelism}]")
    target = args.target_bytes
    results = {}
    for label, strategy, method in LAYOUTS[:3]:
        options = our_options(strategy, method, target)
        copy = common.fresh_copy(hudi_source, f"predict_{strategy}")
        dry = cluster(str(copy), "scheduleAndExecute", options, dry_run=True)
        predicted_files = sum(g["predicted_output_files"] for g in dry.groups)
        predicted_bytes = sum(g["predicted_output_bytes"] for g in dry.groups)
        done = cluster(str(copy), "scheduleAndExecute", options, spark=spark)
        sizes = [Path(p).stat().st_size for p in hudi_files(copy) if Path(p).name.endswith(f"{done.instant_time}.parquet")]
        results[label] = {
            "predicted_files": predicted_files, "written_files": len(sizes), "planned_files": done.output_files,
            "predicted_bytes": predicted_bytes, "written_bytes": sum(sizes), "largest_file_bytes": max(sizes),
            "files_error": round((predicted_files - len(sizes)) / len(sizes), 4),
            "bytes_error": round((predicted_bytes - sum(sizes)) / sum(sizes), 4),
        }  # fmt: skip
        common.remove(copy)
        r = results[label]
        print(f"[bench_layout] {label:<8} files predicted {r['predicted_files']} written {r['written_files']} "
              f"({100 * r['files_error']:+.1f}%); bytes predicted {r['predicted_bytes']:,} written {r['written_bytes']:,} "
              f"({100 * r['bytes_error']:+.1f}%); largest {r['largest_file_bytes']:,} of target {target:,}", flush=True)
    return {"benchmark": "bench_layout --predict", "machine": common.machine(), "input": info,
            "settings": {"target_file_bytes": target, "spark_master": f"local[{args.parallelism}]"}, "layouts": results}


def print_report(report: dict) -> None:
    layouts, base = report["layouts"], report["layouts"]["input"]["mean_files_opened"]
    rows = [(name, v["files"], f"{v['mean_files_opened']:.2f}", v["max_files_opened"], f"{100 * v['fraction_opened']:.1f}%",
             f"{v['mean_files_opened'] / base:.3f}", "" if v["cluster_seconds"] is None else f"{v['cluster_seconds']:.1f}")
            for name, v in layouts.items()]  # fmt: skip
    print(f"\nFiles opened per range query ({report['settings']['queries']} queries of 0.1 x 0.1 on "
          f"{report['input']['rows']:,} rows; footer min/max of x and y):")  # fmt: skip
    print(common.fmt_table(["layout", "files", "mean opened", "max", "% of files", "vs input", "cluster s"], rows))
    tp = report["throughput"]
    ratio = tp["ratio_ours_over_delta"]
    print(f"\nZ-order clustering time, median of {report['settings']['reps']} (alternating order):")
    print(common.fmt_table(["contender", "median s", "min s", "max s"], [
        (name, f"{s['median']:.2f}", f"{s['min']:.2f}", f"{s['max']:.2f}") for name, s in tp.items() if "median" in s]))
    print(f"ratio ours / delta-rs: {ratio['of_medians']:.2f} (paired per rep: {ratio['paired_min']:.2f}-{ratio['paired_max']:.2f})")
    print(f"\nwritten {OUT_JSON}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="200,000 rows in 100 files, 16 output files")
    parser.add_argument("--rows", type=int, help="rows (default 2,000,000; --quick 200,000)")
    parser.add_argument("--files", type=int, help="small input files (default 200; --quick 100)")
    parser.add_argument("--output-files", type=int, help="K, output files of every layout (default 32; --quick 16)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--reps", type=int, default=3, help="throughput repetitions (median reported; >= 3)")
    parser.add_argument("--parallelism", type=int, default=2, help="Spark local[N] (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--predict", action="store_true", help="only predicted against written files and bytes")
    parser.add_argument("--target-bytes", type=int, default=16 * 1024**2, help="--predict: target file size")
    args = parser.parse_args(argv)
    args.rows = args.rows or (200_000 if args.quick else 2_000_000)
    args.files = args.files or (100 if args.quick else 200)
    args.output_files = args.output_files or (16 if args.quick else 32)
    if args.predict:
        common.write_json(PREDICT_JSON, run_predict(args))
        print(f"\nwritten {PREDICT_JSON}")
        return 0
    if args.reps < 3:
        raise SystemExit("--reps: at least 3 (the median of fewer says little on a noisy machine)")
    report = run(args)
    common.write_json(OUT_JSON, report)
    print_report(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
