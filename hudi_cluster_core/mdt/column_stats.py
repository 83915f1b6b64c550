"""The ``column_stats`` and ``partition_stats`` records of a clustering commit, as Apache Hudi 1.1.1 writes them.

**Index version** (``HoodieTableMetadataUtil.existingIndexVersionOrDefault``): the ``version`` of the
``column_stats`` definition in ``.hoodie/.index_defs/index.json`` (else of ``partition_stats``), else by table
version (``HoodieIndexVersion.getCurrentVersion``): V1 below table version 9, V2 from it. A v8 table's stats, and
a table's upgraded from v8 (the upgrade writes ``V1`` into its definitions), are V1; :mod:`.column_ranges` says how
the two store values.

Which columns (``HoodieTableMetadataUtil.getColumnsToIndex``): Hudi always indexes ``_hoodie_commit_time``,
``_hoodie_partition_path`` and ``_hoodie_record_key`` (when meta fields are populated), then the columns of
``hoodie.metadata.index.column.stats.column.list``, or by default the first 32 top-level columns whose type it
supports (not record, map, array or enum; under V1 no decimal that ``DecimalWrapper``'s decimal(30,15) can't hold),
and records the list as the ``sourceFields`` of the ``column_stats`` definition. We take that recorded list: it is
what the index holds and what readers' data skipping trusts; Hudi's rule applies only when the list is empty. Of
either, a column the table schema no longer has, or whose type the index version can't hold, is left out.

``column_stats`` (``convertMetadataToColumnStatsRecords``): one record per (new base file, indexed column) with the
file's footer stats in the index version (:mod:`.footers`), ``isTightBound`` false. They depend on nothing older,
so no earlier stat can stop them. Replaced files keep theirs until a clean.

``partition_stats`` (``HoodieMetadataWriteUtils.convertMetadataToPartitionStatRecords``): for every partition the
commit wrote to, one record per indexed column, recomputed in full and marked ``isTightBound`` true (so Hudi's
payload merge replaces the earlier record instead of adding to it). Its stats merge the new files' footer stats
with the ``column_stats`` records of every file (base and log) of the partition's latest committed file slices.
The slices of the file groups being replaced are still among those: Hudi's exclusion compares file names with file
ids and never matches, so a clustering of N rows counts them twice (docs/format.md#mdt-partition-stats-records). We
reproduce that, as Hudi's next write recomputes the record the same way. ``fileName`` is the partition path.

Types (``FileFormatUtils.getColumnRangeInPartition``): under V2 every file's range is converted to the table
schema's type (NULL-typed ranges of delete blocks take it with their counts); under V1 ranges merge as they are,
and only a column whose files hold values of different Java classes (int and long after a widening) is converted
to the schema's (:mod:`.value_types`). A committed range that can't be read or converted exactly (an unknown
type, a contradictory one) never fails the commit: a base file's range is rebuilt from its footer, as Hudi's
initialisation reads it; if that fails too, the partition's record of that column covers the new files alone and
is written with ``isTightBound`` false, so Hudi's readers merge it into the record they have (a true bound stays
one: a clustering only moves rows), and a warning names the column, partition and file.
"""

from __future__ import annotations

import functools
import json
import logging
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import pyarrow.parquet as pq

from ..io.storage import Storage
from ..table import HudiTable, load_table
from ..table.metadata_table import INDEX_DEFS_DEFAULT
from ..table.naming import parse_log_file
from ..table.schema import table_schema
from ..table.view import FileSystemView
from . import index_keys
from .column_ranges import V1, ColumnRange, UnusableStats, ValueType, from_avro, has_values, merge, merge_all
from .commit_files import CommitFiles
from .footers import footer_ranges
from .partition_reader import read_partition
from .records import MetadataRecord, RecordType
from .value_types import convert, table_type

log = logging.getLogger(__name__)

COLUMN_STATS_PARTITION = "column_stats"
PARTITION_STATS_PARTITION = "partition_stats"
ALWAYS_INDEXED = ("_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_record_key")
DEFAULT_MAX_COLUMNS = 32
_UNSUPPORTED = ("record", "map", "array", "enum")
_STRING = {"type": "string"}
# never among the default columns (``HOODIE_META_COLUMNS_WITH_OPERATION``); ``_hoodie_is_deleted`` is data
META_COLUMNS = (*ALWAYS_INDEXED, "_hoodie_commit_seqno", "_hoodie_file_name", "_hoodie_operation")


def _index_definitions(storage: Storage, config: Mapping[str, str]) -> dict[str, Any]:
    relative = config.get("hoodie.table.index.defs.path") or INDEX_DEFS_DEFAULT
    path = relative if "://" in relative or relative.startswith("/") else storage.join(relative)
    if not storage.exists(path):
        return {}
    return json.loads(storage.read_bytes(path).decode("utf-8")).get("indexDefinitions") or {}


def index_version(storage: Storage, config: Mapping[str, str]) -> int:
    """1 or 2: the stats index version of the table (module docstring)."""
    definitions = _index_definitions(storage, config)
    for partition in (COLUMN_STATS_PARTITION, PARTITION_STATS_PARTITION):
        version = str((definitions.get(partition) or {}).get("version") or "")
        if version.upper() in ("V1", "V2"):
            return int(version[1])
    return 1 if int(config.get("hoodie.table.version", "9")) < 9 else 2


def _supported(avro_type: Any, version: int) -> bool:
    """Hudi's ``isColumnTypeSupported`` (for the record type of its default Avro merger): no record, map, array or
    enum; under V1 no decimal ``DecimalWrapper`` can't hold."""
    branches = [t for t in avro_type if t != "null"] if isinstance(avro_type, list) else [avro_type]
    spec = branches[0] if len(branches) == 1 else {"type": "union"}
    kind = spec.get("type") if isinstance(spec, dict) else spec
    if kind in _UNSUPPORTED or kind == "union":
        return False
    decimal = isinstance(spec, dict) and spec.get("logicalType") == "decimal"
    return version >= 2 or not decimal or table_type(spec, version) is not None


def _schema_fields(schema: str | None) -> dict[str, Any]:
    """Column -> Avro type of the table schema's top-level fields, meta columns first (they are strings)."""
    fields = json.loads(schema).get("fields", []) if schema else []
    return {**dict.fromkeys(ALWAYS_INDEXED, _STRING), **{f["name"]: f["type"] for f in fields}}


def indexed_columns(storage: Storage, config: Mapping[str, str], schema: str | None) -> list[str]:
    """The columns the table's column stats cover (module docstring)."""
    version = index_version(storage, config)
    populated = config.get("hoodie.populate.meta.fields", "true").lower() == "true"
    meta = list(ALWAYS_INDEXED) if populated else []
    fields = _schema_fields(schema)
    chosen = (_index_definitions(storage, config).get(COLUMN_STATS_PARTITION) or {}).get("sourceFields")
    if not chosen:
        data = [name for name, avro in fields.items() if name not in META_COLUMNS and _supported(avro, version)]
        chosen = data[:DEFAULT_MAX_COLUMNS]
    columns = meta + [c for c in chosen if c not in ALWAYS_INDEXED]
    if not schema:
        return columns
    return [c for c in columns if c in fields and table_type(fields[c], version) is not None]


@functools.lru_cache(maxsize=256)
def _footer(base_uri: str, options: tuple[tuple[str, str], ...], relative: str, size: int) -> pq.FileMetaData:
    storage = Storage(base_uri, dict(options))  # the table's store settings (object stores), not just its path
    with storage.fs.open_input_file(storage.join(relative)) as source:
        return pq.read_metadata(source)


def _read_footer(storage: Storage, relative: str, size: int = 0) -> pq.FileMetaData:
    return _footer(storage.base_uri, tuple(sorted((storage.options or {}).items())), relative, size)


def footer_of(commit: CommitFiles, stat: Mapping[str, Any]) -> pq.FileMetaData:
    """The parquet footer of a new base file (read once per commit for all builders)."""
    return _read_footer(commit.storage, stat["path"], int(stat.get("fileSizeInBytes") or 0))


def new_file_ranges(commit: CommitFiles, columns: Sequence[str], version: int) -> dict[str, list[ColumnRange]]:
    """Data partition -> footer ranges of the commit's new base files, in write-stat order."""
    found: dict[str, list[ColumnRange]] = {}
    for partition, stats in commit.write_stats.items():
        ranges = found.setdefault(partition, [])
        for stat in stats:
            ranges += footer_ranges(footer_of(commit, stat), posixpath.basename(stat["path"]), columns, version)
    return found


def _table_and_columns(commit: CommitFiles) -> tuple[HudiTable, str | None, list[str], int]:
    table = load_table(commit.storage.base_uri, commit.storage.options)
    schema = table_schema(table)
    return table, schema, indexed_columns(commit.storage, commit.table_config, schema), \
        index_version(commit.storage, commit.table_config)  # fmt: skip


def column_stats_records(commit: CommitFiles) -> list[MetadataRecord]:
    _, _, columns, version = _table_and_columns(commit)
    records = []
    for partition, ranges in new_file_ranges(commit, columns, version).items():
        for column_range in ranges:
            key = index_keys.column_stats_key(column_range.column, partition, column_range.name)
            records.append(MetadataRecord(key, RecordType.COLUMN_STATS, {"ColumnStatsMetadata": column_range.avro()}))
    return records


def _merged_range(records: Sequence[Mapping[str, Any]]) -> ColumnRange | None:
    """``HoodieMetadataPayload``'s merge of one key's column-stats records, oldest first; None if deleted. A later
    record replaces a tombstone or follows one; a tight-bound one replaces; else min/max and counts merge in the
    later record's type. Raises UnusableStats for a record (or a pair) that can't be read that way."""
    merged: ColumnRange | None = None
    deleted = False
    for record in records:
        stats = record.get("ColumnStatsMetadata")
        if stats is None:
            continue
        latest = from_avro(stats)
        if merged is None or deleted or stats.get("isDeleted") or stats.get("isTightBound"):
            merged, deleted = latest, bool(stats.get("isDeleted"))
            continue
        earlier = convert(merged, latest.value_type) if has_values(latest) else merged
        if earlier is None:
            raise UnusableStats(f"records of type {merged.value_type} and {latest.value_type}")
        merged = replace(merge(earlier, latest), name=latest.name)
    return None if merged is None or deleted else merged


merged_range = _merged_range  # what readers of the index outside this module call (the layout report)


# A committed file's range for partition stats: the range, or None when its record can't be used as it is
Committed = tuple[str, "ColumnRange | None"]


def committed_file_ranges(commit: CommitFiles, table: HudiTable, columns: Sequence[str]) -> dict[str, dict[str, list[Committed]]]:
    """Data partition -> column -> (file name, range) of every file in its latest committed slices besides the
    commit's new files, for the partitions the commit wrote to (one pass over the MDT partition)."""
    partitions = sorted(commit.write_stats)
    new = {posixpath.basename(s["path"]) for stats in commit.write_stats.values() for s in stats}
    wanted: dict[str, tuple[str, str, str]] = {}  # MDT key -> (data partition, column, file name)
    for file_slice in FileSystemView(table.timeline).latest_file_slices(partitions=partitions):
        names = [log_file.name for log_file in file_slice.log_files]
        names += [file_slice.base_file.name] if file_slice.base_file is not None else []
        for name in names:
            if name not in new:
                wanted.update((index_keys.column_stats_key(c, file_slice.partition, name), (file_slice.partition, c, name))
                              for c in columns)  # fmt: skip
    found = read_partition(commit.storage, COLUMN_STATS_PARTITION, wanted.__contains__)
    ranges: dict[str, dict[str, list[Committed]]] = {partition: {} for partition in partitions}
    for key in sorted(found):
        partition, column, name = wanted[key]
        try:
            merged = _merged_range(found[key])
        except UnusableStats as exc:
            log.info("column %r of %s/%s: its column stats can't be read as they are (%s)", column, partition, name, exc)
            ranges[partition].setdefault(column, []).append((name, None))
            continue
        if merged is not None:
            ranges[partition].setdefault(column, []).append((name, merged))
    return ranges


def _rebuilt(storage: Storage, partition: str, name: str, column: str, version: int) -> ColumnRange | None:
    """A committed base file's range of ``column`` from its footer, as Hudi's initialisation reads it; None for a
    log file or a footer that can't be read."""
    if parse_log_file(name) is not None or not name.endswith(".parquet"):
        return None
    try:
        found = footer_ranges(_read_footer(storage, posixpath.join(partition, name) if partition else name), name,
                              [column], version)  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - an unreadable footer only means no rebuilt range
        log.info("%s/%s: its footer can't be read for column stats (%s)", partition, name, exc)
        return None
    return found[0] if found else None


def _partition_range(storage: Storage, partition: str, column: str, new: list[ColumnRange],
                     committed: list[Committed], target: ValueType | None, version: int) -> tuple[ColumnRange | None, bool]:  # fmt: skip
    """The partition's merged range of ``column`` and whether it is a tight bound (module docstring); None when
    not even the new files' ranges fit the table's type (then the record Hudi's readers have stays)."""
    def from_footer(name: str) -> ColumnRange | None:
        return _rebuilt(storage, partition, name, column, version)

    # (file name, its range, whether that range is already the footer's)
    entries = [(name, found if found is not None else from_footer(name), found is None) for name, found in committed]
    types = {r.value_type for r in [*new, *(r for _, r, _ in entries)] if r is not None and has_values(r)}
    target = target or next(iter(types), None)
    fitted = [(name, r) for name, r, _ in entries]
    if target is not None and (version >= 2 or len(types) > 1 or any(t.ordinal != V1 for t in types)):
        # V2 always takes the table's type; V1 only when the files disagree
        new_fitted = [convert(r, target) for r in new]
        if any(r is None for r in new_fitted):
            log.warning("partition_stats of column %r in partition %r are left as they are: the new files' stats "
                        "are not of the table's type %s", column, partition, target)  # fmt: skip
            return None, False
        new = [r for r in new_fitted if r is not None]
        fitted = []
        for name, found, from_file in entries:
            fit = None if found is None else convert(found, target)
            if fit is None and not from_file:  # a record of another type: the file's footer, as Hudi reads it
                again = from_footer(name)
                fit = None if again is None else convert(again, target)
            fitted.append((name, fit))
    left_out = sorted(name for name, r in fitted if r is None)
    if not left_out:
        return merge_all([*new, *(r for _, r in fitted if r is not None)]), True
    log.warning("partition_stats of column %r in partition %r cover the new files alone (isTightBound false, Hudi's "
                "readers merge them into the record they have): the column stats of %s can't be merged into the "
                "table's type %s", column, partition, ", ".join(left_out[:5]), target)  # fmt: skip
    return merge_all(new), False


def _table_types(schema: str | None, version: int) -> dict[str, ValueType]:
    """Column -> its type in the table schema (Hudi types partition stats by the schema, not by the files)."""
    return {name: t for name, avro in _schema_fields(schema).items() if (t := table_type(avro, version)) is not None}


def partition_stats_records(commit: CommitFiles) -> list[MetadataRecord]:
    table, schema, columns, version = _table_and_columns(commit)
    committed = committed_file_ranges(commit, table, columns)
    types = _table_types(schema, version)
    records = []
    for partition, new_ranges in new_file_ranges(commit, columns, version).items():
        by_column: dict[str, list[ColumnRange]] = {}
        for column_range in new_ranges:
            by_column.setdefault(column_range.column, []).append(column_range)
        for column in by_column.keys() | committed[partition].keys():
            total, tight = _partition_range(commit.storage, partition, column, by_column.get(column, []),
                                            committed[partition].get(column, []), types.get(column), version)  # fmt: skip
            if total is None:
                continue
            stats = total.avro(tight_bound=tight) | {"fileName": partition}
            key = index_keys.partition_stats_key(column, partition)
            records.append(MetadataRecord(key, RecordType.PARTITION_STATS, {"ColumnStatsMetadata": stats}))
    return sorted(records, key=lambda r: r.key)
