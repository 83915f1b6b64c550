"""Reading a Hudi table: ``hoodie.properties``, the active timeline and the file-system view."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ..io.storage import Storage, open_storage
from .naming import BaseFile, LogFile
from .properties import TableConfig, load_table_config
from .timeline import Instant, State, Timeline, load_timeline
from .view import FileGroupId, FileSlice, FileSystemView

__all__ = [
    "BaseFile", "FileGroupId", "FileSlice", "FileSystemView", "HudiTable", "Instant", "LogFile", "State",
    "TableConfig", "Timeline", "load_table",
]  # fmt: skip


@dataclass(frozen=True)
class HudiTable:
    storage: Storage
    config: TableConfig
    timeline: Timeline

    @property
    def base_path(self) -> str:
        return self.storage.base

    def view(self) -> FileSystemView:
        return FileSystemView(self.timeline)

    def reload(self) -> "HudiTable":
        return _open(self.storage)


def load_table(base_path: str | Path, storage_options: Mapping[str, str] | None = None) -> HudiTable:
    """Open the table at ``base_path`` (a local path or a URI); raises TableError if it is not a Hudi table.

    ``storage_options`` are the job's keys (the store's settings among them); StorageError if the store cannot be
    reached or the scheme is not supported."""
    storage = open_storage(base_path, storage_options)
    storage.check_reachable()
    return _open(storage)


def _open(storage: Storage) -> HudiTable:
    try:
        config = load_table_config(storage)
        return HudiTable(storage, config, load_timeline(storage, config))
    except OSError as exc:
        if storage.capabilities.local_files:  # a local file's own error says it best
            raise
        raise storage.error(exc) from None
