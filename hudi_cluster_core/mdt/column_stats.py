"""The ``column_stats`` and ``partition_stats`` records of a clustering commit, as Apache Hudi 1.1.1 writes them.

Which columns (``HoodieTableMetadataUtil.getColumnsToIndex``): Hudi always indexes ``_hoodie_commit_time``,
``_hoodie_partition_path`` and ``_hoodie_record_key`` (when meta fields are populated), then the columns of
``hoodie.metadata.index.column.stats.column.list``, or by default the first 32 top-level columns whose type it
supports (not record, map, array or enum), and records the list as the ``sourceFields`` of the ``column_stats``
definition in ``.hoodie/.index_defs/index.json``. We take that recorded list: it is what the index holds and what
readers' data skipping trusts; Hudi's rule applies only when the table has no such definition.

``column_stats`` (``convertMetadataToColumnStatsRecords``): one record per (new base file, indexed column) with the
file's footer stats (:mod:`.column_ranges`), ``isTightBound`` false. Replaced files keep theirs until a clean.

``partition_stats`` (``HoodieMetadataWriteUtils.convertMetadataToPartitionStatRecords``): for every partition the
commit wrote to, one record per indexed column, recomputed in full and marked ``isTightBound`` true (so Hudi's
payload merge replaces the earlier record instead of adding to it). Its stats merge the new files' footer stats
with the ``column_stats`` records of every file (base and log) of the partition's latest committed file slices.
The slices of the file groups being replaced are still among those: Hudi's exclusion compares file names with file
ids and never matches, so a clustering of N rows counts them twice (format notes 14.4.3). We reproduce that, as
Hudi's next write recomputes the record the same way. ``fileName`` is the partition path.

Value types: column_stats follow each file (:mod:`.column_ranges`); partition_stats take the table schema's type
(Hudi's ``getColumnRangeInPartition``) and widen older files' int/long/float stats to it as Hudi does; any other
type change across files is an error that names the column and fails the commit (nothing is half-written).
"""

from __future__ import annotations

import functools
import json
import posixpath
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq

from ..io.storage import Storage
from ..table import HudiTable, load_table
from ..table.metadata_table import INDEX_DEFS_DEFAULT
from ..table.schema import table_schema
from ..table.view import FileSystemView
from . import index_keys
from .column_ranges import (
    STRING, ColumnRange, ValueType, from_avro, footer_ranges, merge, merge_all, promoted, value_type_of_avro,
)
from .partition_reader import read_partition
from .records import MetadataRecord, RecordType

if TYPE_CHECKING:  # partitions imports this module for its builders
    from .partitions import CommitFiles

COLUMN_STATS_PARTITION = "column_stats"
PARTITION_STATS_PARTITION = "partition_stats"
ALWAYS_INDEXED = ("_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_record_key")
DEFAULT_MAX_COLUMNS = 32
_UNSUPPORTED = ("record", "map", "array", "enum")


def _index_definitions(storage: Storage, config: Mapping[str, str]) -> dict[str, Any]:
    relative = config.get("hoodie.table.index.defs.path") or INDEX_DEFS_DEFAULT
    path = relative if "://" in relative or relative.startswith("/") else storage.join(relative)
    if not storage.exists(path):
        return {}
    return json.loads(storage.read_bytes(path).decode("utf-8")).get("indexDefinitions") or {}


def _supported(avro_type: Any) -> bool:
    branches = [t for t in avro_type if t != "null"] if isinstance(avro_type, list) else [avro_type]
    kind = branches[0] if len(branches) == 1 else "union"
    kind = kind.get("type") if isinstance(kind, dict) else kind
    return kind not in _UNSUPPORTED and kind != "union"


def indexed_columns(storage: Storage, config: Mapping[str, str], schema: str | None) -> list[str]:
    """The columns the table's column stats cover (module docstring)."""
    populated = config.get("hoodie.populate.meta.fields", "true").lower() == "true"
    meta = list(ALWAYS_INDEXED) if populated else []
    definition = _index_definitions(storage, config).get(COLUMN_STATS_PARTITION) or {}
    fields = definition.get("sourceFields")
    if fields:
        return meta + [f for f in fields if f not in ALWAYS_INDEXED]
    data = json.loads(schema).get("fields", []) if schema else []
    chosen = [f["name"] for f in data if _supported(f["type"]) and not f["name"].startswith("_hoodie_")]
    return meta + chosen[:DEFAULT_MAX_COLUMNS]


@functools.lru_cache(maxsize=256)
def _footer(base_uri: str, options: tuple[tuple[str, str], ...], relative: str, size: int) -> pq.FileMetaData:
    storage = Storage(base_uri, dict(options))  # the table's store settings (object stores), not just its path
    with storage.fs.open_input_file(storage.join(relative)) as source:
        return pq.read_metadata(source)


def footer_of(commit: CommitFiles, stat: Mapping[str, Any]) -> pq.FileMetaData:
    """The parquet footer of a new base file (read once per commit for all builders)."""
    options = tuple(sorted((commit.storage.options or {}).items()))
    return _footer(commit.storage.base_uri, options, stat["path"], int(stat.get("fileSizeInBytes") or 0))


def new_file_ranges(commit: CommitFiles, columns: Sequence[str]) -> dict[str, list[ColumnRange]]:
    """Data partition -> footer ranges of the commit's new base files, in write-stat order."""
    found: dict[str, list[ColumnRange]] = {}
    for partition, stats in commit.write_stats.items():
        ranges = found.setdefault(partition, [])
        for stat in stats:
            ranges += footer_ranges(footer_of(commit, stat), posixpath.basename(stat["path"]), columns)
    return found


def _table_and_columns(commit: CommitFiles) -> tuple[HudiTable, list[str]]:
    table = load_table(commit.storage.base_uri, commit.storage.options)
    return table, indexed_columns(commit.storage, commit.table_config, table_schema(table))


def column_stats_records(commit: CommitFiles) -> list[MetadataRecord]:
    records = []
    for partition, ranges in new_file_ranges(commit, _table_and_columns(commit)[1]).items():
        for column_range in ranges:
            key = index_keys.column_stats_key(column_range.column, partition, column_range.name)
            records.append(MetadataRecord(key, RecordType.COLUMN_STATS, {"ColumnStatsMetadata": column_range.avro()}))
    return records


def _merged_record(records: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """``HoodieMetadataPayload``'s merge of one key's column-stats records, oldest first; None if deleted."""
    merged: Mapping[str, Any] | None = None
    for record in records:
        stats = record.get("ColumnStatsMetadata")
        if stats is None:
            continue
        if merged is None or stats.get("isDeleted") or merged.get("isDeleted") or stats.get("isTightBound"):
            merged = stats
            continue
        total = merge(from_avro(merged), from_avro(stats))
        merged = {**total.avro(tight_bound=bool(stats.get("isTightBound"))), "fileName": stats.get("fileName")}
    return None if merged is None or merged.get("isDeleted") else merged


def committed_file_ranges(commit: CommitFiles, table: HudiTable, columns: Sequence[str]) -> dict[str, list[ColumnRange]]:
    """Data partition -> the ``column_stats`` of every file in its latest committed slices besides the commit's
    new files, for the partitions the commit wrote to (one pass over the MDT partition)."""
    partitions = sorted(commit.write_stats)
    new = {posixpath.basename(s["path"]) for stats in commit.write_stats.values() for s in stats}
    wanted: dict[str, str] = {}  # MDT key -> data partition
    for file_slice in FileSystemView(table.timeline).latest_file_slices(partitions=partitions):
        names = [log_file.name for log_file in file_slice.log_files]
        names += [file_slice.base_file.name] if file_slice.base_file is not None else []
        for name in names:
            if name not in new:
                wanted.update((index_keys.column_stats_key(c, file_slice.partition, name), file_slice.partition)
                              for c in columns)  # fmt: skip
    found = read_partition(commit.storage, COLUMN_STATS_PARTITION, wanted.__contains__)
    ranges: dict[str, list[ColumnRange]] = {partition: [] for partition in partitions}
    for key in sorted(found):
        merged = _merged_record(found[key])
        if merged is not None:
            ranges[wanted[key]].append(from_avro(merged))
    return ranges


def _table_types(table: HudiTable) -> dict[str, ValueType]:
    """Column -> its type in the table schema (Hudi types partition stats by the schema, not by the files)."""
    schema = table_schema(table)
    types = {name: ValueType(STRING) for name in ALWAYS_INDEXED}
    for field in json.loads(schema).get("fields", []) if schema else []:
        value_type = value_type_of_avro(field["type"])
        if value_type is not None:
            types[field["name"]] = value_type
    return types


def partition_stats_records(commit: CommitFiles) -> list[MetadataRecord]:
    table, columns = _table_and_columns(commit)
    committed = committed_file_ranges(commit, table, columns)
    types = _table_types(table)
    records = []
    for partition, new_ranges in new_file_ranges(commit, columns).items():
        by_column: dict[str, list[ColumnRange]] = {}
        for column_range in new_ranges + committed[partition]:
            by_column.setdefault(column_range.column, []).append(column_range)
        for column, ranges in by_column.items():
            target = types.get(column, ranges[0].value_type)
            total = merge_all(promoted(r, target) for r in ranges)
            assert total is not None
            stats = total.avro(tight_bound=True) | {"fileName": partition}
            key = index_keys.partition_stats_key(column, partition)
            records.append(MetadataRecord(key, RecordType.PARTITION_STATS, {"ColumnStatsMetadata": stats}))
    return records
