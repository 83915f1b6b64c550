"""Storage access for table files, through ``pyarrow.fs``.

One small seam over local disk and S3 (``s3://``, ``s3a://``; settings in :mod:`.object_store`), so the table
code never touches ``os`` directly. Completed timeline files must appear atomically (section 3.4 of the format
notes): :meth:`Storage.write_atomic` writes a hidden temporary name that matches no timeline pattern, then
renames it; object stores have no rename and do a single PUT, conditional (``If-None-Match: *``) for files that
must not exist yet (:meth:`Storage.write_new`, :meth:`Storage.create_exclusive`). Object stores have no
directories either: none are created there (a prefix exists while an object is under it).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import posixpath
import uuid
from dataclasses import dataclass
from typing import Mapping
from urllib.parse import urlparse

import pyarrow.fs as pafs

from ..errors import StorageError
from . import object_store
from .object_store import S3Settings

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class FileEntry:
    path: str  # path as the filesystem names it (no scheme)
    size: int
    is_dir: bool

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)


class Storage:
    """A filesystem plus the table's base path on it.

    ``options`` are the job's keys (``fs.s3a.*``...); for an object store they are resolved once (with the AWS
    environment and profile) into :attr:`options`, the explicit map to hand to another process (a Spark task)
    so that it reaches the same store the same way."""

    def __init__(self, base_uri: str, options: Mapping[str, str] | None = None):
        self.base_uri = base_uri.rstrip("/") or "/"
        parsed = urlparse(self.base_uri)
        self.s3: S3Settings | None = None
        self.options: dict[str, str] = {}
        if parsed.scheme in ("", "file"):
            self.fs: pafs.FileSystem = pafs.LocalFileSystem()
            self.base = posixpath.normpath(parsed.path if parsed.scheme else self.base_uri)
            self.scheme = "file"
        elif object_store.is_object_store(parsed.scheme):
            if not parsed.netloc:
                raise StorageError(f"{base_uri}: no bucket; accepted: {parsed.scheme}://bucket/path/to/table")
            self.options = object_store.resolve(options or {})
            self.s3 = S3Settings(self.options)
            self.fs = self.s3.pyarrow_filesystem()
            self.base = posixpath.normpath(parsed.netloc + "/" + parsed.path.lstrip("/")).rstrip("/")
            self.scheme = parsed.scheme
        else:
            raise object_store.unsupported_scheme(base_uri, parsed.scheme)

    @property
    def is_object_store(self) -> bool:
        return self.s3 is not None

    def at(self, base_uri: str) -> "Storage":
        """Storage for another base path on the same store, with the same settings (the metadata table)."""
        return Storage(base_uri, self.options)

    def check_reachable(self) -> None:
        """Fail with one line naming the endpoint unless the bucket answers (object stores; a no-op locally)."""
        if self.s3 is None:
            return
        bucket = self.base.split("/", 1)[0]
        try:
            found = self.fs.get_file_info(bucket)
        except OSError as exc:
            raise self.error(exc) from None
        if found.type == pafs.FileType.NotFound:
            raise StorageError(f"{self.base_uri}: bucket '{bucket}' does not exist at {self.s3.describe_endpoint()}")

    def error(self, exc: BaseException) -> StorageError:
        """``exc`` from the store as one line: the table, the endpoint and the store's own reason."""
        reason = " ".join(str(exc).split())
        where = self.s3.describe_endpoint() if self.s3 else self.base_uri
        hint = ""
        if "ACCESS_DENIED" in reason or "InvalidAccessKeyId" in reason or "SignatureDoesNotMatch" in reason:
            hint = " (check fs.s3a.access.key/fs.s3a.secret.key or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)"
        elif "NETWORK_CONNECTION" in reason or "curlCode" in reason:
            hint = " (check fs.s3a.endpoint or AWS_ENDPOINT_URL, and that the server is up)"
        return StorageError(f"{self.base_uri}: storage at {where} failed: {reason[:400]}{hint}")

    def join(self, *parts: str) -> str:
        return posixpath.join(self.base, *[p for p in parts if p])

    def qualified(self, path: str) -> str:
        """The fully qualified form Hudi stores in clustering plans (``file:/abs/path`` locally)."""
        if self.scheme == "file":
            return "file:" + path
        return f"{self.scheme}://{path}"

    def strip_scheme(self, path: str) -> str:
        parsed = urlparse(path)
        if parsed.scheme in ("", "file"):
            return parsed.path if parsed.scheme else path
        return (parsed.netloc + parsed.path) if parsed.netloc else parsed.path

    def info(self, path: str) -> FileEntry | None:
        found = self.fs.get_file_info(path)
        if found.type == pafs.FileType.NotFound:
            return None
        return FileEntry(found.path, found.size or 0, found.type == pafs.FileType.Directory)

    def size(self, path: str) -> int:
        """The size in bytes of the file at ``path``; FileNotFoundError if there is none."""
        entry = self.info(path)
        if entry is None:
            raise FileNotFoundError(path)
        return entry.size

    def exists(self, path: str) -> bool:
        return self.info(path) is not None

    def list(self, directory: str, recursive: bool = False) -> list[FileEntry]:
        selector = pafs.FileSelector(directory, allow_not_found=True, recursive=recursive)
        return [
            FileEntry(i.path, i.size or 0, i.type == pafs.FileType.Directory)
            for i in self.fs.get_file_info(selector)
        ]

    def read_bytes(self, path: str) -> bytes:
        if self.is_object_store:  # one GET of the known size: pyarrow's S3 stream reads in many small requests
            with self.fs.open_input_file(path) as handle:
                return handle.read()
        with self.fs.open_input_stream(path) as stream:
            return stream.read()

    def write_bytes(self, path: str, data: bytes) -> None:
        self.mkdirs(posixpath.dirname(path))
        with self.fs.open_output_stream(path) as out:
            out.write(data)

    def write_atomic(self, path: str, data: bytes) -> None:
        """Make ``path`` appear whole or not at all."""
        if self.is_object_store:
            self.write_bytes(path, data)  # a single PUT is atomic on object stores
            return
        directory, name = posixpath.split(path)
        temp = posixpath.join(directory, f".{name}.{uuid.uuid4().hex}.tmp")
        self.write_bytes(temp, data)
        self.fs.move(temp, path)

    def write_new(self, path: str, data: bytes) -> None:
        """:meth:`write_atomic` for a file that must not exist yet (a completed instant): FileExistsError if it
        does. Locally the caller's timeline lock excludes other writers; object stores check in the PUT itself."""
        if self.is_object_store:
            if not self.create_exclusive(path, data):
                raise FileExistsError(f"{self.qualified(path)} already exists; it was not overwritten")
            return
        self.write_atomic(path, data)

    def create_exclusive(self, path: str, data: bytes) -> bool:
        """Make ``path`` appear whole with ``data`` unless it exists; False when it already did.

        Local disk: the bytes go to a temporary file that is then hard-linked to ``path`` (``link`` fails if the
        name exists, atomically). Object stores: one conditional PUT (``If-None-Match: *``); where the server
        or the credentials cannot do that, existence is checked, then the file written."""
        if self.s3 is not None:
            return self._put_if_absent(path, data)
        directory, name = posixpath.split(path)
        self.fs.create_dir(directory, recursive=True)
        temp = posixpath.join(directory, f".{name}.{uuid.uuid4().hex}.tmp")
        self.write_bytes(temp, data)
        try:
            os.link(temp, path)
            return True
        except FileExistsError:
            return False
        finally:
            os.unlink(temp)

    def modified_time(self, path: str) -> dt.datetime | None:
        found = self.fs.get_file_info(path)
        if found.type == pafs.FileType.NotFound:
            return None
        return found.mtime

    def delete_file(self, path: str) -> None:
        """Delete ``path`` if it is there (idempotent: a recovery may repeat a delete another run did)."""
        try:
            self.fs.delete_file(path)
        except FileNotFoundError:
            pass

    def delete_dir(self, path: str) -> None:
        try:
            self.fs.delete_dir(path)
        except FileNotFoundError:
            pass

    def mkdirs(self, path: str) -> None:
        if not self.is_object_store:  # object stores have no directories: a prefix exists through its objects
            self.fs.create_dir(path, recursive=True)

    def _put_if_absent(self, path: str, data: bytes) -> bool:
        from .s3_put import ConditionalPutUnsupported, put_if_absent

        assert self.s3 is not None
        bucket, _, key = path.partition("/")
        try:
            return put_if_absent(self.s3, bucket, key, data)
        except ConditionalPutUnsupported as why:
            log.debug("conditional PUT not available for %s (%s): checking, then writing", path, why)
        if self.exists(path):
            return False
        self.write_bytes(path, data)
        return True
