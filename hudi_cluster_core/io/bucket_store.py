"""What every object store reached through obstore shares (S3, GCS, Azure Blob): one client per bucket and
settings in a process, the operations of :class:`~.store.Backend` as obstore calls, and the probe that makes sure
a server really refuses a second create of one name.

A backend path is ``bucket/key`` (``container/key`` on Azure). There are no directories: a prefix exists while an
object is under it, and none are created; a folder-marker object (a key ending in ``/``, or the zero-byte object
other tools leave for a folder) is listed as its folder. Each store says what is its own in a few hooks: how its
client is built (:meth:`BucketBackend.new_store`), which version a conditional update matches (an ETag, or a GCS
generation), how its conditions are named in messages, and how it says a bucket is missing.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import threading
import uuid
from abc import abstractmethod
from typing import Any, Mapping

from ..errors import StorageError
from .obstore_fs import ObstoreFileSystem, obstore_errors
from .store import Backend, Capabilities, FileEntry, StoreError, Versioned

_VERIFIED: dict[tuple[str, str, str], bool] = {}  # (store, endpoint, bucket) -> whether creates are exclusive there
# (backend class, bucket, settings) -> obstore store: every Storage of a process with the same settings shares one
# client and its connections (a task builds many Storage objects; a TLS handshake per object would add up)
_STORES: dict[tuple, Any] = {}
_STORES_GUARD = threading.Lock()


class BucketBackend(Backend):
    capabilities = Capabilities(exclusive_create=True, put_if_match=True)
    create_condition = "If-None-Match: *"  # how the store's exclusive create and update are named in messages
    update_condition = "If-Match"
    bucket_word = "bucket"

    @abstractmethod
    def new_store(self, bucket: str) -> Any:
        """A new obstore store for ``bucket`` with these settings, every one explicit."""

    @abstractmethod
    def client_identity(self) -> tuple:
        """What makes two backends' clients interchangeable (settings, credential source): the cache key."""

    def version_of(self, meta: Mapping[str, Any]) -> str:
        """The version a later :meth:`put_if_match` matches, from obstore's object meta or put result."""
        return meta.get("e_tag") or ""

    def update_mode(self, version: str) -> Any:
        return {"e_tag": version}

    def missing_bucket(self, reason: str) -> bool:
        """Whether a failed listing of the table says its bucket does not exist."""
        return False

    def hint(self, reason: str) -> str:
        """Advice appended to a store error (which setting to check), or ""."""
        return ""

    # ----------------------------------------------------------------------------------------------- paths
    def path_of(self, uri: str) -> str:
        scheme, sep, rest = uri.partition("://")
        return rest if sep else uri

    def qualified(self, scheme: str, path: str) -> str:
        return f"{scheme}://{path}"

    def store_and_key(self, path: str) -> tuple[Any, str]:
        bucket, _, key = path.partition("/")
        stores = self.__dict__.setdefault("_stores", {})
        store = stores.get(bucket)
        if store is None:
            shared = (type(self).__name__, bucket, self.client_identity())
            with _STORES_GUARD:
                store = _STORES.get(shared)
                if store is None:
                    if len(_STORES) >= 64:
                        _STORES.clear()
                    store = _STORES[shared] = self.new_store(bucket)
            stores[bucket] = store
        return store, key.strip("/")

    # -------------------------------------------------------------------------------------- checks, errors
    def check_reachable(self, base_uri: str, base: str) -> None:
        import obstore

        store, key = self.store_and_key(base)
        bucket = base.split("/", 1)[0]
        try:
            with obstore_errors(f"LIST {base_uri}"):
                obstore.list_with_delimiter(store, key or None)
        except OSError as exc:
            if self.missing_bucket(str(exc)):
                raise StorageError(f"{base_uri}: {self.bucket_word} '{bucket}' does not exist at "
                                   f"{self.where(base_uri)}") from None  # fmt: skip
            raise self.error(base_uri, exc) from None

    def error(self, base_uri: str, exc: BaseException) -> StorageError:
        reason = " ".join(str(exc).split())
        return StorageError(f"{base_uri}: storage at {self.where(base_uri)} failed: {reason[:400]}{self.hint(reason)}")

    # ---------------------------------------------------------------------------------------------- reading
    def info(self, path: str) -> FileEntry | None:
        import obstore

        store, key = self.store_and_key(path)
        if key:
            try:
                with obstore_errors(f"HEAD {path}"):
                    meta = obstore.head(store, key)
                return FileEntry(path, meta["size"], False)
            except FileNotFoundError:
                pass
        with obstore_errors(f"LIST {path}"):
            found = obstore.list_with_delimiter(store, key or None)
        return FileEntry(path.rstrip("/"), 0, True) if found["objects"] or found["common_prefixes"] else None

    def list(self, directory: str, recursive: bool = False) -> list[FileEntry]:
        import obstore

        store, key = self.store_and_key(directory)
        bucket = directory.split("/", 1)[0]
        with obstore_errors(f"LIST {directory}"):
            if not recursive:
                found = obstore.list_with_delimiter(store, key or None)
                prefixes = {p.rstrip("/") for p in found["common_prefixes"]}
                return [FileEntry(f"{bucket}/{p}", 0, True) for p in sorted(prefixes)] + [
                    FileEntry(f"{bucket}/{m['path']}", m["size"], False) for m in found["objects"]
                    if m["path"] != key and not (m["size"] == 0 and m["path"] in prefixes)]  # fmt: skip
            objects = [m for batch in obstore.list(store, key or None, chunk_size=1000) for m in batch]
        dirs: set[str] = set()
        for meta in objects:
            parent = posixpath.dirname(meta["path"])
            while parent and parent != key and parent.startswith(key):
                dirs.add(parent)
                parent = posixpath.dirname(parent)
        files = [FileEntry(f"{bucket}/{m['path']}", m["size"], False) for m in objects
                 if m["path"] != key and not (m["size"] == 0 and m["path"] in dirs)]  # a folder marker: its folder
        return [FileEntry(f"{bucket}/{d}", 0, True) for d in sorted(dirs)] + files

    def read(self, path: str) -> bytes:
        import obstore

        store, key = self.store_and_key(path)
        with obstore_errors(f"GET {path}"):
            return bytes(obstore.get(store, key).bytes())

    def read_range(self, path: str, start: int, length: int) -> bytes:
        import obstore

        store, key = self.store_and_key(path)
        with obstore_errors(f"GET {path}"):
            return bytes(obstore.get_range(store, key, start=start, length=length))

    def read_versioned(self, path: str) -> Versioned | None:
        import obstore

        store, key = self.store_and_key(path)
        try:
            with obstore_errors(f"GET {path}"):
                result = obstore.get(store, key)
                return Versioned(bytes(result.bytes()), self.version_of(result.meta))
        except FileNotFoundError:
            return None

    def modified_time(self, path: str) -> dt.datetime | None:
        import obstore

        store, key = self.store_and_key(path)
        try:
            with obstore_errors(f"HEAD {path}"):
                return obstore.head(store, key)["last_modified"]
        except FileNotFoundError:
            return None

    # ---------------------------------------------------------------------------------------------- writing
    def write(self, path: str, data: bytes) -> None:
        import obstore

        store, key = self.store_and_key(path)
        with obstore_errors(f"PUT {path}"):
            obstore.put(store, key, data)  # one request: the object appears whole

    def create_exclusive(self, path: str, data: bytes) -> bool:
        return self.put_if_match(path, data, None) is not None

    def put_if_match(self, path: str, data: bytes, version: str | None) -> str | None:
        import obstore
        from obstore.exceptions import AlreadyExistsError, PreconditionError

        store, key = self.store_and_key(path)
        mode: Any = "create" if version is None else self.update_mode(version)
        condition = self.create_condition if version is None else self.update_condition
        try:
            with obstore_errors(f"PUT {path} ({condition})"):
                try:
                    return self.version_of(obstore.put(store, key, data, mode=mode))
                # 412 (and 409 for a create): another writer came first; 404 on an update: the object is gone
                except (AlreadyExistsError, PreconditionError, FileNotFoundError):
                    return None
        except StoreError as exc:
            if "ConditionalRequestConflict" in str(exc):  # S3: a concurrent conditional write won
                return None
            raise

    def verify_exclusive_create(self, directory: str) -> bool:
        """Whether this server refuses a second create of one name (once per endpoint and bucket, on a probe
        object under ``directory`` that is deleted again): a server, a proxy or credentials that drop the condition
        would let two writers both commit."""
        bucket = directory.split("/", 1)[0]
        known = (type(self).__name__, self.where(""), bucket)
        if known not in _VERIFIED:
            probe = f"{directory}/.hudi-cluster-conditional-create-probe-{uuid.uuid4().hex}"
            try:
                _VERIFIED[known] = self.create_exclusive(probe, b"1") and not self.create_exclusive(probe, b"2")
            finally:
                self.delete(probe)
        return _VERIFIED[known]

    def delete(self, path: str) -> None:
        import obstore

        store, key = self.store_and_key(path)
        try:
            with obstore_errors(f"DELETE {path}"):
                obstore.delete(store, key)
        except FileNotFoundError:
            pass  # already gone (S3 says so silently; GCS and Azure answer 404)

    def delete_tree(self, path: str) -> None:
        import obstore

        store, key = self.store_and_key(path)
        if not key:
            raise StorageError(f"{path}: refusing to delete a whole {self.bucket_word}")
        with obstore_errors(f"DELETE {path}/"):
            keys = [m["path"] for batch in obstore.list(store, key, chunk_size=1000) for m in batch]
            for start in range(0, len(keys), 256):
                try:
                    obstore.delete(store, keys[start:start + 256])
                except FileNotFoundError:  # another run deleted some of them meanwhile: delete the rest alone
                    for one in keys[start:start + 256]:
                        self.delete(f"{path.split('/', 1)[0]}/{one}")

    # --------------------------------------------------------------------------------------------- data path
    def filesystem(self) -> Any:
        import pyarrow.fs as pafs

        return pafs.PyFileSystem(ObstoreFileSystem(self))


def client_options(endpoint: str, connect_ms: int, request_ms: int) -> Any:
    """obstore's HTTP client settings: plain http only for an http endpoint (an emulator), and both timeouts."""
    return {"allow_http": endpoint.startswith("http://"), "connect_timeout": f"{connect_ms}ms",
            "timeout": f"{request_ms}ms"}  # fmt: skip


def retry_config(attempts: int, connect_ms: int, request_ms: int) -> Any:
    """``attempts`` tries within that many request timeouts plus back-off: a silent endpoint fails in bounded time
    (object_store's own default keeps retrying for 3 minutes)."""
    budget_ms = attempts * (request_ms + connect_ms) + 2000
    return {"max_retries": attempts - 1, "retry_timeout": dt.timedelta(milliseconds=budget_ms)}
