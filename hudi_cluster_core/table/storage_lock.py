"""Apache Hudi's ``StorageBasedLockProvider`` (Hudi 1.0.2+): a table lock for object stores, kept in one JSON object
written only with conditional requests, as a lease its holder renews (docs/format.md#storage-based-lock).

* The object: ``<base>/.hoodie/.locks/table_lock.json``, body ``{"expired": bool, "validUntil": epoch ms,
  "owner": "<uuid>"}``.
* Taking it: read the object and its ETag. Someone else holds it while ``expired`` is false and the clock has not
  passed ``validUntil`` by more than 500 ms (Hudi's allowance for clock drift between hosts). Otherwise write a new
  lease (``validUntil`` = now + ``hoodie.write.lock.storage.validity.timeout.secs``) with ``If-None-Match: *``
  when there was no object, or ``If-Match: <ETag read>`` over an expired or released one: of two takers only one
  write succeeds (412 for the other).
* Holding it: a daemon thread renews the lease every ``hoodie.write.lock.storage.renew.interval.secs`` with
  ``If-Match`` on the ETag of the lease's last write; a failed condition means another owner took it over.
* Releasing it: write ``expired: true`` with ``If-Match``. A holder that dies leaves a lease that others take over
  once it runs out.

It works on any store whose backend can ``put_if_match`` (``io.store.Capabilities``); on others Apache Hudi's
provider has no client and refuses to start, and so does ours (``lock_provider.lock_file_for``).
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from dataclasses import dataclass, field

from .. import clock
from ..errors import HudiClusterError
from ..io.storage import Storage

log = logging.getLogger(__name__)
LOCK_FILE = ".hoodie/.locks/table_lock.json"
CLOCK_DRIFT_MS = 500  # Hudi's CLOCK_DRIFT_BUFFER_MS


def now_ms() -> int:
    return int(clock.utc_now().timestamp() * 1000)


class LockLost(HudiClusterError):
    """The lock this run held is no longer its own: it stops before changing the timeline again."""


@dataclass(frozen=True)
class LockState:
    """What ``table_lock.json`` says, with the ETag of the version read."""

    expired: bool
    valid_until_ms: int
    owner: str
    etag: str

    def held_by_someone(self) -> bool:
        return not self.expired and now_ms() <= self.valid_until_ms + CLOCK_DRIFT_MS


def lock_body(expired: bool, valid_until_ms: int, owner: str) -> bytes:
    return json.dumps({"expired": expired, "validUntil": valid_until_ms, "owner": owner}).encode()


@dataclass
class _Lease:
    """One holding of the lock: the ETag of our last write, renewed by a thread."""

    owner: str
    valid_until_ms: int
    etag: str
    stop: threading.Event = field(default_factory=threading.Event)
    guard: threading.Lock = field(default_factory=threading.Lock)
    lost: bool = False
    thread: threading.Thread | None = None


class StorageLock:
    """Hudi's storage-based lock of one table; the same interface as ``lock_provider.LockFile``."""

    def __init__(self, storage: Storage, validity_secs: int = 300, renew_secs: int = 30):
        self.path = storage.join(LOCK_FILE)
        self.validity_secs = validity_secs
        self.renew_secs = renew_secs
        self._leases: dict[str, _Lease] = {}  # our token -> the lease it holds

    def read(self, storage: Storage) -> LockState | None:
        """The lock object now, or None when there is none (or it is not Hudi's JSON: then it is overwritten
        only through its ETag, like an expired one)."""
        found = storage.read_versioned(self.path)
        if found is None:
            return None
        body, etag = found
        try:
            fields = json.loads(body)
            return LockState(bool(fields["expired"]), int(fields["validUntil"]), str(fields["owner"]), etag)
        except (ValueError, KeyError, TypeError):
            log.warning("%s: not a lock Apache Hudi wrote (%r); treated as expired", storage.qualified(self.path), body[:200])
            return LockState(True, 0, "", etag)

    def try_acquire(self, storage: Storage, token: str) -> bool:
        """One attempt: True when this token now holds the lock (and its renewal runs), False while someone else
        holds it or another taker won the race."""
        current = self.read(storage)
        if current is not None and current.held_by_someone():
            return False
        owner = str(uuid.uuid4())
        valid_until = now_ms() + self.validity_secs * 1000
        etag = storage.put_if_match(self.path, lock_body(False, valid_until, owner),
                                    None if current is None else current.etag)  # fmt: skip
        if etag is None:
            return False
        if current is not None and not current.expired:  # not released: its holder's lease ran out
            log.info("took over the expired lock %s of owner %s", storage.qualified(self.path), current.owner)
        lease = _Lease(owner, valid_until, etag)
        lease.thread = threading.Thread(target=self._renew_loop, args=(storage, lease), daemon=True,
                                        name=f"storage-lock-renewal-{owner[:8]}")  # fmt: skip
        self._leases[token] = lease
        lease.thread.start()
        return True

    def _renew_loop(self, storage: Storage, lease: _Lease) -> None:
        while not lease.stop.wait(self.renew_secs):
            try:
                if not self._renew(storage, lease):
                    return
            except OSError as exc:  # transient: the next beat tries again, the lease still has time left
                log.warning("%s: lock lease not renewed: %s", storage.qualified(self.path), exc)

    def _renew(self, storage: Storage, lease: _Lease) -> bool:
        with lease.guard:
            if lease.stop.is_set():
                return False
            valid_until = now_ms() + self.validity_secs * 1000
            etag = storage.put_if_match(self.path, lock_body(False, valid_until, lease.owner), lease.etag)
            if etag is None:
                lease.lost = True
                log.error("%s: our lock lease was taken over by another owner; stopping its renewal",
                          storage.qualified(self.path))  # fmt: skip
                return False
            lease.etag, lease.valid_until_ms = etag, valid_until
            return True

    def release(self, storage: Storage, token: str) -> None:
        """Mark the lease expired (Hudi's unlock), unless another owner took it over meanwhile."""
        lease = self._leases.pop(token, None)
        if lease is None:
            return
        lease.stop.set()
        with lease.guard:
            if lease.lost:
                return
            try:
                released = storage.put_if_match(self.path, lock_body(True, lease.valid_until_ms, lease.owner), lease.etag)
            except OSError as exc:  # not fatal: the lease runs out at validUntil, then others take it over
                log.warning("%s: lock not released (%s); it expires at its validUntil", storage.qualified(self.path), exc)
                return
        if released is None:
            log.error("%s: the lock was taken over by another owner before we released it", storage.qualified(self.path))
        if lease.thread is not None:
            lease.thread.join(timeout=5)

    def check_held(self, storage: Storage, token: str) -> None:
        """Raise :class:`LockLost` unless ``token``'s lease is still ours with more than one renewal interval left:
        a holder paused (or cut off from the store) for that long may be taken over once ``validUntil`` passes,
        and a write it starts now could land after that. A holder whose renewals work always has about
        ``validity - renew`` seconds left (``validity >= 10 x renew``)."""
        lease = self._leases.get(token)
        if lease is None or lease.lost:
            raise LockLost(f"{storage.qualified(self.path)}: this run's lease was taken over by another owner; "
                           "nothing more was written under it (the next run recovers what it left)")  # fmt: skip
        left_ms = lease.valid_until_ms - now_ms()
        if left_ms < self.renew_secs * 1000:
            raise LockLost(f"{storage.qualified(self.path)}: this run's lease was not renewed in time (paused, or cut "
                           f"off from the store): {max(left_ms, 0) / 1000:.1f} s left, less than one renewal interval, "
                           "so another owner may take it over; nothing more was written under it (the next run "
                           "recovers what it left)")  # fmt: skip

    def holder(self, storage: Storage) -> str:
        try:
            current = self.read(storage)
        except OSError:
            return "an Apache Hudi writer"
        if current is None or not current.held_by_someone():
            return "nobody now"
        left = (current.valid_until_ms - now_ms()) / 1000
        return f"owner {current.owner} (lease valid for {left:.0f} s more)"
