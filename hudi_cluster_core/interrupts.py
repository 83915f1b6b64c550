"""Ctrl-C and SIGTERM: one way to stop a run, whatever moment they land.

Both signals stop a run alike: Spark's jobs are cancelled and ``KeyboardInterrupt`` is raised in the main thread,
so the run rolls its instant back and the CLI says one line. A terminal's Ctrl-C and a container runtime's stop
signal the whole process group, Spark's JVM included, which shapes three rules:

* while a Spark session starts, the stop waits for the start to end: a JVM launch cut short leaves a JVM that no
  one stops, holding the process's output pipes;
* once a stop is under way, further signals are noted, not raised: the rollback must finish, or the instant
  stays pending until the next run;
* a failure after a stop was asked for (the JVM died of the same signal) is that stop, not an error of its own:
  :func:`requested` lets the run say "interrupted".

Handlers are installed by the CLI only (:func:`install`), in the main thread; an embedding application keeps its
own and gets Python's ``KeyboardInterrupt`` as usual.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)
_received: list[int] = []  # the signals of this process's stop, in order
_starting = threading.Event()


def requested() -> bool:
    """True once Ctrl-C or SIGTERM asked this process to stop."""
    return bool(_received)


def first_signal() -> int | None:
    return _received[0] if _received else None


def reset() -> None:
    _received.clear()


def install() -> dict[int, Any]:
    """Our handler for SIGINT and SIGTERM; returns the previous ones (empty when not the main thread)."""
    previous: dict[int, Any] = {}
    for signum in SIGNALS:
        try:
            previous[signum] = signal.signal(signum, _handle)
        except ValueError:  # not the main thread: leave the embedding application's handlers alone
            return {}
    return previous


def restore(previous: dict[int, Any]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)


def ignore() -> None:
    """For the process's last moments (Spark's and Python's exit hooks): the work is done, a signal changes nothing."""
    for signum in SIGNALS:
        signal.signal(signum, signal.SIG_IGN)


def _handle(signum, frame) -> None:
    first = not _received
    _received.append(signum)
    if not first or _starting.is_set():
        return  # a stop is under way, or it is acted on when the Spark session is up (see spark_starting)
    pyspark = sys.modules.get("pyspark")  # not imported here: a signal may land while it is being imported
    context = getattr(getattr(pyspark, "SparkContext", None), "_active_spark_context", None)
    if context is not None:
        context.cancelAllJobs()
    raise KeyboardInterrupt("terminated" if signum == signal.SIGTERM else "interrupted")


@contextmanager
def spark_starting() -> Iterator[None]:
    """Hold a stop while a Spark session starts; act on it once the start has ended, either way."""
    _starting.set()
    try:
        yield
    except Exception:
        if requested():  # the JVM got the signal too and died mid-start
            raise KeyboardInterrupt("stopped while Spark was starting") from None
        raise
    finally:
        _starting.clear()
    if requested():
        raise KeyboardInterrupt("stopped while Spark was starting")
