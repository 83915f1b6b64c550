"""Named crash points for the crash-safety tests: ``HUDI_CLUSTER_FAILPOINT=<name>`` SIGKILLs the driver there.

The driver exports its pid as ``HUDI_CLUSTER_FAILPOINT_PID`` on first use so that a failpoint reached inside a
Spark task (a Python worker, whose environment is inherited) kills the driver, as a lost machine would.
``HUDI_CLUSTER_PAUSE=<name>=<seconds>`` sleeps there instead, so a test can start a second run while the first
is held mid-way; ``HUDI_CLUSTER_FAIL_FIRST_ATTEMPT=<name>`` raises there in a Spark task's first attempt, so Spark
retries it. ``HUDI_CLUSTER_CORRUPT=<how>[:<column>]@<key>`` alters the row of record key ``<key>`` (``*``: the
first row of the first rows written) on its way to the parquet writer, once per process (``value``: its
``<column>`` changed; ``move``: its ``<column>`` swapped with another row's; ``drop``: the row left out;
``duplicate``: written twice), so tests can prove the rewrite check (run/digest.py) stops it. Without the
variables every call is three dictionary lookups and nothing else. ``HUDI_CLUSTER_FAILPOINT_SKIP=<n>`` lets the
driver pass its failpoint n times before it kills there (the second instant of a partial-progress run, say).
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import time
from typing import Any

ENV = "HUDI_CLUSTER_FAILPOINT"
PID_ENV = "HUDI_CLUSTER_FAILPOINT_PID"
# "<n>": the first n times a process passes the failpoint it goes on, then it kills: a point of a later instant of
# a partial-progress run. Counted per process, so meant for the driver's points (a Spark task's workers each count
# their own).
SKIP_ENV = "HUDI_CLUSTER_FAILPOINT_SKIP"
_passed = 0
PAUSE_ENV = "HUDI_CLUSTER_PAUSE"  # "<point>=<seconds>": sleep there (race tests hold a run mid-way)
# "<point>": raise there in the first attempt of every Spark task (Spark then retries it: retry tests)
FAIL_FIRST_ATTEMPT_ENV = "HUDI_CLUSTER_FAIL_FIRST_ATTEMPT"
CORRUPT_ENV = "HUDI_CLUSTER_CORRUPT"  # "<how>[:<column>]@<key>": alter one row between read and write (tests)
_corrupted = False
POINTS = (
    "after-requested", "after-inflight", "task-after-first-file", "after-tasks", "before-commit-file",
    "after-commit-file",
)  # fmt: skip
# inside the clustering commit when the metadata table is kept (run/commit.py): MDT deltacommit inflight, its log
# files written, its completion written (the data replacecommit not yet); and in a rollback, once the MDT
# deltacommit of the rolled-back instant is gone (reached by every rollback, MDT or not)
MDT_POINTS = ("mdt-after-inflight", "mdt-after-log-files", "mdt-after-deltacommit", "rollback-after-mdt")
# inside our writers' commit (writer/instant.py): the instant's data files are written, nothing committed yet
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
    global _passed
    if os.environ.get(ENV) == name:
        if _passed < int(os.environ.get(SKIP_ENV) or 0):
            _passed += 1
        else:
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


def corrupt(table: Any) -> Any:
    """``table`` (a pyarrow Table on its way to the parquet writer) altered as ``HUDI_CLUSTER_CORRUPT`` says, once
    per process, when it holds the row of that key; else ``table`` itself."""
    spec = os.environ.get(CORRUPT_ENV)
    if not spec or _corrupted or "_hoodie_record_key" not in table.column_names:
        return table
    how, _, key = spec.rpartition("@")
    if key == "*":
        return _corrupt(table, how, 0) if table.num_rows > 1 else table
    keys = table.column("_hoodie_record_key").to_pylist()
    if key not in keys:
        return table
    return _corrupt(table, how, keys.index(key))


def _corrupt(table: Any, how: str, row: int) -> Any:
    import pyarrow as pa

    global _corrupted
    kind, _, column = how.partition(":")
    if kind == "drop":
        _corrupted = True
        return pa.concat_tables([table.slice(0, row), table.slice(row + 1)])
    if kind == "duplicate":
        _corrupted = True
        return pa.concat_tables([table, table.slice(row, 1)])
    values = table.column(column).to_pylist()
    if kind == "move":
        other = next((i for i, v in enumerate(values) if v != values[row]), None)
        if other is None:
            return table  # every row holds this value: nothing to move here
        values[row], values[other] = values[other], values[row]
    elif kind == "value":
        values[row] = _changed(values[row])
    else:
        raise ValueError(f"{CORRUPT_ENV}={os.environ.get(CORRUPT_ENV)!r}: accepted: value|move:<column>@<key>, "
                         "drop|duplicate@<key>")  # fmt: skip
    _corrupted = True
    field = table.schema.field(column)
    return table.set_column(table.schema.get_field_index(column), field, pa.array(values, field.type))


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, str):
        return value + "~"
    if isinstance(value, bytes):
        return value + b"~"
    if isinstance(value, (dt.date, dt.datetime)):
        return value + dt.timedelta(days=1)
    if value is None:
        return 1
    return value + 1  # ints, floats, decimals
