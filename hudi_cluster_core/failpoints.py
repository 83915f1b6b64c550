"""Named crash points for the crash-safety tests: ``HUDI_CLUSTER_FAILPOINT=<name>`` SIGKILLs the driver there.

The driver exports its pid as ``HUDI_CLUSTER_FAILPOINT_PID`` on first use so that a failpoint reached inside a
Spark task (a Python worker, whose environment is inherited) kills the driver, as a lost machine would.
Without the variable every call is a dictionary lookup and nothing else.
"""

from __future__ import annotations

import os
import signal

ENV = "HUDI_CLUSTER_FAILPOINT"
PID_ENV = "HUDI_CLUSTER_FAILPOINT_PID"
POINTS = (
    "after-requested", "after-inflight", "task-after-first-file", "after-tasks", "before-commit-file",
    "after-commit-file",
)  # fmt: skip


def arm_driver() -> None:
    if os.environ.get(ENV):
        os.environ.setdefault(PID_ENV, str(os.getpid()))


def failpoint(name: str) -> None:
    if os.environ.get(ENV) == name:
        os.kill(int(os.environ.get(PID_ENV, os.getpid())), signal.SIGKILL)
