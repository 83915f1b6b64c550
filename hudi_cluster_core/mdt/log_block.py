"""Hudi log files and blocks for the metadata table, and key -> file-group routing.

Log block (docs/format.md#log-block-framing), big-endian: ``#HUDI#`` | int64 size of the rest of
the block after this field | int32 log format version 1 | int32 block type | header | int64 content length |
content | footer | int64 block size minus these last 8 bytes (a reverse pointer). A header or footer is int32 count, then per entry
int32 key, int32 length, UTF-8 value. An MDT data block is an ``HFILE_DATA_BLOCK`` (type 4) whose content is an
HFile, with header {INSTANT_TIME: T, SCHEMA: block schema} and an empty footer (docs/format.md#mdt-data-blocks).

File names: ``.{fileId}_{T}.log.{version}_{writeToken}`` (docs/format.md#mdt-log-files), one new file per MDT file group
touched by instant ``T``. Routing: a key goes to file group ``abs(hashCode(key)) % n`` of its MDT partition's ``n`` file
groups sorted by file id, with Java's ``String.hashCode`` (docs/format.md#mdt-key-routing).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum

from ..io.log_format import MAGIC, LogFormatError, read_log_blocks
from .encoded import EncodedRecords, java_string_hash, route_encoded
from .hfile import Compression, write_hfile
from .records import MetadataRecord, block_schema_json, hfile_entries

Records = Sequence[MetadataRecord] | EncodedRecords  # what a partition's builder gives (encoded: large partitions)

LOG_FORMAT_VERSION = 1


class BlockType(IntEnum):
    COMMAND = 0
    DELETE = 1
    CORRUPT = 2
    AVRO_DATA = 3
    HFILE_DATA = 4
    PARQUET_DATA = 5
    CDC = 6


class HeaderKey(IntEnum):
    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    IS_PARTIAL = 7
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8


@dataclass(frozen=True)
class LogBlock:
    type: BlockType
    header: dict[HeaderKey, str]
    content: bytes
    footer: dict[HeaderKey, str]


def _encode_map(entries: Mapping[HeaderKey, str]) -> bytes:
    out = bytearray(struct.pack(">i", len(entries)))
    for key, value in entries.items():
        data = value.encode("utf-8")
        out += struct.pack(">ii", int(key), len(data)) + data
    return bytes(out)


def encode_block(block: LogBlock) -> bytes:
    """One block as Hudi's log writer frames it."""
    body = (struct.pack(">ii", LOG_FORMAT_VERSION, int(block.type)) + _encode_map(block.header)
            + struct.pack(">q", len(block.content)) + block.content + _encode_map(block.footer))  # fmt: skip
    return MAGIC + struct.pack(">q", len(body) + 8) + body + struct.pack(">q", len(MAGIC) + 8 + len(body))


def hfile_data_block(instant_time: str, records: Records, *, create_time_ms: int = 0,
                     codec: Compression = Compression.GZ, block_size: int | None = None) -> LogBlock:  # fmt: skip
    """The HFILE_DATA_BLOCK of ``records`` written by instant ``instant_time`` (records sorted by key here)."""
    schema = block_schema_json()
    options = {} if block_size is None else {"block_size": block_size}
    info = [(b"schema", schema.encode("utf-8"))]
    if isinstance(records, EncodedRecords):
        content = records.hfile(file_info=info, create_time_ms=create_time_ms, codec=codec, **options)
    else:
        content = write_hfile(hfile_entries(records), file_info=info, create_time_ms=create_time_ms, codec=codec, **options)
    return LogBlock(BlockType.HFILE_DATA, {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.SCHEMA: schema}, content, {})


def read_blocks(data: bytes, source: str = "log file", *, skip_corrupt: bool = False) -> list[LogBlock]:
    """Every block of a log file (bound-checked: ``io.log_format``). Header keys this code does not know are
    left out. ``skip_corrupt`` goes on past a block that can't be framed, as Hudi's reader does."""
    blocks = []
    for raw in read_log_blocks(data, source, skip_corrupt=skip_corrupt):
        if raw.version != LOG_FORMAT_VERSION:
            raise LogFormatError(f"{source}: log format version {raw.version} at byte {raw.offset} (1 is read)")
        if raw.type not in BlockType._value2member_map_:
            raise LogFormatError(f"{source}: log block type {raw.type} at byte {raw.offset}; known: 0-6")
        blocks.append(LogBlock(BlockType(raw.type), _known(raw.header), raw.content(data), _known(raw.footer)))
    return blocks


def _known(entries: Mapping[int, str]) -> dict[HeaderKey, str]:
    return {HeaderKey(key): value for key, value in entries.items() if key in HeaderKey._value2member_map_}


# ------------------------------------------------------------------------------------------- names, routing


def log_file_name(file_id: str, instant_time: str, write_token: str, version: int = 1) -> str:
    return f".{file_id}_{instant_time}.log.{version}_{write_token}"


def file_group_index(key: str, file_group_count: int) -> int:
    """Index of the MDT file group (of ``file_group_count``, sorted by file id) that holds ``key``."""
    if file_group_count <= 0:
        raise ValueError(f"an MDT partition has at least one file group, not {file_group_count}")
    return abs(abs(java_string_hash(key)) % file_group_count)


def route(records: Records, file_ids: Sequence[str]) -> dict[str, Records]:
    """``records`` by the file id of the MDT file group each belongs to (only groups that get records)."""
    if isinstance(records, EncodedRecords):
        return dict(route_encoded(records, file_ids))
    ordered = sorted(file_ids)
    if len(set(ordered)) != len(ordered):
        raise ValueError(f"duplicate MDT file ids: {ordered}")
    routed: dict[str, list[MetadataRecord]] = {}
    for record in records:
        routed.setdefault(ordered[file_group_index(record.key, len(ordered))], []).append(record)
    return dict(routed)
