"""Record keys of the metadata table's stats partitions (docs/format.md#mdt-column-stats-records,
#mdt-partition-stats-records).

Hudi keys ``column_stats``, ``partition_stats`` and ``bloom_filters`` records by hashed ids (Hudi's ``HashID``),
each Base64-encoded with padding and concatenated:

* column id and partition id: XXH64 of the UTF-8 name, seed ``0xdabadaba`` sign-extended to 64 bits, as 8
  big-endian bytes;
* file id: the 16-byte MD5 of the file name.

The partition id hashes the partition path, ``.`` for the non-partitioned table.

* ``column_stats``: column id + partition id + file id;
* ``partition_stats``: column id + partition id;
* ``bloom_filters``: partition id + file id.

XXH64 is written out here (it is short) rather than taken from a package the project does not otherwise need.
"""

from __future__ import annotations

import base64
import hashlib
import struct

from .records import partition_identifier

_MASK = (1 << 64) - 1
_P1 = 0x9E3779B185EBCA87
_P2 = 0xC2B2AE3D27D4EB4F
_P3 = 0x165667B19E3779F9
_P4 = 0x85EBCA77C2B2AE63
_P5 = 0x27D4EB2F165667C5
# Hudi's HASH_SEED is the int 0xdabadaba, widened to a long for the 64-bit hash
HUDI_SEED = 0xFFFFFFFFDABADABA


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (64 - bits))) & _MASK


def _round(acc: int, lane: int) -> int:
    acc = (acc + lane * _P2) & _MASK
    return (_rotl(acc, 31) * _P1) & _MASK


def _merge(acc: int, value: int) -> int:
    acc ^= _round(0, value)
    return (acc * _P1 + _P4) & _MASK


def xxh64(data: bytes, seed: int = HUDI_SEED) -> int:
    """XXH64 of ``data`` as an unsigned 64-bit int (the reference algorithm)."""
    seed &= _MASK
    length = len(data)
    at = 0
    if length >= 32:
        v1, v2, v3, v4 = (seed + _P1 + _P2) & _MASK, (seed + _P2) & _MASK, seed, (seed - _P1) & _MASK
        while at + 32 <= length:
            a, b, c, d = struct.unpack_from("<4Q", data, at)
            v1, v2, v3, v4 = _round(v1, a), _round(v2, b), _round(v3, c), _round(v4, d)
            at += 32
        acc = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _MASK
        for lane in (v1, v2, v3, v4):
            acc = _merge(acc, lane)
    else:
        acc = (seed + _P5) & _MASK
    acc = (acc + length) & _MASK
    while at + 8 <= length:
        (lane,) = struct.unpack_from("<Q", data, at)
        acc ^= _round(0, lane)
        acc = (_rotl(acc, 27) * _P1 + _P4) & _MASK
        at += 8
    if at + 4 <= length:
        (word,) = struct.unpack_from("<I", data, at)
        acc ^= (word * _P1) & _MASK
        acc = (_rotl(acc, 23) * _P2 + _P3) & _MASK
        at += 4
    while at < length:
        acc ^= (data[at] * _P5) & _MASK
        acc = (_rotl(acc, 11) * _P1) & _MASK
        at += 1
    acc ^= acc >> 33
    acc = (acc * _P2) & _MASK
    acc ^= acc >> 29
    acc = (acc * _P3) & _MASK
    return acc ^ (acc >> 32)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def name_id(name: str) -> str:
    """Hudi's ``ColumnIndexID`` / ``PartitionIndexID`` of a name (Base64 of the 8-byte XXH64)."""
    return _b64(struct.pack(">Q", xxh64(name.encode("utf-8"))))


def file_id(file_name: str) -> str:
    """Hudi's ``FileIndexID`` of a file name (Base64 of its MD5)."""
    return _b64(hashlib.md5(file_name.encode("utf-8")).digest())


def column_stats_key(column: str, partition_path: str, file_name: str) -> str:
    return name_id(column) + name_id(partition_identifier(partition_path)) + file_id(file_name)


def column_stats_prefix(column: str, partition_path: str) -> str:
    """The key prefix every ``column_stats`` record of ``column`` in ``partition_path`` starts with."""
    return name_id(column) + name_id(partition_identifier(partition_path))


def partition_stats_key(column: str, partition_path: str) -> str:
    return column_stats_prefix(column, partition_path)


def bloom_filter_key(partition_path: str, file_name: str) -> str:
    return name_id(partition_identifier(partition_path)) + file_id(file_name)
