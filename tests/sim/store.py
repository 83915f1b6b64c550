"""The simulated store: an object store in memory (``sim://bucket/key``) behind the core's storage interface.

It can do what S3 can (exclusive create, put-if-match on a version), and every operation, pyarrow's parquet reads
and writes included, is first a scheduling point (``Scheduler.point``), where the scheduler may switch actors or
inject a fault. Objects carry the simulated wall time they were written at (a heartbeat's age). Which actor wrote
each object is remembered too, for the checks and the report.
"""

from __future__ import annotations

import bisect
import datetime as dt
import posixpath
import re
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from hudi_cluster_core.io.backend_fs import BackendFileSystem
from hudi_cluster_core.io.store import Capabilities, FileEntry, StoreError, Versioned
from tests.support.in_process_store import InProcessBackend

SCHEME = "sim"
COMPLETED = re.compile(r"^(\d{17})_(\d{17})\.(\w+)$")


@dataclass(frozen=True)
class Obj:
    data: bytes
    version: int
    written: dt.datetime
    writer: str


class World:
    """The objects of one simulation, the scheduler that orders access to them and its clock."""

    def __init__(self, scheduler=None, clock=None, objects: dict[str, Obj] | None = None):
        self.scheduler = scheduler
        self.clock = clock
        self.objects: dict[str, Obj] = dict(objects or {})
        self.keys: list[str] = sorted(self.objects)  # the same keys in order, for listings (dozens a schedule)
        self.versions = max((o.version for o in self.objects.values()), default=0)
        self.operations = 0
        self.completions: dict[str, set[str]] = {}  # instant time -> every completed file it ever had
        self.labels: dict[str, object] = {}  # writer instant time -> the label its actor had (the batch it wrote)

    def snapshot(self) -> dict[str, Obj]:
        return dict(self.objects)

    def under(self, prefix: str) -> list[str]:
        """The keys that start with ``prefix``, in order."""
        start = end = bisect.bisect_left(self.keys, prefix)
        while end < len(self.keys) and self.keys[end].startswith(prefix):
            end += 1
        return self.keys[start:end]

    def remove(self, path: str) -> None:
        if self.objects.pop(path, None) is not None:
            del self.keys[bisect.bisect_left(self.keys, path)]

    def do(self, op: str, path: str, action):
        """``action()`` as one storage operation: a scheduling point first, the injected fault around it."""
        self.operations += 1
        fault = self.scheduler.point(op, path) if self.scheduler is not None else ""
        result = action()
        if fault and self.scheduler is not None:
            self.scheduler.after(fault, op, path)
        return result

    def put(self, path: str, data: bytes) -> int:
        self.versions += 1
        actor = self.scheduler.current() if self.scheduler is not None else None
        when = self.clock.now(dt.timezone.utc) if self.clock is not None else dt.datetime.now(dt.timezone.utc)
        if path not in self.objects:
            bisect.insort(self.keys, path)
        self.objects[path] = Obj(bytes(data), self.versions, when, actor.name if actor else "")
        name = posixpath.basename(path)
        if "/.hoodie/timeline/" in path and "/.hoodie/metadata/" not in path:
            completed = COMPLETED.match(name)
            if completed:
                self.completions.setdefault(completed.group(1), set()).add(name)
            elif name.endswith((".commit.requested", ".deltacommit.requested")) and actor is not None:
                self.labels[name[:17]] = actor.label
        return self.versions


CURRENT: list[World] = [World()]  # the world every SimBackend works on (one simulation at a time per process)


def world() -> World:
    return CURRENT[0]


class SimBackend(InProcessBackend):
    capabilities = Capabilities(exclusive_create=True, put_if_match=True, hudi_storage_lock=True)  # as S3's
    store_name = "simulated store"

    # ------------------------------------------------------------------ reading
    def info(self, path: str) -> FileEntry | None:
        return world().do("info", path, lambda: self._info(path.rstrip("/")))

    def _info(self, path: str) -> FileEntry | None:
        found = world().objects.get(path)
        if found is not None:
            return FileEntry(path, len(found.data), False)
        prefix = path + "/"
        return FileEntry(path, 0, True) if world().under(prefix) else None

    def list(self, directory: str, recursive: bool = False) -> list[FileEntry]:
        return world().do("list", directory, lambda: self._list(directory.rstrip("/"), recursive))

    def _list(self, directory: str, recursive: bool) -> list[FileEntry]:
        prefix = directory + "/"
        files, dirs = [], set()
        objects = world().objects
        for key in world().under(prefix):
            rest = key[len(prefix):]
            if recursive or "/" not in rest:
                files.append(FileEntry(key, len(objects[key].data), False))
            parts = rest.split("/")[:-1]
            for depth in range(1, len(parts) + 1 if recursive else min(1, len(parts)) + 1):
                dirs.add(prefix + "/".join(parts[:depth]))
        return [FileEntry(d, 0, True) for d in sorted(dirs)] + files

    def read(self, path: str) -> bytes:
        return world().do("read", path, lambda: self._get(path).data)

    def read_range(self, path: str, start: int, length: int) -> bytes:
        return world().do("read", path, lambda: self._get(path).data[start:start + length])

    def read_versioned(self, path: str) -> Versioned | None:
        def action():
            found = world().objects.get(path)
            return None if found is None else Versioned(found.data, str(found.version))

        return world().do("read", path, action)

    def modified_time(self, path: str) -> dt.datetime | None:
        return world().do("info", path, lambda: getattr(world().objects.get(path), "written", None))

    def _get(self, path: str) -> Obj:
        found = world().objects.get(path)
        if found is None:
            raise FileNotFoundError(path)
        return found

    # ------------------------------------------------------------------ writing
    def write(self, path: str, data: bytes) -> None:
        world().do("write", path, lambda: world().put(path, data))

    def create_exclusive(self, path: str, data: bytes) -> bool:
        return self.put_if_match(path, data, None) is not None

    def put_if_match(self, path: str, data: bytes, version: str | None) -> str | None:
        def action():
            found = world().objects.get(path)
            if (found is None) != (version is None) or (found is not None and str(found.version) != version):
                return None
            return str(world().put(path, data))

        return world().do("create" if version is None else "put-if-match", path, action)

    def copy(self, src: str, dest: str) -> None:
        world().do("copy", dest, lambda: world().put(dest, self._get(src).data))

    def delete(self, path: str) -> None:
        world().do("delete", path, lambda: world().remove(path))

    def delete_tree(self, path: str) -> None:
        def action():
            for key in world().under(path.rstrip("/") + "/"):
                world().remove(key)

        world().do("delete", path, action)

    def filesystem(self) -> Any:
        return pafs.PyFileSystem(SimFileSystem(self))


class _Sink:
    """A file pyarrow writes: the object appears whole, in one operation, when it is closed."""

    def __init__(self, backend: SimBackend, path: str):
        self.backend, self.path, self.closed, self.parts = backend, path, False, []

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self.parts.append(chunk)
        return len(chunk)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.backend.write(self.path, b"".join(self.parts))


class SimFileSystem(BackendFileSystem):
    """pyarrow's view of the simulated store (parquet footers, base files the tasks read and write)."""

    backend: SimBackend

    def get_type_name(self) -> str:
        return SCHEME

    def equals(self, other: Any) -> bool:
        return isinstance(other, SimFileSystem)

    def move(self, src: str, dest: str) -> None:
        """As on an object store (``obstore.rename``): a server-side copy (the target appears whole), then a delete
        of the source; two operations, a crash may fall between them."""
        self.backend.copy(src, dest)
        self.backend.delete(src)

    def copy_file(self, src: str, dest: str) -> None:
        self.backend.write(dest, self.backend.read(src))

    def open_input_stream(self, path: str) -> pa.NativeFile:
        return pa.BufferReader(self.backend.read(path))

    def open_input_file(self, path: str) -> pa.NativeFile:
        return pa.BufferReader(self.backend.read(path))

    def open_output_stream(self, path: str, metadata: Any = None) -> pa.NativeFile:
        return pa.PythonFile(_Sink(self.backend, path), mode="w")

    def open_append_stream(self, path: str, metadata: Any = None) -> pa.NativeFile:
        raise StoreError(f"{path}: the simulated store cannot append")

