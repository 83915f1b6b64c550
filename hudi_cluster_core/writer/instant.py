"""The life of one writer instant (a COW ``commit``): begun, completed with the metadata table kept, or undone.

Shared by our writers (``append``, ``upsert``). Begin and complete run under the timeline lock, as Hudi takes
its lock for the instant time and for the commit (docs/format.md#locks). Completion follows Hudi's order
(docs/format.md#mdt-commit-order): the MDT deltacommit of the instant (``mdt.commit``) completes, then the data
instant's completed file appears atomically, then the marker folder goes. A failed write is undone in the reverse order
(files with markers, the MDT deltacommit, then the instant files), so no pending instant and no stray file is left
behind.

A writer that dies (SIGKILL, lost machine) can't undo its instant. So each of our write instants has a
heartbeat, as Hudi's writers have under OCC (``.hoodie/.heartbeat/<instant>``, refreshed every
``hoodie.client.heartbeat.interval_in_ms``), and the next write of ours undoes any pending ``commit`` whose
heartbeat is ours and expired (``tolerable.misses`` intervals old): Hudi's lazy rule for failed writes. A pending
instant without our heartbeat (an Apache Hudi writer's) is Hudi's to roll back and is left alone.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import pyarrow as pa

from ..avro import encode_commit_metadata
from ..mdt import deltacommit as mdt_deltacommit
from ..mdt.commit import completion_after, keep_metadata_table
from ..mdt.commit_files import CommitFiles
from ..errors import TimelineChanged, WriteConflict
from ..failpoints import failpoint
from ..table import FileGroupId, HudiTable
from ..table.archive import load_archived_timeline
from ..table.ownership import Heartbeat, heartbeat_path, heartbeat_state, timeline_lock
from ..table.timeline import DATA_WRITE_ACTIONS, Instant, Timeline
from ..write.base_file import TEMP_DIR, marked_files

log = logging.getLogger(__name__)




def instant_files(timeline: Timeline, instant: str, completion: str | None, action: str = "commit") -> tuple[str, str, str]:
    """(requested, inflight, completed) file names of a writer's ``commit`` or ``deltacommit`` instant on this
    timeline's layout (a commit's inflight file is ``T.inflight``, Hudi's legacy name)."""
    done = f"{instant}_{completion}.{action}" if timeline.layout_version >= 2 else f"{instant}.{action}"
    inflight = f"{instant}.inflight" if action == "commit" else f"{instant}.{action}.inflight"
    return f"{instant}.{action}.requested", inflight, done


@contextmanager
def writing(table: HudiTable, operation: str, wait_ms: int = 60000, heartbeat_ms: tuple[int, int] = (60000, 2), *,
            action: str = "commit", read_at: Timeline | None = None) -> Iterator[str]:  # fmt: skip
    """A new write instant with its heartbeat, for the body to fill and complete; undone if the body raises.
    ``heartbeat_ms``: (interval in ms, tolerable misses). Failed writes of ours found on the way are undone first.
    ``read_at``: the timeline the caller looked its keys up against (see :func:`begin_commit`)."""
    interval_ms, misses = heartbeat_ms
    undo_failed_writes(table, interval_ms, misses)
    started: list[Heartbeat] = []

    def beat(instant: str) -> None:  # before the instant's first file, as Hudi's writer starts its heartbeat
        started.append(Heartbeat(table.storage, instant, interval_ms, misses).start())

    try:
        instant = begin_commit(table, operation, wait_ms, action=action, before_files=beat, read_at=read_at)
    except BaseException:
        if started:  # its requested file may be written: undone now, or by our next write once the beat expires
            _undo(table, started[0], action)
        raise
    heartbeat = started[0]
    try:
        yield instant
    except BaseException:
        _undo(table, heartbeat, action)
        raise
    heartbeat.stop()


def _undo(table: HudiTable, heartbeat: Heartbeat, action: str) -> None:
    """Undo the failed instant; if that fails too, leave its heartbeat to expire, so that the next write of ours
    finds an instant of ours that failed (a pending instant without our heartbeat is left to Apache Hudi)."""
    try:
        abort_commit(table, heartbeat.instant_time, action=action)
    except Exception as exc:  # noqa: BLE001 - the original failure is what the caller sees
        log.warning("instant %s not undone (%s): the next write undoes it once its heartbeat expires",
                    heartbeat.instant_time, exc)  # fmt: skip
        heartbeat.stop(delete=False)
        return
    heartbeat.stop()


def undo_failed_writes(table: HudiTable, interval_ms: int, misses: int) -> list[str]:
    """Undo every pending ``commit`` whose heartbeat is one of our writers' and expired; returns their times."""
    undone = []
    for instant in table.reload().timeline.pending():
        if instant.action not in DATA_WRITE_ACTIONS or not _our_heartbeat(table, instant.time):
            continue
        state = heartbeat_state(table.storage, instant.time, interval_ms, misses)
        if state.exists and not state.live:
            log.warning("write %s failed (its heartbeat stopped %.0f s ago, %s): undoing it", instant.time,
                        state.age_seconds or 0, state.describe())  # fmt: skip
            abort_commit(table, instant.time, action=instant.action)
            table.storage.delete_file(heartbeat_path(table.storage, instant.time))
            undone.append(instant.time)
    return undone


def _our_heartbeat(table: HudiTable, instant_time: str) -> bool:
    """Our heartbeats name their owner; Apache Hudi's are empty files (only their age counts)."""
    try:
        body = json.loads(table.storage.read_bytes(heartbeat_path(table.storage, instant_time)) or b"{}")
    except (OSError, ValueError):
        return False
    return isinstance(body, dict) and bool(body.get("owner"))


def begin_commit(table: HudiTable, operation: str, wait_ms: int = 60000, *, action: str = "commit",
                 before_files: Callable[[str], None] | None = None, read_at: Timeline | None = None) -> str:  # fmt: skip
    """A new ``commit`` (or ``deltacommit``) instant, requested then inflight (an empty workload profile);
    returns its time. ``before_files(instant)`` runs once the time is chosen, before any file names it.
    ``read_at``: the timeline a writer read before it looked its keys up; :class:`TimelineChanged` (nothing
    written) when a clean may have deleted files of that read since (:func:`_check_no_clean_since`)."""
    with timeline_lock(table.storage, wait_ms):
        timeline = table.reload().timeline
        if read_at is not None:
            _check_no_clean_since(read_at, timeline)
        instant = timeline.new_instant_time()
        if before_files is not None:
            before_files(instant)
        requested, inflight, _ = instant_files(timeline, instant, None, action)
        empty = {"partitionToWriteStats": {}, "compacted": False, "extraMetadata": {}, "operationType": operation}
        table.storage.write_atomic(timeline.path_of(requested), b"")
        table.storage.write_atomic(timeline.path_of(inflight), encode_commit_metadata(
            empty, layout_version=timeline.layout_version, replace=False))  # fmt: skip
    return instant


def _check_no_clean_since(read_at: Timeline, now: Timeline) -> None:
    """An upsert reads the timeline, then the file listing, then begins its instant. A clean that began in
    between may have deleted file groups the timeline it read still shows live (replaced by a clustering that
    completed meanwhile, of which it knows nothing): their keys found nowhere, it would write them again as new
    rows beside the clustering's copy. Apache Hudi's writer requests its instant before it reads the table, and
    Hudi's cleaner retains from the earliest pending instant (``CleanerUtils.getEarliestCommitToRetain``); ours
    reads first, so it begins only if no clean began since its read (a completed instant of that read gone from
    the timeline means archival ran, which may have taken such a clean too). Under the timeline lock, under
    which a clean is planned: a later clean sees this instant pending."""
    cleans = sorted(i.time for i in now.instants if i.action == "clean" and read_at.get(i.time) is None)
    archived = [i.time for i in _gone_since(read_at, now) if i.is_completed]
    if cleans or archived:
        why = f"clean(s) {', '.join(cleans)} began" if cleans else f"instant(s) {', '.join(archived[:3])} were archived"
        raise TimelineChanged(f"{why} after this write read the table: files it looked its keys up in may be gone")


def complete_commit(
    table: HudiTable, instant: str, write_stats: Mapping[str, Sequence[dict]], *, operation: str, schema: str | None,
    new_keys: Mapping[str, pa.Array] | None = None, metadata_enable: bool = True,
    disabled_indexes: Mapping[str, str] | None = None, wait_ms: int = 60000, action: str = "commit",
    check: "Callable[[HudiTable, str, Mapping[str, Sequence[dict]]], None] | None" = None,
    read_at: Timeline | None = None,
) -> str:  # fmt: skip
    """Keep the MDT and complete ``instant``; returns the completed file's name. ``new_keys``: see
    ``mdt.commit_files.CommitFiles`` (None: every key written is new). ``check`` runs under the lock before the
    commit and raises WriteConflict to fail it (default: the rewritten file groups are unchanged); it may drop the
    stats of files it deletes. ``read_at``: the timeline the writer read before it began ``instant``; the commit
    then fails with :class:`TimelineChanged` if archival took an instant the check needs
    (:func:`_check_nothing_archived_since`)."""
    stats = {partition: list(s) for partition, s in write_stats.items()}
    written = {s["path"] for part in stats.values() for s in part}
    for stray in sorted(marked_files(table, instant) - written):  # a failed task attempt's file (it has a marker)
        log.info("deleting %s: written by a failed task attempt", stray)
        table.storage.delete_file(table.storage.join(stray))
    failpoint("write-after-files")
    with timeline_lock(table.storage, wait_ms):
        table = table.reload()
        if read_at is not None:
            _check_nothing_archived_since(table, read_at, instant)
        (check or _check_file_groups_unchanged)(table, instant, stats)
        commit = CommitFiles(table.storage, instant, stats, {}, table.config.props, new_keys)
        mdt_completion = keep_metadata_table(table, commit, metadata_enable=metadata_enable, disabled=disabled_indexes)
        timeline = table.timeline
        completion = completion_after(table, instant, mdt_completion) if timeline.layout_version >= 2 else None
        metadata: dict[str, Any] = {"partitionToWriteStats": stats, "compacted": False,
                                    "extraMetadata": {"schema": schema} if schema else {}, "operationType": operation}  # fmt: skip
        _, _, done = instant_files(timeline, instant, completion, action)
        table.storage.write_new(timeline.path_of(done), encode_commit_metadata(
            metadata, layout_version=timeline.layout_version, replace=False))  # fmt: skip
    table.storage.delete_dir(table.storage.join(TEMP_DIR, instant))
    return done


def _check_nothing_archived_since(table: HudiTable, read_at: Timeline, instant: str) -> None:
    """The commit's check reads the active timeline only: a clustering that completed while this write ran, was
    cleaned and then archived would be invisible to it, and the write would commit into file groups it replaced
    (the COW check still sees their base file gone; the log writer's does not). So the commit refuses once the
    archive holds an instant at or after the earliest instant pending on ``read_at`` (the timeline the writer read
    before it began), or any instant newer than all of ``read_at``.

    Why that is enough: an instant that completed after this write began has a time below ``instant`` (archival
    never takes a pending instant or anything after it: ``instant`` is pending) and was requested before
    ``instant``, since instant times are taken under the timeline lock, each later than every time on the timeline
    (``Timeline.new_instant_time``). So it was pending on ``read_at``, or requested after that read (newer than all
    of it). And nothing archived before the read is that new: it was older than every instant then pending, and
    than the latest commits archival keeps. The rule can refuse needlessly (an instant pending on ``read_at``
    that completed before this write began, archived since): the write is then read and done again."""
    if read_at.instants and not _gone_since(read_at, table.timeline):
        # archival takes the oldest instants first: with every instant read still active, none newer was archived
        # (and the archive, whole archive files on v6, is not read at every commit)
        return
    pending = [i.time for i in read_at.instants if not i.is_completed]
    newest = max((i.time for i in read_at.instants), default="")
    archived = load_archived_timeline(table.storage, table.config).instants
    late = [a.time for a in archived if a.time > newest or (pending and a.time >= min(pending))]
    if late:
        raise TimelineChanged(f"write {instant} not committed: instant(s) {', '.join(late[:3])} were archived while "
                              "it ran: a clustering among them may have replaced file groups it wrote to")  # fmt: skip


def _gone_since(read_at: Timeline, now: Timeline) -> list[Instant]:
    """The instants of ``read_at`` no longer on ``now``, oldest first: archived (a completed one), or rolled back."""
    current = {i.time for i in now.instants}
    return sorted((i for i in read_at.instants if i.time not in current), key=lambda i: i.time)


def _check_file_groups_unchanged(table: HudiTable, instant: str, stats: Mapping[str, Sequence[dict]]) -> None:
    """Every file group this write rewrote still has the base file it read (its stat's ``prevCommit``), and no
    clustering replaced it. Otherwise another write completed while this one ran (even one that completed before
    this instant's time was taken, after the writer read its slices): committing would hide its rows behind this
    write's copy, or behind the replacecommit. The first to commit wins, as in Hudi's optimistic concurrency
    control; this write fails (and is undone by the caller)."""
    view = table.view()
    replaced = view.replaced_file_groups()
    rewritten = [s for part in stats.values() for s in part if s.get("prevCommit") not in (None, "null")]
    groups = sorted({FileGroupId(s["partitionPath"], s["fileId"]) for s in rewritten})
    hit = [g for g in groups if g in replaced]
    if hit:
        raise WriteConflict(f"write {instant} not committed: a clustering replaced file group(s) it rewrote while it "
                            f"ran: {_names(hit)}; its files were removed, retry the write")  # fmt: skip
    now = {(FileGroupId(s["partitionPath"], s["fileId"]), s["prevCommit"]): _base_instant(view, s) for s in rewritten}
    moved = sorted((group, base) for (group, read), base in now.items() if base != read)
    if moved:
        raise WriteConflict(f"write {instant} not committed: write(s) {', '.join(sorted({b for _, b in moved}))} "
                            f"completed into file group(s) it rewrote while it ran: {_names([g for g, _ in moved])}; "
                            "the first to commit wins; its files were removed, retry the write")  # fmt: skip


def _base_instant(view, stat: dict) -> str:
    slices = view.file_slices(stat["partitionPath"], stat["fileId"])
    return slices[-1].base_file.instant if slices and slices[-1].base_file else "another write"


def _names(groups: Sequence[FileGroupId]) -> str:
    return ", ".join(f"{g.partition or '(none)'}/{g.file_id}" for g in groups)


def abort_commit(table: HudiTable, instant: str, *, action: str = "commit") -> None:
    """Undo a pending ``instant`` this process began: its data files (found by their markers), its MDT
    deltacommit, its markers, then its instant files. Nothing it wrote was ever visible (it is not complete)."""
    storage = table.storage
    current = table.reload().timeline.get(instant)
    if current is not None and current.is_completed:
        return  # completed: only its marker folder may be left, and a completed commit's files are data
    for relative in sorted(marked_files(table, instant)):
        storage.delete_file(storage.join(relative))
    mdt_deltacommit.rollback(storage, instant)
    storage.delete_dir(storage.join(TEMP_DIR, instant))
    timeline = table.reload().timeline
    requested, inflight, _ = instant_files(timeline, instant, None, action)
    for name in (inflight, requested):  # inflight first: a crash between leaves a requested instant, not a torn one
        path = timeline.path_of(name)
        if storage.exists(path):
            storage.delete_file(path)
    log.info("instant %s: undone (its files, markers and instant files removed)", instant)
