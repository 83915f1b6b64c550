"""Cleaning as Apache Hudi's cleaner does it for a clustered COW table, for the simulation's cleaner actor.

Hudi's ``KEEP_LATEST_COMMITS`` policy with ``hoodie.clean.commits.retained`` = ``RETAINED``
(``CleanerUtils.getEarliestCommitToRetain`` and ``CleanPlanner``):

* the earliest commit retained is the ``RETAINED``-th completed instant from the end of the commits timeline
  (commits, deltacommits, replacecommits, clusterings, compactions), but never later than the earliest pending
  instant of that timeline: then it is the last completed instant before that pending one (none: nothing is
  cleaned). So a write or a clustering still in flight keeps every file slice it may have read;
* the file groups a completed replacecommit replaced are deleted once it is older than the earliest commit
  retained, unless a pending clustering or write names them (files of a write still in flight are not part of
  Hudi's view: they are never deleted);
* of every other file group, each committed file slice older than the earliest commit retained is deleted,
  except the group's latest slice and its last slice before the earliest commit retained (a query running since
  then may read it).

The steps are Hudi's:

1. under the table lock, the plan: ``T.clean.requested`` (a ``HoodieCleanerPlan``), or the pending clean of an
   earlier cleaner that died, which is executed again as planned;
2. ``T.clean.inflight``, then the files are deleted (idempotent: a repeat deletes nothing twice);
3. under the lock, the metadata table's deltacommit of ``T`` (the files marked deleted in ``files``), then the
   completed ``T_C.clean`` (a ``HoodieCleanMetadata``), after the deltacommit as every data instant completes.
"""

from __future__ import annotations

import io
from collections import defaultdict

import fastavro

from hudi_cluster_core.io.storage import Storage
from hudi_cluster_core.mdt import deltacommit
from hudi_cluster_core.mdt.commit import completion_after
from hudi_cluster_core.mdt.records import files_records
from hudi_cluster_core.table import load_table
from hudi_cluster_core.table.metadata_table import metadata_partitions
from hudi_cluster_core.table.ownership import timeline_lock

RETAINED = 1
POLICY = "KEEP_LATEST_COMMITS"
_FILES = {"type": "map", "values": {"type": "array", "items": "string"}}
PLAN_SCHEMA = fastavro.parse_schema({
    "type": "record", "name": "HoodieCleanerPlan", "namespace": "org.apache.hudi.avro.model", "fields": [
        {"name": "earliestInstantToRetain", "type": ["null", "string"], "default": None},
        {"name": "policy", "type": "string"},
        {"name": "filesToBeDeletedPerPartition", "type": _FILES},
        {"name": "version", "type": "int", "default": 1},
    ]})  # fmt: skip
METADATA_SCHEMA = fastavro.parse_schema({
    "type": "record", "name": "HoodieCleanMetadata", "namespace": "org.apache.hudi.avro.model", "fields": [
        {"name": "startCleanTime", "type": "string"},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "totalFilesDeleted", "type": "int"},
        {"name": "earliestCommitToRetain", "type": "string"},
        {"name": "successDeleteFiles", "type": _FILES},
        {"name": "version", "type": "int", "default": 1},
    ]})  # fmt: skip


def clean(uri: str) -> str | None:
    """Plan (or resume) a clean and execute it; returns its instant time, None when there is nothing to clean."""
    storage = Storage(uri)
    with timeline_lock(storage, 60000):
        table = load_table(uri)
        pending = [i for i in table.timeline.pending() if i.action == "clean"]
        if pending:
            instant = pending[0].time
            plan = _read(storage, table.timeline.path_of(f"{instant}.clean.requested"), PLAN_SCHEMA)
        else:
            plan = _plan(table)
            if plan is None:
                return None
            instant = table.timeline.new_instant_time()
            storage.write_atomic(table.timeline.path_of(f"{instant}.clean.requested"), _avro(PLAN_SCHEMA, plan))
    timeline = table.timeline
    storage.write_atomic(timeline.path_of(f"{instant}.clean.inflight"), _avro(PLAN_SCHEMA, plan))
    deleted = plan["filesToBeDeletedPerPartition"]
    for partition, names in sorted(deleted.items()):
        for name in names:
            storage.delete_file(storage.join(partition, name))
    with timeline_lock(storage, 60000):
        table = table.reload()
        mdt_completion = None
        if "files" in metadata_partitions(storage):
            deltacommit.rollback(storage, instant)  # an earlier attempt's leftovers
            deltacommit.begin(storage, instant)
            stats = deltacommit.write_partition(storage, instant, "files", files_records({}, deleted))
            mdt_completion = table.timeline.completion_time_after(instant)
            deltacommit.complete(storage, instant, stats, completion_time=mdt_completion)
        completion = completion_after(table, instant, mdt_completion)
        metadata = {"startCleanTime": instant, "timeTakenInMillis": 0, "earliestCommitToRetain":
                    plan["earliestInstantToRetain"] or "", "successDeleteFiles": deleted,
                    "totalFilesDeleted": sum(len(n) for n in deleted.values()), "version": 1}  # fmt: skip
        storage.write_new(timeline.path_of(f"{instant}_{completion}.clean"), _avro(METADATA_SCHEMA, metadata))
    return instant


# actions outside Hudi's commits timeline (commits, deltacommits, replacecommits, clusterings, compactions)
NOT_COMMITS = ("clean", "rollback", "savepoint", "restore", "indexing", "schemacommit")


def earliest_commit_to_retain(timeline) -> str | None:
    """Hudi's earliest commit to retain under ``KEEP_LATEST_COMMITS``, or None when nothing may be cleaned."""
    commits = [i for i in timeline.instants if i.action not in NOT_COMMITS]  # in requested-time order
    completed = [i for i in commits if i.is_completed]
    if len(completed) <= RETAINED:
        return None
    nth = completed[len(completed) - RETAINED].time
    pending = [i.time for i in commits if not i.is_completed]
    if not pending or nth <= pending[0]:
        return nth
    before = [i.time for i in completed if i.time < pending[0]]
    return before[-1] if before else None


def _plan(table) -> dict | None:
    earliest = earliest_commit_to_retain(table.timeline)
    if earliest is None:
        return None
    view = table.view()
    busy = set(view.pending_clustering_file_groups()) | set(view.pending_write_file_groups())
    replacing = view.replacing_instants()
    files: dict[str, list[str]] = defaultdict(list)
    for group, replaced_by in sorted(replacing.items()):
        if replaced_by < earliest and group not in busy:
            names = view.group_file_names(group.partition).get(group.file_id, {})
            files[group.partition] += sorted(n for n, instant in names.items() if view.is_committed(instant))
    replaced = {(g.partition, g.file_id) for g in replacing}
    for partition in view.partitions:
        for file_id in sorted(view.group_file_names(partition)):
            if (partition, file_id) not in replaced:
                files[partition] += _older_versions(view, partition, file_id, earliest)
    files = {partition: names for partition, names in files.items() if names}
    if not files:
        return None
    return {"earliestInstantToRetain": earliest, "policy": POLICY, "filesToBeDeletedPerPartition": dict(files),
            "version": 1}  # fmt: skip


def _older_versions(view, partition: str, file_id: str, earliest: str) -> list[str]:
    """The files of a live file group's committed slices that ``KEEP_LATEST_COMMITS`` deletes: older than
    ``earliest``, neither the latest slice nor the last one before ``earliest``."""
    slices = view.file_slices(partition, file_id)  # committed only, oldest first
    if len(slices) < 2:
        return []
    before = [s.base_instant for s in slices if s.base_instant < earliest]
    keep = {slices[-1].base_instant, before[-1] if before else None}
    names = []
    for piece in slices:
        if piece.base_instant < earliest and piece.base_instant not in keep:
            names += [piece.base_file.name] if piece.base_file is not None else []
            names += [log.name for log in piece.log_files]
    return sorted(names)


def _avro(schema, record: dict) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, schema, [record])
    return out.getvalue()


def _read(storage: Storage, path: str, schema) -> dict:
    return next(iter(fastavro.reader(io.BytesIO(storage.read_bytes(path)), schema)))
