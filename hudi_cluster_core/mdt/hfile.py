"""HFile, the key-sorted file format of the metadata table's data blocks, as Apache Hudi 1.1.1's ``hudi-io`` reads it.

Layout (docs/format.md#hfile-layout; checked byte for byte against the HFile inside an MDT log block Hudi 1.1.1
wrote in fixture ``cow_v9_txns_simple_overwrite``, see ``tests/test_mdt_hfile.py``), all integers big-endian:

* data blocks, then the root data index, the (empty) meta index, the file info, and a 4,096-byte trailer;
* every block is a 33-byte header (8-byte magic; int32 on-disk size without header = compressed payload +
  checksum bytes; int32 uncompressed payload size; int64 previous block offset, -1; byte checksum type 0;
  int32 bytes per checksum 16,384; int32 33 + compressed payload size), the payload compressed (one gzip stream
  per block by default, Hudi's ``hoodie.hfile.compression.algorithm`` GZ), then 4 zero bytes per started
  16,384 bytes of header + payload (checksum type 0 = none);
* a data block entry: int32 key length + 12, int32 value length, the HBase-style key (int16 row length, row, byte
  0 family length, int64 ``Long.MAX_VALUE`` timestamp, byte 4 = Put), the value, one byte 0 (MVCC version);
* a root index entry per data block: int64 offset, int32 block size on disk, varint(len(row) + 2), int16
  len(row), the block's first row;
* file info: ``PBUF``, varint length, a protobuf message of repeated (bytes, bytes) pairs;
* trailer: ``TRABLK"$``, varint length, a proto2 trailer message, zero padding, int32 3 (format version 3.0).

Rows are compared as unsigned bytes (the reader's binary search over the root index does the same), so the
writer sorts by UTF-8 bytes and refuses duplicates.
"""

from __future__ import annotations

import bisect
import gzip
import math
import struct
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum

DATA_MAGIC = b"DATABLK*"
INDEX_MAGIC = b"IDXROOT2"
FILE_INFO_MAGIC = b"FILEINF2"
TRAILER_MAGIC = b'TRABLK"$'
PBUF_MAGIC = b"PBUF"
HEADER_SIZE = 33
BYTES_PER_CHECKSUM = 16384
TRAILER_SIZE = 4096
FORMAT_VERSION = 3
COMPARATOR = "org.apache.hudi.io.storage.HoodieHBaseKVComparator"
MAX_BLOCK_BYTES = 1 << 20  # Hudi's default HFile block size: a new data block once the next entry would pass it
_LATEST_TIMESTAMP = (1 << 63) - 1
_PUT = 4
_ENTRY_OVERHEAD = 21  # per entry on top of len(row) + len(value): 4 + 4 + 2 + 1 + 8 + 1 + 1


class Compression(IntEnum):
    """Codec ids of the trailer; Hudi's reader implements only these two."""

    GZ = 1
    NONE = 2


class HFileError(ValueError):
    """Bytes that are not an HFile this module writes (or Hudi writes in MDT log blocks)."""


@dataclass(frozen=True)
class Trailer:
    file_info_offset: int
    load_on_open_offset: int
    uncompressed_data_index_size: int
    data_index_count: int
    meta_index_count: int
    entry_count: int
    num_data_index_levels: int
    first_data_block_offset: int
    last_data_block_offset: int
    comparator: str
    codec: Compression


@dataclass(frozen=True)
class HFile:
    """A decoded HFile: its entries in file order, the root index, the file info (in file order), the trailer."""

    entries: list[tuple[bytes, bytes]]
    index: list[tuple[int, int, bytes]]  # (offset, on-disk size, first row) per data block
    file_info: list[tuple[bytes, bytes]]
    trailer: Trailer
    payloads: dict[int, bytes] = field(default_factory=dict)  # block offset -> uncompressed payload

    def get(self, row: bytes) -> bytes | None:
        """Point lookup the way a reader does it: binary search of the root index, then a scan of one block."""
        firsts = [first for _, _, first in self.index]
        at = bisect.bisect_right(firsts, row) - 1
        if at < 0:
            return None
        for key, value in _entries(self.payloads[self.index[at][0]]):
            if key == row:
                return value
        return None


# ------------------------------------------------------------------------------------------------ encoding


def varint(value: int) -> bytes:
    """Protobuf base-128 varint of a non-negative int."""
    if value < 0:
        raise ValueError(f"varint of a negative number: {value}")
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _proto_int(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value)


def _proto_bytes(number: int, value: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(value)) + value


def _compress(payload: bytes, codec: Compression) -> bytes:
    # mtime 0 (as in Hudi's blocks): the same input gives the same bytes. Level 6 (zlib's default) reproduces the
    # deflate stream of all 23 HFile blocks Hudi 1.1.1 wrote in fixture cow_v9_txns_simple_overwrite byte for byte
    # (Python's default 9: 15 of 23), and is ~18x faster on a bloom filter record (431 KB of mostly-zero base64).
    return gzip.compress(payload, compresslevel=6, mtime=0) if codec is Compression.GZ else payload


def _block(magic: bytes, payload: bytes, codec: Compression) -> bytes:
    body = _compress(payload, codec)
    checksum = 4 * math.ceil((HEADER_SIZE + len(body)) / BYTES_PER_CHECKSUM)
    header = magic + struct.pack(">iiqbii", len(body) + checksum, len(payload), -1, 0, BYTES_PER_CHECKSUM,
                                 HEADER_SIZE + len(body))  # fmt: skip
    return header + body + bytes(checksum)


def _entry(row: bytes, value: bytes) -> bytes:
    return entry_prefix(len(row), len(value)) + row + ENTRY_KEY_SUFFIX + value + ENTRY_SUFFIX


def file_info_entries(entries: Sequence[tuple[bytes, bytes]], extra: Sequence[tuple[bytes, bytes]],
                      create_time_ms: int) -> list[tuple[bytes, bytes]]:  # fmt: skip
    """The file info Hudi 1.1.1 writes, in the order its MDT log blocks have it (``extra``, e.g. the schema, first)."""
    summary = EntrySummary(len(entries), entries[-1][0] if entries else b"", sum(len(k) for k, _ in entries),
                           sum(len(v) for _, v in entries))  # fmt: skip
    return _file_info(summary, extra, create_time_ms)


@dataclass(frozen=True)
class EntrySummary:
    """What the file info and trailer say about all entries: their count, the last row, total row/value bytes."""

    count: int
    last_row: bytes
    row_bytes: int
    value_bytes: int


def _file_info(summary: EntrySummary, extra: Sequence[tuple[bytes, bytes]], create_time_ms: int) -> list[tuple[bytes, bytes]]:
    count = max(summary.count, 1)
    last = summary.last_row
    return [
        *extra,
        (b"hfile.LASTKEY", struct.pack(">h", len(last)) + last),
        (b"hfile.AVG_VALUE_LEN", struct.pack(">i", summary.value_bytes // count)),
        (b"hfile.AVG_KEY_LEN", struct.pack(">i", summary.row_bytes // count)),
        (b"KEY_VALUE_VERSION", struct.pack(">i", 1)),
        (b"MAX_MEMSTORE_TS_KEY", struct.pack(">q", 0)),
        (b"hfile.CREATE_TIME_TS", struct.pack(">q", create_time_ms)),
    ]


def entry_prefix(row_length: int, value_length: int) -> bytes:
    """The bytes of an entry before its row: int32 key length, int32 value length, int16 row length."""
    return struct.pack(">iih", row_length + 12, value_length, row_length)


ENTRY_KEY_SUFFIX = b"\x00" + struct.pack(">qb", _LATEST_TIMESTAMP, _PUT)  # after the row: family, timestamp, type
ENTRY_SUFFIX = b"\x00"  # after the value: the MVCC version


def entry_size(row_length: int, value_length: int) -> int:
    """Bytes of one entry in a data block (what the block size limit counts)."""
    return row_length + value_length + _ENTRY_OVERHEAD


def write_hfile(
    entries: Iterable[tuple[bytes, bytes]],
    *,
    file_info: Sequence[tuple[bytes, bytes]] = (),
    create_time_ms: int = 0,
    codec: Compression = Compression.GZ,
    block_size: int = MAX_BLOCK_BYTES,
) -> bytes:
    """The HFile of ``entries`` (row, value), sorted here by row bytes; duplicate rows are an error.

    ``file_info`` pairs go first in the file info (Hudi puts ``schema`` there), followed by the standard keys.
    A data block is closed when the next entry would take it past ``block_size`` bytes (uncompressed).
    """
    ordered = sorted(entries)
    for (a, _), (b, _) in zip(ordered, ordered[1:]):
        if a == b:
            raise HFileError(f"duplicate HFile key {a!r}")
    blocks: list[list[tuple[bytes, bytes]]] = []
    used = 0
    for row, value in ordered:
        size = entry_size(len(row), len(value))
        if not blocks or (blocks[-1] and used + size > block_size):
            blocks.append([])
            used = 0
        blocks[-1].append((row, value))
        used += size
    payloads = [(block[0][0], b"".join(_entry(row, value) for row, value in block)) for block in blocks]
    summary = EntrySummary(len(ordered), ordered[-1][0] if ordered else b"", sum(len(k) for k, _ in ordered),
                           sum(len(v) for _, v in ordered))  # fmt: skip
    return assemble_hfile(payloads, summary, file_info=file_info, create_time_ms=create_time_ms, codec=codec)


def assemble_hfile(
    data_blocks: Sequence[tuple[bytes, bytes]],
    summary: EntrySummary,
    *,
    file_info: Sequence[tuple[bytes, bytes]] = (),
    create_time_ms: int = 0,
    codec: Compression = Compression.GZ,
) -> bytes:
    """The HFile of ready data blocks: (first row, uncompressed payload of its entries) each, in row order;
    ``summary`` describes all their entries. For writers that build entries in bulk (``mdt.encoded``)."""
    out = bytearray()
    index = bytearray()
    raw_data_bytes = 0
    offsets = []
    for first, payload in data_blocks:
        raw_data_bytes += len(payload)
        encoded = _block(DATA_MAGIC, payload, codec)
        index += struct.pack(">qi", len(out), len(encoded)) + varint(len(first) + 2) + struct.pack(">h", len(first))
        index += first
        offsets.append(len(out))
        out += encoded
    load_on_open = len(out)
    out += _block(INDEX_MAGIC, bytes(index), codec)
    out += _block(INDEX_MAGIC, b"", codec)  # meta index: log-block HFiles have no meta blocks
    file_info_offset = len(out)
    info = b"".join(_proto_bytes(1, _proto_bytes(1, k) + _proto_bytes(2, v))
                    for k, v in _file_info(summary, file_info, create_time_ms))  # fmt: skip
    out += _block(FILE_INFO_MAGIC, PBUF_MAGIC + varint(len(info)) + info, codec)
    trailer = b"".join((
        _proto_int(1, file_info_offset), _proto_int(2, load_on_open), _proto_int(3, raw_data_bytes),
        _proto_int(5, len(data_blocks)), _proto_int(6, 0), _proto_int(7, summary.count), _proto_int(8, 1),
        _proto_int(9, offsets[0] if offsets else 0), _proto_int(10, offsets[-1] if offsets else 0),
        _proto_bytes(11, COMPARATOR.encode()), _proto_int(12, codec),
    ))  # fmt: skip
    framed = TRAILER_MAGIC + varint(len(trailer)) + trailer
    out += framed + bytes(TRAILER_SIZE - len(framed) - 4) + struct.pack(">i", FORMAT_VERSION)
    return bytes(out)


# ------------------------------------------------------------------------------------------------ decoding


def _take(data: bytes, at: int, size: int, what: str) -> bytes:
    """``size`` bytes at ``at``, or :class:`HFileError` when they are not all there (a length or offset that is
    negative or points past the end is corrupt input, never a reason to read less or to loop)."""
    if at < 0 or size < 0 or at + size > len(data):
        raise HFileError(f"{what}: {size} bytes at {at} do not fit in {len(data)} bytes")
    return bytes(data[at : at + size])


def _unpack(layout: str, data: bytes, at: int, what: str) -> tuple:
    return struct.unpack(layout, _take(data, at, struct.calcsize(layout), what))


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise HFileError("truncated or over-long varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _proto_fields(data: bytes) -> list[tuple[int, int | bytes]]:
    fields: list[tuple[int, int | bytes]] = []
    at = 0
    while at < len(data):
        tag, at = _read_varint(data, at)
        if tag & 7 == 0:
            number, at = _read_varint(data, at)
            fields.append((tag >> 3, number))
        elif tag & 7 == 2:
            size, at = _read_varint(data, at)
            fields.append((tag >> 3, _take(data, at, size, "protobuf field")))
            at += size
        else:
            raise HFileError(f"unexpected protobuf wire type {tag & 7}")
    return fields


def _read_block(data: bytes, at: int, magic: bytes, codec: Compression) -> tuple[bytes, int]:
    """(uncompressed payload, on-disk size) of the block at ``at``."""
    if _take(data, at, 8, "block magic") != magic:
        raise HFileError(f"expected block {magic!r} at {at}, found {bytes(data[at : at + 8])!r}")
    on_disk, raw_size, _prev, checksum_type, _per, with_header = _unpack(">iiqbii", data, at + 8, "block header")
    if checksum_type != 0:
        raise HFileError(f"checksum type {checksum_type} at {at}: only 0 (none) is written here")
    if with_header < HEADER_SIZE or on_disk < with_header - HEADER_SIZE:
        raise HFileError(f"block at {at}: header sizes {with_header} and {on_disk} are inconsistent")
    body = _take(data, at + HEADER_SIZE, with_header - HEADER_SIZE, f"block at {at}")
    try:
        payload = gzip.decompress(body) if codec is Compression.GZ else body
    except (OSError, EOFError, zlib.error) as error:  # BadGzipFile is an OSError
        raise HFileError(f"block at {at}: not a gzip stream ({error})") from None
    if len(payload) != raw_size:
        raise HFileError(f"block at {at}: {len(payload)} bytes uncompressed, header says {raw_size}")
    return payload, HEADER_SIZE + on_disk


def _entries(payload: bytes) -> Iterable[tuple[bytes, bytes]]:
    at = 0
    while at < len(payload):
        key_len, value_len = _unpack(">ii", payload, at, "entry lengths")
        key = _take(payload, at + 8, key_len, "entry key")
        (row_len,) = _unpack(">h", key, 0, "entry row length")
        value = _take(payload, at + 8 + key_len, value_len, "entry value")
        yield _take(key, 2, row_len, "entry row"), value
        at += 8 + key_len + value_len + 1


def read_trailer(data: bytes) -> Trailer:
    tail = data[-TRAILER_SIZE:]
    if len(data) < TRAILER_SIZE or tail[:8] != TRAILER_MAGIC:
        raise HFileError("no HFile trailer (TRABLK\"$) in the last 4096 bytes")
    if struct.unpack(">i", tail[-4:])[0] != FORMAT_VERSION:
        raise HFileError(f"HFile version {tail[-4:].hex()}, expected 3")
    size, at = _read_varint(tail, 8)
    values = dict(_proto_fields(_take(tail, at, size, "trailer")))

    def number(n: int) -> int:
        value = values.get(n, 0)
        if not isinstance(value, int):
            raise HFileError(f"trailer field {n} is not a number")
        return value

    comparator = values.get(11, b"")
    if not isinstance(comparator, bytes):
        raise HFileError("trailer field 11 (comparator) is not text")
    try:
        codec, name = Compression(number(12)), comparator.decode()
    except (ValueError, UnicodeDecodeError) as error:
        raise HFileError(f"trailer: {error}") from None
    return Trailer(number(1), number(2), number(3), number(5), number(6), number(7), number(8), number(9),
                   number(10), name, codec)  # fmt: skip


def read_hfile(data: bytes) -> HFile:
    """Decode an HFile (ours, or one Hudi wrote into an MDT log block); raises :class:`HFileError` on any bytes
    that are not one, in time linear in their length."""
    trailer = read_trailer(data)
    codec = trailer.codec
    index_raw, index_size = _read_block(data, trailer.load_on_open_offset, INDEX_MAGIC, codec)
    index: list[tuple[int, int, bytes]] = []
    at = 0
    while at < len(index_raw):
        offset, size = _unpack(">qi", index_raw, at, "index entry")
        if index and offset <= index[-1][0]:  # blocks follow each other; this also bounds the work to the input
            raise HFileError(f"root index: block offset {offset} does not follow {index[-1][0]}")
        _, at = _read_varint(index_raw, at + 12)
        (row_len,) = _unpack(">h", index_raw, at, "index row length")
        index.append((offset, size, _take(index_raw, at + 2, row_len, "index row")))
        at += 2 + row_len
    _read_block(data, trailer.load_on_open_offset + index_size, INDEX_MAGIC, codec)
    info_raw, _ = _read_block(data, trailer.file_info_offset, FILE_INFO_MAGIC, codec)
    if info_raw[:4] != PBUF_MAGIC:
        raise HFileError("file info does not start with PBUF")
    size, at = _read_varint(info_raw, 4)
    file_info = []
    for _, pair in _proto_fields(_take(info_raw, at, size, "file info")):
        if not isinstance(pair, bytes):
            raise HFileError("file info entry is not a message")
        kv = dict(_proto_fields(pair))
        key, value = kv.get(1, b""), kv.get(2, b"")
        if not isinstance(key, bytes) or not isinstance(value, bytes):
            raise HFileError("file info key or value is not bytes")
        file_info.append((key, value))
    entries: list[tuple[bytes, bytes]] = []
    payloads = {}
    for offset, size, first in index:
        payload, on_disk = _read_block(data, offset, DATA_MAGIC, codec)
        if on_disk != size:
            raise HFileError(f"data block at {offset} is {on_disk} bytes on disk, the index says {size}")
        payloads[offset] = payload
        block = list(_entries(payload))
        if not block or block[0][0] != first:
            raise HFileError(f"data block at {offset} does not start with its index key {first!r}")
        entries.extend(block)
    if len(entries) != trailer.entry_count:
        raise HFileError(f"{len(entries)} entries, the trailer says {trailer.entry_count}")
    return HFile(entries, index, file_info, trailer, payloads)
