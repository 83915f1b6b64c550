"""The PySpark runtime: a session, and running group tasks as Spark tasks.

Spark only schedules here: each Spark task runs whole clustering groups in its Python worker (Arrow in, Arrow
out), so there is no shuffle and no JVM row conversion. ``parallelism`` bounds how many groups run at once.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
import time
from typing import Callable

from .. import errors
from ..plugins import call_hook
from .task import GroupTask

log = logging.getLogger(__name__)


def get_spark(master: str | None = None, app_name: str = "hudi-cluster", conf: dict[str, str] | None = None):
    """The active SparkSession, or a new one (``local[*]`` by default; ``spark-submit`` sets the master)."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    # under spark-submit the JVM already exists (PYSPARK_GATEWAY_PORT) and carries the cluster's master
    under_spark_submit = "PYSPARK_GATEWAY_PORT" in os.environ
    if master or not under_spark_submit:
        builder = builder.master(master or os.environ.get("SPARK_MASTER", "local[*]"))
    defaults = {
        "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false", "spark.python.worker.reuse": "true",
        "spark.sql.shuffle.partitions": "8",
    }  # fmt: skip
    for key, value in {**defaults, **(conf or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("HUDI_CLUSTER_SPARK_LOG_LEVEL", "WARN"))
    return spark


def _run_partition(tasks: list[GroupTask]):
    def run(partition_index, indices):
        from pyspark import TaskContext

        context = TaskContext.get()
        token = f"{partition_index}-{context.stageId()}-{context.taskAttemptId()}" if context else f"{partition_index}-0-0"
        for index in indices:
            task = tasks[index].with_write_token(token)
            stats = call_hook(task.strategy, "execute_group", task=task)
            yield index, list(stats or [])

    return run


def run_group_tasks(
    spark, tasks: list[GroupTask], parallelism: int, on_progress: Callable[[int, int], None] | None = None
) -> list[list[dict]]:
    """Run every group; returns each group's write stats, in task order. Raises if any group fails."""
    if not tasks:
        return []
    slots = max(1, min(parallelism, len(tasks)))
    context = spark.sparkContext
    job_group = f"hudi-cluster-{tasks[0].instant_time}-{time.monotonic_ns()}"
    context.setJobGroup(job_group, f"clustering {tasks[0].instant_time}: {len(tasks)} group(s)")
    done = threading.Event()
    watcher = threading.Thread(target=_watch, args=(context, job_group, len(tasks), slots, done, on_progress), daemon=True)
    watcher.start()
    try:
        # Largest groups first, spread round-robin, so the slots finish at about the same time.
        order = sorted(range(len(tasks)), key=lambda i: -tasks[i].group.num_output_file_groups)
        buckets = [order[i::slots] for i in range(slots)]
        try:
            results = context.parallelize(buckets, slots).flatMap(lambda x: x).mapPartitionsWithIndex(
                _run_partition(tasks)
            ).collect()
        except Exception as exc:  # a task's input error arrives wrapped in Py4J: give the user its own message
            raise _task_error(exc) from exc
    finally:
        done.set()
        watcher.join(timeout=5)
    by_index = dict(results)
    return [by_index[i] for i in range(len(tasks))]


_TASK_ERROR = re.compile(r"hudi_cluster_core\.errors\.(\w+): (.*)")


def _task_error(exc: Exception) -> Exception:
    found = _TASK_ERROR.search(str(exc))
    error_type = getattr(errors, found.group(1), None) if found else None
    if error_type is None:
        return exc
    return error_type(f"clustering task failed: {found.group(2)}")


def _watch(context, job_group, total_groups, slots, done, on_progress):
    """Report progress from Spark's status tracker while the job runs (per task, i.e. per group when slots >= groups)."""
    tracker = context.statusTracker()
    last = -1
    while not done.wait(1.0):
        finished = 0
        for job_id in tracker.getJobIdsForGroup(job_group):
            job = tracker.getJobInfo(job_id)
            for stage_id in job.stageIds if job else ():
                stage = tracker.getStageInfo(stage_id)
                finished += stage.numCompletedTasks if stage else 0
        if finished != last:
            last = finished
            if on_progress:
                on_progress(finished, slots)
