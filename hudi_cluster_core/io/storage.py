"""Storage access for table files, through ``pyarrow.fs``.

One small seam over local disk, HDFS and object stores, so the table code never touches ``os`` directly.
Completed timeline files must appear atomically (section 3.4 of the format notes): :meth:`Storage.write_atomic`
writes a hidden temporary name that matches no timeline pattern, then renames it; object stores do a single PUT.
"""

from __future__ import annotations

import datetime as dt
import os
import posixpath
import uuid
from dataclasses import dataclass
from urllib.parse import urlparse

import pyarrow.fs as pafs


@dataclass(frozen=True)
class FileEntry:
    path: str  # path as the filesystem names it (no scheme)
    size: int
    is_dir: bool

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)


class Storage:
    """A filesystem plus the table's base path on it."""

    def __init__(self, base_uri: str):
        self.base_uri = base_uri.rstrip("/") or "/"
        parsed = urlparse(self.base_uri)
        if parsed.scheme in ("", "file"):
            self.fs: pafs.FileSystem = pafs.LocalFileSystem()
            self.base = posixpath.normpath(parsed.path if parsed.scheme else self.base_uri)
            self.scheme = "file"
        else:
            self.fs, self.base = pafs.FileSystem.from_uri(self.base_uri)
            self.scheme = parsed.scheme

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
        with self.fs.open_input_stream(path) as stream:
            return stream.read()

    def write_bytes(self, path: str, data: bytes) -> None:
        self.fs.create_dir(posixpath.dirname(path), recursive=True)
        with self.fs.open_output_stream(path) as out:
            out.write(data)

    def write_atomic(self, path: str, data: bytes) -> None:
        """Make ``path`` appear whole or not at all."""
        if self.scheme not in ("file", "hdfs", "viewfs"):
            self.write_bytes(path, data)  # a single PUT is atomic on object stores
            return
        directory, name = posixpath.split(path)
        temp = posixpath.join(directory, f".{name}.{uuid.uuid4().hex}.tmp")
        self.write_bytes(temp, data)
        self.fs.move(temp, path)

    def create_exclusive(self, path: str, data: bytes) -> bool:
        """Make ``path`` appear whole with ``data`` unless it exists; False when it already did.

        Local disk: the bytes go to a temporary file that is then hard-linked to ``path`` (``link`` fails if the
        name exists, atomically). Other schemes have no such primitive here: existence is checked, then the file
        written (the object-store conditional PUT belongs to the storage-lock work)."""
        if self.scheme != "file":
            if self.exists(path):
                return False
            self.write_atomic(path, data)
            return True
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
        self.fs.create_dir(path, recursive=True)
