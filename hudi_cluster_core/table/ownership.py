"""Who may change a clustering instant: a short timeline lock, and a heartbeat per running instant.

Two of our runs on one table must never commit the same instant, execute one instant twice, or roll back an
instant another live run is executing. Two mechanisms, as Apache Hudi has them (docs/format.md#heartbeats, #locks):

* :func:`timeline_lock`: a short critical section around every timeline transition (schedule, claim, commit,
  rollback), so that "look at the timeline, then write" is one step. On local disk it is an advisory ``flock`` on
  the ``.hoodie`` directory itself: it writes nothing, works for a reader too, and the kernel releases it when
  the holder dies, so a crash never leaves a stale lock behind. When the run's config names Apache Hudi's
  ``FileSystemBasedLockProvider`` or ``StorageBasedLockProvider`` (``lock_provider``), Hudi's lock is taken inside
  it too, so Hudi writers using optimistic concurrency control and our runs exclude each other. Object stores have
  no flock: there, without a lock provider, the section excludes only other threads of this process, and the
  warning says so once per table. Conditional PUTs still stop two runs from writing the same plan
  (:meth:`Storage.create_exclusive`), and the same completed instant where its name has no completion time (v6).
* :class:`Heartbeat`: ``.hoodie/.heartbeat/<instant>``, rewritten every ``hoodie.client.heartbeat.interval_in_ms``;
  the instant counts as abandoned when the file is missing or older than interval x
  ``hoodie.client.heartbeat.tolerable.misses`` (Hudi's rule; Hudi reads only the modification time). Its body
  names the owner (a random token, the host and pid), so a run can tell its own heartbeat from a newer owner's,
  and an owner on this machine whose process is gone counts as dead at once instead of after the timeout.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Iterator

from .. import clock
from ..errors import HudiClusterError
from ..io.storage import Storage
from .lock_provider import FILE_SYSTEM, STORAGE_BASED, configured_lock_file, machine, new_token, pid_alive

log = logging.getLogger(__name__)
HEARTBEAT_DIR = ".hoodie/.heartbeat"


class LockTimeout(HudiClusterError):
    """The timeline lock was not free within ``hoodie.write.lock.wait_time_ms``."""


_HELD: dict[str, int] = {}  # lock path -> depth held by this process (flock is per open file, not re-entrant)
_HELD_GUARD = threading.RLock()
_WARNED: set[str] = set()  # object-store tables whose missing cross-process lock was already reported


@contextlib.contextmanager
def timeline_lock(storage: Storage, wait_ms: int = 60000) -> Iterator[None]:
    """Hold the table's timeline lock for the body of the ``with``; re-entrant within one process."""
    if not storage.capabilities.local_files:  # no flock on an object store
        with _object_store_lock(storage, wait_ms):
            yield
        return
    import fcntl

    path = storage.join(".hoodie")
    with _HELD_GUARD:
        if _HELD.get(path):
            with _nested(path):
                yield
            return
        descriptor = os.open(path, os.O_RDONLY)
        try:
            deadline = time.monotonic() + wait_ms / 1000
            while True:
                try:
                    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise LockTimeout(
                            f"the timeline lock on {path} was held by another run for over {wait_ms} ms "
                            "(hoodie.write.lock.wait_time_ms); nothing was changed"
                        ) from None
                    time.sleep(0.05)
            _HELD[path] = 1
            try:
                with _hudi_lock(storage, deadline, wait_ms):
                    yield
            finally:
                _HELD.pop(path, None)
        finally:
            os.close(descriptor)  # closing the descriptor releases the flock


@contextlib.contextmanager
def _nested(key: str) -> Iterator[None]:
    """A section inside one this process already holds on ``key`` (under ``_HELD_GUARD``): only the depth changes."""
    _HELD[key] += 1
    try:
        yield
    finally:
        _HELD[key] -= 1


@contextlib.contextmanager
def _object_store_lock(storage: Storage, wait_ms: int) -> Iterator[None]:
    """Object stores have no flock: threads of this process exclude each other here, other processes only through
    Apache Hudi's lock when the config names one (the storage-based provider, issue 13)."""
    with _HELD_GUARD:
        key = storage.base_uri
        if _HELD.get(key):
            with _nested(key):
                yield
            return
        if configured_lock_file(storage) is None and key not in _WARNED:
            _WARNED.add(key)
            # the provider Apache Hudi's writers can share on this store: its storage lock where Hudi has a client
            provider = STORAGE_BASED if storage.capabilities.hudi_storage_lock else FILE_SYSTEM
            log.warning("%s: timeline lock held within this process only: cross-process exclusion on object "
                        "stores needs a lock provider (hoodie.write.lock.provider=%s); run one clustering job per "
                        "table at a time otherwise", key, provider)  # fmt: skip
        _HELD[key] = 1
        try:
            with _hudi_lock(storage, time.monotonic() + wait_ms / 1000, wait_ms):
                yield
        finally:
            _HELD.pop(key, None)


@contextlib.contextmanager
def _hudi_lock(storage: Storage, deadline: float, wait_ms: int) -> Iterator[None]:
    """Apache Hudi's lock too, when the run's config names a lock provider (``lock_provider``)."""
    lock = configured_lock_file(storage)
    if lock is None:
        yield
        return
    token = new_token()
    while not lock.try_acquire(storage, token):
        if time.monotonic() >= deadline:
            raise LockTimeout(f"Apache Hudi's lock {lock.path} was held by {lock.holder(storage)} for over {wait_ms} ms "
                              "(hoodie.write.lock.wait_time_ms); nothing was changed")  # fmt: skip
        time.sleep(0.1)
    check_held = getattr(lock, "check_held", None)  # a lease (the storage-based lock) can run out under its holder
    fence = None if check_held is None else lambda: check_held(storage, token)
    try:
        with storage.cross_process_lock(fence):  # every other writer takes this lock too: conditional writes may relax
            yield
    finally:
        lock.release(storage, token)


@dataclass(frozen=True)
class HeartbeatState:
    """What the heartbeat file of an instant says now."""

    instant_time: str
    exists: bool
    age_seconds: float | None = None
    owner: str | None = None
    host: str | None = None
    pid: int | None = None
    live: bool = False

    def describe(self) -> str:
        if not self.exists:
            return f"no heartbeat, inflight for {self.age_seconds or 0:.1f} s: an Apache Hudi clustering?"
        where = f"pid {self.pid} on {self.host.split('/')[0]}" if self.pid and self.host else "another process"
        return f"{where}, heartbeat {self.age_seconds:.1f} s ago" if self.age_seconds is not None else where


def heartbeat_path(storage: Storage, instant_time: str) -> str:
    return storage.join(HEARTBEAT_DIR, instant_time)


def age_seconds(storage: Storage, path: str) -> float | None:
    """Seconds since ``path`` was last written, or None if it does not exist (heartbeats are judged by age)."""
    modified = storage.modified_time(path)
    if modified is None:
        return None
    return (clock.utc_now() - modified.astimezone(dt.timezone.utc)).total_seconds()


def is_fresh(age: float, interval_ms: int, misses: int) -> bool:
    """Hudi's rule: a heartbeat older than ``misses`` intervals has expired."""
    return age * 1000 <= interval_ms * max(misses, 1)


def heartbeat_state(storage: Storage, instant_time: str, interval_ms: int, misses: int) -> HeartbeatState:
    path = heartbeat_path(storage, instant_time)
    age = age_seconds(storage, path)
    if age is None:
        return HeartbeatState(instant_time, False)
    owner = host = None
    pid = None
    with contextlib.suppress(OSError, ValueError, TypeError):
        body = json.loads(storage.read_bytes(path) or b"{}")
        owner, host, pid = body.get("owner"), body.get("host"), int(body["pid"]) if body.get("pid") else None
    live = is_fresh(age, interval_ms, misses)
    if live and pid and host == machine() and not pid_alive(pid):
        live = False  # its process is gone: no need to wait for the timeout
    return HeartbeatState(instant_time, True, age, owner, host, pid, live)


class Heartbeat:
    """This run's heartbeat for one instant; refreshed by a daemon thread until :meth:`stop`."""

    def __init__(self, storage: Storage, instant_time: str, interval_ms: int, misses: int):
        self.storage = storage
        self.instant_time = instant_time
        self.interval_ms = interval_ms
        self.misses = misses
        self.token = uuid.uuid4().hex
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def path(self) -> str:
        return heartbeat_path(self.storage, self.instant_time)

    def beat(self) -> None:
        body = {"owner": self.token, "host": machine(), "pid": os.getpid()}
        self.storage.write_atomic(self.path, json.dumps(body).encode())

    def start(self) -> "Heartbeat":
        self.beat()
        self._thread = clock.every(self.interval_ms / 1000, self._refresh, self._stop, f"heartbeat-{self.instant_time}")
        return self

    def _refresh(self) -> None:
        try:
            owner = self.state().owner
            if owner is not None and owner != self.token:
                # another run took the instant over while our beats failed or we were paused: rewriting its
                # heartbeat would make it ours again, and the owner check at commit would pass for both runs
                log.warning("heartbeat for %s now belongs to another run; not refreshed any more", self.instant_time)
                self._stop.set()
                return
            self.beat()
        except OSError as exc:  # a missed beat is tolerated; the owner check at commit catches a takeover
            log.warning("heartbeat for %s not refreshed: %s", self.instant_time, exc)

    def state(self) -> HeartbeatState:
        return heartbeat_state(self.storage, self.instant_time, self.interval_ms, self.misses)

    def still_owned(self) -> bool:
        return self.state().owner == self.token

    def stop(self, *, delete: bool = True) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if delete and self.still_owned():
            self.storage.delete_file(self.path)
