"""Append mode (RFC-18): insert rows as brand-new file groups, never touching existing files.

Each call is one Hudi ``commit`` (operation INSERT) with the small-file limit at 0: every partition in the
batch gets ``files_per_partition`` new file groups. This is how fast ingestion leaves many small files behind,
and it is a valid commit for Apache Hudi and hudi-rs alike: same instant files, meta columns and footers Hudi
writes (docs/format.md#timeline, #file-names, #v6-commit-json, #parquet-base-files). The metadata table is kept as
Hudi's insert keeps it (``files``, ``column_stats``, ``partition_stats``, ``bloom_filters``, and ``record_index`` for
the new keys; ``writer.instant``).
"""

from __future__ import annotations

import math
import zlib
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from .. import javaprops
from ..errors import ConfigError
from ..write.base_file import ParquetOptions, WriteContext, write_base_file
from ..io.storage import Storage, open_storage
from ..table import HudiTable, load_table
from ..table.naming import make_write_token
from ..table.properties import PROPERTIES_FILE
from ..write.avro_schema import arrow_to_avro_schema
from .instant import complete_commit, writing
from .write_unit import sequence_numbers


def storage_for(base_path: str | Path) -> Storage:
    return open_storage(base_path)


def create_table(
    storage: Storage, schema: pa.Schema, *, table_name: str, record_key: str, partition_field: str | None,
    precombine_field: str | None, table_version: int = 9, hive_style: bool = False,
) -> None:
    """Write ``.hoodie/hoodie.properties`` for a new COPY_ON_WRITE table, as Hudi 1.1 does for that version."""
    for column in filter(None, (record_key, partition_field, precombine_field)):
        if column not in schema.names:
            raise ConfigError(f"column '{column}' is not in the input; columns: {', '.join(schema.names)}")
    props = {
        "hoodie.table.name": table_name, "hoodie.table.type": "COPY_ON_WRITE", "hoodie.table.version": str(table_version),
        "hoodie.table.recordkey.fields": record_key, "hoodie.archivelog.folder": "archived",
        "hoodie.datasource.write.hive_style_partitioning": str(hive_style).lower(),
        "hoodie.datasource.write.partitionpath.urlencode": "false", "hoodie.datasource.write.drop.partition.columns": "false",
        "hoodie.table.create.schema": arrow_to_avro_schema(schema, table_name),
        "hoodie.table.checksum": str(zlib.crc32(f".{table_name}".encode())),
    }  # fmt: skip
    if partition_field:
        props["hoodie.table.partition.fields"] = partition_field
    if table_version >= 8:
        props.update({
            "hoodie.table.initial.version": str(table_version), "hoodie.timeline.layout.version": "2",
            "hoodie.timeline.path": "timeline", "hoodie.timeline.history.path": "history", "hoodie.table.format": "native",
            "hoodie.table.keygenerator.type": "SIMPLE" if partition_field else "NON_PARTITION",
            "hoodie.record.merge.mode": "EVENT_TIME_ORDERING" if precombine_field else "COMMIT_TIME_ORDERING",
            "hoodie.table.metadata.partitions": "", "hoodie.table.metadata.partitions.inflight": "",
        })  # fmt: skip
        if precombine_field:
            props["hoodie.table.ordering.fields"] = precombine_field
    else:
        keygen = "SimpleKeyGenerator" if partition_field else "NonpartitionedKeyGenerator"
        props.update({"hoodie.timeline.layout.version": "1", "hoodie.table.keygenerator.class": f"org.apache.hudi.keygen.{keygen}"})
        if precombine_field:
            props["hoodie.table.precombine.field"] = precombine_field
    storage.mkdirs(storage.join(".hoodie", "timeline" if table_version >= 8 else ""))
    storage.write_atomic(storage.join(".hoodie", PROPERTIES_FILE), javaprops.dump(props, header="Properties saved by hudi-cluster").encode())


def with_meta_columns(rows: pa.Table, instant: str, record_key: str, partition_values: pa.Array) -> pa.Table:
    keys = pc.cast(rows.column(record_key), pa.string())
    if keys.null_count:
        raise ConfigError(f"record key column '{record_key}' has {keys.null_count} null value(s); keys must be set")
    n = rows.num_rows
    meta = {
        "_hoodie_commit_time": pa.array([instant] * n, pa.string()),
        "_hoodie_commit_seqno": pa.array([""] * n, pa.string()),  # set per file below
        "_hoodie_record_key": keys,
        "_hoodie_partition_path": partition_values,
        "_hoodie_file_name": pa.array([""] * n, pa.string()),
    }
    data = rows.drop_columns([c for c in rows.column_names if c.startswith("_hoodie_")])
    return pa.Table.from_arrays([*meta.values(), *data.columns], names=[*meta.keys(), *data.column_names])


def partition_values(rows: pa.Table, field: str | None, hive_style: bool) -> pa.Array:
    if not field:
        return pa.array([""] * rows.num_rows, pa.string())
    values = pc.cast(rows.column(field), pa.string()).combine_chunks()
    values = pc.fill_null(values, "__HIVE_DEFAULT_PARTITION__")
    return pc.binary_join_element_wise(f"{field}=", values, "") if hive_style else values


def key_and_partition(table: HudiTable, rows: pa.Table, writer: str, extra: Mapping[str, str | None] | None = None,
                      table_type: str = "COPY_ON_WRITE") -> tuple[str, str | None]:  # fmt: skip
    """The record key and partition field of a ``table_type`` table with one record key field, checked present in
    ``rows`` (with the ``extra`` columns, role -> name); ConfigError naming what is wrong."""
    config = table.config
    if config.table_type != table_type:
        raise ConfigError(f"{table.base_path}: {writer} writes {table_type} tables; this one is {config.table_type}")
    key = config.record_key_fields
    if len(key) != 1:
        raise ConfigError(f"{table.base_path}: {writer} supports one record key field; the table has {list(key)}")
    partition = config.partition_fields[0] if config.is_partitioned else None
    for role, column in {"record key": key[0], "partition": partition, **(extra or {})}.items():
        if column and column not in rows.column_names:
            raise ConfigError(f"{role} column '{column}' is missing from the rows; columns: {', '.join(rows.column_names)}")
    return key[0], partition


def write_partition_metadata(storage: Storage, partition: str, instant: str) -> None:
    path = storage.join(partition, ".hoodie_partition_metadata")
    if not storage.exists(path):
        depth = len(partition.split("/")) if partition else 0
        text = javaprops.dump({"commitTime": instant, "partitionDepth": str(depth)}, header="partition metadata")
        storage.write_atomic(path, text.encode())


def append(
    base_path: str | Path, rows: pa.Table, *, table_name: str | None = None, record_key: str | None = None,
    partition_field: str | None = None, precombine_field: str | None = None, table_version: int = 9,
    files_per_partition: int = 1, hive_style: bool = False, options: ParquetOptions | None = None,
    metadata_enable: bool = True, disabled_indexes: Mapping[str, str] | None = None, lock_wait_ms: int = 60000,
    heartbeat_ms: tuple[int, int] = (60000, 2),
) -> dict:
    """Insert ``rows`` as new file groups in one commit; creates the table on first use. Returns a summary.
    The metadata table is kept (``writer.instant``); ``metadata_enable=False`` drops it, as Hudi does.
    ``lock_wait_ms``: how long to wait for the timeline lock (``hoodie.write.lock.wait_time_ms``);
    ``heartbeat_ms``: the write's heartbeat interval and tolerable misses (``writer.instant.writing``)."""
    storage = storage_for(base_path)
    if not storage.exists(storage.join(".hoodie", PROPERTIES_FILE)):
        create_table(
            storage, rows.schema, table_name=table_name or Path(storage.base).name.replace("-", "_"),
            record_key=record_key or "id", partition_field=partition_field, precombine_field=precombine_field,
            table_version=table_version, hive_style=hive_style,
        )  # fmt: skip
    table = load_table(storage.base_uri)
    config = table.config
    key, partition = key_and_partition(table, rows, "append")
    hive = config.props.get("hoodie.datasource.write.hive_style_partitioning", "false") == "true"

    with writing(table, "INSERT", lock_wait_ms, heartbeat_ms) as instant:
        full = with_meta_columns(rows, instant, key, partition_values(rows, partition, hive))
        stats = _write_new_file_groups(storage, full, instant, files_per_partition, options or ParquetOptions())
        complete_commit(table, instant, stats, operation="INSERT", schema=arrow_to_avro_schema(rows.schema, config.name),
                        metadata_enable=metadata_enable, disabled_indexes=disabled_indexes, wait_ms=lock_wait_ms)  # fmt: skip
    files = sum(len(s) for s in stats.values())
    return {"instant_time": instant, "files": files, "rows": rows.num_rows, "partitions": sorted(stats)}


def _write_new_file_groups(storage: Storage, full: pa.Table, instant: str, files_per_partition: int,
                           options: ParquetOptions) -> dict[str, list[dict]]:  # fmt: skip
    """Each partition's rows as ``files_per_partition`` new file groups; returns partition -> write stats."""
    by_partition: dict[str, list[int]] = defaultdict(list)
    for index, value in enumerate(full.column("_hoodie_partition_path").to_pylist()):
        by_partition[value].append(index)
    stats: dict[str, list[dict]] = defaultdict(list)
    file_index = 0
    for partition_path in sorted(by_partition):
        write_partition_metadata(storage, partition_path, instant)
        part = full.take(pa.array(by_partition[partition_path]))
        per_file = math.ceil(part.num_rows / max(1, files_per_partition))
        for start in range(0, part.num_rows, per_file):
            chunk = with_seqno(part.slice(start, per_file), instant, file_index)
            token = make_write_token(file_index, 1, file_index)
            context = WriteContext(storage.base_uri, instant, partition_path, token, options)
            stats[partition_path].append(write_base_file(storage, context, chunk))
            file_index += 1
    return dict(stats)


def with_seqno(chunk: pa.Table, instant: str, file_index: int) -> pa.Table:
    """``_hoodie_commit_seqno`` as Hudi numbers the rows of one file: ``<instant>_<file index>_<row>``."""
    seqno = sequence_numbers(instant, file_index, chunk.num_rows)
    return chunk.set_column(chunk.schema.get_field_index("_hoodie_commit_seqno"), "_hoodie_commit_seqno", seqno)
