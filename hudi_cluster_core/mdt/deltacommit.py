"""One metadata-table deltacommit, written in Hudi's order (docs/format.md#mdt-commit-order), and its rollback.

For a data-table instant ``T`` (the MDT deltacommit reuses it): :func:`begin` writes the MDT's
``T.deltacommit.requested`` (empty) and ``T.deltacommit.inflight`` (``HoodieCommitMetadata``, no stats,
``UPSERT_PREPPED``); :func:`write_partition` writes one new log file per MDT file group that gets records
(one HFILE_DATA_BLOCK each); :func:`complete` writes ``T_<completion>.deltacommit`` with a write stat per log
file (``extraMetadata.schema`` is ``HoodieMetadataRecord`` without meta fields, as in Hudi's). The data table's own commit of ``T`` must come after :func:`complete`: readers drop MDT blocks whose
instant is not completed on the data timeline, and a data commit without its MDT deltacommit reads as 0 rows.

Only layout-2 metadata tables (data tables v8 and v9) are written here.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ..avro import encode_commit_metadata, schema_json
from ..io.storage import Storage
from ..table.naming import make_write_token, parse_base_file, parse_log_file
from ..table.properties import load_table_config
from ..table.metadata_table import metadata_storage, metadata_timeline
from ..table.timeline import State

__all__ = ["begin", "complete", "file_group_ids", "has_instant", "metadata_storage", "metadata_timeline", "rollback",
           "write_partition"]  # fmt: skip
from .log_block import Records, encode_block, hfile_data_block, log_file_name, route

METADATA_DIR = ".hoodie/metadata"
OPERATION = "UPSERT_PREPPED"


def file_group_ids(storage: Storage, partition: str) -> list[str]:
    """The file ids of an MDT partition's file groups, sorted (the order routing counts in)."""
    mdt = metadata_storage(storage)
    ids = set()
    for entry in mdt.list(mdt.join(partition)):
        parsed = parse_log_file(entry.name) or parse_base_file(entry.name)
        if parsed is not None and not entry.is_dir:
            ids.add(parsed.file_id)
    if not ids:
        raise ValueError(f"MDT partition {partition!r} has no file groups under {mdt.join(partition)}")
    return sorted(ids)


def begin(storage: Storage, instant_time: str) -> None:
    timeline = metadata_timeline(storage)
    empty = {"partitionToWriteStats": {}, "compacted": False, "extraMetadata": {}, "operationType": OPERATION}
    timeline.storage.write_atomic(timeline.path_of(f"{instant_time}.deltacommit.requested"), b"")
    timeline.storage.write_atomic(timeline.path_of(f"{instant_time}.deltacommit.inflight"),
                                  encode_commit_metadata(empty, layout_version=2, replace=False))  # fmt: skip


def write_partition(
    storage: Storage, instant_time: str, partition: str, records: Records, *, stage_id: int = 0,
    first_task: int = 0, block_size: int | None = None,
) -> list[dict[str, Any]]:
    """Log files of ``records`` in MDT ``partition``, one per file group they route to; their write stats."""
    mdt = metadata_storage(storage)
    stats = []
    routed = route(records, file_group_ids(storage, partition))
    for task, file_id in enumerate(sorted(routed), start=first_task):
        block = hfile_data_block(instant_time, routed[file_id], create_time_ms=int(time.time() * 1000),
                                 block_size=block_size)  # fmt: skip
        name = log_file_name(file_id, instant_time, make_write_token(task, stage_id, task))
        data = encode_block(block)
        mdt.write_atomic(mdt.join(partition, name), data)
        stats.append({
            "fileId": file_id, "path": f"{partition}/{name}", "prevCommit": instant_time,
            "numWrites": len(routed[file_id]), "numDeletes": 0, "numUpdateWrites": len(routed[file_id]),
            "numInserts": 0, "totalWriteBytes": len(data), "totalWriteErrors": 0, "partitionPath": partition,
            "fileSizeInBytes": len(data), "logVersion": 1, "logOffset": 0, "baseFile": "", "logFiles": [name],
        })  # fmt: skip
    return stats


def complete(storage: Storage, instant_time: str, stats: Sequence[dict[str, Any]], completion_time: str | None = None) -> str:
    """Commit the MDT deltacommit; returns the completed file's name. ``completion_time`` defaults to now."""
    timeline = metadata_timeline(storage)
    by_partition: dict[str, list[dict[str, Any]]] = {}
    for stat in stats:
        by_partition.setdefault(stat["partitionPath"], []).append(stat)
    metadata = {"partitionToWriteStats": by_partition, "compacted": False,
                "extraMetadata": {"schema": schema_json("HoodieMetadataRecord")}, "operationType": OPERATION}  # fmt: skip
    completion = completion_time or timeline.completion_time_after(instant_time)
    name = f"{instant_time}_{completion}.deltacommit"
    timeline.storage.write_atomic(timeline.path_of(name), encode_commit_metadata(metadata, layout_version=2, replace=False))
    return name


def _written_here(mdt: Storage) -> bool:
    if not mdt.exists(mdt.join(".hoodie", "hoodie.properties")):
        return False
    return load_table_config(mdt).timeline_layout_version >= 2


def has_instant(storage: Storage, instant_time: str) -> bool:
    """Whether the MDT timeline has any file (requested, inflight or completed) of ``instant_time``."""
    if not _written_here(metadata_storage(storage)):
        return False
    return bool(metadata_timeline(storage).files_of(instant_time))


def rollback(storage: Storage, instant_time: str) -> list[str]:
    """Remove the MDT deltacommit ``instant_time`` (docs/format.md#mdt-rollback: Hudi deletes its log files and its
    instant files); returns the MDT-relative paths deleted. Idempotent. Order: the completed file first (so the
    deltacommit never reads as complete without its log files), then every log file ``instant_time`` wrote, then the
    inflight, then the requested file (never an inflight without its requested). Only deltacommits are touched: an MDT
    compaction or clean reusing the time is not ours."""
    mdt = metadata_storage(storage)
    if not _written_here(mdt):
        return []  # no MDT, or one with a layout-1 timeline: this module never wrote a deltacommit into it
    timeline = metadata_timeline(storage)
    files = [f for f in timeline.files_of(instant_time) if f.action == "deltacommit"]
    deleted = []
    for file in files:
        if file.is_completed:
            timeline.storage.delete_file(timeline.path_of(file.file_name))
            deleted.append(f".hoodie/timeline/{file.file_name}")
    for entry in mdt.list(mdt.base):
        if not entry.is_dir or entry.name.startswith("."):
            continue
        for child in mdt.list(entry.path):
            parsed = parse_log_file(child.name)
            if parsed is not None and parsed.instant == instant_time and not child.is_dir:
                mdt.delete_file(child.path)
                deleted.append(f"{entry.name}/{child.name}")
    for state in (State.INFLIGHT, State.REQUESTED):
        for file in files:
            if file.state is state:
                timeline.storage.delete_file(timeline.path_of(file.file_name))
                deleted.append(f".hoodie/timeline/{file.file_name}")
    return deleted
