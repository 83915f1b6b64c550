"""pyarrow's view of a store's listings and deletes: the part of a ``pyarrow.fs.FileSystemHandler`` that any
object store answers the same way from the operations of :class:`~.store.Backend`.

A store's own handler adds how its files are opened, copied and moved (:mod:`.obstore_fs` for the stores reached
with obstore); everything here is said once, in terms of ``info``, ``list``, ``delete`` and ``delete_tree``.
"""

from __future__ import annotations

from typing import Protocol

import pyarrow.fs as pafs

from .store import FileEntry, StoreError


class ListingBackend(Protocol):
    def info(self, path: str) -> FileEntry | None: ...

    def list(self, directory: str, recursive: bool = False) -> list[FileEntry]: ...

    def delete(self, path: str) -> None: ...

    def delete_tree(self, path: str) -> None: ...


class BackendFileSystem(pafs.FileSystemHandler):
    """File infos, listings and deletes through the backend; opening, copying and moving are the subclass's."""

    def __init__(self, backend: ListingBackend):
        self.backend = backend

    def normalize_path(self, path: str) -> str:
        return path

    def _info(self, entry: FileEntry | None, path: str) -> pafs.FileInfo:
        if entry is None:
            return pafs.FileInfo(path, pafs.FileType.NotFound)
        kind = pafs.FileType.Directory if entry.is_dir else pafs.FileType.File
        return pafs.FileInfo(entry.path, kind, size=None if entry.is_dir else entry.size)

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return [self._info(self.backend.info(path), path) for path in paths]

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        entries = self.backend.list(selector.base_dir, selector.recursive)
        if not entries and not selector.allow_not_found and self.backend.info(selector.base_dir) is None:
            raise FileNotFoundError(selector.base_dir)
        return [self._info(entry, entry.path) for entry in entries]

    def create_dir(self, path: str, recursive: bool) -> None:
        pass  # object stores have no directories: a prefix exists while an object is under it

    def delete_dir(self, path: str) -> None:
        self.backend.delete_tree(path)

    def delete_dir_contents(self, path: str, missing_dir_ok: bool = False) -> None:
        self.backend.delete_tree(path)

    def delete_root_dir_contents(self) -> None:
        raise StoreError("refusing to delete a whole bucket")

    def delete_file(self, path: str) -> None:
        self.backend.delete(path)
