"""Rolling back a failed (inflight) clustering, with Hudi's rollback instant.

Partial files of instant T are found from its markers and, as a second net, by their names (any base file
carrying T is uncommitted while T has no completed file). Deletions happen before T's pending files go, so a
crash in between leaves them still marked uncommitted (format notes section 10).

Two paths, as Hudi has them: *retry* keeps ``T``'s requested plan and drops only the inflight file, so the same
plan runs again under T; *abandon* drops requested and inflight, freeing the file groups for a new plan.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict

from ..avro import encode_avro
from ..io.base_file import TEMP_DIR
from ..table import HudiTable, State
from ..table.naming import parse_base_file
from .commit import marked_files

log = logging.getLogger(__name__)


def partial_files(table: HudiTable, instant_time: str) -> set[str]:
    """Relative paths of every data file instant ``instant_time`` wrote (it must not be completed)."""
    storage = table.storage
    found = {f for f in marked_files(table, instant_time) if storage.exists(storage.join(f))}
    view = table.view()
    for partition in view.partitions:
        for entry in view._listing.get(partition, []):
            base = parse_base_file(entry.name)
            if base and base.instant == instant_time:
                found.add(f"{partition}/{entry.name}" if partition else entry.name)
    return found


def rollback_clustering(table: HudiTable, instant_time: str, *, keep_plan: bool) -> str:
    """Roll back pending clustering ``instant_time``; returns the rollback instant time."""
    timeline, storage = table.timeline, table.storage
    instant = timeline.get(instant_time)
    if instant is None or instant.is_completed:
        raise ValueError(f"{instant_time} is not a pending instant")
    started = time.monotonic()
    action = "clustering" if timeline.layout_version >= 2 else "replacecommit"
    files = sorted(partial_files(table, instant_time))
    by_partition: dict[str, list[str]] = defaultdict(list)
    by_group: dict[tuple[str, str], list[str]] = defaultdict(list)
    for relative in files:
        partition, _, name = relative.rpartition("/")
        by_partition[partition].append(relative)
        by_group[(partition, parse_base_file(name).file_id)].append(relative)

    rollback_time = timeline.new_instant_time()
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
    storage.write_atomic(timeline.path_of(f"{rollback_time}.rollback.inflight"), b"")
    for relative in files:
        log.info("rollback %s: deleting partial file %s", instant_time, relative)
        storage.delete_file(storage.join(relative))
    for pending in timeline.files_of(instant_time):
        if pending.state is State.INFLIGHT or not keep_plan:
            storage.delete_file(timeline.path_of(pending.file_name))
    storage.delete_dir(storage.join(TEMP_DIR, instant_time))

    metadata = {
        "startRollbackTime": rollback_time,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "totalFilesDeleted": len(files),
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
        name = f"{rollback_time}_{timeline.completion_time_after(rollback_time)}.rollback"
    else:
        name = f"{rollback_time}.rollback"
    storage.write_atomic(timeline.path_of(name), encode_avro(metadata, "HoodieRollbackMetadata"))
    return rollback_time
