"""S3 and S3-compatible stores (``s3://``, ``s3a://``: the same objects) through obstore (Rust ``object_store``,
what hudi-rs uses; bench/README.md has the measurements behind the choice).

Every request is one obstore call: conditional creates (``put(mode="create")``, i.e. ``If-None-Match: *``) for
timeline files that must not exist yet, ``If-Match`` ETag updates for Apache Hudi's storage lock, listing, reads,
deletes; and, through :mod:`.obstore_fs`, the parquet files the tasks read and write. Settings come from
:mod:`.s3_settings`, credentials from :mod:`.s3_credentials`. There are no directories: a prefix exists while an
object is under it, and none are created. A folder-marker object (a key ending in ``/``, left by other
writers) is listed as its folder, as pyarrow and Hadoop's S3A show it.

A server that ignores ``If-None-Match`` would let two writers both "create" a file; :meth:`S3Backend.verify_exclusive_create`
tries it once per bucket and process on a probe object (``table.lock_provider.check_commit_safety``).
"""

from __future__ import annotations

import datetime as dt
import posixpath
import threading
import uuid
from typing import Any, Mapping

from ..errors import StorageError
from .obstore_fs import ObstoreFileSystem, obstore_errors
from .s3_credentials import S3Credentials
from .s3_settings import RESOLVED, S3Settings, resolve
from .store import Backend, Capabilities, FileEntry, StoreError, Versioned

_VERIFIED: dict[tuple[str, str], bool] = {}  # (endpoint, bucket) -> whether the server honours If-None-Match
# (bucket, settings, credential source) -> S3Store: every Storage of a process with the same settings shares one
# client and its connections (a task builds many Storage objects; a TLS handshake per object would add up)
_STORES: dict[tuple, Any] = {}
_STORES_GUARD = threading.Lock()


class S3Backend(Backend):
    capabilities = Capabilities(exclusive_create=True, put_if_match=True)
    store_name = "S3"

    def __init__(self, base_uri: str, options: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None):
        self.settings = S3Settings(resolve(options or {}, environ))
        self.credentials = S3Credentials(self.settings.options, base_uri)
        self._stores: dict[str, Any] = {}

    @property
    def options(self) -> dict[str, str]:
        return {**self.settings.options, **self.credentials.shipped(), RESOLVED: "true"}

    def where(self, base_uri: str) -> str:
        return self.settings.describe_endpoint()

    # ----------------------------------------------------------------------------------------------- paths
    def path_of(self, uri: str) -> str:
        scheme, sep, rest = uri.partition("://")
        return rest if sep else uri

    def qualified(self, scheme: str, path: str) -> str:
        return f"{scheme}://{path}"

    def store_and_key(self, path: str) -> tuple[Any, str]:
        bucket, _, key = path.partition("/")
        store = self._stores.get(bucket)
        if store is None:
            from obstore.store import S3Store

            shared = (bucket, tuple(sorted(self.settings.options.items())), self.credentials.source)
            with _STORES_GUARD:
                store = _STORES.get(shared)
                if store is None:
                    if len(_STORES) >= 64:
                        _STORES.clear()
                    store = _STORES[shared] = S3Store(
                        bucket, config=self.settings.obstore_config(bucket), client_options=self.settings.client_options(),
                        retry_config=self.settings.retry_config(), credential_provider=self.credentials,
                    )  # fmt: skip
            self._stores[bucket] = store
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
            if "NoSuchBucket" in str(exc):
                raise StorageError(f"{base_uri}: bucket '{bucket}' does not exist at {self.where(base_uri)}") from None
            raise self.error(base_uri, exc) from None

    def error(self, base_uri: str, exc: BaseException) -> StorageError:
        reason = " ".join(str(exc).split())
        hint = ""
        if any(code in reason for code in ("403", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied")):
            hint = " (check fs.s3a.access.key/fs.s3a.secret.key, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or the role)"
        elif "error sending request" in reason or "timed out" in reason or "Connection refused" in reason:
            hint = " (check fs.s3a.endpoint or AWS_ENDPOINT_URL, and that the server is up)"
        return StorageError(f"{base_uri}: storage at {self.where(base_uri)} failed: {reason[:400]}{hint}")

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
                return [FileEntry(f"{bucket}/{p}", 0, True) for p in found["common_prefixes"]] + [
                    FileEntry(f"{bucket}/{m['path']}", m["size"], False) for m in found["objects"] if m["path"] != key]
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
                return Versioned(bytes(result.bytes()), result.meta["e_tag"] or "")
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
            obstore.put(store, key, data)  # one PUT: S3 makes the object visible whole

    def create_exclusive(self, path: str, data: bytes) -> bool:
        return self.put_if_match(path, data, None) is not None

    def put_if_match(self, path: str, data: bytes, version: str | None) -> str | None:
        import obstore
        from obstore.exceptions import AlreadyExistsError, PreconditionError

        store, key = self.store_and_key(path)
        mode: Any = "create" if version is None else {"e_tag": version}
        try:
            with obstore_errors(f"PUT {path} ({'If-None-Match: *' if version is None else 'If-Match'})"):
                try:
                    return obstore.put(store, key, data, mode=mode)["e_tag"] or ""
                # 412 (and 409 for a create): another writer came first; 404 on If-Match: the object is gone
                except (AlreadyExistsError, PreconditionError, FileNotFoundError):
                    return None
        except StoreError as exc:
            if "ConditionalRequestConflict" in str(exc):  # S3: a concurrent conditional write won
                return None
            raise

    def verify_exclusive_create(self, directory: str) -> bool:
        """Whether this server refuses a second create of one name (once per endpoint and bucket, on a probe
        object under ``directory`` that is deleted again)."""
        bucket = directory.split("/", 1)[0]
        known = (self.where(""), bucket)
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
        with obstore_errors(f"DELETE {path}"):
            obstore.delete(store, key)  # S3 answers a delete of a missing key as done

    def delete_tree(self, path: str) -> None:
        import obstore

        store, key = self.store_and_key(path)
        if not key:
            raise StorageError(f"{path}: refusing to delete a whole bucket")
        with obstore_errors(f"DELETE {path}/"):
            keys = [m["path"] for batch in obstore.list(store, key, chunk_size=1000) for m in batch]
            if keys:
                obstore.delete(store, keys)

    # --------------------------------------------------------------------------------------------- data path
    def filesystem(self) -> Any:
        import pyarrow.fs as pafs

        return pafs.PyFileSystem(ObstoreFileSystem(self))

    def _with_credentials(self) -> S3Settings:
        return S3Settings({**self.settings.options, **self.credentials.shipped()})

    def hudi_rs_options(self) -> dict[str, str]:
        return self._with_credentials().hudi_rs_options()

    def hadoop_options(self) -> dict[str, str]:
        return self._with_credentials().hadoop_options()
