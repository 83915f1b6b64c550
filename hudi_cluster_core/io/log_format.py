"""Framing of Hudi log files: the one bound-checked reader of their blocks (archived timelines, metadata table).

A log file is a sequence of blocks, big-endian (docs/format.md#log-block-framing): ``#HUDI#`` |
int64 size of the rest of the block after this field | int32 log format version (1) | int32 block type |
header | int64 content length | content | footer | int64 block size minus these last 8 bytes. A header or footer
is int32 count, then per entry int32 key, int32 length, UTF-8 value.

Every offset is checked against the block's and the file's bounds before it is read: a damaged file gives
:class:`LogFormatError` naming the file and the byte, never a wrong slice. Hudi's own reader treats a block it
can't frame (a writer that died mid-block leaves one at the end of the file) as a corrupt block and goes on at
the next magic; ``skip_corrupt=True`` does the same, for readers that must see what Hudi sees.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

MAGIC = b"#HUDI#"
_PREFIX = len(MAGIC) + 8  # magic + int64 block size


class LogFormatError(ValueError):
    """Bytes that are not a well-formed sequence of Hudi log blocks."""


@dataclass(frozen=True)
class RawBlock:
    """One framed block; its content is ``data[content_start:content_end]`` of the file's bytes."""

    offset: int
    version: int
    type: int
    header: dict[int, str]
    content_start: int
    content_end: int
    footer: dict[int, str]
    end: int  # where the next block starts

    def content(self, data: bytes) -> bytes:
        return data[self.content_start : self.content_end]


def _unpack(fmt: str, data: bytes, at: int, end: int, source: str) -> tuple:
    size = struct.calcsize(fmt)
    if at < 0 or at + size > end:
        raise LogFormatError(f"{source}: corrupt or truncated Hudi log file at byte {at}")
    return struct.unpack_from(fmt, data, at)


def _metadata_map(data: bytes, at: int, end: int, source: str) -> tuple[dict[int, str], int]:
    (count,) = _unpack(">i", data, at, end, source)
    at += 4
    if count < 0:
        raise LogFormatError(f"{source}: corrupt Hudi log block header at byte {at - 4}: {count} entries")
    entries = {}
    for _ in range(count):
        key, length = _unpack(">ii", data, at, end, source)
        at += 8
        if length < 0 or at + length > end:
            raise LogFormatError(f"{source}: corrupt Hudi log block header at byte {at}: value of {length} bytes")
        entries[key] = data[at : at + length].decode("utf-8", "replace")
        at += length
    return entries, at


def _frame(data: bytes, at: int, source: str) -> RawBlock:
    total = len(data)
    if data[at : at + len(MAGIC)] != MAGIC:
        raise LogFormatError(f"{source}: corrupt Hudi log file: no block magic at byte {at}")
    (size,) = _unpack(">q", data, at + len(MAGIC), total, source)
    end = at + _PREFIX + size
    if size < 0 or end > total:
        raise LogFormatError(f"{source}: truncated Hudi log block at byte {at} (size {size}, file {total} bytes)")
    version, kind = _unpack(">ii", data, at + _PREFIX, end, source)
    if version < 1:
        raise LogFormatError(f"{source}: Hudi log format version {version} at byte {at} is not supported (1 is)")
    header, cursor = _metadata_map(data, at + _PREFIX + 8, end, source)
    (length,) = _unpack(">q", data, cursor, end, source)
    cursor += 8
    if length < 0 or cursor + length > end:
        raise LogFormatError(f"{source}: corrupt Hudi log block at byte {at}: content length {length}")
    footer, after = _metadata_map(data, cursor + length, end, source)
    (reverse,) = _unpack(">q", data, after, end, source)
    if after + 8 != end or reverse != end - at - 8:
        raise LogFormatError(f"{source}: corrupt Hudi log block at byte {at}: its sizes do not add up")
    return RawBlock(at, version, kind, header, cursor, cursor + length, footer, end)


def read_log_blocks(data: bytes, source: str, *, skip_corrupt: bool = False) -> Iterator[RawBlock]:
    """Every block of a log file's bytes, in order. ``source`` names the file in errors."""
    at = 0
    while at < len(data):
        try:
            block = _frame(data, at, source)
        except LogFormatError:
            if not skip_corrupt:
                raise
            following = data.find(MAGIC, at + 1)
            if following < 0:
                return
            at = following
            continue
        yield block
        at = block.end
