"""Named crash points for the crash-safety tests: ``HUDI_CLUSTER_FAILPOINT=<name>`` SIGKILLs the driver there.

The driver exports its pid as ``HUDI_CLUSTER_FAILPOINT_PID`` on first use so that a failpoint reached inside a
Spark task (a Python worker, whose environment is inherited) kills the driver, as a lost machine would.
``HUDI_CLUSTER_PAUSE=<name>=<seconds>`` sleeps there instead, so a test can start a second run while the first
is held mid-way; ``HUDI_CLUSTER_FAIL_FIRST_ATTEMPT=<name>`` raises there in a Spark task's first attempt, so Spark
retries it. Without the variables every call is three dictionary lookups and nothing else.
"""

from __future__ import annotations

import os
import signal
import time

ENV = "HUDI_CLUSTER_FAILPOINT"
PID_ENV = "HUDI_CLUSTER_FAILPOINT_PID"
PAUSE_ENV = "HUDI_CLUSTER_PAUSE"  # "<point>=<seconds>": sleep there (race tests hold a run mid-way)
# "<point>": raise there in the first attempt of every Spark task (Spark then retries it: retry tests)
FAIL_FIRST_ATTEMPT_ENV = "HUDI_CLUSTER_FAIL_FIRST_ATTEMPT"
POINTS = (
    "after-requested", "after-inflight", "task-after-first-file", "after-tasks", "before-commit-file",
    "after-commit-file",
)  # fmt: skip
# inside the clustering commit when the metadata table is kept (run/commit.py): MDT deltacommit inflight, its log
# files written, its completion written (the data replacecommit not yet); and in a rollback, once the MDT
# deltacommit of the rolled-back instant is gone (reached by every rollback, MDT or not)
MDT_POINTS = ("mdt-after-inflight", "mdt-after-log-files", "mdt-after-deltacommit", "rollback-after-mdt")
# inside our writers' commit (write/instant.py): the instant's data files are written, nothing committed yet
WRITER_POINTS = ("write-after-files",)
# inside a rollback (run/rollback.py), reached when a run recovers an earlier failed one
ROLLBACK_POINTS = (
    "rollback-after-requested", "rollback-after-inflight", "rollback-mid-delete",
    "rollback-after-instant-inflight-deleted", "rollback-before-complete",
)  # fmt: skip


def arm_driver() -> None:
    if os.environ.get(ENV):
        os.environ.setdefault(PID_ENV, str(os.getpid()))


def failpoint(name: str) -> None:
    if os.environ.get(ENV) == name:
        os.kill(int(os.environ.get(PID_ENV, os.getpid())), signal.SIGKILL)
    pause = os.environ.get(PAUSE_ENV)
    if pause and pause.partition("=")[0] == name:
        time.sleep(float(pause.partition("=")[2] or 5))
    if os.environ.get(FAIL_FIRST_ATTEMPT_ENV) == name:
        _fail_first_attempt(name)


def _fail_first_attempt(name: str) -> None:
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is not None and context.attemptNumber() == 0:
        raise RuntimeError(f"failpoint {name}: first attempt of Spark task {context.partitionId()} fails")
