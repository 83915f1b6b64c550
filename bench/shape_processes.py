"""The whole processes ``bench_shapes.py`` times besides our CLI, each run as ``python bench/shape_processes.py
KIND JSON``; each prints one JSON line (what it did, and its own work time without interpreter start and imports).

* ``floor`` - the floor of issue 24.4: pyarrow reads every group's input files and writes the same number of
  output files as the plan gives the group, rows in the order read (no sort), gzip at level 6 (the codec and
  level Apache Hudi and we write), dictionary and statistics as pyarrow does by default; groups on ``threads``
  threads at once (pyarrow releases the GIL), as our run has ``parallelism`` tasks.
* ``delta`` - delta-rs ``DeltaTable.optimize.z_order`` over the same sort columns (gzip level 6), ``threads``
  concurrent tasks, the target file size of the shape.
* ``hudi`` - a Spark process with the Hudi 1.1.1 session of ``tests/support/apache_hudi.py`` (master
  ``local[threads]``) running ``CALL run_clustering(op => OP, order => SORT, options => ...)``, then stopping:
  what a Hudi user's ``spark-submit`` of that call does.
* ``session`` - ours through ``api.cluster`` in one session, after a warm-up run: CPU / wall of the run alone.
* ``critical`` - one group's task in-process, before/after its work was spread over threads: the main thread's
  CPU (the critical path, which no other core can take over) against the whole process's.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

GZIP_LEVEL = 6  # parquet-mr's gzip (Hadoop's codec, zlib's default level), and ours (base_file._COMPRESSION_LEVELS)


def floor(job: dict) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    started, cpu_started = time.perf_counter(), time.process_time()
    out = Path(job["out"])
    out.mkdir(parents=True, exist_ok=True)

    def one(index: int, group: dict) -> tuple[int, int, int]:
        table = pa.concat_tables([pq.read_table(path) for path in group["files"]], promote_options="permissive")
        count = max(1, min(int(group["outputs"]), table.num_rows))
        per_file = math.ceil(table.num_rows / count)
        written = 0
        for n in range(count):
            target = out / f"group{index}-{n}.parquet"
            pq.write_table(table.slice(n * per_file, per_file), target, compression="gzip", compression_level=GZIP_LEVEL)
            written += target.stat().st_size
        return table.num_rows, count, written

    with ThreadPoolExecutor(max(1, int(job["threads"]))) as pool:
        done = list(pool.map(lambda pair: one(*pair), enumerate(job["groups"])))
    return {"rows": sum(d[0] for d in done), "files_written": sum(d[1] for d in done),
            "bytes_written": sum(d[2] for d in done), "work_seconds": time.perf_counter() - started,
            "work_cpu_seconds": time.process_time() - cpu_started}  # fmt: skip


def delta(job: dict) -> dict:
    from deltalake import DeltaTable, WriterProperties

    started, cpu_started = time.perf_counter(), time.process_time()
    metrics = DeltaTable(job["path"]).optimize.z_order(
        job["columns"], target_size=int(job["target_size"]), max_concurrent_tasks=int(job["threads"]),
        writer_properties=WriterProperties(compression="GZIP", compression_level=GZIP_LEVEL),
    )  # fmt: skip
    return {"files_added": metrics.get("numFilesAdded"), "files_removed": metrics.get("numFilesRemoved"),
            "work_seconds": time.perf_counter() - started, "work_cpu_seconds": time.process_time() - cpu_started}  # fmt: skip


def hudi(job: dict) -> dict:
    import common
    from tests.support.apache_hudi import hudi_schedule_and_execute, hudi_schedule_clustering

    spark = common.spark_session(int(job["threads"]))
    started = time.perf_counter()
    try:
        if job["op"] == "schedule":
            done = [hudi_schedule_clustering(spark, job["path"], job["options"], order=job["order"])]
        else:
            done = hudi_schedule_and_execute(spark, job["path"], job["options"], order=job["order"])
    finally:
        seconds = time.perf_counter() - started
        spark.stop()
    return {"instants": done, "work_seconds": seconds}


def session(job: dict) -> dict:
    """Ours in one Spark session (no start-up in the figure): a warm-up run on ``warm`` (JVM classes, the Python
    workers and their imports), then the timed ``cluster()`` of ``path``; CPU of this process tree (its JVM and
    Python workers), so CPU / wall is the number of cores the run kept busy."""
    import common
    from hudi_cluster_core.api import cluster

    spark = common.spark_session(int(job["threads"]))
    try:
        cluster(job["warm"], "scheduleAndExecute", job["options"], spark=spark, parallelism=int(job["threads"]))
        common.settle(spark)
        sample, result = common.measure(
            lambda: cluster(job["path"], "scheduleAndExecute", job["options"], spark=spark, parallelism=int(job["threads"])),
            spark=spark, reaped=False, interval=0.1)  # fmt: skip
    finally:
        spark.stop()
    return {"seconds": sample.seconds, "cpu_seconds": sample.cpu_seconds, "peak_rss": sample.peak_rss,
            "cores_busy": round(sample.cpu_seconds / sample.seconds, 3), "files": result.to_dict().get("output_files")}  # fmt: skip


def critical(job: dict) -> dict:
    """One group's task in this process (no Spark), Arrow's CPU pool at one thread as in a Spark worker: main-thread
    CPU seconds (the critical path: what no other core can take over) against the process's, with the page
    compression inline and Arrow on one thread (``before``: the task as it was) and with both on their threads
    (``after``), alternating, each on a fresh copy. The files must come out the same size (same content)."""
    import pyarrow as pa

    import common
    from hudi_cluster_core.api import cluster
    from hudi_cluster_core.config import load_config
    from hudi_cluster_core.plugins import call_hook, default_registry
    from hudi_cluster_core.run.execute import build_tasks, load_stored_plan
    from hudi_cluster_core.run.unit_work import task_threads
    from hudi_cluster_core.table import load_table
    from hudi_cluster_core.write import gzip_pages

    pa.set_cpu_count(1)  # a Spark worker's (OMP_NUM_THREADS=1)
    threads = min(os.cpu_count() or 1, 4)  # one group on this machine: every core (execute.split_groups)
    runs: list[dict] = []
    for rep in range(int(job["reps"])):
        for label, compress, arrow in (("before", 0, 0), ("after", threads, threads))[:: 1 if rep % 2 == 0 else -1]:
            copy = common.fresh_copy(Path(job["source"]), f"critical-{label}")
            try:
                scheduled = cluster(str(copy), "schedule", job["options"])
                table = load_table(str(copy))
                plan = load_stored_plan(table, scheduled.instant_time)
                task = build_tasks(table, plan, load_config(None, [], dict(job["options"])), default_registry())[0]
                common.settle()
                wall, cpu, main = time.perf_counter(), time.process_time(), time.thread_time()
                default, gzip_pages.COMPRESS_THREADS = gzip_pages.COMPRESS_THREADS, compress
                try:
                    with task_threads(arrow):  # Arrow's pool and the page compression threads, as a Spark task sets them
                        stats = call_hook(task.strategy, "execute_group", task=task)
                finally:
                    gzip_pages.COMPRESS_THREADS = default
                runs.append({"label": label, "wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
                             "main_thread_cpu": time.thread_time() - main, "files": len(stats),
                             "bytes": sum(s["fileSizeInBytes"] for s in stats)})  # fmt: skip
            finally:
                common.remove(copy)
    return {"runs": runs, "threads": threads}


if __name__ == "__main__":
    kind, payload = sys.argv[1], json.loads(sys.argv[2])
    print(json.dumps({"floor": floor, "delta": delta, "hudi": hudi, "session": session,
                                               "critical": critical}[kind](payload)))
