"""A fake store in this process's memory (``memory://bucket/path``), for tests of the storage seam: a new store is
one module like this one plus one registry line, ``registry.register("memory", "tests.support.memory_store:MemoryBackend")``.

Objects live in one obstore ``MemoryStore`` per bucket, shared by every ``Storage`` of the process (a Spark task in
another process sees nothing: only driver-side paths, commit and lock, run here). It does what S3 does (exclusive
create, ``If-Match`` on an ETag, parquet through :class:`~hudi_cluster_core.io.obstore_fs.ObstoreFileSystem`);
:class:`NoExclusiveCreate` is the same store without exclusive creates (but with ETag updates, so Hudi's storage
lock can still be kept on it), for the fail-closed rules. Having no settings and ``bucket/key`` paths, it takes
those parts of a backend from :class:`~tests.support.in_process_store.InProcessBackend`, as the simulated store does.
"""

from __future__ import annotations

import datetime as dt
import posixpath
from typing import Any

from hudi_cluster_core.io.obstore_fs import ObstoreFileSystem, obstore_errors
from hudi_cluster_core.io.store import Capabilities, FileEntry, Versioned
from tests.support.in_process_store import InProcessBackend

BUCKETS: dict[str, Any] = {}  # bucket -> obstore MemoryStore


def reset() -> None:
    BUCKETS.clear()


def objects(bucket: str) -> dict[str, bytes]:
    """Every object of ``bucket`` by key (what a test compares before and after)."""
    import obstore

    store = BUCKETS.get(bucket)
    if store is None:
        return {}
    return {m["path"]: bytes(obstore.get(store, m["path"]).bytes()) for batch in obstore.list(store) for m in batch}


class MemoryBackend(InProcessBackend):
    capabilities = Capabilities(exclusive_create=True, put_if_match=True, hudi_storage_lock=True)
    store_name = "memory store"

    def store_and_key(self, path: str) -> tuple[Any, str]:
        from obstore.store import MemoryStore

        bucket, _, key = path.partition("/")
        return BUCKETS.setdefault(bucket, MemoryStore()), key.strip("/")

    def info(self, path: str) -> FileEntry | None:
        import obstore

        store, key = self.store_and_key(path)
        try:
            return FileEntry(path, obstore.head(store, key)["size"], False) if key else None
        except FileNotFoundError:
            pass
        found = obstore.list_with_delimiter(store, key or None)
        return FileEntry(path, 0, True) if found["objects"] or found["common_prefixes"] else None

    def list(self, directory: str, recursive: bool = False) -> list[FileEntry]:
        import obstore

        store, key = self.store_and_key(directory)
        bucket = directory.split("/", 1)[0]
        if not recursive:
            found = obstore.list_with_delimiter(store, key or None)
            return [FileEntry(f"{bucket}/{p}", 0, True) for p in found["common_prefixes"]] + [
                FileEntry(f"{bucket}/{m['path']}", m["size"], False) for m in found["objects"]]
        files = [FileEntry(f"{bucket}/{m['path']}", m["size"], False) for b in obstore.list(store, key or None) for m in b]
        dirs = set()
        for entry in files:
            parent = posixpath.dirname(entry.path)
            while parent.startswith(directory + "/"):
                dirs.add(parent)
                parent = posixpath.dirname(parent)
        return [FileEntry(d, 0, True) for d in sorted(dirs)] + files

    def read(self, path: str) -> bytes:
        import obstore

        store, key = self.store_and_key(path)
        return bytes(obstore.get(store, key).bytes())

    def read_range(self, path: str, start: int, length: int) -> bytes:
        import obstore

        store, key = self.store_and_key(path)
        return bytes(obstore.get_range(store, key, start=start, length=length))

    def read_versioned(self, path: str) -> Versioned | None:
        import obstore

        store, key = self.store_and_key(path)
        try:
            result = obstore.get(store, key)
        except FileNotFoundError:
            return None
        return Versioned(bytes(result.bytes()), result.meta["e_tag"] or "")

    def modified_time(self, path: str) -> dt.datetime | None:
        import obstore

        store, key = self.store_and_key(path)
        try:
            return obstore.head(store, key)["last_modified"]
        except FileNotFoundError:
            return None

    def write(self, path: str, data: bytes) -> None:
        import obstore

        store, key = self.store_and_key(path)
        obstore.put(store, key, data)

    def create_exclusive(self, path: str, data: bytes) -> bool:
        return self.put_if_match(path, data, None) is not None

    def put_if_match(self, path: str, data: bytes, version: str | None) -> str | None:
        import obstore
        from obstore.exceptions import AlreadyExistsError, PreconditionError

        store, key = self.store_and_key(path)
        with obstore_errors(f"PUT {path}"):
            try:
                return obstore.put(store, key, data, mode="create" if version is None else {"e_tag": version})["e_tag"]
            except (AlreadyExistsError, PreconditionError, FileNotFoundError):
                return None

    def delete(self, path: str) -> None:
        import obstore

        store, key = self.store_and_key(path)
        try:
            obstore.delete(store, key)
        except FileNotFoundError:
            pass

    def delete_tree(self, path: str) -> None:
        import obstore

        store, key = self.store_and_key(path)
        keys = [m["path"] for batch in obstore.list(store, key) for m in batch]
        if keys:
            obstore.delete(store, keys)

    def filesystem(self) -> Any:
        import pyarrow.fs as pafs

        return pafs.PyFileSystem(ObstoreFileSystem(self))


class NoExclusiveCreate(MemoryBackend):
    """The same store as one that cannot create an object only if its name is free."""

    capabilities = Capabilities(exclusive_create=False, put_if_match=True, hudi_storage_lock=True)
    store_name = "memory store without exclusive create"
