"""When this process started and when the command line reached each step of its start-up: the process-level part
of ``--json``'s ``phases_s`` (README: "Run metrics").

Wall-clock seconds since the epoch (``time.time()``), because the process's own start is only known that way
(Linux: ``/proc/self/stat``, in clock ticks since boot). A run made through the Python API has no command-line
marks: its ``phases_s`` has the run's own phases only.
"""

from __future__ import annotations

import os
import time

_marks: dict[str, float] = {}


def mark(name: str) -> None:
    """Records that the command line reached ``name`` now (a later mark of the same name replaces it)."""
    _marks[name] = time.time()


def clear() -> None:
    """Forgets the command's marks (a command ended; a process may run several, e.g. tests)."""
    for name in [n for n in _marks if n != "loaded"]:
        del _marks[name]


def process_started() -> float | None:
    """The epoch second this process started, or None where ``/proc`` does not say. (Its age is measured on the
    boot-time clock its start is given in, to the clock tick: ``/proc/stat``'s boot time is whole seconds.)"""
    try:
        with open("/proc/self/stat", "rb") as stat_file:
            fields = stat_file.read().rsplit(b")", 1)[1].split()
        started_after_boot = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22 of stat(5), 20 after the name
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - started_after_boot
    except (OSError, AttributeError, IndexError, ValueError):
        return None
    return time.time() - max(0.0, age)


def command_phases(run_started: float) -> dict[str, float]:
    """Seconds of the command line's start-up, up to ``run_started`` (``time.time()`` when the run began):
    ``interpreter`` (process start to the command-line module's first line: Python, its site, the package),
    ``imports`` (the modules the command needs), ``checks`` (options parsed, the table opened and checked). Empty
    when the run was not made by the command line."""
    if "command" not in _marks or "ready" not in _marks:
        return {}
    started = process_started()
    loaded, command, ready = _marks["loaded"], _marks["command"], _marks["ready"]
    phases = {
        "interpreter": max(0.0, loaded - started) if started is not None else None,
        "imports": max(0.0, _marks.get("imported", loaded) - loaded) + max(0.0, ready - command),
        "checks": max(0.0, run_started - ready),
    }
    return {name: round(value, 3) for name, value in phases.items() if value is not None}


def since_process_start(now: float) -> float | None:
    """Seconds from this process's start to ``now`` (``time.time()``), None where unknown."""
    started = process_started()
    return None if started is None else round(max(0.0, now - started), 3)


mark("loaded")
