"""Metadata-table records (Avro ``HoodieMetadataRecord``) and the ``files`` partition's records of a commit.

A record is stored as an HFile entry: the row is the MDT key, the value the schemaless Avro encoding of the
record under the **block schema**, which is ``HoodieMetadataRecord`` with Hudi's five nullable meta fields in
front (the schema Hudi 1.1.1 puts in its MDT block headers and HFile file info). In the value the meta fields
are null and ``key`` is ``""``: the key lives in the row (docs/format.md#mdt-data-blocks, #hfile-entries).

``files`` partition (docs/format.md#mdt-files-records; Hudi's
``HoodieTableMetadataUtil.convertMetadataToFilesPartitionRecords`` is the behaviour matched): for each data partition
touched by a commit, one record (type 2) keyed by the partition path (``.`` for a non-partitioned table) mapping each
new file name to ``{size, isDeleted: false}``; and one ``__all_partitions__`` record (type 1) naming those partitions
with size 0. Replaced files get no entry: they stay listed until a clean removes them.
"""

from __future__ import annotations

import functools
import io
import json
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import fastavro

from ..avro import schema_json

FILES_PARTITION = "files"
ALL_PARTITIONS_KEY = "__all_partitions__"
NON_PARTITIONED_NAME = "."
META_FIELDS = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
               "_hoodie_file_name")  # fmt: skip


class RecordType(IntEnum):
    """``HoodieMetadataRecord.type`` (Hudi's ``MetadataPartitionType`` record type ids)."""

    ALL_PARTITIONS = 1
    FILE_LIST = 2
    COLUMN_STATS = 3
    BLOOM_FILTER = 4
    RECORD_INDEX = 5
    PARTITION_STATS = 6


@dataclass(frozen=True)
class MetadataRecord:
    """One MDT record: ``key`` (the HFile row) and the payload fields of ``HoodieMetadataRecord`` besides it."""

    key: str
    type: RecordType
    fields: Mapping[str, Any]

    def avro(self) -> dict[str, Any]:
        """The record as the block schema encodes it (meta fields null, ``key`` empty)."""
        record: dict[str, Any] = dict.fromkeys(META_FIELDS)
        record.update({"key": "", "type": int(self.type), "filesystemMetadata": None, "BloomFilterMetadata": None,
                       "ColumnStatsMetadata": None, "recordIndexMetadata": None, "SecondaryIndexMetadata": None})  # fmt: skip
        record.update(self.fields)
        return record


@functools.cache
def block_schema_json() -> str:
    """``HoodieMetadataRecord`` with the five meta fields in front, as Java's ``Schema.toString()`` prints it."""
    raw = json.loads(schema_json("HoodieMetadataRecord"))
    meta = [{"name": name, "type": ["null", "string"], "doc": "", "default": None} for name in META_FIELDS]
    raw["fields"] = meta + raw["fields"]
    return json.dumps(raw, separators=(",", ":"), ensure_ascii=False)


@functools.cache
def _block_schema() -> Any:
    return fastavro.parse_schema(json.loads(block_schema_json()))


def encode_value(record: MetadataRecord) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, _block_schema(), record.avro())
    return out.getvalue()


def decode_value(key: str, value: bytes, schema_text: str | None = None) -> MetadataRecord:
    """The record an HFile entry holds; ``schema_text`` is the writer schema (default: ours)."""
    writer = fastavro.parse_schema(json.loads(schema_text)) if schema_text else _block_schema()
    decoded = fastavro.schemaless_reader(io.BytesIO(value), writer, None)
    assert isinstance(decoded, dict)
    fields = {k: v for k, v in decoded.items() if k not in META_FIELDS and k not in ("key", "type") and v is not None}
    return MetadataRecord(key, RecordType(decoded["type"]), fields)


def hfile_entries(records: Iterable[MetadataRecord]) -> list[tuple[bytes, bytes]]:
    """(row, value) pairs for :func:`..hfile.write_hfile`; duplicate keys are an error there."""
    return [(r.key.encode("utf-8"), encode_value(r)) for r in records]


# ------------------------------------------------------------------------------------------------- files


def partition_identifier(partition_path: str) -> str:
    """The ``files`` partition's key for a data partition: its path, ``.`` for the non-partitioned table."""
    return partition_path or NON_PARTITIONED_NAME


def _file_info(size: int, deleted: bool = False) -> dict[str, Any]:
    return {"size": int(size), "isDeleted": deleted}


def files_records(
    added: Mapping[str, Mapping[str, int]], deleted: Mapping[str, Iterable[str]] | None = None
) -> list[MetadataRecord]:
    """``files`` records: ``added`` maps partition path -> {file name: size}; ``deleted`` partition path ->
    names to mark ``isDeleted`` (size 0; what a clean writes). One record per partition, then
    ``__all_partitions__`` naming every partition touched. Sorted by key."""
    deleted = deleted or {}
    partitions = sorted(set(added) | set(deleted))
    records = []
    for partition in partitions:
        files = {name: _file_info(size) for name, size in sorted(added.get(partition, {}).items())}
        for name in sorted(deleted.get(partition, ())):
            if name in files:
                raise ValueError(f"{name} in partition {partition!r} is both added and deleted")
            files[name] = _file_info(0, deleted=True)
        records.append(MetadataRecord(partition_identifier(partition), RecordType.FILE_LIST, {"filesystemMetadata": files}))
    if partitions:
        listing = {partition_identifier(p): _file_info(0) for p in partitions}
        records.append(MetadataRecord(ALL_PARTITIONS_KEY, RecordType.ALL_PARTITIONS, {"filesystemMetadata": listing}))
    return sorted(records, key=lambda r: r.key.encode("utf-8"))


def files_from_write_stats(partition_to_write_stats: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, dict[str, int]]:
    """partition path -> {file name: size} of the files a commit wrote (``HoodieWriteStat`` path and
    ``fileSizeInBytes``). A file named twice keeps its largest size (an appended log file grows)."""
    added: dict[str, dict[str, int]] = {}
    for partition, stats in partition_to_write_stats.items():
        files = added.setdefault(partition, {})
        for stat in stats:
            path = stat.get("path")
            if not path:
                raise ValueError(f"a write stat of partition {partition!r} has no path: {dict(stat)}")
            if stat.get("partitionPath", partition) != partition:
                raise ValueError(f"write stat {path} is filed under partition {partition!r} "
                                 f"but names partition {stat.get('partitionPath')!r}")  # fmt: skip
            name = posixpath.basename(path)
            size = int(stat.get("fileSizeInBytes") or 0)
            if size <= 0:
                raise ValueError(f"write stat {path} has no file size")
            files[name] = max(size, files.get(name, 0))
    return added


def files_records_from_write_stats(partition_to_write_stats: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[MetadataRecord]:
    """The ``files`` partition's records for a commit (a clustering's ``partitionToWriteStats``)."""
    return files_records(files_from_write_stats(partition_to_write_stats))
