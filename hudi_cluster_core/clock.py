"""Where the core reads the wall clock and runs its periodic work: one seam, so that a simulation can run the
commit protocol on simulated time (``tests/sim``).

The wall clock gives instant times and the age of heartbeat and lock files (a file's modification time against
now). A heartbeat's refresh is periodic work: it runs every interval on a monotonic timer, so a wall-clock jump
changes how old files look, never when the next beat comes. Everything else keeps ``time.monotonic`` (deadlines
of waits) and stays real.
"""

from __future__ import annotations

import datetime as dt
import threading
from typing import Callable


class SystemClock:
    """The machine's clock, and a daemon thread per periodic action."""

    def now(self, zone: dt.tzinfo | None = None) -> dt.datetime:
        return dt.datetime.now(zone)

    def every(self, interval_s: float, action: Callable[[], None], stop: threading.Event,
              name: str) -> threading.Thread | None:  # fmt: skip
        """Run ``action`` every ``interval_s`` seconds until ``stop`` is set; returns the thread to join, if any."""

        def run() -> None:
            while not stop.wait(interval_s):
                action()

        thread = threading.Thread(target=run, name=name, daemon=True)
        thread.start()
        return thread


_current: SystemClock = SystemClock()


def now(zone: dt.tzinfo | None = None) -> dt.datetime:
    """The wall clock's time (naive in local time without ``zone``, like ``datetime.now``)."""
    return _current.now(zone)


def utc_now() -> dt.datetime:
    return _current.now(dt.timezone.utc)


def every(interval_s: float, action: Callable[[], None], stop: threading.Event, name: str) -> threading.Thread | None:
    return _current.every(interval_s, action, stop, name)


def use(clock: SystemClock) -> SystemClock:
    """Make ``clock`` the core's clock; returns the one it replaces (to put back)."""
    global _current
    previous, _current = _current, clock
    return previous
