"""File-system view: file groups and their latest slices, as Apache Hudi and hudi-rs see them.

The files come from a :class:`~.listing.PartitionListing`: the metadata table's ``files`` partition where the table
has one (as Hudi's readers list such a table), else storage's listing; either is read once per view.

A base or log file counts once its instant completed. The active timeline is only the recent part of the history:
archival moves older instants to the archive (``archive.py``), so a file whose instant is on no state of the active
timeline and older than its first completed write is committed too (Hudi's ``containsOrBeforeTimelineStarts``,
docs/format.md#committed-before-the-active-timeline). Files of instants pending on the active timeline never count.

Slices are keyed by base instant; on v8+ a log file joins the slice with the largest base instant at or before its
deltacommit's completion time (from the archive when that deltacommit was archived), on v6 the slice whose base
instant its name carries. File groups named in a completed replacecommit of the active timeline are hidden: Hudi
archives a replacecommit only after a clean removed the files it replaced.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable

from .archive import load_archived_timeline
from .listing import PARTITION_METAFILE_PREFIX, PartitionListing, table_listing
from .markers import marked_files
from .naming import BaseFile, LogFile, parse_base_file, parse_log_file
from .timeline import State, Timeline

__all__ = ["FileGroupId", "FileSlice", "FileSystemView", "PARTITION_METAFILE_PREFIX"]


@dataclass(frozen=True, order=True)
class FileGroupId:
    partition: str
    file_id: str


@dataclass(frozen=True)
class FileSlice:
    partition: str
    file_id: str
    base_instant: str
    base_file: BaseFile | None = None
    log_files: tuple[LogFile, ...] = ()

    @property
    def group_id(self) -> FileGroupId:
        return FileGroupId(self.partition, self.file_id)

    @property
    def base_file_size(self) -> int:
        return self.base_file.size if self.base_file else 0

    @property
    def log_files_size(self) -> int:
        return sum(log.size for log in self.log_files)

    @property
    def total_size(self) -> int:
        return self.base_file_size + self.log_files_size

    def relative_path(self, name: str) -> str:
        return posixpath.join(self.partition, name) if self.partition else name

    def to_json(self) -> dict:
        return {
            "partition": self.partition,
            "file_id": self.file_id,
            "base_instant": self.base_instant,
            "base_file": self.base_file.name if self.base_file else None,
            "log_files": [log.name for log in self.log_files],
        }


@dataclass
class _GroupFiles:
    bases: dict[str, BaseFile] = field(default_factory=dict)
    logs: list[LogFile] = field(default_factory=list)


class FileSystemView:
    """The view of ``timeline``'s table over ``listing`` (default: the table's own, ``listing.table_listing``: its
    metadata table's ``files`` partition where it has one, as Hudi's readers list it, else storage's)."""

    def __init__(self, timeline: Timeline, listing: PartitionListing | None = None):
        self.timeline = timeline
        self.storage = timeline.storage
        self.config = timeline.config
        self.listing = listing or table_listing(self.storage, self.config, timeline)
        self._groups: dict[str, dict[str, _GroupFiles]] = {}

    @cached_property
    def _completion_times(self) -> dict[str, str]:
        """Requested time -> completion time of every completed write (v6: the requested time itself)."""
        return {i.time: (i.completion_time or i.time) for i in self.timeline.completed()}

    @cached_property
    def _archived_completion_times(self) -> dict[str, str]:
        """Requested time -> completion time of the archived writes (read from the archive once, when asked)."""
        archive = load_archived_timeline(self.storage, self.config)
        return {i.time: i.completion_time for i in archive.completed() if i.completion_time}

    def _log_moment(self, log: LogFile, base_instants: Iterable[str]) -> str:
        """The time that places a v8+ log among its group's slices: its deltacommit's completion time.

        An archived deltacommit's completion time is in the archive, read only when a base file of the group was
        begun after the log's own instant (else its own instant picks the same slice). Without it a log of a write
        that was in flight while a compaction began would join the slice before the compaction's, and its rows
        would be missing from the latest slice (Hudi reads the completion time from the archive too)."""
        found = self._completion_times.get(log.instant)
        if found is not None:
            return found
        if any(b > log.instant for b in base_instants) and log.instant not in self._active_times:
            return self._archived_completion_times.get(log.instant, log.instant)
        return log.instant

    @cached_property
    def _active_times(self) -> frozenset[str]:
        """Requested times of every instant on the active timeline, in any state and action."""
        return frozenset(i.time for i in self.timeline.instants)

    @cached_property
    def _timeline_start(self) -> str | None:
        """The first completed write of the active timeline: anything older and absent was archived."""
        writes = self.timeline.completed()
        return writes[0].time if writes else None

    def is_committed(self, instant_time: str) -> bool:
        """Whether files written by ``instant_time`` are part of the table (completed, or archived)."""
        if instant_time in self._completion_times:
            return True
        if instant_time in self._active_times:
            return False  # pending (or not a write): its files are uncommitted
        return self._timeline_start is not None and instant_time < self._timeline_start

    @property
    def partitions(self) -> list[str]:
        return self.listing.partitions()

    def _group_files(self, partition: str) -> dict[str, _GroupFiles]:
        """File id -> its committed files in ``partition`` (computed once per partition: the listing and the
        timeline of a view never change)."""
        found = self._groups.get(partition)
        if found is None:
            found = self._groups[partition] = self._read_group_files(partition)
        return found

    def _read_group_files(self, partition: str) -> dict[str, _GroupFiles]:
        extension = self.config.base_file_extension
        # v6 log names carry the base instant, not the writer's: their base file decides whether they count
        logs_by_writer = self.timeline.layout_version >= 2
        groups: dict[str, _GroupFiles] = defaultdict(_GroupFiles)
        for entry in self.listing.files(partition):
            if entry.name.endswith(extension):
                base = parse_base_file(entry.name, entry.size)
                if base and self.is_committed(base.instant):
                    groups[base.file_id].bases[base.instant] = base
            elif entry.name.startswith(".") and ".log." in entry.name:
                log = parse_log_file(entry.name, entry.size)
                if log and (not logs_by_writer or self.is_committed(log.instant)):
                    groups[log.file_id].logs.append(log)
        return groups

    def _slices(self, partition: str, file_id: str, files: _GroupFiles) -> dict[str, FileSlice]:
        """Logs in write order; each joins the latest slice (base-started or log-started) at or before it.

        A v8+ log of an archived deltacommit takes its completion time from the archive (``_log_moment``).
        """
        keys = set(files.bases)
        logs_by_key: dict[str, list[LogFile]] = defaultdict(list)
        for log in sorted(files.logs, key=lambda l: (l.instant, l.version, l.write_token)):
            moment = self._log_moment(log, files.bases) if self.timeline.layout_version >= 2 else log.instant
            earlier = [key for key in keys if key <= moment]
            key = max(earlier) if earlier else log.instant
            keys.add(key)
            logs_by_key[key].append(log)
        return {
            key: FileSlice(partition, file_id, key, files.bases.get(key), tuple(logs_by_key.get(key, ())))
            for key in sorted(keys)
        }

    def replaced_file_groups(self, as_of: str | None = None) -> set[FileGroupId]:
        return set(self.replacing_instants(as_of))

    def replacing_instants(self, as_of: str | None = None) -> dict[FileGroupId, str]:
        """Every file group a completed replacecommit (as of ``as_of``) replaced -> the first one that did."""
        replacing: dict[FileGroupId, str] = {}
        for instant in self.timeline.completed(("replacecommit",)):
            if as_of is None or instant.time <= as_of:
                meta = self.timeline.commit_metadata(instant)
                for partition, file_ids in (meta.get("partitionToReplaceFileIds") or {}).items():
                    for file_id in file_ids or []:
                        replacing.setdefault(FileGroupId(partition or "", file_id), instant.time)
        return replacing

    def file_slices(self, partition: str, file_id: str) -> list[FileSlice]:
        """Every committed slice of one file group, oldest first, by Hudi's log-to-slice rule (module docstring):
        a file group without a base file is one slice holding all of its logs, not one slice per log."""
        files = self._group_files(partition).get(file_id)
        return list(self._slices(partition, file_id, files).values()) if files else []

    def latest_file_slices(self, as_of: str | None = None, partitions: Iterable[str] | None = None) -> list[FileSlice]:
        """The latest slice of every visible file group (of ``partitions`` when given), as of a completed instant
        (default: the latest). Log-only file groups are included, each as one slice with every log file."""
        writes = self.timeline.completed()
        if not writes:
            return []
        as_of = as_of or writes[-1].time
        replaced = self.replaced_file_groups(as_of)
        wanted = self.partitions if partitions is None else sorted(p for p in set(partitions) if self.listing.has_partition(p))
        result = []
        for partition in wanted:
            for file_id, files in sorted(self._group_files(partition).items()):
                if FileGroupId(partition, file_id) in replaced:
                    continue
                eligible = [s for key, s in self._slices(partition, file_id, files).items() if key <= as_of]
                if eligible:
                    result.append(eligible[-1])
        return result

    def pending_clustering_file_groups(self) -> dict[FileGroupId, str]:
        pending = {}
        for instant in self.timeline.pending_clustering:
            plan = (self.timeline.clustering_plan(instant.time) or {}).get("clusteringPlan") or {}
            for group in plan.get("inputGroups") or []:
                for slice_info in group.get("slices") or []:
                    pending[FileGroupId(slice_info.get("partitionPath") or "", slice_info["fileId"])] = instant.time
        return pending

    def group_file_names(self, partition: str) -> dict[str, dict[str, str]]:
        """File id -> {file name: writer instant} of every base and log file storage holds in ``partition``,
        committed or not (a v6 log name carries its base instant, which stands in for its writer's)."""
        groups: dict[str, dict[str, str]] = defaultdict(dict)
        for entry in self.listing.stored_files(partition):
            parsed: BaseFile | LogFile | None = None
            if entry.name.endswith(self.config.base_file_extension):
                parsed = parse_base_file(entry.name)
            elif entry.name.startswith("."):
                parsed = parse_log_file(entry.name)
            if parsed is not None:
                groups[parsed.file_id][entry.name] = parsed.instant
        return groups

    def pending_write_file_groups(self) -> dict[FileGroupId, str]:
        """File groups a write still in flight touches (-> its instant): a data file or a marker of that write
        is in them, or its inflight file's workload profile names them (Hudi saves one before writing). Writes
        are commits, deltacommits, non-clustering replacecommits and log compactions."""
        touched: dict[FileGroupId, str] = {}
        clustering = {i.time for i in self.timeline.pending_clustering}
        writes = {i.time: i for i in self.timeline.pending()
                  if i.action in ("commit", "deltacommit", "replacecommit", "logcompaction") and i.time not in clustering}  # fmt: skip
        if not writes:
            return touched
        self.listing.read_stored()
        for partition in self.partitions:
            for file_id, names in self.group_file_names(partition).items():
                for writer in set(names.values()) & set(writes):
                    touched.setdefault(FileGroupId(partition, file_id), writer)
        for instant in writes.values():
            for path in marked_files(self.storage, instant.time):
                name = posixpath.basename(path)
                parsed = parse_base_file(name) or parse_log_file(name)
                if parsed is not None:
                    touched.setdefault(FileGroupId(posixpath.dirname(path), parsed.file_id), instant.time)
            inflight = next((f for f in self.timeline.files_of(instant.time) if f.state is State.INFLIGHT), None)
            data = self.timeline.read(inflight, missing_ok=True) if inflight is not None else b""
            if inflight is None or not data:  # no profile saved (yet)
                continue
            try:
                profile = self.timeline.commit_metadata(inflight, data)
            except Exception:  # noqa: BLE001 - a profile we can't read only means we learn less from it
                continue
            for partition, stats in (profile.get("partitionToWriteStats") or {}).items():
                for stat in stats or []:
                    if stat.get("fileId"):
                        touched.setdefault(FileGroupId(partition or "", stat["fileId"]), instant.time)
        return touched

    def pending_compaction_file_groups(self) -> dict[FileGroupId, str]:
        from ..avro import decode_avro

        pending = {}
        for instant in self.timeline.pending_compaction():
            requested = self.timeline.requested_file(instant.time)
            data = self.timeline.read(requested) if requested else b""
            if requested is None or not data:
                continue
            plan = decode_avro(data, source=self.timeline.path_of(requested.file_name))
            for op in plan.get("operations") or []:
                pending[FileGroupId(op.get("partitionPath") or "", op["fileId"])] = instant.time
        return pending


