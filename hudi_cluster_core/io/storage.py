"""Storage access for table files: a table's base path on one store, whatever the store.

:class:`Storage` is what the rest of the core holds; it names no store. The URI's scheme picks a backend in
:mod:`.registry` (local disk, S3, ...), which implements :class:`~.store.Backend` and states its
:class:`~.store.Capabilities`. Completed timeline files must appear whole (docs/format.md#commit-point-and-atomicity):
each backend's :meth:`~.store.Backend.write` does that (a rename locally, one PUT on an object store). Files that must
not exist yet (a requested plan, a completed instant) are created exclusively; on a store that cannot, only while a
lock provider's cross-process lock is held (:meth:`Storage.under_cross_process_lock`), never by "check, then
write" otherwise.
"""

from __future__ import annotations

import collections
import contextlib
import datetime as dt
import posixpath
import threading
from pathlib import Path
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterator, Mapping, TypeVar
from urllib.parse import urlparse

from ..errors import StorageError
from . import registry
from .store import Backend, Capabilities, FileEntry, Versioned

__all__ = ["FileEntry", "PARALLEL_REQUESTS", "RequestCounts", "Storage", "in_parallel", "open_storage", "requests"]

_LOCKED: dict[str, int] = {}  # table base -> depth of the lock provider's lock held in this process
_FENCES: dict[str, Callable[[], None]] = {}  # table base -> raises once that lock is no longer held (``fence``)
_LOCKED_GUARD = threading.Lock()


class RequestCounts:
    """How many store calls this process made through :class:`Storage`, by kind (``list``, ``info`` (HEAD),
    ``read`` (GET), ``range`` (a ranged GET: a parquet footer whose file size the listing gave), ``open`` (a parquet
    file opened on the data path: a HEAD for its size, then its reads), ``write``, ``create``
    (exclusive), ``update`` (conditional), ``delete``): cheap enough to be always on, so a test or a benchmark can bound what a run asks of a store.
    One count is one backend call; on an object store a ``list`` is one request per 1,000 keys it returns."""

    def __init__(self) -> None:
        self._counts: collections.Counter[str] = collections.Counter()
        self._guard = threading.Lock()

    def add(self, kind: str) -> None:
        with self._guard:
            self._counts[kind] += 1

    def snapshot(self) -> dict[str, int]:
        with self._guard:
            return dict(self._counts)

    @contextlib.contextmanager
    def counting(self) -> Iterator[dict[str, int]]:
        """The calls made while the ``with`` body runs (every thread of the process), filled in on leaving."""
        before = self.snapshot()
        delta: dict[str, int] = {}
        try:
            yield delta
        finally:
            after = self.snapshot()
            delta.update({k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)})


requests = RequestCounts()  # this process's, over every Storage (the metadata table's included)

# Requests one call site keeps in flight at once (a footer each, a metadata-table file each): on an object store
# each is a round trip waited for, so they overlap. 1 runs them one after another in the calling thread (the
# deterministic simulation of tests/sim needs that: it schedules one storage operation at a time).
PARALLEL_REQUESTS = 16
_T = TypeVar("_T")
_R = TypeVar("_R")


def in_parallel(fn: Callable[[_T], _R], items: Sequence[_T], threads: int = PARALLEL_REQUESTS) -> list[_R]:
    """``[fn(item) for item in items]``, up to ``threads`` (and :data:`PARALLEL_REQUESTS`) at once."""
    workers = min(threads, PARALLEL_REQUESTS, len(items))
    if workers <= 1:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(workers, thread_name_prefix="storage") as pool:
        return list(pool.map(fn, items))


def open_storage(base_path: str | Path, options: Mapping[str, str] | None = None) -> "Storage":
    """Storage for a table given as a path (made absolute) or a URI."""
    uri = str(base_path)
    if not registry.scheme_of(uri):
        uri = str(Path(uri).expanduser().resolve())
    return Storage(uri, options)


class Storage:
    """A store plus the table's base path on it.

    ``options`` are the job's keys (``--hoodie-conf``, ``--props``); the backend resolves them once (with this
    process's environment) into :attr:`options`, the explicit map to hand to another process (a Spark task) so
    that it reaches the same store the same way."""

    def __init__(self, base_uri: str, options: Mapping[str, str] | None = None):
        self.base_uri = base_uri.rstrip("/") or "/"
        self.scheme = registry.scheme_of(self.base_uri)
        if self.scheme not in registry.BACKENDS:
            raise registry.unsupported_scheme(base_uri, self.scheme)
        backend_class = registry.backend_class(self.scheme)
        if self.scheme and not registry.is_local(self.base_uri) and not urlparse(self.base_uri).netloc:
            raise StorageError(f"{base_uri}: no bucket; accepted: {self.scheme}://bucket/path/to/table")
        self.backend: Backend = backend_class(self.base_uri, options or {})
        self.base = posixpath.normpath(self.backend.path_of(self.base_uri))
        self._fs: Any = None

    # ------------------------------------------------------------------------------------------ the store
    @property
    def capabilities(self) -> Capabilities:
        return self.backend.capabilities

    @property
    def store_name(self) -> str:
        return self.backend.store_name

    @property
    def request_threads(self) -> int:
        """Requests one call site keeps in flight on this store (footers, metadata-table files): on an object store
        each is a round trip waited for, so :data:`PARALLEL_REQUESTS` overlap; on local files a read is this
        process's own CPU, which threads only share under the GIL (10,000 footers: 3.0 CPU s one after another,
        5.7 on 16 threads), so one at a time."""
        return 1 if self.capabilities.local_files else PARALLEL_REQUESTS

    @property
    def options(self) -> dict[str, str]:
        return self.backend.options

    @property
    def fs(self) -> Any:
        """The ``pyarrow.fs.FileSystem`` for parquet files on this store (same settings and credentials)."""
        if self._fs is None:
            self._fs = self.backend.filesystem()
        return self._fs

    def hudi_rs_options(self) -> dict[str, str]:
        return self.backend.hudi_rs_options()

    def hadoop_options(self) -> dict[str, str]:
        return self.backend.hadoop_options()

    def hudi_rs_uri(self) -> str:
        """The table's base URI as hudi-rs takes it (with :meth:`hudi_rs_options`)."""
        return self.backend.hudi_rs_uri(self.base_uri)

    def at(self, base_uri: str) -> "Storage":
        """Storage for another base path on the same store, with the same settings (the metadata table)."""
        return Storage(base_uri, self.options)

    def check_reachable(self) -> None:
        """Fail with one line naming the endpoint unless the store answers (a no-op locally)."""
        self.backend.check_reachable(self.base_uri, self.base)

    def error(self, exc: BaseException) -> StorageError:
        """``exc`` from the store as one line: the table, the endpoint and the store's own reason."""
        return self.backend.error(self.base_uri, exc)

    # ------------------------------------------------------------------------------------------------ paths
    def join(self, *parts: str) -> str:
        return posixpath.join(self.base, *[p for p in parts if p])

    def qualified(self, path: str) -> str:
        """The fully qualified form Hudi stores in clustering plans (``file:/abs/path`` locally)."""
        return self.backend.qualified(self.scheme, path)

    def strip_scheme(self, path: str) -> str:
        return self.backend.path_of(path)

    def same_store(self, uri: str) -> bool:
        """Whether ``uri`` (with a scheme) names this store: the same backend and the same authority (bucket)."""
        parsed = urlparse(uri)
        table = urlparse(self.base_uri)
        return registry.same_store(parsed.scheme.lower(), self.scheme) and self.backend.same_authority(parsed.netloc, table.netloc)

    # ---------------------------------------------------------------------------------------------- reading
    def info(self, path: str) -> FileEntry | None:
        requests.add("info")
        return self.backend.info(path)

    def size(self, path: str) -> int:
        """The size in bytes of the file at ``path``; FileNotFoundError if there is none."""
        entry = self.info(path)
        if entry is None:
            raise FileNotFoundError(path)
        return entry.size

    def exists(self, path: str) -> bool:
        return self.info(path) is not None

    def list(self, directory: str, recursive: bool = False) -> list[FileEntry]:
        requests.add("list")
        return self.backend.list(directory, recursive)

    def open_input_file(self, path: str) -> Any:
        """A parquet file opened for reading on the data path (``fs``), counted as one ``open``."""
        requests.add("open")
        return self.fs.open_input_file(path)

    def read_bytes(self, path: str) -> bytes:
        requests.add("read")
        return self.backend.read(path)

    def read_range(self, path: str, start: int, length: int) -> bytes:
        """``length`` bytes of ``path`` from ``start``: one ranged GET on an object store (a parquet footer read
        where the file's size is known already), counted as one ``range``."""
        requests.add("range")
        return self.backend.read_range(path, start, length)

    def read_versioned(self, path: str) -> Versioned | None:
        """The bytes and version (ETag) of ``path``, or None; only where ``capabilities.put_if_match``."""
        requests.add("read")
        return self.backend.read_versioned(path)

    def modified_time(self, path: str) -> dt.datetime | None:
        requests.add("info")
        return self.backend.modified_time(path)

    # ---------------------------------------------------------------------------------------------- writing
    def write_bytes(self, path: str, data: bytes) -> None:
        requests.add("write")
        self.backend.write(path, data)

    def write_atomic(self, path: str, data: bytes) -> None:
        """Make ``path`` appear whole or not at all."""
        requests.add("write")
        self._fenced(path)
        self.backend.write(path, data)

    def write_new(self, path: str, data: bytes) -> None:
        """:meth:`write_atomic` for a file that must not exist yet (a completed instant): FileExistsError if it
        does."""
        if not self.create_exclusive(path, data):
            raise FileExistsError(f"{self.qualified(path)} already exists; it was not overwritten")

    def create_exclusive(self, path: str, data: bytes) -> bool:
        """Make ``path`` appear whole with ``data`` unless it exists; False when it already did. On a store that
        cannot create exclusively, only under a lock provider's lock (then no other writer can be here)."""
        self._fenced(path)
        if self.capabilities.exclusive_create:
            requests.add("create")
            return self.backend.create_exclusive(path, data)
        if not self.under_cross_process_lock():
            raise self.commit_refusal()
        if self.exists(path):
            return False
        self.write_bytes(path, data)
        return True

    def put_if_match(self, path: str, data: bytes, version: str | None) -> str | None:
        """Write ``data`` if ``path`` is still ``version`` (None: absent); the new version, or None when another
        writer came first. Only where ``capabilities.put_if_match`` (Hudi's storage lock)."""
        requests.add("update")
        return self.backend.put_if_match(path, data, version)

    def delete_file(self, path: str) -> None:
        """Delete ``path`` if it is there (idempotent: a recovery may repeat a delete another run did)."""
        requests.add("delete")
        self._fenced(path)
        self.backend.delete(path)

    def delete_dir(self, path: str) -> None:
        requests.add("delete")
        self.backend.delete_tree(path)

    def mkdirs(self, path: str) -> None:
        self.backend.make_dirs(path)

    # -------------------------------------------------------------------------------------- commit safety
    def commit_gap(self) -> str | None:
        """What this store lacks for two writers never to both commit (None: nothing): exclusive creates, stated
        by the backend and, where a server may ignore them, tried once on a probe under ``.hoodie/.temp``."""
        if not self.capabilities.exclusive_create:
            return "exclusive create (a write that fails when the name exists)"
        if not self.backend.verify_exclusive_create(self.join(".hoodie", ".temp")):
            return "exclusive create: the server ignored If-None-Match (a second create of one name overwrote it)"
        return None

    def commit_refusal(self, gap: str | None = None, fix: str = "") -> StorageError:
        """The one line a commit stops with on a store lacking ``gap`` and no lock provider configured."""
        gap = gap or self.commit_gap() or "exclusive create"
        store = f"{self.store_name} at {self.backend.where(self.base_uri)}"
        fix = fix or "configure a lock provider (hoodie.write.lock.provider) to commit under its lock"
        return StorageError(f"{self.base_uri}: {store} cannot do {gap}, so two writers could both commit; nothing "
                            f"was written; {fix}")  # fmt: skip

    @contextlib.contextmanager
    def cross_process_lock(self, fence: Callable[[], None] | None = None) -> Iterator[None]:
        """Mark this table as held under a lock provider's cross-process lock for the ``with`` body. ``fence``
        raises once the lock is no longer this process's (a lease that ran out while it was paused, or that
        another owner took over): every change of the table's timeline asks it first, so a holder that lost the
        lock stops before its next transition instead of writing beside the new holder."""
        with _LOCKED_GUARD:
            _LOCKED[self.base] = _LOCKED.get(self.base, 0) + 1
            if fence is not None and self.base not in _FENCES:
                _FENCES[self.base] = fence
        try:
            yield
        finally:
            with _LOCKED_GUARD:
                _LOCKED[self.base] -= 1
                if not _LOCKED[self.base]:
                    del _LOCKED[self.base]
                    _FENCES.pop(self.base, None)

    def _fenced(self, path: str) -> None:
        """Before a change under ``path``: if it is on a timeline (the table's, or its metadata table's, which
        lives under it), the fence of the lock held on the table (if any)."""
        if "/.hoodie/timeline/" not in "/" + path:
            return
        with _LOCKED_GUARD:
            fences = [fence for base, fence in _FENCES.items()
                      if self.base == base or self.base.startswith(base.rstrip("/") + "/")]  # fmt: skip
        for fence in fences:
            fence()

    def under_cross_process_lock(self) -> bool:
        with _LOCKED_GUARD:
            return bool(_LOCKED.get(self.base))
