"""Which files each partition of a table holds: what the file-system view, the plan's validation and the task sizes
are built from, each partition read at most once by one listing object.

Two sources, as Apache Hudi has them (``HoodieTableMetadata``; docs/format.md#mdt-as-the-file-listing):

* :class:`MetadataTableListing`, the metadata table's ``files`` partition, when the table has it built (v8/v9,
  ``files`` in ``hoodie.table.metadata.partitions``): a handful of requests whatever the table's size (the MDT
  timeline, the partition's folder, its base HFile and log files), where a listing costs a request per partition
  and per 1,000 files on an object store. It names committed files only (Hudi writes a commit's records before
  the commit), with the sizes the commits recorded. It is trusted as Hudi's reader trusts it (the MDT deltacommits
  that completed, but none whose data instant is still pending: ``mdt.files_listing``), and only while it is in
  step with the data timeline (every data instant that completed since the MDT was built has its deltacommit);
  otherwise, or when it can't be read, storage is listed instead, with a warning.
* :class:`StorageListing`, the files storage holds: one recursive listing of the table when every partition is
  asked for (the view's ``partitions``), else one listing per partition folder asked for, each at most once.

Files storage holds beside the committed ones (a write in flight, a failed write's leftovers) are listed from
storage only where they matter (:meth:`PartitionListing.stored_files`: in-flight writes, plan validation).

A listing may be narrowed to some partitions (``partitions``): the others then read as absent. The commit's
conflict check reads only the plan's partitions this way.
"""

from __future__ import annotations

import logging
import posixpath
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Iterable
from functools import cached_property

from ..io.storage import FileEntry, Storage
from .metadata_table import FILES_PARTITION
from .properties import TableConfig
from .timeline import Timeline

log = logging.getLogger(__name__)
PARTITION_METAFILE_PREFIX = ".hoodie_partition_metadata"
_SKIPPED_TOP_DIRS = (".hoodie", "_delta_log", "metadata")


class PartitionListing(ABC):
    """A table's partitions and their files, each read at most once by one listing object."""

    source: str  # for logs and tests: "storage" or "metadata table"

    def __init__(self, storage: Storage, config: TableConfig, partitions: Iterable[str] | None = None):
        self.storage, self.config = storage, config
        self.wanted: frozenset[str] | None = None if partitions is None else frozenset(partitions)

    def _narrowed(self, partition: str) -> bool:
        """Whether ``partition`` is outside the partitions this listing was narrowed to."""
        return self.wanted is not None and partition not in self.wanted

    @abstractmethod
    def partitions(self) -> list[str]:
        """The table's partitions ("" alone for a non-partitioned table), sorted."""

    @abstractmethod
    def files(self, partition: str) -> list[FileEntry]:
        """The files of ``partition`` this source knows ([] for no such partition)."""

    def has_partition(self, partition: str) -> bool:
        return partition in self.partitions()

    @abstractmethod
    def stored_files(self, partition: str) -> list[FileEntry]:
        """Every file storage holds in ``partition``, committed or not, its partition metafile included ([] for a
        folder that is no partition of the table)."""

    def read_stored(self) -> None:
        """About to ask :meth:`stored_files` of every partition: read storage at once where that is cheaper."""

    def partition_dir(self, partition: str) -> str:
        return self.storage.join(partition) if partition else self.storage.base


class StorageListing(PartitionListing):
    """Storage's own listing. :meth:`partitions` lists the whole table at once, recursively (unless the listing
    was narrowed: then each partition asked for alone); a partition's files asked for before that are listed
    from its folder alone. Either way a folder is listed at most once."""

    source = "storage"

    def __init__(self, storage: Storage, config: TableConfig, partitions: Iterable[str] | None = None):
        super().__init__(storage, config, partitions)
        self._folders: dict[str, list[FileEntry]] = {}
        self._whole: dict[str, list[FileEntry]] | None = None

    def _list_whole_table(self) -> dict[str, list[FileEntry]]:
        """Partition path -> files in it, from one recursive listing (a partition is a folder with Hudi's
        partition metafile; the non-partitioned table's files are in its base folder)."""
        if self._whole is None:
            by_dir: dict[str, list[FileEntry]] = defaultdict(list)
            base = self.storage.base.rstrip("/")
            for entry in self.storage.list(self.storage.base, recursive=True):
                relative = entry.path[len(base) + 1 :]
                if relative.split("/", 1)[0] in _SKIPPED_TOP_DIRS or entry.is_dir:
                    continue
                by_dir[posixpath.dirname(relative)].append(entry)
            if not self.config.is_partitioned:
                self._whole = {"": by_dir.get("", [])}
            else:
                self._whole = {d: entries for d, entries in by_dir.items() if d and _has_metafile(entries)}
        return self._whole

    def _folder(self, partition: str) -> list[FileEntry]:
        """The files of ``partition``'s folder ([] unless it is a partition of the table)."""
        if self._whole is not None:
            return self._whole.get(partition, [])
        if partition not in self._folders:
            if not _may_be_partition(partition, self.config.is_partitioned):
                self._folders[partition] = []
            else:
                entries = [e for e in self.storage.list(self.partition_dir(partition)) if not e.is_dir]
                partitioned = self.config.is_partitioned
                self._folders[partition] = entries if (_has_metafile(entries) or not partitioned) else []
        return self._folders[partition]

    def partitions(self) -> list[str]:
        if self.wanted is None:
            return sorted(self._list_whole_table())
        return sorted(p for p in self.wanted if self.has_partition(p))

    def has_partition(self, partition: str) -> bool:
        if self._narrowed(partition):
            return False
        # a partition's folder holds its metafile at least; the non-partitioned table's may hold nothing yet
        return bool(self._folder(partition)) or (not partition and not self.config.is_partitioned)

    def files(self, partition: str) -> list[FileEntry]:
        return [] if self._narrowed(partition) else self._folder(partition)

    def stored_files(self, partition: str) -> list[FileEntry]:
        return self.files(partition)

    def read_stored(self) -> None:
        if self.wanted is None:
            self._list_whole_table()  # one recursive listing rather than one per partition


class MetadataTableListing(PartitionListing):
    """The metadata table's ``files`` partition (committed files, with the sizes their commits recorded), read on
    first use; what storage holds beside them is listed when asked (:meth:`stored_files`: the whole table at once,
    or per partition when narrowed). An MDT that can't be read, or lags the data timeline, is reported once and
    storage is listed instead."""

    source = "metadata table"

    def __init__(self, storage: Storage, config: TableConfig, timeline: Timeline, partitions: Iterable[str] | None = None):
        super().__init__(storage, config, partitions)
        self.timeline = timeline
        self._stored = StorageListing(storage, config, partitions)
        self._fallback = False

    @cached_property
    def _files(self) -> dict[str, list[FileEntry]]:
        # imported here: the MDT readers (HFile, log blocks, Avro) load only for tables that have one
        from ..mdt.files_listing import OutOfStep, read_files_partition

        try:
            listing = read_files_partition(self.storage, self.timeline, partitions=self.wanted)
        except OutOfStep as exc:
            why = str(exc)
        except Exception as exc:  # noqa: BLE001 - a listing we can't read must not stop what storage can answer
            why = "it can't be read here (" + " ".join(str(exc).split())[:300] + ")"
        else:
            return {
                partition: [FileEntry(posixpath.join(self.partition_dir(partition), name), size, False)
                            for name, size in sorted(files.items())]
                for partition, files in listing.items() if not self._narrowed(partition)
            }  # fmt: skip
        log.warning("%s: the metadata table's files partition is not used to list the table: %s; listing storage "
                    "instead", self.storage.base_uri, why)  # fmt: skip
        self._fallback, self.source = True, StorageListing.source
        return {}

    def partitions(self) -> list[str]:
        files = self._files
        return self._stored.partitions() if self._fallback else sorted(files)

    def has_partition(self, partition: str) -> bool:
        files = self._files
        return self._stored.has_partition(partition) if self._fallback else partition in files

    def files(self, partition: str) -> list[FileEntry]:
        files = self._files
        return self._stored.files(partition) if self._fallback else files.get(partition, [])

    def stored_files(self, partition: str) -> list[FileEntry]:
        return self._stored.stored_files(partition)

    def read_stored(self) -> None:
        self._stored.read_stored()


def has_files_partition(config: TableConfig) -> bool:
    """Whether Hudi readers list this table through its metadata table: ``files`` is built (named in
    ``hoodie.table.metadata.partitions``, not merely inflight) on a v8/v9 table (the MDT layout read here)."""
    built = [p.strip() for p in config.props.get("hoodie.table.metadata.partitions", "").split(",")]
    return config.version >= 8 and FILES_PARTITION in built


def table_listing(storage: Storage, config: TableConfig, timeline: Timeline,
                  partitions: Iterable[str] | None = None) -> PartitionListing:  # fmt: skip
    """The listing a view of this table reads: its metadata table's, as Hudi's readers use it, else storage's; of
    ``partitions`` alone when given. Nothing is read until asked."""
    if has_files_partition(config):
        return MetadataTableListing(storage, config, timeline, partitions)
    return StorageListing(storage, config, partitions)


def _has_metafile(entries: Iterable[FileEntry]) -> bool:
    return any(e.name.startswith(PARTITION_METAFILE_PREFIX) for e in entries)


def _may_be_partition(partition: str, partitioned: bool) -> bool:
    """Whether ``partition`` can name a partition folder at all: "" alone in a non-partitioned table; a relative
    path outside Hudi's own folders in a partitioned one (nothing else is listed for it)."""
    if not partitioned:
        return not partition
    segments = partition.split("/")
    return bool(partition) and segments[0] not in _SKIPPED_TOP_DIRS and not any(s in ("", ".", "..") for s in segments)
