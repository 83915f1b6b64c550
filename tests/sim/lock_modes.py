"""How the actors of a schedule exclude each other in their timeline lock: one of three deployments, by seed.

* ``flock``: the table's timeline lock excludes every actor, as ``flock`` does between processes on local disk:
  the core's in-process guard is the scheduler's :class:`~tests.sim.scheduler.ActorLock`.
* ``storage``: an object store with Apache Hudi's ``StorageBasedLockProvider`` configured for every actor. Each
  actor is a process of its own, so the core's in-process guard (``ownership._HELD_GUARD``, ``_HELD``) excludes
  nothing between actors: each has its own. What excludes them is the real ``table/storage_lock.py``: a lease in
  ``.hoodie/.locks/table_lock.json`` taken and released with conditional writes on the simulated store, waited
  for in simulated time, renewed every ``RENEW_S`` by its holder (a timer that dies with it, where the core starts
  a thread), taken over by another actor once it runs out.
* ``filesystem``: an object store with Apache Hudi's ``FileSystemBasedLockProvider`` configured for every actor:
  as in ``storage``, each actor's in-process guard is its own, and what excludes them is the real ``LockFile`` of
  ``table/lock_provider.py``, ``.hoodie/lock`` created exclusively on the simulated store and deleted to unlock,
  with Hudi's default expiry (none): a lock file is taken over only when the process it names is gone.
"""

from __future__ import annotations

import contextlib
from collections.abc import MutableMapping
from typing import Iterator

from hudi_cluster_core.io import storage as storage_module
from hudi_cluster_core.io.storage import Storage
from hudi_cluster_core.table import lock_provider, ownership, storage_lock

from .scheduler import Scheduler

MODES = ("flock", "storage", "filesystem")
OWN_GUARD_MODES = ("storage", "filesystem")  # each actor a process with its own in-process guard
VALIDITY_S, RENEW_S = 10, 1  # Hudi's smallest allowed: a validity of 10 renewal intervals
# A lease cannot fence a holder that pauses between its last look at the lease and a write for longer than the
# lease has left (Hudi's provider cannot either): the run checks before every timeline write, then writes. So a
# "freeze" here lasts past every heartbeat's tolerance (2 s) but not past the lease (paused holders whose lease
# does run out come from "beats-fail": their renewals fail while they go on, and they must stop by themselves).
FREEZE_S = {"flock": 30.0, "storage": VALIDITY_S / 2, "filesystem": 30.0}  # a lock file never expires here


def provider_options(mode: str) -> dict[str, str]:
    """The run config that names the lock provider (every actor's, in ``storage`` mode)."""
    if mode == "filesystem":
        return {lock_provider.PROVIDER_KEY: lock_provider.FILE_SYSTEM}
    if mode != "storage":
        return {}
    return {lock_provider.PROVIDER_KEY: lock_provider.STORAGE_BASED, lock_provider.VALIDITY_KEY: str(VALIDITY_S),
            lock_provider.RENEW_KEY: str(RENEW_S)}  # fmt: skip


class _OwnGuard:
    """One process's in-process guard: an actor is one thread, so it never waits for itself."""

    def __enter__(self) -> "_OwnGuard":
        return self

    def __exit__(self, *exc) -> None:
        return None


class _PerActor(MutableMapping):
    """``ownership._HELD`` (the locks this process holds, by table) for each actor on its own."""

    def __init__(self, scheduler: Scheduler):
        self.scheduler = scheduler
        self.held: dict[str, dict] = {}  # actor name ("" for the checks) -> its own

    def _mine(self) -> dict:
        actor = self.scheduler.current()
        return self.held.setdefault(actor.name if actor is not None else "", {})

    def __getitem__(self, key: str):
        return self._mine()[key]

    def __setitem__(self, key: str, value) -> None:
        self._mine()[key] = value

    def __delitem__(self, key: str) -> None:
        del self._mine()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._mine())

    def __len__(self) -> int:
        return len(self._mine())


class _SimTime:
    """``ownership.time`` for the wait for Hudi's lock: simulated seconds, and a wait that lets others run."""

    def __init__(self, scheduler: Scheduler):
        self.scheduler = scheduler

    def monotonic(self) -> float:
        return self.scheduler.clock.mono

    def sleep(self, seconds: float) -> None:
        if self.scheduler.current() is None:
            self.scheduler.clock.advance(seconds)  # the checks' recovery, alone: time just passes
        else:
            self.scheduler.sleep(seconds)


class _Renewal:
    """``storage_lock``'s renewal thread as a timer of the holder (it stops when the holder dies or freezes, as
    the thread of a dead or frozen process does), running the core's renewal step ``_renew``; its loop's rules:
    a failed condition ends the renewal, a storage error waits for the next interval."""

    def __init__(self, target, args, daemon=True, name=""):
        self.lock, (self.storage, self.lease) = target.__self__, args

    def start(self) -> None:
        from hudi_cluster_core import clock

        clock.every(self.lock.renew_secs, self._once, self.lease.stop, "storage-lock-renewal")

    def _once(self) -> None:
        try:
            if not self.lock._renew(self.storage, self.lease):
                self.lease.stop.set()
        except OSError:
            pass  # transient: the next interval tries again

    def join(self, timeout: float | None = None) -> None:
        return None


class _Threading:
    """``storage_lock.threading``: its locks as they are, its threads as :class:`_Renewal` timers."""

    Thread = _Renewal

    def __getattr__(self, name: str):
        import threading

        return getattr(threading, name)


@contextlib.contextmanager
def installed(mode: str, scheduler: Scheduler, uri: str) -> Iterator[None]:
    """The core's lock pieces for ``mode``, for one schedule, inside ``runtime.simulated`` (which installs the
    ``flock`` mode's :class:`~tests.sim.scheduler.ActorLock`)."""
    if mode not in OWN_GUARD_MODES:
        yield
        return
    storage = Storage(uri)
    saved = (ownership._HELD_GUARD, ownership._HELD, ownership.time, storage_lock.threading, storage_module._LOCKED,
             storage_module._FENCES)  # fmt: skip
    ownership._HELD_GUARD, ownership._HELD = _OwnGuard(), _PerActor(scheduler)
    # "under a lock provider's lock" and its fence are each process's own too
    storage_module._LOCKED, storage_module._FENCES = _PerActor(scheduler), _PerActor(scheduler)
    ownership.time, storage_lock.threading = _SimTime(scheduler), _Threading()
    lock_provider.use_lock_file(storage, lock_provider.lock_file_for(storage, provider_options(mode)))
    try:
        yield
    finally:
        lock_provider.use_lock_file(storage, None)
        (ownership._HELD_GUARD, ownership._HELD, ownership.time, storage_lock.threading, storage_module._LOCKED,
         storage_module._FENCES) = saved
