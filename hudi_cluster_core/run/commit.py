"""Committing a clustering: the completed replacecommit is the single, atomic commit point.

Order (format notes sections 0 and 3.4): data files are closed; stray files of failed task attempts (they have
markers but no write stat) are deleted; the metadata table is dropped if present; the completed instant file
appears atomically; the marker folder goes last. Before the completed file exists no reader sees a new file.

Completing is exclusive: under the timeline lock the run checks that the instant is still pending and that its
heartbeat is still this run's. A second attempt to complete an instant fails with one line, after deleting the
files it wrote (they carry ``T`` and would otherwise become visible once ``T`` is complete).
"""

from __future__ import annotations

import logging
from collections import defaultdict

from ..avro import encode_commit_metadata
from ..errors import PlanError
from ..failpoints import failpoint
from ..plugins import call_hook
from ..write.base_file import TEMP_DIR, marked_files
from ..table import HudiTable, State
from ..table.metadata_table import drop_metadata_table
from ..table.ownership import Heartbeat, timeline_lock
from ..table.schema import table_schema
from ..plan.avro_plan import StoredPlan

log = logging.getLogger(__name__)


def commit_clustering(
    table: HudiTable, plan: StoredPlan, stats: list[dict], execution=None, *, heartbeat: Heartbeat | None = None,
    wait_ms: int = 60000,
) -> str:
    """Write the completed replacecommit; returns its file name."""
    with timeline_lock(table.storage, wait_ms):
        table = table.reload()
        _check_still_ours(table, plan.instant_time, stats, heartbeat)
        return _commit_locked(table, plan, stats, execution)


def _check_still_ours(table: HudiTable, instant_time: str, stats: list[dict], heartbeat: Heartbeat | None) -> None:
    instant = table.timeline.get(instant_time)
    if instant is not None and instant.state is State.INFLIGHT and (heartbeat is None or heartbeat.still_owned()):
        return
    if instant is not None and instant.is_completed:
        why = f"it was completed by another run ({instant.file_name})"
    elif instant is None:
        why = "its instant was rolled back by another run"
    else:
        why = "another run took it over after this run's heartbeat expired"
    for stat in stats:  # ours carry T: once T is complete they would read as duplicates
        table.storage.delete_file(table.storage.join(stat["path"]))
    raise PlanError(f"clustering {instant_time} not committed: {why}; the files this run wrote were deleted")


def _commit_locked(table: HudiTable, plan: StoredPlan, stats: list[dict], execution=None) -> str:
    storage, timeline = table.storage, table.timeline
    written = {s["path"] for s in stats}
    for stray in sorted(marked_files(table, plan.instant_time) - written):
        log.info("deleting %s: written by a failed task attempt", stray)
        storage.delete_file(storage.join(stray))

    write_stats: dict[str, list[dict]] = defaultdict(list)
    for stat in stats:
        write_stats[stat["partitionPath"]].append(stat)
    replaced: dict[str, list[str]] = defaultdict(list)
    for group in plan.groups:
        replaced[group.partition].extend(group.file_ids)
    schema = table_schema(table)
    metadata = {
        "partitionToWriteStats": dict(write_stats),
        "partitionToReplaceFileIds": dict(replaced),
        "compacted": False,
        "extraMetadata": {"schema": schema} if schema else {},
        "operationType": "CLUSTER",
    }
    layout = timeline.layout_version
    drop_metadata_table(storage)
    completion = timeline.completion_time_after(plan.instant_time) if layout >= 2 else None
    name = timeline.clustering_file_name(plan.instant_time, State.COMPLETED, completion)
    if execution is not None and callable(getattr(execution, "execution_before_commit", None)):
        call_hook(execution, "execution_before_commit", table=table, plan=plan, write_stats=list(stats))
    failpoint("before-commit-file")
    storage.write_atomic(timeline.path_of(name), encode_commit_metadata(metadata, layout_version=layout, replace=True))
    failpoint("after-commit-file")
    storage.delete_dir(storage.join(TEMP_DIR, plan.instant_time))
    return name
