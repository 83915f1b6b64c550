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

XXH64 is the ``xxhash`` package's (the C reference implementation).
"""

from __future__ import annotations

import base64
import hashlib
import struct

import xxhash

from .records import partition_identifier

# Hudi's HASH_SEED is the int 0xdabadaba, widened to a long for the 64-bit hash
HUDI_SEED = 0xFFFFFFFFDABADABA


def xxh64(data: bytes, seed: int = HUDI_SEED) -> int:
    """XXH64 of ``data`` as an unsigned 64-bit int."""
    return xxhash.xxh64_intdigest(data, seed=seed)


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
