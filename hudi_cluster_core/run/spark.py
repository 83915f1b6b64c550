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
from typing import Any

from .. import errors
from ..plugins import call_hook
from .progress import JobProgress
from .spark_settings import check_active_conf, executor_environment_problem
from .task import GroupTask

log = logging.getLogger(__name__)


def get_spark(master: str | None = None, app_name: str = "hudi-cluster", conf: dict[str, str] | None = None):
    """The active SparkSession, or a new one (``local[*]`` by default; ``spark-submit`` sets the master).

    ``conf`` (e.g. from :func:`spark_settings.session_conf`) applies to a new session; an active one must already
    have it (a JVM or executor setting cannot change once they run): otherwise this raises, naming the key."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        check_active_conf(active.sparkContext.getConf(), conf or {})
        for key, value in (conf or {}).items():
            if key.startswith("spark.sql."):
                active.conf.set(key, value)
        return active
    if conf and "spark.pyspark.python" in conf:  # the Python the executors run is read from the environment
        os.environ["PYSPARK_PYTHON"] = conf["spark.pyspark.python"]
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
    if not under_spark_submit:  # our own quiet console log; under spark-submit the cluster's config stands
        log4j = os.path.join(os.path.dirname(__file__), "log4j2.properties")
        defaults["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile=file:{log4j}"
    for key, value in {**defaults, **(conf or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("HUDI_CLUSTER_SPARK_LOG_LEVEL", "WARN"))
    return spark


def _run_partition(tasks: list[GroupTask], group_bytes: list[int], finished):
    def run(partition_index, indices):
        from pyspark import TaskContext

        context = TaskContext.get()
        token = f"{partition_index}-{context.stageId()}-{context.taskAttemptId()}" if context else f"{partition_index}-0-0"
        for index in indices:
            task = tasks[index].with_write_token(token)
            stats = list(call_hook(task.strategy, "execute_group", task=task) or [])
            finished.add((1, group_bytes[index]))  # progress: merged on the driver when this Spark task ends
            yield index, stats

    return run


def run_group_tasks(
    spark, tasks: list[GroupTask], parallelism: int, group_bytes: list[int] | None = None
) -> list[list[dict]]:
    """Run every group; returns each group's write stats, in task order. Raises if any group fails.
    ``group_bytes`` (each group's input bytes) weighs the progress report; measured here when not given."""
    if not tasks:
        return []
    slots = max(1, min(parallelism, len(tasks)))
    context = spark.sparkContext
    job_group = f"hudi-cluster-{tasks[0].instant_time}-{time.monotonic_ns()}"
    # Largest groups first, spread round-robin, so the slots finish at about the same time.
    order = sorted(range(len(tasks)), key=lambda i: -tasks[i].group.num_output_file_groups)
    buckets = [order[i::slots] for i in range(slots)]
    outcome: dict[str, Any] = {}
    sizes = group_bytes if group_bytes is not None else [task.input_bytes() for task in tasks]
    progress = JobProgress(context, job_group, f"clustering {tasks[0].instant_time}", sizes)

    def collect() -> None:  # in its own thread, so a signal never lands in the middle of a Py4J call
        try:
            context.setJobGroup(job_group, f"clustering {tasks[0].instant_time}: {len(tasks)} group(s)")
            outcome["results"] = context.parallelize(buckets, slots).flatMap(lambda x: x).mapPartitionsWithIndex(
                _run_partition(tasks, sizes, progress.finished)
            ).collect()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            outcome["error"] = exc

    runner = threading.Thread(target=collect, name=f"collect-{tasks[0].instant_time}", daemon=True)
    progress.start()
    runner.start()
    try:
        while runner.is_alive():
            runner.join(0.2)
    except BaseException:  # Ctrl-C / SIGTERM: stop the tasks before the caller rolls their files back
        _cancel_and_wait(context, job_group)
        runner.join(30)
        raise
    finally:
        progress.finish(ok="results" in outcome)
    if "error" in outcome:  # a task's input error arrives wrapped in Py4J: give the user its own message
        error = outcome["error"]
        _cancel_and_wait(context, job_group)
        raise _task_error(error) from error
    by_index = dict(outcome["results"])
    return [by_index[i] for i in range(len(tasks))]


def _cancel_and_wait(context, job_group: str, timeout_s: float = 60.0) -> None:
    """Cancel the job group and wait until none of its tasks still runs, so no task writes a file after the
    caller's rollback deleted the partial ones."""
    try:
        context.cancelJobGroup(job_group)
        tracker = context.statusTracker()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            jobs = [tracker.getJobInfo(j) for j in tracker.getJobIdsForGroup(job_group)]
            if all(job is None or job.status not in ("RUNNING", "UNKNOWN") for job in jobs):
                stages = [tracker.getStageInfo(s) for job in jobs if job for s in job.stageIds]
                if all(stage is None or stage.numActiveTasks == 0 for stage in stages):
                    return
            time.sleep(0.2)
        log.warning("tasks of %s still running after %.0f s", job_group, timeout_s)
    except Exception as exc:  # noqa: BLE001 - the JVM may already be gone; the rollback still runs
        log.debug("could not cancel %s: %s", job_group, exc)


_TASK_ERROR = re.compile(r"hudi_cluster_core\.errors\.(\w+): (.*)")


_JVM_FRAMES = "\n\tat org.apache.spark.api.python."


def _task_error(exc: BaseException) -> BaseException:
    """Our own error types keep their type; any other task failure becomes one line: the Python exception's
    last line (e.g. ``pyarrow.lib.ArrowInvalid: ...``), without Spark's and Py4J's traces."""
    text = str(exc)
    context = _active_context()
    environment = executor_environment_problem(text, getattr(context, "pythonExec", None))
    if environment:
        return errors.ConfigError(environment)
    found = _TASK_ERROR.search(text)
    error_type = getattr(errors, found.group(1), None) if found else None
    if found and error_type is not None:
        return error_type(f"clustering task failed: {found.group(2)}")
    if "PythonException" not in text:
        return exc
    lines = [line for line in text.split(_JVM_FRAMES, 1)[0].splitlines() if line.strip()]
    return errors.RunFailed(f"a clustering task failed: {lines[-1].strip()[:500]}" if lines else "a clustering task failed")


def _active_context():
    from pyspark import SparkContext

    return SparkContext._active_spark_context
