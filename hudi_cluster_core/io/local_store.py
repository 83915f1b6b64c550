"""Local disk (paths, ``file:``): the backend for tables on this machine's files, through ``pyarrow.fs``.

Completed timeline files must appear atomically (docs/format.md#commit-point-and-atomicity): :meth:`LocalBackend.write`
writes a hidden temporary name that matches no timeline pattern, then renames it; :meth:`LocalBackend.create_exclusive`
writes a temporary file and hard-links it to the name (``link`` fails if the name exists, atomically). There is no
version to match (no ETag): Hudi's storage lock is refused here, as Apache Hudi refuses it.
"""

from __future__ import annotations

import datetime as dt
import os
import posixpath
import uuid
from typing import Mapping
from urllib.parse import urlparse

import pyarrow.fs as pafs

from .store import Backend, Capabilities, FileEntry, Versioned, unsupported


def local_path(uri: str) -> str:
    """A path or a ``file:`` URI (``file:/a``, ``file:///a``) as the path it names."""
    parsed = urlparse(uri)
    return parsed.path if parsed.scheme == "file" else uri


class LocalBackend(Backend):
    capabilities = Capabilities(exclusive_create=True, put_if_match=False, local_files=True)
    store_name = "local disk"

    def __init__(self, base_uri: str, options: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None):
        self.fs = pafs.LocalFileSystem()

    @property
    def options(self) -> dict[str, str]:
        return {}  # nothing to resolve: every process reaches local files the same way

    def path_of(self, uri: str) -> str:
        return local_path(uri)

    def qualified(self, scheme: str, path: str) -> str:
        return "file:" + path

    def same_authority(self, first: str, second: str) -> bool:
        return first in ("", "localhost") and second in ("", "localhost")

    def info(self, path: str) -> FileEntry | None:
        found = self.fs.get_file_info(path)
        if found.type == pafs.FileType.NotFound:
            return None
        return FileEntry(found.path, found.size or 0, found.type == pafs.FileType.Directory)

    def list(self, directory: str, recursive: bool = False) -> list[FileEntry]:
        selector = pafs.FileSelector(directory, allow_not_found=True, recursive=recursive)
        return [FileEntry(i.path, i.size or 0, i.type == pafs.FileType.Directory) for i in self.fs.get_file_info(selector)]

    def read(self, path: str) -> bytes:
        with self.fs.open_input_stream(path) as stream:
            return stream.read()

    def read_range(self, path: str, start: int, length: int) -> bytes:
        with self.fs.open_input_file(path) as handle:
            return handle.read_at(length, start)

    def read_versioned(self, path: str) -> Versioned | None:
        raise unsupported("read an object with its version", self)

    def modified_time(self, path: str) -> dt.datetime | None:
        found = self.fs.get_file_info(path)
        return None if found.type == pafs.FileType.NotFound else found.mtime

    def _write_plain(self, path: str, data: bytes) -> None:
        self.make_dirs(posixpath.dirname(path))
        with self.fs.open_output_stream(path) as out:
            out.write(data)

    def write(self, path: str, data: bytes) -> None:
        directory, name = posixpath.split(path)
        temp = posixpath.join(directory, f".{name}.{uuid.uuid4().hex}.tmp")
        self._write_plain(temp, data)
        self.fs.move(temp, path)

    def create_exclusive(self, path: str, data: bytes) -> bool:
        directory, name = posixpath.split(path)
        temp = posixpath.join(directory, f".{name}.{uuid.uuid4().hex}.tmp")
        self._write_plain(temp, data)
        try:
            os.link(temp, path)
            return True
        except FileExistsError:
            return False
        finally:
            os.unlink(temp)

    def put_if_match(self, path: str, data: bytes, version: str | None) -> str | None:
        raise unsupported("replace a file only while it is the version read", self)

    def delete(self, path: str) -> None:
        try:
            self.fs.delete_file(path)
        except FileNotFoundError:
            pass

    def delete_tree(self, path: str) -> None:
        try:
            self.fs.delete_dir(path)
        except FileNotFoundError:
            pass

    def make_dirs(self, path: str) -> None:
        self.fs.create_dir(path, recursive=True)

    def filesystem(self) -> pafs.FileSystem:
        return self.fs
