"""Committing a clustering: the completed replacecommit is the single, atomic commit point.

Order (docs/format.md#what-a-clustering-writes, #commit-point-and-atomicity, #mdt-commit-order): data files are closed;
stray files of failed task attempts (they have markers but no write stat) are deleted; the metadata table is brought
along (below); the completed instant file appears atomically; the marker folder goes last. Before the completed file
exists no reader sees a new file.

The metadata table (MDT), when the table has one (``mdt.commit``, shared with our writers):

* kept (table version 8+, MDT timeline layout 2, ``files`` built): the MDT deltacommit of the same instant ``T``
  writes the records of every built partition ``mdt.partitions`` maintains (requested, inflight, log files,
  completed, docs/format.md#mdt-commit-order), and completes **before** the data replacecommit
  (docs/format.md#mdt-valid-instants): ``files``, and the stats partitions ``column_stats``, ``partition_stats`` and
  ``bloom_filters`` with the records Hudi's own clustering writes (``mdt.column_stats``, ``mdt.bloom_filters``), on COW
  and MOR tables alike. Replaced files keep their entries until a clean (docs/format.md#mdt-replaced-files). A partition
  with no builder (expression and secondary indexes), one Hudi would not keep (``partition_stats`` without
  ``column_stats``, or on a non-partitioned table), or one this code can't read, is dropped alone, with a warning naming
  it (``table.metadata_table.drop_metadata_partitions``);
* dropped whole, as before, when the user's config says ``hoodie.metadata.enable=false``, for v6 tables, and for
  an MDT this code can't read or write.

Completing is exclusive: under the timeline lock the run checks that the instant is still pending and that its
heartbeat is still this run's, and that every file it wrote still has its marker (no rollback of the instant
deleted them while it worked). A second attempt to complete an instant fails with one line, after deleting the
files it wrote (they carry ``T`` and would otherwise become visible once ``T`` is complete). Then it checks that
no writer reached its input file groups since the plan was made (``run.conflicts``): if one did, the writer wins,
the run stops with :class:`~hudi_cluster_core.errors.WriteConflict` and its instant is rolled back.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Mapping

from ..avro import encode_commit_metadata
from ..errors import PlanError, WriteConflict
from ..failpoints import failpoint
from ..plugins import call_hook
from ..write.base_file import TEMP_DIR, marked_files
from ..table import HudiTable, State
from ..mdt.commit import completion_after, keep_metadata_table
from ..mdt.commit_files import CommitFiles
from ..table.ownership import Heartbeat, timeline_lock
from ..table.schema import schema_metadata
from ..plan.avro_plan import StoredPlan
from .conflicts import find_conflicts
from .rollback import pending_rollback_of

log = logging.getLogger(__name__)


def commit_clustering(
    table: HudiTable, plan: StoredPlan, stats: list[dict], execution=None, *, heartbeat: Heartbeat | None = None,
    wait_ms: int = 60000, metadata_enable: bool = True, disabled_indexes: Mapping[str, str] | None = None,
    phases: dict[str, float] | None = None,
) -> str:
    """Write the completed replacecommit (after the MDT deltacommit, if the MDT is kept); returns its file name.
    ``metadata_enable`` is the user's ``hoodie.metadata.enable``: false drops the metadata table, as Hudi does;
    ``disabled_indexes`` (MDT partition -> the key the user set to false) are dropped alone. ``phases``, when
    given, gets the seconds the metadata table's part took (``metadata_table``)."""
    with timeline_lock(table.storage, wait_ms):
        table = table.reload()
        _check_still_ours(table, plan.instant_time, stats, heartbeat)
        _check_not_rolled_back(table, plan.instant_time, stats)
        _check_no_conflicts(table, plan)
        return _commit_locked(table, plan, stats, execution, metadata_enable=metadata_enable,
                              disabled_indexes=disabled_indexes or {}, phases=phases)  # fmt: skip


def _check_still_ours(table: HudiTable, instant_time: str, stats: list[dict], heartbeat: Heartbeat | None) -> None:
    instant = table.timeline.get(instant_time)
    # a rollback that began is never overtaken by a commit: a run that was frozen past its heartbeat's expiry,
    # while another run claimed the instant, began its rollback, failed and let go, writes its heartbeat again
    # when it thaws and would read as the owner; the rollback plan on the timeline says otherwise
    rolling_back = pending_rollback_of(table, instant_time)
    if (instant is not None and instant.state is State.INFLIGHT and rolling_back is None
            and (heartbeat is None or heartbeat.still_owned())):  # fmt: skip
        return
    if instant is not None and instant.is_completed:
        why = f"it was completed by another run ({instant.file_name})"
    elif instant is None:
        why = "its instant was rolled back by another run"
    elif rolling_back is not None:
        why = f"another run began rolling it back ({rolling_back.file_name}) after this run's heartbeat expired"
    else:
        why = "another run took it over after this run's heartbeat expired"
    # ours carry T: once T is complete they would read as duplicates. Not those the completed commit names: a
    # strategy that names its files after the plan (the consistent-bucket resize: each child bucket's file id,
    # with the same write token in a second Spark application) wrote the very files the other run committed
    committed = _written_paths(table, instant) if instant is not None and instant.is_completed else set()
    for stat in (s for s in stats if s["path"] not in committed):
        table.storage.delete_file(table.storage.join(stat["path"]))
    raise PlanError(f"clustering {instant_time} not committed: {why}; the files this run wrote were deleted"
                    + (" (but those the completed commit names)" if committed & {s["path"] for s in stats} else ""))


def _written_paths(table: HudiTable, instant) -> set[str]:
    metadata = table.timeline.commit_metadata(instant)
    return {s.get("path") for part in (metadata.get("partitionToWriteStats") or {}).values() for s in part or []}


def _check_not_rolled_back(table: HudiTable, instant_time: str, stats: list[dict]) -> None:
    """Every file this run wrote still has its marker: a rollback of the instant deletes the instant's files, then
    its marker folder, under the timeline lock this commit holds, so a marker missing here means a rollback (begun
    and completed while this run worked) deleted this run's files. The heartbeat alone can't tell: it is a file
    any run may rewrite, and a run held up between reading it and writing it (a slow PUT, a refresh racing a
    takeover) can make it name a run that no longer owns the instant. The markers can't come back once deleted."""
    missing = sorted({s["path"] for s in stats} - marked_files(table, instant_time))
    if not missing:
        return
    for stat in stats:  # whatever of ours the rollback left carries T: once T is complete it would read as new
        table.storage.delete_file(table.storage.join(stat["path"]))
    more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
    raise PlanError(f"clustering {instant_time} not committed: another run rolled it back while this run worked "
                    f"(no marker left for {missing[0]}{more}); the files this run wrote were deleted")  # fmt: skip


def _check_no_conflicts(table: HudiTable, plan: StoredPlan) -> None:
    conflicts = find_conflicts(table, plan)
    if not conflicts:
        return
    more = f" (and {len(conflicts) - 1} more)" if len(conflicts) > 1 else ""
    raise WriteConflict(f"clustering {plan.instant_time} not committed: a writer got there first, and the writer "
                        f"wins: {conflicts[0].describe()}{more}")  # fmt: skip


def _commit_locked(table: HudiTable, plan: StoredPlan, stats: list[dict], execution=None, *,
                   metadata_enable: bool = True, disabled_indexes: Mapping[str, str] | None = None,
                   phases: dict[str, float] | None = None) -> str:  # fmt: skip
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
    metadata = {
        "partitionToWriteStats": dict(write_stats),
        "partitionToReplaceFileIds": dict(replaced),
        "compacted": False,
        "extraMetadata": schema_metadata(table),
        "operationType": "CLUSTER",
    }
    layout = timeline.layout_version
    if execution is not None and callable(getattr(execution, "execution_before_commit", None)):
        call_hook(execution, "execution_before_commit", table=table, plan=plan, write_stats=list(stats))
    commit = CommitFiles(storage, plan.instant_time, dict(write_stats), dict(replaced), table.config.props)
    started = time.monotonic()
    mdt_completion = keep_metadata_table(table, commit, metadata_enable=metadata_enable, disabled=disabled_indexes)
    if phases is not None:
        phases["metadata_table"] = time.monotonic() - started
    completion = completion_after(table, plan.instant_time, mdt_completion) if layout >= 2 else None
    name = timeline.clustering_file_name(plan.instant_time, State.COMPLETED, completion)
    failpoint("before-commit-file")
    storage.write_new(timeline.path_of(name), encode_commit_metadata(metadata, layout_version=layout, replace=True))
    failpoint("after-commit-file")
    storage.delete_dir(storage.join(TEMP_DIR, plan.instant_time))
    return name
