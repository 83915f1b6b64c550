"""The storage interface: what one store (a backend) can do and the operations the core asks of it.

Everything above ``io/`` reaches files through :class:`~hudi_cluster_core.io.storage.Storage`, which holds one
:class:`Backend` chosen by the URI's scheme in :mod:`.registry`; a backend is one module that implements this
class and states its :class:`Capabilities`. Paths are the backend's own: an absolute path on local disk,
``bucket/key`` on an object store (what pyarrow's filesystems call a path), never with a scheme.

The timeline needs two conditional writes (docs/format.md#commit-point-and-atomicity, #storage-based-lock): *create
exclusive* (a requested plan, a completed instant: of two writers exactly one succeeds, the other is told) and *put if
match* (Hudi's storage lock: replace an object only while it is still the version read, by ETag or generation). A store
that cannot do one says so in its capabilities; the core then refuses to commit unless a lock provider excludes other
writers (``table.lock_provider.check_commit_safety``), instead of falling back to "check, then write".
"""

from __future__ import annotations

import datetime as dt
import posixpath
from abc import ABC, abstractmethod
from dataclasses import dataclass, fields
from typing import Any, Mapping, NamedTuple

from ..errors import StorageError


@dataclass(frozen=True)
class FileEntry:
    path: str  # path as the backend names it (no scheme)
    size: int
    is_dir: bool

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)


@dataclass(frozen=True)
class Capabilities:
    """What a store can do, as the core asks before relying on it."""

    exclusive_create: bool  # create an object only if its name is free, atomically, in one call
    put_if_match: bool  # replace an object only while it is the version read (ETag, generation)
    list_prefix: bool = True  # list a prefix, recursively or one level
    ranged_read: bool = True  # read part of an object (parquet footers and row groups)
    delete: bool = True
    local_files: bool = False  # paths are this machine's files: flock, access(2), rename and realpath apply
    # Apache Hudi ships a client of its StorageBasedLockProvider for this store (S3 and GCS in Hudi 1.1; it refuses
    # that provider on any other scheme, Azure's included, however capable the store)
    hudi_storage_lock: bool = False

    def names(self) -> list[str]:
        return [f.name for f in fields(self) if getattr(self, f.name)]


class Versioned(NamedTuple):
    """An object's bytes and the version they are (an ETag or a generation), for :meth:`Backend.put_if_match`."""

    data: bytes
    version: str


class Backend(ABC):
    """One store, with its settings resolved. Subclasses set :attr:`capabilities` and :attr:`store_name`, and take
    ``(base_uri, options, environ)`` in their constructor: the table (for messages), the job's keys and the
    environment to resolve them in (None: this process's)."""

    capabilities: Capabilities
    store_name: str  # for messages: "S3", "local disk"

    @abstractmethod
    def __init__(self, base_uri: str, options: Mapping[str, str] | None = None,
                 environ: Mapping[str, str] | None = None): ...  # fmt: skip

    # --- settings
    @property
    @abstractmethod
    def options(self) -> dict[str, str]:
        """The explicit settings map that rebuilds this backend in another process (a Spark task) exactly as here:
        nothing is looked up again there (environment, profile files, credential chains)."""

    def where(self, base_uri: str) -> str:
        """Where the store is, for messages (an endpoint); the URI itself by default."""
        return base_uri

    # --- paths
    @abstractmethod
    def path_of(self, uri: str) -> str:
        """``uri`` (of this store's scheme, or already a path) as a path of this backend."""

    @abstractmethod
    def qualified(self, scheme: str, path: str) -> str:
        """``path`` as the fully qualified URI Hudi stores in plans and commit metadata."""

    def same_authority(self, first: str, second: str) -> bool:
        """Whether two URI authorities (bucket, host) name the same place on this store."""
        return first == second

    # --- checks and errors
    def check_reachable(self, base_uri: str, base: str) -> None:
        """Fail with one line unless the store answers for ``base`` (a no-op where nothing can be unreachable)."""

    def error(self, base_uri: str, exc: BaseException) -> StorageError:
        """``exc`` from the store as one line: the table, where the store is and the store's own reason."""
        reason = " ".join(str(exc).split())
        return StorageError(f"{base_uri}: storage at {self.where(base_uri)} failed: {reason[:400]}")

    # --- reading
    @abstractmethod
    def info(self, path: str) -> FileEntry | None: ...

    @abstractmethod
    def list(self, directory: str, recursive: bool = False) -> list[FileEntry]:
        """Entries under ``directory`` (files and directories, one level or all); [] when there is none."""

    @abstractmethod
    def read(self, path: str) -> bytes:
        """The whole object; FileNotFoundError when there is none."""

    @abstractmethod
    def read_range(self, path: str, start: int, length: int) -> bytes: ...

    @abstractmethod
    def read_versioned(self, path: str) -> Versioned | None:
        """The object's bytes with their version, or None when there is no object."""

    @abstractmethod
    def modified_time(self, path: str) -> dt.datetime | None: ...

    # --- writing
    @abstractmethod
    def write(self, path: str, data: bytes) -> None:
        """Make ``path`` hold ``data``, appearing whole or not at all (overwrites)."""

    @abstractmethod
    def create_exclusive(self, path: str, data: bytes) -> bool:
        """Make ``path`` appear whole with ``data`` unless it exists; False when it already did. Only called when
        ``capabilities.exclusive_create``."""

    @abstractmethod
    def put_if_match(self, path: str, data: bytes, version: str | None) -> str | None:
        """Write ``data`` if the object is still ``version`` (None: if there is no object yet); returns the new
        version, or None when another writer came first. Only called when ``capabilities.put_if_match``."""

    @abstractmethod
    def delete(self, path: str) -> None:
        """Delete the object if it is there (idempotent: a recovery may repeat another run's delete)."""

    @abstractmethod
    def delete_tree(self, path: str) -> None:
        """Delete everything under ``path`` (idempotent)."""

    def verify_exclusive_create(self, directory: str) -> bool:
        """Whether exclusive creates really are exclusive here. A store whose servers may ignore the condition
        (an S3-compatible server without conditional writes) tries it on a probe object under ``directory``."""
        return self.capabilities.exclusive_create

    def make_dirs(self, path: str) -> None:
        """Create the directory where stores have directories (object stores have none: a no-op)."""

    # --- the data path: what pyarrow and hudi-rs are handed
    @abstractmethod
    def filesystem(self) -> Any:
        """The ``pyarrow.fs.FileSystem`` parquet files are read and written through, with these settings."""

    def hudi_rs_options(self) -> dict[str, str]:
        """hudi-rs (Rust object_store) storage options reaching the same store with the same settings."""
        return {}

    def hudi_rs_uri(self, uri: str) -> str:
        """``uri`` in a form hudi-rs accepts for this store (it lacks some URI forms users write)."""
        return uri

    def hadoop_options(self) -> dict[str, str]:
        """The same settings as Hadoop keys (``spark.hadoop.`` + these), for Apache Hudi reading the store."""
        return {}


# In a settings map a backend ships to a Spark task: it was resolved on the driver, so the task looks nothing up
# again (its environment, profile or credential files), whatever the store
RESOLVED = "hudi.cluster.storage.resolved"


class StoreError(OSError):
    """A store's request failed (not "no such file": that is FileNotFoundError), as one line naming the request."""


def unsupported(operation: str, backend: Backend) -> StorageError:
    return StorageError(f"{backend.store_name} cannot {operation} (it can: {', '.join(backend.capabilities.names())})")
