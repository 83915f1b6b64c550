"""Each actor a process of its own on this machine, as far as the core can tell: its own pid in the heartbeats it
writes, and that pid alive while the actor runs (frozen included) and gone once it crashed or ended. So the
core's shortcut for an owner on this machine whose process is gone (``ownership.heartbeat_state``: dead at once,
without waiting for its heartbeat to expire) decides in the schedules as it does between real processes.
"""

from __future__ import annotations

import contextlib
import os
from typing import Iterator

from hudi_cluster_core.table import lock_provider, ownership

from .scheduler import Scheduler

FIRST_PID = 40000  # actor n is pid FIRST_PID + n (the checks' recovery is this process)


class _Os:
    """``ownership.os``: ``getpid`` is the calling actor's; everything else is the real module."""

    def __init__(self, scheduler: Scheduler):
        self.scheduler = scheduler

    def getpid(self) -> int:
        actor = self.scheduler.current() or self.scheduler.clock.firing  # a heartbeat's refresh: its owner's
        return os.getpid() if actor is None else FIRST_PID + self.scheduler.actors.index(actor)

    def __getattr__(self, name: str):
        return getattr(os, name)


def _alive(scheduler: Scheduler, real):
    def pid_alive(pid: int) -> bool:
        index = pid - FIRST_PID
        if 0 <= index < len(scheduler.actors):
            actor = scheduler.actors[index]
            return not (actor.dead or actor.done)
        return real(pid)

    return pid_alive


@contextlib.contextmanager
def per_actor(scheduler: Scheduler) -> Iterator[None]:
    """The heartbeats' pids (``ownership``) and the file-system lock provider's (``lock_provider``: the pid its
    lock file names, orphaned once that process is gone) are the actors'."""
    saved = ownership.os, ownership.pid_alive, lock_provider.os, lock_provider.pid_alive
    ownership.os, ownership.pid_alive = _Os(scheduler), _alive(scheduler, ownership.pid_alive)
    lock_provider.os, lock_provider.pid_alive = ownership.os, _alive(scheduler, lock_provider.pid_alive)
    try:
        yield
    finally:
        ownership.os, ownership.pid_alive, lock_provider.os, lock_provider.pid_alive = saved
