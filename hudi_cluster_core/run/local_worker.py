"""A local run's worker process (run/local_pool.py): it runs the units of work its driver sends, one at a time.

Imported once by the pool's fork server before it forks workers, so each worker starts with the task's modules
(pyarrow, pandas, the writers, the sort orders) already imported, as Spark's worker daemon does for Spark's
workers (run/worker_daemon.py). What the driver and a worker say to each other, over one pipe:

* driver -> worker: ``pickle((index, unit, unit_id, unit_bytes, channel, attempt, environment))``, or ``b""`` to
  stop; ``environment`` is the driver's ``HUDI_CLUSTER_*`` variables now (the fork server's are its start's);
* worker -> driver: ``pickle(("ok", stats, rows_read, began))`` or ``pickle(("error", type name, message))``.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import signal
import sys
from typing import Any

import encodings.idna  # noqa: F401 - the progress channel's connection to the driver (a host name)

import pyarrow as pa
import pyarrow.dataset  # noqa: F401 - a whole base file's read (pq.read_table)
import pyarrow.parquet  # noqa: F401

from .. import errors
from ..io import local_store  # noqa: F401 - a local table's storage
from ..sort import curves  # noqa: F401 - the sort orders
from ..write import gzip_pages
from .unit_work import run_unit

gzip_pages.available()  # imports libdeflate, the pages' compressor, where installed
pa.array([0])  # pyarrow imports pandas at its first conversion of Python values: once here, not in every worker
ENV_PREFIX = "HUDI_CLUSTER_"
PR_SET_PDEATHSIG = 1


def serve(connection) -> None:
    """The worker's loop. A worker dies with its parent (the fork server, which exits when the driver does), so a
    driver killed mid-run leaves no task writing; Ctrl-C is the driver's to act on (it ends the workers)."""
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            message = connection.recv_bytes()
        except (EOFError, OSError):
            return
        if not message:
            return
        reply: tuple
        try:
            index, unit, unit_id, unit_bytes, channel, attempt, environment = pickle.loads(message)
            for key in [k for k in os.environ if k.startswith(ENV_PREFIX) and k not in environment]:
                del os.environ[key]
            os.environ.update(environment)
            stats, rows, began = run_unit(unit, index, unit_id, unit_bytes, channel, 0, attempt)
            reply = ("ok", stats, rows, began)
        except BaseException as exc:  # noqa: BLE001 - said to the driver, which fails the run
            reply = ("error", _type_name(exc), str(exc))
        connection.send_bytes(pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))


def _type_name(exc: BaseException) -> str:
    """``ConfigError`` for our own errors (the driver raises the same type), else the name a traceback's last line
    gives (``ValueError``, ``pyarrow.lib.ArrowInvalid``)."""
    kind = type(exc)
    if isinstance(exc, errors.HudiClusterError) and getattr(errors, kind.__name__, None) is kind:
        return f"hudi_cluster_core.errors.{kind.__name__}"
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _die_with_parent() -> None:
    """SIGKILL when the parent process (the fork server) ends, which it does when the driver does (Linux's
    PR_SET_PDEATHSIG); elsewhere a worker ends at its next read of the driver's pipe."""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent ended before the call above
        os._exit(1)
    # multiprocessing hands every worker the write end of the pipe whose end tells the fork server its driver has
    # gone: held here too, it would keep the server (so this worker) alive after the driver's death
    from multiprocessing import forkserver

    server: Any = forkserver._forkserver  # noqa: SLF001
    alive = getattr(server, "_forkserver_alive_fd", None)
    if alive is not None:
        os.close(alive)
        server._forkserver_alive_fd = None
