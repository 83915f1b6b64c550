"""What the run's Spark flags mean as Spark settings, checked before anything is written.

``--spark-memory`` is HoodieClusteringJob's: it sets ``spark.executor.memory``. With a local master the tasks run
inside the driver's JVM, so there it is ``spark.driver.memory``, which only a JVM not yet started can take: under
``spark-submit`` (the JVM is up) that is refused with what to do instead. ``--parallelism`` bounds how many groups
run at once (the runtime's task count) and, for a session we build, is ``spark.default.parallelism``.
``--spark-conf KEY=VALUE`` passes any other Spark setting (``spark.archives``, ``spark.pyspark.python``...).
Nothing is ignored: a setting that cannot apply to the session at hand is an error naming it.
"""

from __future__ import annotations

import os
import re
from typing import Iterable

from ..errors import ConfigError

# the JVM's size syntax, as spark.driver.memory / spark.executor.memory take it (a bare number is MiB)
JVM_SIZE = re.compile(r"^\d+[kmgt]?b?$", re.IGNORECASE)
# the master URLs spark-submit accepts (SparkSubmit / SparkContext.createTaskScheduler)
MASTER_URL = re.compile(r"^(local(\[(\*|\d+)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]|spark://\S+|yarn|k8s://\S+|mesos://\S+)$")
# where a packed environment is explained: the one-line hints for executors that lack our packages name it
CLUSTER_DOC = "README, 'On a Spark cluster'"


def parse_spark_conf(pairs: Iterable[str]) -> dict[str, str]:
    """``--spark-conf KEY=VALUE`` entries; each key must be a Spark setting (``spark.``...)."""
    conf: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key.startswith("spark.") or not value.strip():
            raise ConfigError(f"--spark-conf {pair!r}: accepted: KEY=VALUE with a Spark key (spark.executor.memory=4g)")
        conf[key] = value.strip()
    return conf


def jvm_running() -> bool:
    """A driver JVM already exists: spark-submit started this process, or a SparkContext is active."""
    from pyspark import SparkContext

    return "PYSPARK_GATEWAY_PORT" in os.environ or SparkContext._active_spark_context is not None


def submitted_master() -> str | None:
    """The master spark-submit was given (None when not under spark-submit or when it gave none)."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return None
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()  # connects to spark-submit's JVM (no context yet), whose properties hold it
    return SparkConf().get("spark.master", None)


def session_conf(
    master: str | None, memory: str | None = None, parallelism: int | None = None, pairs: Iterable[str] = ()
) -> dict[str, str]:
    """The Spark settings for a run's flags; raises :class:`ConfigError` for a value that is wrong or cannot apply."""
    from pyspark import SparkContext

    conf = parse_spark_conf(pairs)
    if master is not None and not MASTER_URL.match(master):
        raise ConfigError(f"--spark-master {master!r}: accepted: local, local[N], local[*], spark://HOST:PORT, yarn, "
                          f"k8s://HOST:PORT")  # fmt: skip
    check_parallelism(parallelism)
    active = SparkContext._active_spark_context is not None
    if parallelism is not None and not active:
        conf.setdefault("spark.default.parallelism", str(parallelism))
    if memory is None:
        return conf
    if not JVM_SIZE.match(memory.strip()):
        raise ConfigError(f"--spark-memory {memory!r}: accepted: a JVM size such as 512m, 4g")
    memory = memory.strip()
    effective = master or submitted_master() or os.environ.get("SPARK_MASTER", "local[*]")
    if effective.startswith("local"):
        if jvm_running():
            raise ConfigError(
                f"--spark-memory {memory}: with the local master {effective} tasks run in the driver's JVM, which is "
                f"already running; give spark-submit --driver-memory {memory} instead"
            )
        conf["spark.driver.memory"] = memory
    else:
        if active:
            raise ConfigError(
                f"--spark-memory {memory}: the Spark session's executors are already started; set "
                f"spark.executor.memory={memory} where that session is built"
            )
        conf["spark.executor.memory"] = memory
    return conf


def check_parallelism(parallelism: int | None) -> None:
    if parallelism is not None and parallelism < 1:
        raise ConfigError(f"--parallelism {parallelism}: accepted: a whole number of 1 or more")


def check_active_conf(active_conf, conf: dict[str, str]) -> None:
    """An already running session takes no new JVM or executor setting: one that differs is an error, not ignored.
    (``spark.sql.*`` settings are runtime settings; the caller sets those.)"""
    for key, value in conf.items():
        if key.startswith("spark.sql."):
            continue
        current = active_conf.get(key, None)
        if current != value:
            raise ConfigError(
                f"Spark setting {key}={value} cannot apply: a Spark session is already running with "
                f"{key}={current if current is not None else '(unset)'}; set it where that session is built"
            )


_MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
_NO_PYTHON = re.compile(r'Cannot run program "([^"]+)"[^\n]*?(error=\d+, [^\n)]*)')


def executor_environment_problem(text: str, python: str | None) -> str | None:
    """One line for a task failure caused by the executors' Python environment (None for any other failure)."""
    how = (f"pack them with scripts/pack-executor-env and ship them with spark.archives=hudi-cluster-env.tar.gz#env "
           f"and PYSPARK_PYTHON=./env/bin/python ({CLUSTER_DOC})")  # fmt: skip
    missing = _MISSING_MODULE.search(text)
    if missing:
        return (f"the executors' Python ({python or 'python3'}) cannot import {missing.group(1)}: it lacks "
                f"hudi-cluster and its plugins; {how}")  # fmt: skip
    no_python = _NO_PYTHON.search(text)
    if no_python:
        return f"the executors cannot start Python {no_python.group(1)} ({no_python.group(2).strip()}); {how}"
    return None


_JAVA_EXCEPTION = re.compile(r"^[\s:]*(?:Caused by: )?((?:[a-z]\w*\.)+\w*(?:Exception|Error)\b.*)$", re.M)


def session_start_problem(exc: BaseException) -> str:
    """One line for a Spark session that would not start (a bad master URL, a missing event-log folder...): the
    first Java exception in Py4J's text, without the stack."""
    text = str(exc)
    found = _JAVA_EXCEPTION.search(text)
    reason = found.group(1).strip() if found else (text.strip().splitlines() or [type(exc).__name__])[0]
    return f"the Spark session could not start: {reason[:500]}"
