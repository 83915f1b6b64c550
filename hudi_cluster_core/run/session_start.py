"""The Spark session started in a thread while the driver plans, so the JVM's start (seconds) and the plan overlap.

Only for a session this run builds from nothing (no SparkContext in the process, not under ``spark-submit``, whose
JVM is already up). What changes against a start in the main thread, and why it is safe:

* a Ctrl-C or SIGTERM stops the run at once (the planning is interrupted as before); a signal never cuts the start
  short (signals reach the main thread only), so pyspark's state is never left half set in a process that goes
  on; the command line's process ends the JVM as below;
* a start that fails is said when the run needs the session (one line, as before: ``_session`` in ``api``), never
  earlier, so a bad table or plan is still the error a run reports first;
* a run that ends without executing (nothing to cluster, a failed plan) never waits for the session: the
  command line, as its process ends, sends a JVM still launching SIGTERM (:func:`end_unused_launches`, with the
  ``spark-submit`` scripts that launch it), since it holds the process's output pipes until it exits, and a
  caller reading them (``hudi-cluster run | ...``) would wait for the whole start of a JVM no one uses; one
  already up exits when the process's end closes its stdin, as every JVM pyspark launches. Such a run still pays
  the CPU the JVM used meanwhile (about a second on two cores), against seconds saved by every run that executes.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any, Callable, Iterable

from ..errors import HudiClusterError

class BackgroundSession:
    """``start()`` (which builds the session) run in a daemon thread; :meth:`result` waits for it."""

    def __init__(self, start: Callable[[], Any]):
        self._start = start
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._session: Any = None
        self._error: BaseException | None = None
        self._handed_out = False
        self.seconds = 0.0  # how long the start took (it overlaps whatever the main thread did meanwhile)
        self._thread = threading.Thread(target=self._run, name="spark-session-start", daemon=True)
        self._children_before: set[int] = set()

    def begin(self) -> BackgroundSession:
        self._children_before = set(_children(os.getpid()))
        self._thread.start()
        return self

    def _run(self) -> None:
        began = time.monotonic()
        session, error = None, None
        try:
            session = self._start()
        except BaseException as exc:  # noqa: BLE001 - handed to the thread that needs the session
            error = exc
        with self._lock:
            self.seconds = time.monotonic() - began
            self._session, self._error = session, error
        self._done.set()

    def result(self) -> Any:
        """The session, once started (raises what the start raised). Waits in short steps, so a Ctrl-C or SIGTERM
        reaches the main thread while it waits."""
        while not self._done.wait(0.05):
            pass
        if self._error is not None:
            raise self._error
        self._handed_out = True
        return self._session

    def close(self) -> None:
        """The run ended. A session it took is the caller's, as before; one it never took stays the process's
        session once started (as a run's session always did), or is ended by :func:`end_unused_launches`."""
        for key in [k for k, started in _pending.items() if started is self]:
            del _pending[key]
        if not self._handed_out and self not in _unused:
            _unused.append(self)

    def end_launch(self) -> None:
        """SIGTERM to the JVM this start is still launching and the scripts launching it (children of this process
        born since :meth:`begin` whose command line names Spark), and to their own children."""
        if self._done.is_set():
            return
        launched = [pid for pid in _children(os.getpid()) if pid not in self._children_before and _is_spark(pid)]
        # parents first: a script whose child died first would say so on stderr ("bad array subscript")
        for pid in launched + [p for root in launched for p in _descendants(root)]:
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:  # already gone
                pass


# starts not closed yet, by their flags: the command line begins one before it imports the run's modules and opens
# the table, and the run it then makes takes that one
_pending: dict[tuple, BackgroundSession] = {}
_unused: list[BackgroundSession] = []  # closed without their session being taken


def end_unused_launches() -> None:
    """For a process about to exit (the command line's last step): the JVMs that runs never took and that are
    still launching are ended now rather than waited for (they hold the process's output pipes until they exit).
    Never for a process that goes on: a JVM ended mid-launch could leave pyspark's state half set."""
    while _unused:
        _unused.pop().end_launch()


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux's ``/proc``; none where it is missing)."""
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat_file:
                parent = int(stat_file.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if parent == pid:
            found.append(int(entry))
    return found


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid``, parents before their children."""
    below = _children(pid)
    return below + [p for child in below for p in _descendants(child)]


def _is_spark(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return b"spark" in cmdline.read().lower()
    except OSError:
        return False


def start_in_background(master: str | None, memory: str | None, parallelism: int | None,
                        pairs: Iterable[str]) -> BackgroundSession | None:  # fmt: skip
    """The session a run will build, started now in a thread (or the start begun earlier with the same flags and
    not closed); None where a JVM is already up, or where a flag is wrong (the run says so where it checks its
    flags, in its usual order)."""
    from .spark_settings import jvm_running, session_conf

    key = (master, memory, parallelism, tuple(pairs))
    if key in _pending:
        return _pending[key]
    try:
        if jvm_running():
            return None
        settings = session_conf(master, memory, parallelism, pairs)
    except HudiClusterError:
        return None

    def start():
        from .spark import get_spark  # imported in the thread: the main thread goes on planning

        return get_spark(master, conf=settings, hold_signals=False)

    started = _pending[key] = BackgroundSession(start).begin()
    return started


def detach_jvm_output() -> None:
    """For a process about to exit with its outcome said (exit code 0): the JVM closes its copies of the process's
    stdout and stderr (flushed first), so a caller reading them (``hudi-cluster run | ...``, a scheduler capturing
    the output) sees their end when this process exits rather than when the JVM has shut down (Spark's stop and its
    temporary directories removed, about half a second after this process's exit closes the JVM's stdin). The JVM
    still shuts down as before; only what it would print meanwhile is lost (at the quiet log level, nothing)."""
    import sys

    if "pyspark" not in sys.modules:  # no Spark in this process
        return
    from pyspark import SparkContext

    gateway = SparkContext._gateway  # noqa: SLF001 - the JVM this process launched (None: none, or not ours)
    if gateway is None or SparkContext._active_spark_context is None:  # noqa: SLF001
        return
    try:
        system = gateway.jvm.System
        for stream in (system.out, system.err):
            stream.flush()
            stream.close()
    except Exception:  # noqa: BLE001 - a JVM already gone: nothing holds the streams
        pass
