"""Issue 12, items 1-2: a Python worker's peak RSS as one group grows, the spill engine, in-group parallelism.

    .venv/bin/python bench/bench_memory.py --quick          # 100 and 250 MiB groups, a few minutes
    .venv/bin/python bench/bench_memory.py [--sizes 100,250,500,1024,2048] [--reps 2]

Three parts, each contender in its own process so its peak RSS (``wait4``'s ``ru_maxrss``) is that of one worker:

* **rss** - one group of N MiB of gzip base files (Hudi meta columns, the bench data set of ``common.py``) is
  rewritten sorted by ``c_int, ts`` by ``GroupTask.write_sorted`` exactly as a Spark task runs it, with the
  1 GiB default budget (``bounded``) and, up to ``--in-memory-max`` MiB, with an unbounded budget
  (``in-memory``: the whole group read, sorted and written in memory, as before issue 12). Reported: peak RSS,
  wall and CPU seconds, seconds per GiB of input.
* **engine** - the out-of-core sort inside the same worker pipeline (our batches in, our rolling Hudi writer
  out) at one size with a small budget, so every engine spills: ours (key-range distribution sort to Arrow
  IPC spill files), DuckDB (``ORDER BY`` over the Arrow stream, ``memory_limit`` = budget, one thread) and
  Polars (``scan_parquet().sort().sink_parquet()``, streaming engine, one thread; its own parquet writer, no
  Hudi footers). DuckDB and Polars are not dependencies: this part runs when they are installed.
* **parallel** - a real ``cluster()`` on Spark ``local[2]`` of one large group with in-group parallelism on (the
  group split by key range across 2 Spark tasks) and off (``hoodie.clustering.group.read.parallelism=1``):
  wall and CPU seconds of the process tree, ratio off/on.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402,F401  (puts the repo root on sys.path)
from common import (  # noqa: E402
    OUT_DIR, TableSpec, _cached, alternating_orders, code_fingerprint, fmt_table, fresh_copy, hudi_table, machine,
    make_rows, measure, ratio, remove, settle, spark_session, stats, write_json,
)  # fmt: skip

ROWS_PER_MIB = 9000  # the bench rows with Hudi's meta columns, gzip level 6, no bloom filter: ~117 bytes a row
FILE_MIB = 64
GIB = 1024**3
COLUMNS = ["c_int", "ts"]


# ------------------------------------------------------------------------------------------------ inputs


def group_files(mib: int) -> tuple[Path, dict]:
    """A cached directory of gzip base files totalling about ``mib`` MiB (``FILE_MIB`` each, the last smaller)."""
    directory = OUT_DIR / "tables" / f"memory_group_{mib}mib_v1"

    def build(tmp: Path) -> dict:
        tmp.mkdir(parents=True)
        rows_total, start, index = mib * ROWS_PER_MIB, 0, 0
        while start < rows_total:
            count = min(FILE_MIB * ROWS_PER_MIB, rows_total - start)
            name = f"{index:08d}-aaaa-bbbb-cccc-000000000000-0_0-1-{index}_20240101000000000.parquet"
            rows = make_rows(start, count, seed=7)
            seq = pc.binary_join_element_wise("20240101000000000_0_", pa.array(np.arange(start, start + count).astype(str)), "")
            meta = {
                "_hoodie_commit_time": pa.array(["20240101000000000"] * count), "_hoodie_commit_seqno": seq,
                "_hoodie_record_key": rows.column("id"), "_hoodie_partition_path": pa.array([""] * count),
                "_hoodie_file_name": pa.array([name] * count),
            }  # fmt: skip
            table = pa.table({**meta, **{c: rows.column(c) for c in rows.column_names}})
            pq.write_table(table, tmp / name, compression="gzip", compression_level=6, row_group_size=250_000)
            start, index = start + count, index + 1
        files = sorted(tmp.glob("*.parquet"))
        return {"rows": rows_total, "files": len(files), "bytes": sum(f.stat().st_size for f in files)}

    return directory, _cached(directory, build)


# ------------------------------------------------------------------------------------- the worker process


def _task(source: Path, work: Path, budget: int, target: int):
    from hudi_cluster_core.plan.avro_plan import InputSlice, PlanGroup
    from hudi_cluster_core.run.task import GroupTask
    from hudi_cluster_core.write.base_file import ParquetOptions

    slices = tuple(InputSlice("", f.name.split("_", 1)[0], str(f)) for f in sorted(source.glob("*.parquet")))
    return GroupTask(str(work), "20260101000000000", PlanGroup(0, "", slices, 1), None, None,
                     target_file_max_bytes=target, options=ParquetOptions(compression="gzip"),
                     memory_budget=budget, spill_dir=str(work / "spill"))  # fmt: skip


def worker(args: dict) -> dict:
    """One worker's job: rewrite the group sorted with ``args["engine"]``; returns rows and files written."""
    source, work = Path(args["source"]), Path(args["work"])
    (work / "spill").mkdir(parents=True, exist_ok=True)
    task = _task(source, work, args["budget"], args["target"])
    engine = args["engine"]
    if engine in ("bounded", "in-memory"):
        stats = task.write_sorted(COLUMNS, "linear")
        return {"rows": sum(s["numWrites"] for s in stats), "files": len(stats)}
    if engine == "duckdb":
        return _duckdb(task, args["budget"], work)
    if engine == "polars":
        return _polars(source, work)
    raise SystemExit(f"unknown engine {engine}")


def _duckdb(task, budget: int, work: Path) -> dict:
    import duckdb

    from hudi_cluster_core.sort import out_of_core

    schema = out_of_core._target_schema(task, out_of_core.measure_group(task))
    batches = (b for t in out_of_core._group_batches(task, schema) for b in t.to_batches())
    source = pa.RecordBatchReader.from_batches(schema, batches)
    con = duckdb.connect(config={"memory_limit": f"{budget // 1024**2}MB", "threads": 1, "preserve_insertion_order": False,
                                 "temp_directory": str(work / "spill")})  # fmt: skip
    con.register("src", source)
    result = con.execute("SELECT * FROM src ORDER BY c_int ASC NULLS FIRST, ts ASC NULLS FIRST")
    writer = task.rolling_writer()
    for batch in result.to_arrow_reader(65536):
        writer.write(pa.Table.from_batches([batch]).cast(schema))
    stats = writer.close()
    return {"rows": sum(s["numWrites"] for s in stats), "files": len(stats)}


def _polars(source: Path, work: Path) -> dict:
    import polars as pl

    frame = pl.scan_parquet(sorted(str(f) for f in source.glob("*.parquet")))
    frame.sort(COLUMNS, nulls_last=False).sink_parquet(str(work / "sorted.parquet"), compression="gzip",
                                                       compression_level=6)  # fmt: skip
    return {"rows": pq.read_metadata(work / "sorted.parquet").num_rows, "files": 1}


def run_worker(engine: str, source: Path, budget: int, target: int) -> dict:
    """Run one worker process; its wall and CPU seconds and peak RSS (the kernel's high-water mark)."""
    work = Path(tempfile.mkdtemp(prefix=f"bench-memory-{engine}-", dir=OUT_DIR / "work"))
    payload = json.dumps({"engine": engine, "source": str(source), "work": str(work), "budget": budget, "target": target})
    env = {**os.environ, "POLARS_MAX_THREADS": "1", "OMP_NUM_THREADS": "1"}
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, __file__, "--worker", payload], stdout=subprocess.PIPE, env=env)
    killed: list[float] = []
    watchdog = threading.Thread(target=_watch_rss, args=(process.pid, killed), daemon=True)
    watchdog.start()
    out = process.stdout.read() if process.stdout else b""
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    if killed:
        status = f"killed above {RSS_LIMIT / GIB:.0f} GiB RSS (the machine is shared)"
    spill_left = any((work / "spill").iterdir()) if (work / "spill").exists() else False
    shutil.rmtree(work, ignore_errors=True)
    if status != 0:
        return {"engine": engine, "failed": status if isinstance(status, str) else f"exit status {status}", "seconds": round(seconds, 2),
                "peak_rss_gib": round(usage.ru_maxrss / 1024**2, 3)}  # fmt: skip
    result = json.loads(out.decode().strip().splitlines()[-1])
    return {"engine": engine, "seconds": round(seconds, 2), "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_gib": round(usage.ru_maxrss / 1024**2, 3), "spill_left": spill_left, **result}  # fmt: skip


RSS_LIMIT = 8 * GIB  # a worker above this is stopped: the machine is shared (its figure is then "killed")


def _watch_rss(pid: int, killed: list[float]) -> None:
    status = Path(f"/proc/{pid}/status")
    while True:
        try:
            text = status.read_text()
        except OSError:
            return
        rss = next((int(line.split()[1]) * 1024 for line in text.splitlines() if line.startswith("VmRSS:")), 0)
        if rss > RSS_LIMIT:
            killed.append(rss)
            os.kill(pid, 9)
            return
        time.sleep(0.2)


# --------------------------------------------------------------------------------------------------- parts


def part_rss(sizes: list[int], budget: int, in_memory_max: int, target: int) -> list[dict]:
    rows = []
    for mib in sizes:
        source, info = group_files(mib)
        for engine in ("bounded", "in-memory") if mib <= in_memory_max else ("bounded",):
            found = run_worker(engine, source, budget if engine == "bounded" else 1024 * GIB, target)
            found.update(group_mib=mib, input_bytes=info["bytes"], input_rows=info["rows"])
            found["seconds_per_gib"] = round(found["seconds"] / (info["bytes"] / GIB), 1)
            print(f"[bench_memory] rss {mib:5d} MiB {engine:9s}: {json.dumps(found)}", flush=True)
            assert found.get("rows") == info["rows"] or "failed" in found, found
            rows.append(found)
    return rows


def part_engine(mib: int, budget: int, target: int, engines: tuple[str, ...] = ("bounded", "duckdb", "polars")) -> list[dict]:
    source, info = group_files(mib)
    rows = []
    for engine in engines:
        try:
            __import__({"bounded": "pyarrow", "duckdb": "duckdb", "polars": "polars"}[engine])
        except ImportError:
            print(f"[bench_memory] engine {engine}: not installed, skipped", flush=True)
            continue
        found = run_worker(engine, source, budget, target)
        found.update(group_mib=mib, input_bytes=info["bytes"], budget=budget)
        print(f"[bench_memory] engine {engine:8s}: {json.dumps(found)}", flush=True)
        rows.append(found)
    return rows


def part_parallel(rows: int, files: int, reps: int) -> dict:
    from hudi_cluster_core.api import cluster

    spec = TableSpec(rows=rows, files=files, partitioned=False)
    source, info = hudi_table(spec)
    spark = spark_session(2)
    options = {
        "hoodie.clustering.plan.strategy.sort.columns": ",".join(COLUMNS),
        "hoodie.clustering.plan.strategy.max.bytes.per.group": str(64 * GIB),
        "hoodie.clustering.plan.strategy.target.file.max.bytes": str(128 * 1024**2),
    }
    contenders = {"on": options, "off": {**options, "hoodie.clustering.group.read.parallelism": "1"}}
    samples: dict[str, list] = {name: [] for name in contenders}
    for rep, order in enumerate(alternating_orders(list(contenders), reps)):
        for name in order:
            copy = fresh_copy(source, f"memory-parallel-{name}")
            settle(spark)
            sample, result = measure(lambda: cluster(copy, "scheduleAndExecute", contenders[name], spark=spark,
                                                     parallelism=2), spark=spark)  # fmt: skip
            assert result.completed_file and len(result.groups) == 1, result
            files_out = len(result.groups[0]["output_files"])
            print(f"[bench_memory] parallel rep {rep + 1}/{reps} {name:3s}: {sample.seconds:6.2f}s wall, "
                  f"{sample.cpu_seconds:6.2f}s CPU, {files_out} files", flush=True)  # fmt: skip
            samples[name].append(sample)
            remove(copy)
    wall = {n: [s.seconds for s in v] for n, v in samples.items()}
    cpu = {n: [s.cpu_seconds for s in v] for n, v in samples.items()}
    return {"table": info, "wall": {n: stats(v) for n, v in wall.items()}, "cpu": {n: stats(v) for n, v in cpu.items()},
            "off_over_on_wall": ratio(wall["off"], wall["on"]), "off_over_on_cpu": ratio(cpu["off"], cpu["on"])}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="100 and 250 MiB groups, a 100 MiB parallel table")
    parser.add_argument("--sizes", help="group sizes in MiB of gzip input (default 100,250,500,1024,2048)")
    parser.add_argument("--budget", type=int, default=GIB, help="per-task budget of the rss part (default 1 GiB)")
    parser.add_argument("--in-memory-max", type=int, default=None, help="largest group run unbounded (MiB)")
    parser.add_argument("--engine-mib", type=int, default=None, help="group size of the engine part (MiB)")
    parser.add_argument("--engine-budget", type=int, default=256 * 1024**2)
    parser.add_argument("--engines", default="bounded,duckdb,polars", help="contenders of the engine part")
    parser.add_argument("--parts", default="rss,engine,parallel")
    parser.add_argument("--reps", type=int, default=2, help="repetitions of the parallel part")
    parser.add_argument("--out", type=Path, default=OUT_DIR / "bench_memory.json")
    args = parser.parse_args()
    if args.worker:
        started = resource.getrusage(resource.RUSAGE_SELF)
        print(json.dumps({**worker(json.loads(args.worker)), "worker_user_s": round(started.ru_utime, 2)}))
        return
    sizes = [int(s) for s in (args.sizes or ("100,250" if args.quick else "100,250,500,1024,2048")).split(",")]
    in_memory_max = args.in_memory_max if args.in_memory_max is not None else (100 if args.quick else 250)
    parts = set(args.parts.split(","))
    (OUT_DIR / "work").mkdir(parents=True, exist_ok=True)
    target = 128 * 1024**2
    report: dict = {"machine": machine(), "code_sha256": code_fingerprint(), "budget": args.budget, "target": target}
    if "rss" in parts:
        report["rss"] = part_rss(sizes, args.budget, in_memory_max, target)
    if "engine" in parts:
        report["engine"] = part_engine(args.engine_mib or (100 if args.quick else 500), args.engine_budget, target,
                                       tuple(args.engines.split(",")))  # fmt: skip
    if "parallel" in parts:
        rows, files = (640_000, 8) if args.quick else (3_200_000, 32)
        report["parallel"] = part_parallel(rows, files, args.reps)
    write_json(args.out, report)
    if "rss" in report:
        print(fmt_table(["group MiB", "engine", "peak RSS GiB", "wall s", "CPU s", "s per GiB", "files"],
                        [[r["group_mib"], r["engine"], r["peak_rss_gib"], r["seconds"], r.get("cpu_seconds", "-"),
                          r["seconds_per_gib"], r.get("files", r.get("failed"))] for r in report["rss"]]))  # fmt: skip
    if "engine" in report:
        print(fmt_table(["engine", "peak RSS GiB", "wall s", "CPU s"],
                        [[r["engine"], r["peak_rss_gib"], r["seconds"], r.get("cpu_seconds", r.get("failed"))]
                         for r in report["engine"]]))  # fmt: skip
    if "parallel" in report:
        p = report["parallel"]
        print(fmt_table(["in-group parallelism", "wall s (median)", "CPU s (median)"],
                        [[n, round(p["wall"][n]["median"], 2), round(p["cpu"][n]["median"], 2)] for n in ("on", "off")]))
        print(f"off/on wall {p['off_over_on_wall']['of_medians']:.2f}, CPU {p['off_over_on_cpu']['of_medians']:.2f}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
