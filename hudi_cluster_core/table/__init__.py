"""Reading a Hudi table: ``hoodie.properties``, the active timeline and the file-system view."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Mapping

from ..io.storage import Storage, open_storage
from .listing import PartitionListing, StorageListing, table_listing
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
    """A table as read at one moment: its config and timeline, and (read on first use, then kept) its listing."""

    storage: Storage
    config: TableConfig
    timeline: Timeline

    @property
    def base_path(self) -> str:
        return self.storage.base

    @cached_property
    def listing(self) -> PartitionListing:
        """The table's files as its views read them (``listing.table_listing``): the metadata table's ``files``
        partition where it has one, as Hudi's readers list it, else storage's; each partition read at most once
        for this table object, and for the tables :meth:`reload` hands it on to."""
        return table_listing(self.storage, self.config, self.timeline)

    def view(self, listing: PartitionListing | None = None, *, partitions: Iterable[str] | None = None,
             from_storage: bool = False) -> FileSystemView:  # fmt: skip
        """The file-system view over ``listing``, else the table's own (:attr:`listing`). ``partitions``: a new
        listing of those partitions alone (what the view answers for others is then empty), read now, not the
        table's own. ``from_storage``: storage's listing whatever the table has (a rollback looks for files no
        commit names)."""
        if listing is None and from_storage:
            listing = StorageListing(self.storage, self.config, partitions)
        elif listing is None and partitions is not None:
            listing = table_listing(self.storage, self.config, self.timeline, partitions)
        return FileSystemView(self.timeline, listing) if listing is not None else self._view

    @cached_property
    def _view(self) -> FileSystemView:
        """The view over :attr:`listing`, one per table object (what it works out per partition is kept)."""
        return FileSystemView(self.timeline, self.listing)

    def reload(self, *, own_instants: Iterable[str] = ()) -> "HudiTable":
        """The table read again. Its listing is handed on when the timeline did not change (pending instants of
        ``own_instants``, which this run owns, aside): nothing then wrote or deleted a file the view counts since
        this table's listing was read (writers, cleans, rollbacks and archival all change the timeline), so it is
        as good as a new one; the commit's conflict check reads its own (``view(partitions=...)``) whatever."""
        fresh = _open(self.storage)
        if "listing" in self.__dict__ and _same_timeline(self.timeline, fresh.timeline, frozenset(own_instants)):
            fresh.__dict__["listing"] = self.__dict__["listing"]
            if "_view" in self.__dict__ and _same_timeline(self.timeline, fresh.timeline, frozenset()):
                fresh.__dict__["_view"] = self.__dict__["_view"]  # the same timeline too: the same view
        return fresh


def _same_timeline(before: Timeline, after: Timeline, own: frozenset[str]) -> bool:
    def names(timeline: Timeline) -> set[str]:  # an instant of ours counts once it completed: its files count then
        return {f.file_name for f in timeline.files if f.time not in own or f.state is State.COMPLETED}

    return before.directory == after.directory and names(before) == names(after)


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
