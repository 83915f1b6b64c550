"""The PySpark runtime: a session, and running group tasks as Spark tasks.

Spark only schedules here: each Spark task runs one unit of work, a whole clustering group or one key range of a
large one, in its Python worker (Arrow in, Arrow out), so there is no shuffle and no JVM row conversion.
``parallelism`` bounds how many groups run at once.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

from .. import errors, interrupts
from . import jvm_archive
from .progress import spark_job_progress
from .spark_settings import check_active_conf, executor_environment_problem
from .task import GroupTask
from .unit_work import jobs_in_order, run_unit

log = logging.getLogger(__name__)
LOG4J = Path(__file__).resolve().parent / "log4j2.properties"  # our console log for Spark (run/log4j2.properties)
# a local master's driver JVM only schedules (the rows stay in Python workers), so it keeps a small heap: C1 alone
# starts faster and burns no CPU on C2 compiles; the serial collector starts no GC threads (5% less CPU a run)
LOCAL_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
# spark-submit's launch script first runs a JVM of its own that only prints the driver JVM's command line (a few
# tenths of a second of CPU): the same options cut it by about 40% (SPARK_LAUNCHER_OPTS, where not set already)
LAUNCHER_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def get_spark(master: str | None = None, app_name: str = "hudi-cluster", conf: dict[str, str] | None = None, *,
              hold_signals: bool = True):
    """The active SparkSession, or a new one (``local[*]`` by default; ``spark-submit`` sets the master).

    ``conf`` (e.g. from :func:`spark_settings.session_conf`) applies to a new session; an active one must already
    have it (a JVM or executor setting cannot change once they run): otherwise this raises, naming the key.
    ``hold_signals``: a Ctrl-C or SIGTERM during the start is acted on once it has ended (``interrupts``); off for
    a start in a thread of its own (``session_start``), which a signal never interrupts."""
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
    verbose = log.isEnabledFor(logging.DEBUG)  # -v: Spark's own console log, INFO lines and all
    if under_spark_submit and not verbose:
        _quiet_default_log()
    if not under_spark_submit:  # our own quiet console log (under spark-submit: _quiet_default_log)
        os.environ.setdefault("SPARK_LAUNCHER_OPTS", LAUNCHER_JVM_OPTIONS)
        log4j_options = "" if verbose else f"-Dlog4j2.configurationFile={LOG4J.as_uri()}"
        defaults["spark.driver.extraJavaOptions"] = log4j_options
        effective_master = master or os.environ.get("SPARK_MASTER", "local[*]")
        if effective_master.startswith("local"):
            # the JVM only schedules (rows stay in Python): see LOCAL_JVM_OPTIONS; Spark's classes come from the
            # set-up's class archive (run/jvm_archive.py); the workers fork from a daemon that has the task's
            # imports done (run/worker_daemon.py)
            java = f"{log4j_options} {LOCAL_JVM_OPTIONS} {jvm_archive.java_options()}"
            defaults["spark.driver.extraJavaOptions"] = java.strip()
            defaults["spark.python.daemon.module"] = "hudi_cluster_core.run.worker_daemon"
    if not defaults.get("spark.driver.extraJavaOptions"):
        defaults.pop("spark.driver.extraJavaOptions", None)
    for key, value in {**defaults, **(conf or {})}.items():
        builder = builder.config(key, value)
    if hold_signals:
        with interrupts.spark_starting():  # a Ctrl-C or SIGTERM now is acted on once the start has ended
            spark = builder.getOrCreate()
    else:
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("HUDI_CLUSTER_SPARK_LOG_LEVEL", "INFO" if verbose else "WARN"))
    return spark


def _quiet_default_log() -> None:
    """Under spark-submit, a JVM logging by Spark's built-in defaults (INFO on the console: no log4j2 file of the
    cluster's) switches to ours before the session starts, so its start-up INFO lines stay out of the output.
    A cluster's own log4j2 configuration is left as it is."""
    from pyspark import SparkContext

    try:
        SparkContext._ensure_initialized()  # the JVM spark-submit started (PYSPARK_GATEWAY_PORT)
        jvm = SparkContext._jvm
        assert jvm is not None
        source = jvm.org.apache.logging.log4j.LogManager.getContext(False).getConfiguration().getConfigurationSource()
        location = str(source.getLocation() or "")
        if location and not location.endswith("log4j2-defaults.properties"):
            return
        jvm.org.apache.logging.log4j.core.config.Configurator.reconfigure(jvm.java.net.URI(LOG4J.as_uri()))
    except Exception as exc:  # noqa: BLE001 - only the console log's verbosity is at stake
        log.debug("could not quiet Spark's console log: %s", exc)


def _run_units(units: list[GroupTask], unit_ids: list[int], unit_bytes: list[int], finished, channel):
    """The function of one group's Spark job: partition ``i`` runs unit ``i`` of the group (``unit_ids[i]`` of the
    run; :func:`unit_work.run_unit`). ``channel``: ``(address, token)`` the task sends its progress to. Yields
    ``(i, write stats, rows read, when the task began)``."""

    def run(partition_index, _items):
        from pyspark import TaskContext

        context = TaskContext.get()
        stage, attempt = (context.stageId(), context.taskAttemptId()) if context else (0, 0)
        stats, rows, began = run_unit(units[partition_index], partition_index, unit_ids[partition_index],
                                      unit_bytes[partition_index], channel, stage, attempt)  # fmt: skip
        # progress: merged on the driver when this Spark task ends
        finished.add((1, unit_bytes[partition_index], frozenset((unit_ids[partition_index],))))
        yield partition_index, stats, rows, began

    return run


def run_group_tasks(
    spark, tasks: list[GroupTask], parallelism: int, group_bytes: list[int] | None = None,
    rows_read: list[int] | None = None, task_starts: list[float] | None = None,
) -> list[list[dict]]:
    """Run every task; returns each task's write stats, in task order. Raises if any task fails.

    Tasks of one group (its key-range units, ``task.unit`` of ``task.units``) form one Spark job with one Spark
    task per unit; up to ``parallelism`` groups' jobs run at once (Hudi's ``hoodie.clustering.max.parallelism``
    model: a job per group), largest groups first, and Spark hands every free core the next waiting task, so a
    large group split in ranges keeps all cores busy while small groups come and go. ``group_bytes`` (each task's
    input bytes) weighs the progress report; measured here when not given. ``rows_read``, when given, gets each
    group's rows read by its tasks (appended in task order: a group's count at its first unit, 0 at the others);
    ``task_starts``, when given, gets when each task began in its worker (``time.time()``, in task order)."""
    if not tasks:
        return []
    context = spark.sparkContext
    job_group = f"hudi-cluster-{tasks[0].instant_time}-{time.monotonic_ns()}"
    jobs, sizes = jobs_in_order(tasks, group_bytes)
    slots = max(1, min(parallelism, len(jobs)))
    outcome: dict[str, Any] = {"results": {}, "rows": {}, "began": {}}
    pending = list(reversed(jobs))
    lock = threading.Lock()

    def work() -> None:  # each in its own thread, so a signal never lands in the middle of a Py4J call
        while True:
            with lock:
                if "error" in outcome or not pending:
                    return
                indices = pending.pop()
            units = [tasks[i] for i in indices]
            try:
                context.setJobGroup(job_group, f"clustering {tasks[0].instant_time}: {len(tasks)} task(s)")
                results = context.parallelize(range(len(units)), len(units)).mapPartitionsWithIndex(
                    _run_units(units, indices, [sizes[i] for i in indices], progress.finished, channel)
                ).collect()
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                with lock:
                    outcome.setdefault("error", exc)
                return
            with lock:
                outcome["results"].update({indices[unit]: stats for unit, stats, _, _ in results})
                outcome["rows"].update({indices[unit]: rows for unit, _, rows, _ in results})
                outcome["began"].update({indices[unit]: began for unit, _, _, began in results})

    progress = spark_job_progress(context, job_group, f"clustering {tasks[0].instant_time}", sizes)
    runners = [
        threading.Thread(target=work, name=f"collect-{tasks[0].instant_time}-{n}", daemon=True) for n in range(slots)
    ]
    progress.start()
    channel = (progress.address, progress.token)
    for runner in runners:
        runner.start()
    cancelled = False
    try:
        for runner in runners:
            while runner.is_alive():
                runner.join(0.2)
                if "error" in outcome and not cancelled:  # stop the other groups' tasks now, not when they end
                    cancelled = True
                    _cancel_and_wait(context, job_group)
    except BaseException:  # Ctrl-C / SIGTERM: stop the tasks before the caller rolls their files back
        with lock:
            outcome.setdefault("error", KeyboardInterrupt())
        _cancel_and_wait(context, job_group)
        for runner in runners:
            runner.join(30)
        raise
    finally:
        progress.finish(ok="error" not in outcome)
    if "error" in outcome:  # a task's input error arrives wrapped in Py4J: give the user its own message
        error = outcome["error"]
        _cancel_and_wait(context, job_group)
        raise _task_error(error) from error
    by_index = outcome["results"]
    if rows_read is not None:
        rows_read.extend(outcome["rows"][i] for i in range(len(tasks)))
    if task_starts is not None:
        task_starts.extend(outcome["began"][i] for i in range(len(tasks)))
    return [by_index[i] for i in range(len(tasks))]


class SparkEngine:
    """A Spark session as the engine a clustering's units run on (``unit_work.Engine``): a Spark job per group."""

    def __init__(self, spark):
        self.spark = spark

    @property
    def cores(self) -> int:
        return int(self.spark.sparkContext.defaultParallelism)

    @property
    def python_memory(self) -> str | None:
        return None if self.spark is None else self.spark.sparkContext.getConf().get("spark.executor.pyspark.memory")

    def run_units(self, tasks: list[GroupTask], parallelism: int, group_bytes: list[int] | None = None,
                  rows_read: list[int] | None = None, task_starts: list[float] | None = None) -> list[list[dict]]:  # fmt: skip
        return run_group_tasks(self.spark, tasks, parallelism, group_bytes, rows_read, task_starts)


def engine_of(spark):
    """``spark`` as a ``unit_work.Engine``: a local run's pool as it is, a Spark session (or None) adapted."""
    return spark if hasattr(spark, "run_units") else SparkEngine(spark)


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
