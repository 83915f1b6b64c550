"""Simulated time: a monotonic clock the scheduler advances, a wall clock that may jump, and heartbeats as timers.

Wall time is the monotonic time plus an offset; a clock jump changes only the offset, so (as on a real machine)
files written before a jump look older or younger afterwards, while timers keep their pace. A timer
(:meth:`every`, a heartbeat's refresh) belongs to the actor that started it: it stops when that actor dies, and a
frozen actor's timers do not fire until it thaws, and while an actor's heartbeats fail (``beats-fail``) each of its
refreshes meets a storage fault (``refresh_fault``, which the scheduler injects into that refresh's write).
"""

from __future__ import annotations

import datetime as dt
import threading
from dataclasses import dataclass
from typing import Callable

from hudi_cluster_core.clock import SystemClock

REFRESH_FAULTS = ("fail-before", "timeout-before", "fail-after", "timeout-after")  # in turn, while beats fail
EPOCH = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


@dataclass
class Timer:
    due: float
    interval: float
    action: Callable[[], None]
    stop: threading.Event
    owner: object  # the scheduler's Actor, or None


class SimClock(SystemClock):
    def __init__(self) -> None:
        self.mono = 0.0
        self.offset = 0.0
        self.timers: list[Timer] = []
        self.owner_of_thread: Callable[[], object] = lambda: None
        self.refresh_fault = ""  # the storage fault of the timer firing now (its owner's heartbeats fail)
        self.refreshes_failed = 0
        self.firing: object = None  # the owner of the timer firing now (whose process its thread is in)

    # the core's clock
    def now(self, zone: dt.tzinfo | None = None) -> dt.datetime:
        wall = EPOCH + dt.timedelta(seconds=self.mono + self.offset)
        return wall if zone is not None else wall.replace(tzinfo=None)  # "local time" is UTC here

    def every(self, interval_s: float, action: Callable[[], None], stop: threading.Event, name: str) -> None:
        self.timers.append(Timer(self.mono + interval_s, interval_s, action, stop, self.owner_of_thread()))
        return None

    # the scheduler's controls
    def advance(self, seconds: float) -> None:
        self.mono += max(0.0, seconds)

    def jump(self, seconds: float) -> None:
        self.offset += seconds

    def fire_due(self) -> None:
        """Run the timers that are due, in the order they were started (from the scheduler's thread)."""
        for timer in list(self.timers):
            owner = timer.owner
            if timer.stop.is_set() or getattr(owner, "dead", False) or getattr(owner, "done", False):
                self.timers.remove(timer)
                continue
            if getattr(owner, "frozen_until", 0.0) > self.mono or timer.due > self.mono:
                continue
            timer.due = self.mono + timer.interval
            if getattr(owner, "beats_fail_until", 0.0) > self.mono:
                self.refresh_fault = REFRESH_FAULTS[self.refreshes_failed % len(REFRESH_FAULTS)]
                self.refreshes_failed += 1
            self.firing = owner
            try:
                timer.action()
            finally:
                self.refresh_fault, self.firing = "", None
