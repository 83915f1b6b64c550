"""Rolling back a clustering that did not complete, with Hudi's rollback instant, in an order a kill can't break.

Apache Hudi's order (docs/format.md#rollback, #rollback-order), each step safe to repeat:

1. ``R.rollback.requested``: the plan, listing every partial file of ``T`` (from its markers and, as a second
   net, from file names: any base file carrying ``T`` is uncommitted while ``T`` has no completed file);
2. ``R.rollback.inflight``;
3. delete the partial files (before ``T``'s pending files go, so a kill in between leaves them uncommitted), then
   ``T``'s metadata-table deltacommit, if any (its completed file, log files, inflight, requested);
4. delete ``T``'s inflight file, then (abandon path) its requested plan: never a plan-less inflight instant,
   which Apache Hudi can't open;
5. delete ``T``'s marker folder;
6. the completed rollback ``R.rollback`` / ``R_C.rollback``.

A rollback killed half-way stays pending on the timeline; :func:`resume_rollbacks` finishes it from its own plan.
*Retry* keeps ``T``'s requested plan so the same plan runs again under ``T``; *abandon* drops it, freeing the
file groups. The caller owns ``T`` (its heartbeat) and this module takes the timeline lock for the whole rollback.
"""

from __future__ import annotations

import logging
import posixpath
import time
from collections import defaultdict

from ..avro import encode_avro
from ..errors import PlanError
from ..failpoints import failpoint
from ..mdt import deltacommit as mdt_deltacommit
from ..write.base_file import TEMP_DIR, marked_files
from ..table import HudiTable, Instant, State
from ..mdt.commit import completion_after, write_metadata_deltacommit
from ..mdt.commit_files import CommitFiles
from ..mdt.records import FILES_PARTITION
from ..table import markers as table_markers
from ..table.metadata_table import metadata_partitions
from ..table.naming import parse_base_file, parse_log_file
from ..table.ownership import Heartbeat, timeline_lock
from ..table.rollback_plans import pending_rollback_of, rollback_plan as _rollback_plan
from ..table.timeline import DATA_WRITE_ACTIONS

log = logging.getLogger(__name__)


def partial_files(table: HudiTable, instant_time: str) -> set[str]:
    """Relative paths of every data file instant ``instant_time`` wrote (it must not be completed)."""
    storage = table.storage
    found = {f for f in marked_files(table, instant_time) if storage.exists(storage.join(f))}
    view = table.view(from_storage=True)  # uncommitted files: the metadata table never lists them
    for partition in view.partitions:
        for entry in view.listing.files(partition):
            base = parse_base_file(entry.name)
            if base and base.instant == instant_time:
                found.add(f"{partition}/{entry.name}" if partition else entry.name)
    return found


def duplicate_copies(table: HudiTable, instant_time: str) -> set[str]:
    """Log files named with clustering ``instant_time``: copies a writer's duplicate update strategy wrote into the
    buckets a consistent-bucket resize creates (the clustering itself writes base files only). Once the resize is
    abandoned they would be orphans that Hudi takes for committed as soon as archival passes ``instant_time``
    (docs/format.md#committed-before-the-active-timeline), next to the records they copy: the abandoning rollback
    deletes them.

    A copy a write still in flight is writing (its marker is in that write's marker folder) is left to its writer:
    deleting it under the writer would fail its write, and our upsert drops the copies of a clustering that is gone
    when it commits (``writer.bucket_upsert``)."""
    found = set()
    view = table.view(from_storage=True)  # uncommitted files: the metadata table never lists them
    for partition in view.partitions:
        for entry in view.listing.files(partition):
            log_file = parse_log_file(entry.name)
            if log_file is not None and log_file.instant == instant_time:
                found.add(f"{partition}/{entry.name}" if partition else entry.name)
    if not found:
        return found
    writing = set()
    for pending in table.timeline.pending():
        if pending.time != instant_time and pending.action in DATA_WRITE_ACTIONS:
            writing |= table_markers.marked_files(table.storage, pending.time)
    return found - writing


def _forget_in_metadata_table(table: HudiTable, rollback_time: str, copies: list[str]) -> str | None:
    """The rollback's MDT deltacommit marking deleted copies in ``files`` (Hudi syncs a rollback's deleted files
    the same way); returns its completion time, or None without a metadata table listing files."""
    if not copies or FILES_PARTITION not in metadata_partitions(table.storage):
        return None
    deleted: dict[str, list[str]] = defaultdict(list)
    for relative in copies:
        partition, _, name = relative.rpartition("/")
        deleted[partition].append(name)
    commit = CommitFiles(table.storage, rollback_time, {}, {}, table.config.props, None, dict(deleted))
    return write_metadata_deltacommit(table, [FILES_PARTITION], commit)


def clustering_rollback_targets(table: HudiTable) -> dict[str, Instant]:
    """Instant time -> pending rollback, for every unfinished rollback of a clustering instant."""
    targets: dict[str, Instant] = {}
    for rollback in table.timeline.pending_rollbacks():
        target = _rollback_plan(table, rollback).get("instantToRollback") or {}
        time_, action = target.get("commitTime"), target.get("action")
        if not time_:
            continue  # no instant named: nothing this rollback could finish for clustering
        plan = table.timeline.clustering_plan(time_)
        if action == "clustering" or plan is not None or (action == "replacecommit" and table.timeline.get(time_) is None):
            targets[time_] = rollback
    return targets


class TakenOver(PlanError):
    """Another run owns the instant now (the heartbeat names it): its work in progress is left alone."""


def rollback_clustering(table: HudiTable, instant_time: str, *, keep_plan: bool, wait_ms: int = 60000,
                        owner: Heartbeat | None = None) -> str:  # fmt: skip
    """Roll back pending clustering ``instant_time`` (or finish its interrupted rollback); returns the rollback
    instant time. Raises :class:`PlanError` if ``instant_time`` has completed, :class:`TakenOver` if ``owner``
    (the caller's heartbeat of the instant) names it no more."""
    with timeline_lock(table.storage, wait_ms):
        if owner is not None and not owner.still_owned():
            # checked under the lock, under which a run claims: a caller held up between its claim (or its own
            # check) and here past its heartbeat's expiry may find the instant claimed by a run executing it, whose
            # files it would delete
            raise TakenOver(f"clustering {instant_time} not rolled back: another run took it over after this "
                            "run's heartbeat expired; left to that run")  # fmt: skip
        table = table.reload()
        return _rollback_locked(table, instant_time, keep_plan)


def _rollback_locked(table: HudiTable, instant_time: str, keep_plan: bool) -> str:
    timeline, storage = table.timeline, table.storage
    instant = timeline.get(instant_time)
    if instant is not None and instant.is_completed:
        raise PlanError(f"clustering {instant_time} has completed ({instant.file_name}); it can't be rolled back")
    resumed = pending_rollback_of(table, instant_time)
    if instant is None and resumed is None:
        return ""  # nothing of it is left: another run finished it
    started = time.monotonic()
    action = "clustering" if timeline.layout_version >= 2 else "replacecommit"
    files = set(partial_files(table, instant_time))
    planned: set[str] = set()
    if resumed is not None:
        for request in _rollback_plan(table, resumed).get("RollbackRequests") or []:
            planned.update(posixpath.relpath(p, storage.base) for p in request.get("filesToBeDeleted") or [])
        if keep_plan and any(parse_log_file(p.rpartition("/")[2]) is not None for p in planned):
            # it began as a rollback abandoning the plan (it deletes the writers' copies for it, maybe deleted
            # some already): finished as one, or the plan would run again without the copies its writers' records
            # rely on (a write that duplicated is no conflict for the clustering)
            log.info("rollback %s: the interrupted rollback abandons the plan; the plan is not kept", instant_time)
            keep_plan = False
    if not keep_plan:
        files |= duplicate_copies(table, instant_time)
    files |= planned
    if resumed is not None:
        rollback_time = resumed.time
        log.info("rollback %s: finishing interrupted rollback %s", instant_time, rollback_time)
    else:
        rollback_time = timeline.new_instant_time()
    files_sorted = sorted(f for f in files if not f.startswith(".."))
    copies = [f for f in files_sorted if parse_log_file(f.rpartition("/")[2]) is not None]
    by_partition: dict[str, list[str]] = defaultdict(list)
    by_group: dict[tuple[str, str], list[str]] = defaultdict(list)
    for relative in files_sorted:
        partition, _, name = relative.rpartition("/")
        parsed = parse_base_file(name) or parse_log_file(name)
        by_partition[partition].append(relative)
        by_group[(partition, parsed.file_id if parsed else name)].append(relative)

    if resumed is None or resumed.state is State.REQUESTED:
        if resumed is None:
            plan = {
                "instantToRollback": {"commitTime": instant_time, "action": action},
                "RollbackRequests": [
                    {
                        "partitionPath": partition, "fileId": file_id, "latestBaseInstant": instant_time,
                        "filesToBeDeleted": [storage.join(p) for p in group_files], "logBlocksToBeDeleted": {},
                    }
                    for (partition, file_id), group_files in sorted(by_group.items())
                ],
                "version": 1,
            }  # fmt: skip
            storage.write_atomic(timeline.path_of(f"{rollback_time}.rollback.requested"), encode_avro(plan, "HoodieRollbackPlan"))
            failpoint("rollback-after-requested")
        storage.write_atomic(timeline.path_of(f"{rollback_time}.rollback.inflight"), b"")
        failpoint("rollback-after-inflight")
    for number, relative in enumerate(files_sorted):
        log.info("rollback %s: deleting partial file %s", instant_time, relative)
        storage.delete_file(storage.join(relative))
        if number == 0:
            failpoint("rollback-mid-delete")
    mdt_completion = _forget_in_metadata_table(table, rollback_time, copies)
    # the MDT deltacommit of T (docs/format.md#mdt-rollback), before T's own instant files: readers ignore it while T is
    # not complete (docs/format.md#mdt-valid-instants), but it must not outlive T's rollback
    for relative in mdt_deltacommit.rollback(storage, instant_time):
        log.info("rollback %s: deleted metadata-table file %s", instant_time, relative)
    failpoint("rollback-after-mdt")
    pending = timeline.files_of(instant_time)
    for state in (State.INFLIGHT, State.REQUESTED):  # inflight first: never leave an inflight without its plan
        if state is State.REQUESTED and keep_plan:
            break
        for file in pending:
            if file.state is state:
                storage.delete_file(timeline.path_of(file.file_name))
        if state is State.INFLIGHT:
            failpoint("rollback-after-instant-inflight-deleted")
    storage.delete_dir(storage.join(TEMP_DIR, instant_time))

    metadata = {
        "startRollbackTime": rollback_time,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "totalFilesDeleted": len(files_sorted),
        "commitsRollback": [instant_time],
        "partitionMetadata": {
            partition: {
                "partitionPath": partition, "successDeleteFiles": [storage.join(p) for p in paths_],
                "failedDeleteFiles": [], "rollbackLogFiles": {}, "logFilesFromFailedCommit": {},
            }
            for partition, paths_ in by_partition.items()
        },
        "version": 1,
        "instantsRollback": [{"commitTime": instant_time, "action": action}],
    }  # fmt: skip
    if timeline.layout_version >= 2:
        name = f"{rollback_time}_{completion_after(table, rollback_time, mdt_completion)}.rollback"
    else:
        name = f"{rollback_time}.rollback"
    failpoint("rollback-before-complete")
    storage.write_atomic(timeline.path_of(name), encode_avro(metadata, "HoodieRollbackMetadata"))
    return rollback_time
