"""Apache Hudi's table lock, so that Hudi writers using optimistic concurrency control and we exclude each other.

Our own timeline lock (``ownership.timeline_lock``, a ``flock``) only excludes hudi-cluster runs. Hudi writers take
the lock their ``hoodie.write.lock.provider`` names, around scheduling and around each commit (docs/format.md#locks);
when the user configures one, every timeline transition of ours takes it too, inside our own lock.

Supported providers:

* ``FileSystemBasedLockProvider``: the file ``<hoodie.write.lock.filesystem.path>/lock`` (default
  ``<base>/.hoodie/lock``), created exclusively; its owner deletes it to unlock. Another owner's file is taken over
  only when it expired (``hoodie.write.lock.filesystem.expire`` minutes after its mtime; 0, the default, never), or
  when it names a hudi-cluster process on this host that is no longer alive. The body is Hudi's ``LockInfo`` JSON.
* ``StorageBasedLockProvider`` (tables on S3 and GCS): ``.hoodie/.locks/table_lock.json``, a lease written with
  conditional requests and renewed while held (:mod:`.storage_lock`). Hudi has no client for other stores (Azure
  included), so there it is refused, as Hudi refuses it (``No implementation of StorageLock supports this scheme``).
* ``InProcessLockProvider`` (a lock within one JVM): nothing beyond our own lock to do.

Others (ZooKeeper, DynamoDB, Hive metastore) are refused with one line naming these.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import socket
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from .. import clock
from ..errors import ConfigError
from ..io import registry
from ..io.storage import Storage
from .storage_lock import StorageLock

PROVIDER_KEY = "hoodie.write.lock.provider"
_PACKAGE = "org.apache.hudi.client.transaction.lock."
FILE_SYSTEM = _PACKAGE + "FileSystemBasedLockProvider"
IN_PROCESS = _PACKAGE + "InProcessLockProvider"
STORAGE_BASED = _PACKAGE + "StorageBasedLockProvider"
SUPPORTED = (FILE_SYSTEM, STORAGE_BASED, IN_PROCESS)
VALIDITY_KEY = "hoodie.write.lock.storage.validity.timeout.secs"
RENEW_KEY = "hoodie.write.lock.storage.renew.interval.secs"
RENEW_ALIAS = "hoodie.write.lock.storage.heartbeat.poll.secs"  # Hudi's older name of the same key
_THREAD_PREFIX = "hudi-cluster "


class TableLock(Protocol):
    """Apache Hudi's lock of one table as our timeline lock takes it (``ownership._hudi_lock``)."""

    @property
    def path(self) -> str: ...

    def try_acquire(self, storage: Storage, token: str) -> bool: ...

    def release(self, storage: Storage, token: str) -> None: ...

    def holder(self, storage: Storage) -> str: ...


@dataclass(frozen=True)
class LockFile:
    """Hudi's ``FileSystemBasedLockProvider`` lock file of one table."""

    path: str
    expire_minutes: int = 0

    def _body(self, token: str) -> bytes:
        now = dt.datetime.now().strftime("%Y-%m-%d %H:%M:%S")
        owner = f"{_THREAD_PREFIX}{os.getpid()}@{machine()} {token}"
        return json.dumps({"lockCreateTime": now, "lockThreadName": owner, "lockStacksInfo": []}).encode()

    def try_acquire(self, storage: Storage, token: str) -> bool:
        """Create the lock file; False while another owner holds it. An expired or orphaned one is removed."""
        if storage.create_exclusive(self.path, self._body(token)):
            return True
        if self._stale(storage):
            storage.delete_file(self.path)
            return storage.create_exclusive(self.path, self._body(token))
        return False

    def release(self, storage: Storage, token: str) -> None:
        """Delete the lock file if it is still this owner's (an expired one may have been taken over)."""
        try:
            body = storage.read_bytes(self.path)
        except OSError:
            return
        if token.encode() in body:
            storage.delete_file(self.path)

    def holder(self, storage: Storage) -> str:
        try:
            return str(json.loads(storage.read_bytes(self.path) or b"{}").get("lockThreadName") or "an Apache Hudi writer")
        except (OSError, ValueError):
            return "an Apache Hudi writer"

    def _stale(self, storage: Storage) -> bool:
        modified = storage.modified_time(self.path)
        if modified is None:
            return False
        if self.expire_minutes > 0:
            age = clock.utc_now() - modified.astimezone(dt.timezone.utc)
            if age.total_seconds() > self.expire_minutes * 60:
                return True
        holder = self.holder(storage)
        if holder.startswith(_THREAD_PREFIX):  # ours: orphaned if its process on this host is gone
            pid, _, host = holder[len(_THREAD_PREFIX):].split(" ")[0].partition("@")
            return host == machine() and pid.isdigit() and not pid_alive(int(pid))
        return False


def machine() -> str:
    """This host, boot and pid namespace: where a pid means the same process (a hostname alone is shared by
    containers and survives reboots, so a pid there could name a stranger)."""
    parts = [socket.gethostname()]
    with contextlib.suppress(OSError):
        parts.append(open("/proc/sys/kernel/random/boot_id").read().strip())
    with contextlib.suppress(OSError):
        parts.append(os.readlink("/proc/self/ns/pid"))
    return "/".join(parts)


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists on this machine (another user's counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def lock_file_for(storage: Storage, props: Mapping[str, str] | None) -> TableLock | None:
    """The Hudi lock this table's runs must also take, from the user's config; None when there is none to take.
    An unsupported provider is a :class:`ConfigError` (exit 2) naming the supported ones."""
    props = props or {}
    provider = (props.get(PROVIDER_KEY) or "").strip()
    if not provider or provider == IN_PROCESS:
        return None
    if provider == STORAGE_BASED:
        return _storage_lock(storage, props)
    if provider != FILE_SYSTEM:
        raise ConfigError(f"{PROVIDER_KEY}={provider}: this lock provider can't be used here; accepted: "
                          f"{', '.join(SUPPORTED)} (or none)")  # fmt: skip
    if not storage.capabilities.exclusive_create:
        raise ConfigError(f"{PROVIDER_KEY}={FILE_SYSTEM}: its lock file is created exclusively, which "
                          f"{storage.store_name} cannot do; use {STORAGE_BASED}")  # fmt: skip
    directory = storage.strip_scheme((props.get("hoodie.write.lock.filesystem.path") or "").strip()) or storage.join(".hoodie")
    expire = _whole_number(props, "hoodie.write.lock.filesystem.expire", "0", "whole minutes >= 0", minimum=0)
    return LockFile(directory.rstrip("/") + "/lock", expire)


def check_commit_safety(storage: Storage, lock: TableLock | None) -> None:
    """Before a run writes anything: refuse, in one line, a store on which two writers could both commit (it cannot
    create a file exclusively, or its server ignores the condition), unless a lock provider excludes the other
    writers. A lock kept on such a server with the same conditional requests would be no safer: refused too."""
    gap = storage.commit_gap()
    if gap is None:
        return
    if storage.capabilities.exclusive_create:  # capable on paper, but the server ignores the condition
        raise storage.commit_refusal(gap, "use a server that honours If-None-Match (a lock kept on this one with "
                                          "conditional requests would be no safer)")  # fmt: skip
    if lock is None:
        keeps_hudi_lock = storage.capabilities.put_if_match and storage.capabilities.hudi_storage_lock
        fix = (f"set {PROVIDER_KEY}={STORAGE_BASED} to commit under its lock" if keeps_hudi_lock
               else f"no lock provider of ours works on it either ({', '.join(SUPPORTED[:2])} need conditional writes)")  # fmt: skip
        raise storage.commit_refusal(gap, fix)


def _storage_lock(storage: Storage, props: Mapping[str, str]) -> StorageLock:
    """Hudi's StorageBasedLockConfig rules: both durations whole seconds > 0, validity >= 10 x renewal."""
    if not storage.capabilities.put_if_match:
        raise ConfigError(f"{PROVIDER_KEY}={STORAGE_BASED}: needs a store with conditional updates (If-Match on an "
                          f"ETag): a table on {registry.schemes_that_can('hudi_storage_lock')} ({storage.store_name} "
                          f"has none, and Apache Hudi no storage lock client for it); for {storage.base_uri} use "
                          f"{FILE_SYSTEM}")  # fmt: skip
    if not storage.capabilities.hudi_storage_lock:  # the store could keep it, but Hudi's writers could not
        raise ConfigError(f"{PROVIDER_KEY}={STORAGE_BASED}: Apache Hudi has no storage lock client for "
                          f"{storage.scheme}:// (it ships them for {registry.schemes_that_can('hudi_storage_lock')} "
                          f"and refuses the provider elsewhere), so its writers could not take this lock; for "
                          f"{storage.base_uri} use {FILE_SYSTEM} (its lock file is created exclusively here; Hudi's "
                          f"writers need hoodie.fs.atomic_creation.support={storage.scheme} for it)")  # fmt: skip
    validity = _whole_number(props, VALIDITY_KEY, "300", "whole seconds >= 1", minimum=1)
    renew_key = RENEW_KEY if props.get(RENEW_KEY) or not props.get(RENEW_ALIAS) else RENEW_ALIAS
    renew = _whole_number(props, renew_key, "30", "whole seconds >= 1", minimum=1)
    if validity < 10 * renew:
        raise ConfigError(f"{VALIDITY_KEY}={validity} with {renew_key}={renew}: accepted: a validity at least 10 "
                          "times the renewal interval (as Apache Hudi requires)")  # fmt: skip
    return StorageLock(storage, validity, renew)


def _whole_number(props: Mapping[str, str], key: str, default: str, accepted: str, *, minimum: int) -> int:
    raw = (props.get(key) or default).strip()
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{key}={raw!r}: accepted: {accepted}") from None
    if value < minimum:
        raise ConfigError(f"{key}={raw!r}: accepted: {accepted}")
    return value


# Table base path -> the Hudi lock its runs take in this process (set from the run's config, see ``use_lock_file``).
_CONFIGURED: dict[str, TableLock] = {}
_CONFIGURED_GUARD = threading.Lock()


def use_lock_file(storage: Storage, lock: TableLock | None) -> None:
    """Make every timeline lock this process takes on the table also take ``lock`` (None: none)."""
    with _CONFIGURED_GUARD:
        if lock is None:
            _CONFIGURED.pop(storage.base, None)
        else:
            _CONFIGURED[storage.base] = lock


def configured_lock_file(storage: Storage) -> TableLock | None:
    with _CONFIGURED_GUARD:
        return _CONFIGURED.get(storage.base)


def new_token() -> str:
    return uuid.uuid4().hex
