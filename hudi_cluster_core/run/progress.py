"""Progress of a run's tasks (on Spark, or in a local pool): a rich bar on a terminal, plain log lines otherwise.

What is shown: groups done, input bytes rewritten, running tasks, the time elapsed and an ETA from the rate so far.
Each task adds the groups it finished (and their input bytes) as it ends: on Spark to an accumulator Spark merges
on the driver, in a local pool (run/local_pool.py) the driver adds them. A running task sends its bytes done within
its group as it reads and writes (run/progress_channel.py), so the bar moves inside a group too. Spark's status
tracker, or the pool, says how many tasks run. The last report is made from the job's result, so a run that
succeeds always ends at 100%.

``HUDI_CLUSTER_PROGRESS`` picks the form: ``bar``, ``log`` or ``off`` (default: ``bar`` when stderr is a terminal,
else ``log``, a line at most every ``HUDI_CLUSTER_PROGRESS_INTERVAL_S`` seconds, 10 by default, and at the end).
rich is imported only on the driver: executors unpickle this module for the accumulator and need no more.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import IO, Any

from ..byte_units import human_bytes
from .progress_channel import ProgressListener

log = logging.getLogger(__name__)
MODE_ENV = "HUDI_CLUSTER_PROGRESS"
INTERVAL_ENV = "HUDI_CLUSTER_PROGRESS_INTERVAL_S"
POLL_S = 0.5


class FinishedUnits:
    """Adds ``(groups, bytes, unit ids)``: what tasks report as they finish their units of work (a Spark
    accumulator's param: Spark calls ``zero`` and ``addInPlace``, and needs no base class)."""

    def zero(self, value):
        return (0, 0, frozenset())

    def addInPlace(self, value1, value2):
        return (value1[0] + value2[0], value1[1] + value2[1], value1[2] | value2[2])


@dataclass
class Snapshot:
    groups_done: int
    groups_total: int
    bytes_done: int
    bytes_total: int
    tasks_running: int
    elapsed_s: float

    @property
    def fraction(self) -> float:
        if self.bytes_total:
            return min(1.0, self.bytes_done / self.bytes_total)
        return min(1.0, self.groups_done / self.groups_total) if self.groups_total else 1.0

    @property
    def eta_s(self) -> float | None:
        if self.fraction >= 1.0:
            return 0.0
        return self.elapsed_s * (1 - self.fraction) / self.fraction if self.fraction > 0 else None


def describe(label: str, snap: Snapshot) -> str:
    """The plain line: ``clustering T: 2/3 group(s), 1.2 MiB/3.7 MiB rewritten (66%), 1 task(s) running,
    elapsed 8 s, ETA 4 s``."""
    eta = snap.eta_s
    eta_text = "ETA ?" if eta is None else f"ETA {eta:.0f} s"
    return (f"{label}: {snap.groups_done}/{snap.groups_total} group(s), {human_bytes(snap.bytes_done)}/"
            f"{human_bytes(snap.bytes_total)} rewritten ({snap.fraction:.0%}), {snap.tasks_running} task(s) running, "
            f"elapsed {snap.elapsed_s:.0f} s, {eta_text}")  # fmt: skip


class _LogLines:
    def __init__(self, label: str, interval_s: float):
        self.label, self.interval_s = label, interval_s
        self.last_line, self.last_time = "", 0.0

    def show(self, snap: Snapshot, final: bool = False) -> None:
        line = describe(self.label, snap)
        now = time.monotonic()
        unchanged = line.split(", elapsed")[0] == self.last_line.split(", elapsed")[0]
        if final or (not unchanged and now - self.last_time >= self.interval_s):
            log.info("%s", line)
            self.last_line, self.last_time = line, now

    def close(self) -> None:
        pass


class _Bar:
    def __init__(self, label: str, snap: Snapshot, stream: IO[str]):
        from rich.console import Console
        from rich.progress import (
            BarColumn, DownloadColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn,
        )  # fmt: skip

        console = Console(file=stream, force_terminal=True)
        self.progress = Progress(
            TextColumn(label), BarColumn(), TaskProgressColumn(), TextColumn("{task.fields[groups]} group(s)"),
            DownloadColumn(binary_units=True), TextColumn("{task.fields[running]} running"), TimeElapsedColumn(),
            TextColumn("ETA {task.fields[eta]}"), console=console, redirect_stdout=False, redirect_stderr=False,
        )  # fmt: skip
        self.task = self.progress.add_task(label, total=max(snap.bytes_total, 1), **self._fields(snap))
        self.progress.start()

    @staticmethod
    def _fields(snap: Snapshot) -> dict[str, Any]:
        eta = snap.eta_s  # our estimate from the start of the run: rich's own waits for a steady speed
        eta_text = "-:--:--" if eta is None else f"{int(eta) // 3600}:{int(eta) % 3600 // 60:02d}:{int(eta) % 60:02d}"
        return {"groups": f"{snap.groups_done}/{snap.groups_total}", "running": snap.tasks_running, "eta": eta_text}

    def show(self, snap: Snapshot, final: bool = False) -> None:
        done = snap.bytes_done if snap.bytes_total else (1 if snap.fraction >= 1 else 0)
        self.progress.update(self.task, completed=done, **self._fields(snap))
        if final:
            self.progress.refresh()

    def close(self) -> None:
        self.progress.stop()


def _mode(stream: IO[str]) -> str:
    chosen = os.environ.get(MODE_ENV, "").strip().lower()
    if chosen in ("bar", "log", "off"):
        return chosen
    interactive = getattr(stream, "isatty", lambda: False)() and os.environ.get("TERM", "") != "dumb"
    return "bar" if interactive else "log"


class Tally:
    """``(groups, bytes, unit ids)`` finished, added on the driver as a local run's tasks end (Spark's
    accumulator's ``value`` and ``add``, for :class:`JobProgress`)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._value = FinishedUnits().zero(None)

    @property
    def value(self):
        with self._lock:
            return self._value

    def add(self, term) -> None:
        with self._lock:
            self._value = FinishedUnits().addInPlace(self._value, term)


class JobProgress:
    """Watches one run's tasks: ``start()`` before they run, ``finish(ok)`` after. ``finished`` holds what ended
    tasks added (:class:`Tally`, or Spark's accumulator); ``running()`` counts the tasks running; running tasks
    send their bytes done to a listener on ``hosts`` (bind address, address as the tasks reach it)."""

    def __init__(self, label: str, group_bytes: list[int], finished, running, hosts: tuple[str, str],
                 stream: IO[str] | None = None):  # fmt: skip
        self.label = label
        self.groups_total, self.bytes_total = len(group_bytes), sum(group_bytes)
        self.stream = stream or sys.stderr
        self.finished, self.running_tasks, self.hosts = finished, running, hosts
        self.listener: ProgressListener | None = None  # what running tasks send: bytes done in their group
        self.started = time.monotonic()
        self.view: _Bar | _LogLines | None = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, name=f"progress-{label}", daemon=True)

    def start(self) -> JobProgress:
        mode = _mode(self.stream)
        if mode == "bar":
            self.view = _Bar(self.label, self.snapshot(), self.stream)
        elif mode == "log":
            self.view = _LogLines(self.label, float(os.environ.get(INTERVAL_ENV, "10")))
        if self.view is not None:
            self.listener = _listener(*self.hosts)
        self.thread.start()
        return self

    @property
    def address(self) -> tuple[str, int] | None:
        """Where running tasks send their progress (None: nobody listens)."""
        return self.listener.address if self.listener is not None else None

    @property
    def token(self) -> str:
        return self.listener.token if self.listener is not None else ""

    def snapshot(self, running: int = 0) -> Snapshot:
        groups, size, units = self.finished.value
        if self.listener is not None:
            size += self.listener.bytes_done(units)
        size = min(size, self.bytes_total)
        return Snapshot(groups, self.groups_total, size, self.bytes_total, running, time.monotonic() - self.started)

    def _poll(self) -> None:
        while not self.stop.wait(POLL_S):
            try:
                snap = self.snapshot(self.running_tasks())
            except Exception as exc:  # noqa: BLE001 - the JVM may be going away; progress is only a display
                log.debug("progress: %s", exc)
                return
            if self.view is not None:
                self.view.show(snap)

    def finish(self, ok: bool) -> None:
        """Stops watching and shows the last state: all groups and bytes when the job succeeded."""
        self.stop.set()
        self.thread.join(timeout=5)
        if self.listener is not None:
            self.listener.close()
        if self.view is None:
            return
        snap = self.snapshot()
        if ok:
            snap = Snapshot(self.groups_total, self.groups_total, self.bytes_total, self.bytes_total, 0, snap.elapsed_s)
        self.view.show(snap, final=True)
        self.view.close()


def spark_job_progress(context, job_group: str, label: str, group_bytes: list[int],
                       stream: IO[str] | None = None) -> JobProgress:  # fmt: skip
    """The progress of one Spark job group: tasks add what they finished to an accumulator, the status tracker
    counts the running ones, and the listener is where executors reach the driver (``spark.driver.host``)."""

    def running() -> int:
        tracker = context.statusTracker()
        count = 0
        for job_id in tracker.getJobIdsForGroup(job_group):
            job = tracker.getJobInfo(job_id)
            for stage_id in job.stageIds if job else ():
                stage = tracker.getStageInfo(stage_id)
                count += stage.numActiveTasks if stage else 0
        return count

    conf = context.getConf()
    host = conf.get("spark.driver.host") or "127.0.0.1"
    finished = context.accumulator((0, 0, frozenset()), FinishedUnits())
    return JobProgress(label, group_bytes, finished, running, (conf.get("spark.driver.bindAddress") or host, host),
                       stream)  # fmt: skip


def _listener(bind_host: str, host: str) -> ProgressListener | None:
    """A listener on ``bind_host``, which tasks reach at ``host``."""
    try:
        return ProgressListener(bind_host, host)
    except OSError as exc:  # progress then moves as tasks end
        log.debug("progress listener on %s: %s", host, exc)
        return None
