"""Cleaning as Apache Hudi's cleaner does it for a clustered COW table, for the simulation's cleaner actor.

Hudi's ``KEEP_LATEST_COMMITS`` policy with ``hoodie.clean.commits.retained`` = ``RETAINED``: the file groups a
completed clustering replaced are deleted once their replacecommit is older than the earliest commit retained,
unless a pending clustering or write names them. (Older versions of live file groups are the other half of
Hudi's policy; our clustering never reads them, so they are left.) The steps are Hudi's:

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


def _plan(table) -> dict | None:
    writes = table.timeline.completed()
    if len(writes) <= RETAINED:
        return None
    earliest = writes[-RETAINED].time
    view = table.view()
    busy = set(view.pending_clustering_file_groups()) | set(view.pending_write_file_groups())
    files: dict[str, list[str]] = defaultdict(list)
    for group, replacing in sorted(view.replacing_instants().items()):
        if replacing < earliest and group not in busy:
            files[group.partition] += sorted(view.group_file_names(group.partition).get(group.file_id, {}))
    if not any(files.values()):
        return None
    return {"earliestInstantToRetain": earliest, "policy": POLICY, "filesToBeDeletedPerPartition": dict(files),
            "version": 1}  # fmt: skip


def _avro(schema, record: dict) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, schema, [record])
    return out.getvalue()


def _read(storage: Storage, path: str, schema) -> dict:
    return next(iter(fastavro.reader(io.BytesIO(storage.read_bytes(path)), schema)))
