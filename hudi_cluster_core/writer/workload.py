"""The workload profile of an upsert: per partition, which file group gets which updates and inserts.

As Hudi's ``UpsertPartitioner`` plans a COW upsert (and the seeds' implementation doc describes):

* every file group holding updated keys is rewritten once (its updates, plus any inserts packed into it);
* inserts go first into the partition's **small files**: latest base files below ``hoodie.parquet.small.file.limit``,
  smallest first, each filled up to ``hoodie.parquet.max.file.size`` at the average record size; file groups under
  pending clustering or touched by a write in flight are never chosen (Hudi filters them out too);
* the rest go to new file groups of ``max.file.size / average record size`` records each (with the limit at 0
  every insert goes to a new file group: the RFC-18 mode).

The average record size is Hudi's estimate: the newest completed commit that wrote more than the small-file
limit gives ``bytes / records``; with none, ``hoodie.copyonwrite.record.size.estimate`` (1024).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from ..table import FileGroupId, FileSlice, HudiTable

DEFAULT_RECORD_SIZE = 1024


@dataclass(frozen=True)
class Sizing:
    small_file_limit: int = 100 * 1024 * 1024
    max_file_size: int = 120 * 1024 * 1024
    record_size: int = DEFAULT_RECORD_SIZE

    @classmethod
    def from_hoodie(cls, table: HudiTable, raw: Mapping[str, str]) -> "Sizing":
        limit = int(raw.get("hoodie.parquet.small.file.limit") or 100 * 1024 * 1024)
        estimate = int(raw.get("hoodie.copyonwrite.record.size.estimate") or DEFAULT_RECORD_SIZE)
        return cls(limit, int(raw.get("hoodie.parquet.max.file.size") or 120 * 1024 * 1024),
                   average_record_size(table, limit, estimate))  # fmt: skip


def average_record_size(table: HudiTable, threshold: int, estimate: int) -> int:
    timeline = table.timeline
    for instant in reversed(timeline.completed(("commit", "replacecommit"))):
        stats = timeline.commit_metadata(instant).get("partitionToWriteStats") or {}
        written = sum(s.get("totalWriteBytes") or 0 for part in stats.values() for s in part or [])
        records = sum(s.get("numWrites") or 0 for part in stats.values() for s in part or [])
        if written > threshold and records > 0:
            return math.ceil(written / records)
    return estimate


@dataclass
class FileGroupWork:
    """What one file group gets in this upsert. ``base``: the latest base file's relative path (None: a new file
    group); ``updates`` and ``inserts``: incoming rows (data columns)."""

    partition: str
    file_id: str | None
    base: str | None
    prev_commit: str
    updates: pa.Table
    inserts: pa.Table


def profile_partition(
    partition: str, rows: pa.Table, keys: pa.Array, found: Mapping[str, pa.Array], slices: list[FileSlice],
    sizing: Sizing, excluded: Collection[FileGroupId],
) -> list[FileGroupWork]:  # fmt: skip
    """The work of one partition: ``rows`` (unique keys ``keys``), ``found``: file id -> keys it holds."""
    by_id = {s.file_id: s for s in slices if s.base_file is not None}
    work: dict[str, FileGroupWork] = {}
    located = pa.array([], pa.string())
    for file_id, held in sorted(found.items()):
        file_slice = by_id[file_id]
        work[file_id] = FileGroupWork(partition, file_id, file_slice.relative_path(file_slice.base_file.name),  # type: ignore[union-attr]
                                      file_slice.base_instant, rows.filter(pc.is_in(keys, value_set=held)),
                                      rows.schema.empty_table())  # fmt: skip
        located = pa.concat_arrays([located, held])
    inserts = rows.filter(pc.invert(pc.is_in(keys, value_set=located)))
    start = 0
    if sizing.small_file_limit > 0:
        small = sorted((s for s in by_id.values() if s.base_file_size < sizing.small_file_limit
                        and s.group_id not in excluded), key=lambda s: (s.base_file_size, s.file_id))  # fmt: skip
        for file_slice in small:
            if start >= inserts.num_rows:
                break
            room = max(0, (sizing.max_file_size - file_slice.base_file_size) // sizing.record_size)
            if room == 0:
                continue
            chunk = inserts.slice(start, room)
            start += chunk.num_rows
            existing = work.get(file_slice.file_id)
            if existing is None:
                work[file_slice.file_id] = FileGroupWork(
                    partition, file_slice.file_id, file_slice.relative_path(file_slice.base_file.name),  # type: ignore[union-attr]
                    file_slice.base_instant, rows.schema.empty_table(), chunk)  # fmt: skip
            else:
                existing.inserts = chunk
    result = list(work.values())
    remaining = inserts.num_rows - start
    if remaining:
        per_group = max(1, sizing.max_file_size // sizing.record_size)
        groups = math.ceil(remaining / per_group)
        size = math.ceil(remaining / groups)
        for offset in range(start, inserts.num_rows, size):
            result.append(FileGroupWork(partition, None, None, "null", rows.schema.empty_table(), inserts.slice(offset, size)))
    return result
