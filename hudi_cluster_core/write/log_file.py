"""Writing a MOR log file from Arrow rows: one Avro data block, its marker, its write stat.

An ``AVRO_DATA_BLOCK`` (type 3, docs/format.md#avro-data-blocks) has header {INSTANT_TIME: the writing
instant, SCHEMA: the writer schema, meta fields first} and an empty footer; its content is int32 version 3,
int32 record count, then per record int32 length and the record in Avro binary without a schema, as Hudi 1.1.1's
``HoodieAvroDataBlock`` writes for data tables (the metadata table needs HFile blocks instead: ``mdt.log_block``).

A log file is named ``.{fileId}_{instant}.log.{version}_{writeToken}``. On v8+ tables ``instant`` is the writing
deltacommit; a record duplicated into a new bucket of a pending consistent-bucket resize names the resize's
instant instead (Hudi's duplicate update strategy), which keeps the file out of every view until the resize
completes, and then merges it on top of the new base file.
"""

from __future__ import annotations

import io
import json
import struct

import fastavro
import pyarrow as pa

from ..io.storage import Storage
from ..mdt.log_block import BlockType, HeaderKey, LogBlock, encode_block, log_file_name
from .avro_columns import encode_records, length_prefixed
from .base_file import META_COLUMNS, marker_path

AVRO_BLOCK_VERSION = 3


def writer_schema(table_schema: str) -> str:
    """The table's Avro schema (data fields, from its commits) with Hudi's five meta fields in front."""
    schema = json.loads(table_schema)
    names = {f["name"] for f in schema.get("fields", [])}
    meta = [{"name": n, "type": ["null", "string"], "doc": "", "default": None} for n in META_COLUMNS if n not in names]
    schema["fields"] = meta + list(schema.get("fields", []))
    return json.dumps(schema, separators=(",", ":"))


def avro_data_block(instant_time: str, rows: pa.Table, schema_json: str) -> LogBlock:
    """``rows`` (meta columns included, named as the schema's fields) as one Avro data block: encoded column at a
    time (``avro_columns``), or through fastavro for the types only it encodes."""
    schema = json.loads(schema_json)
    names = [f["name"] for f in schema["fields"]]
    missing = [n for n in names if n not in rows.column_names]
    if missing:
        raise ValueError(f"rows lack the schema's column(s) {missing}")
    records = encode_records(rows, schema["fields"])
    body = length_prefixed(records) if records is not None else _fastavro_body(rows.select(names), schema)
    content = struct.pack(">ii", AVRO_BLOCK_VERSION, rows.num_rows) + body
    header = {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.SCHEMA: schema_json}
    return LogBlock(BlockType.AVRO_DATA, header, content, {})


def _fastavro_body(rows: pa.Table, schema: dict) -> bytes:
    parsed = fastavro.parse_schema(schema)
    out, record = io.BytesIO(), io.BytesIO()
    for row in rows.to_pylist(maps_as_pydicts="strict"):  # Avro maps are dicts; Arrow lists their pairs
        record.seek(0)
        record.truncate()
        fastavro.schemaless_writer(record, parsed, row)
        out.write(struct.pack(">i", len(record.getvalue())))
        out.write(record.getvalue())
    return out.getvalue()


def write_log_file(storage: Storage, *, partition: str, file_id: str, writing_instant: str, name_instant: str,
                   write_token: str, block: LogBlock, records: int, base_instant: str | None) -> dict:  # fmt: skip
    """A new log file of file group ``(partition, file_id)`` holding ``block`` (marker first: an undone write
    finds it); returns its ``HoodieDeltaWriteStat`` fields."""
    version = 1 + sum(1 for _ in _same_instant_logs(storage, partition, file_id, name_instant))
    name = log_file_name(file_id, name_instant, write_token, version)
    relative = f"{partition}/{name}" if partition else name
    storage.write_bytes(marker_path(storage, writing_instant, relative, "APPEND"), b"")
    data = encode_block(block)
    storage.write_bytes(storage.join(relative), data)
    return {
        "fileId": file_id, "path": relative, "prevCommit": base_instant or name_instant, "numWrites": records,
        "numDeletes": 0, "numUpdateWrites": records, "numInserts": 0, "totalWriteBytes": len(data),
        "totalWriteErrors": 0, "tempPath": None, "partitionPath": partition, "totalLogRecords": 0,
        "totalLogFilesCompacted": 0, "totalLogSizeCompacted": 0, "totalUpdatedRecordsCompacted": 0,
        "totalLogBlocks": 0, "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0, "fileSizeInBytes": len(data),
        "minEventTime": None, "maxEventTime": None, "runtimeStats": None, "logVersion": version, "logOffset": 0,
        "baseFile": "", "logFiles": [name], "cdcStats": None, "totalLogFiles": 0, "totalLogReadTimeMs": 0,
    }  # fmt: skip


def _same_instant_logs(storage: Storage, partition: str, file_id: str, instant: str):
    prefix = f".{file_id}_{instant}.log."
    for entry in storage.list(storage.join(partition) if partition else storage.base):
        if entry.name.startswith(prefix) and not entry.name.endswith(".crc"):
            yield entry.name
