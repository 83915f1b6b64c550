"""The metadata table's ``record_index`` partition: where every key a clustering moved now lives.

What Apache Hudi 1.1.1's own clustering writes (docs/format.md#mdt-record-index-records, checked record for record
against it in ``tests/test_mdt_record_index.py``): for every key of every new base file, one ``HoodieRecordIndexInfo``
update (record type 5) keyed by the record key, pointing at the new file group, written by the clustering instant:

* ``partitionName``: the data partition path (``""`` for a non-partitioned table);
* a file id ``<uuid>-<n>`` (what Hudi and this service write) or a bare 36-character UUID is stored as
  ``fileIdEncoding`` 0: ``fileIdHighBits``/``fileIdLowBits`` = the UUID's most/least significant 64 bits as
  signed longs, ``fileIndex`` = ``n`` (-1 for a bare UUID), ``fileId`` = ``""``
  (``HoodieMetadataPayload.createRecordIndexUpdate``);
* any other file id is stored raw, as ``fileIdEncoding`` 1: ``fileId`` = the id, the three numbers -1. Hudi
  chooses the encoding by writer config (``_hoodie.writes.fileid.encoding``, 0 unless a writer sets it) and
  fails on a non-UUID id with encoding 0; its readers decode either encoding from the stored field
  (``HoodieTableMetadataUtil.getLocationFromRecordIndexInfo``), so choosing per id is safe and never fails;
* ``instantTime``: the clustering instant as epoch milliseconds. Hudi parses the 17-digit instant as a wall-clock
  time in the **JVM's default time zone** (``HoodieInstantTimeGenerator.parseDateFromInstantTime`` calls
  ``ZoneId.systemDefault()``; read from the 1.1.1 classes), whatever ``hoodie.table.timeline.timezone`` says
  (LOCAL or UTC). So this is done here too: the instant is read in this process's local time zone (``TZ``, else
  ``/etc/localtime``: the same sources a JVM on the same machine uses). A 14-digit instant gets ``999`` ms, as
  Hudi pads it;
* ``position``: null.

Keys deleted in a MERGE_ON_READ log are not in the new files and get no record: Hudi removed them from the
record index when the delete was committed (the deltacommit's record-index delete), and its clustering adds no
deletes either (``HoodieBackedTableMetadataWriter.getRecordIndexAdditionalUpserts`` returns deletes only for
insert_overwrite, insert_overwrite_table and delete_partition). Keys updated in logs are in the new files (the
clustering merged them), so they are repointed like the others.

Keys come from the ``_hoodie_record_key`` column of each new file, one row group at a time; they stay Arrow
arrays (``encoded.EncodedRecords``), with one encoded value per new file.
"""

from __future__ import annotations

import datetime as dt
import logging
import json
import re
import uuid
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..io.storage import Storage
from .commit_files import CommitFiles
from .encoded import EncodedRecords
from .records import MetadataRecord, RecordType, encode_value

log = logging.getLogger(__name__)
RECORD_INDEX_PARTITION = "record_index"
RECORD_KEY_COLUMN = "_hoodie_record_key"
UUID_ENCODING, RAW_ENCODING = 0, 1
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_INDEX = re.compile(r"[0-9]{1,9}")
_INSTANT_FORMAT = "%Y%m%d%H%M%S%f"


INDEX_DEFS_DEFAULT = ".hoodie/.index_defs/index.json"


def unsupported(storage: Storage, table_config: Mapping[str, str]) -> str | None:
    """Why this table's record index can't be kept here (None: it can).

    * Hudi 1.1's **partitioned** record index (``hoodie.metadata.record.level.index.enable``; index definition
      option ``isPartitioned=true``) keeps file groups per data partition and routes keys within them, not with
      the global ``hashCode % n`` used here;
    * without meta columns (``hoodie.populate.meta.fields=false``, virtual keys) Apache Hudi 1.1.1 lets the index
      be enabled and builds it from the key fields, but none of its writes adds a key to it afterwards (a
      ``WriteStatus`` tracks written records only with meta fields, ``HoodieTable.shouldTrackSuccessRecords``;
      an index enabled with the table held no key after three inserts): it is stale from the first write, so it
      is dropped rather than kept half right.
    """
    if str(table_config.get("hoodie.populate.meta.fields", "true")).lower() == "false":
        return ("the table has no meta columns (hoodie.populate.meta.fields=false): Apache Hudi's writers never "
                "add keys to its record index, which is stale")  # fmt: skip
    relative = table_config.get("hoodie.table.index.defs.path") or INDEX_DEFS_DEFAULT
    path = relative if "://" in relative or relative.startswith("/") else storage.join(relative)
    if storage.exists(path):
        definitions = json.loads(storage.read_bytes(path).decode("utf-8")).get("indexDefinitions") or {}
        options = (definitions.get(RECORD_INDEX_PARTITION) or {}).get("indexOptions") or {}
        if str(options.get("isPartitioned", "false")).lower() == "true":
            return "it is a partitioned record index (isPartitioned=true), routed per data partition"
    return None


def instant_epoch_ms(instant_time: str) -> int:
    """Epoch milliseconds of a Hudi instant read as wall-clock time in the local time zone, as Hudi's record
    index does. In a daylight-saving gap or overlap the result equals Java's ``LocalDateTime.atZone``: a time in
    a gap counts with the offset before the gap, a repeated time is taken at its first occurrence."""
    if len(instant_time) == 14:
        instant_time += "999"
    if len(instant_time) != 17 or not instant_time.isdigit():
        raise ValueError(f"instant time {instant_time!r} is not yyyyMMddHHmmssSSS")
    local = dt.datetime.strptime(instant_time, _INSTANT_FORMAT)  # naive: .timestamp() reads it as local time
    seconds = int(local.replace(microsecond=0).timestamp())
    return seconds * 1000 + local.microsecond // 1000


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def record_location(partition_path: str, file_id: str, instant_ms: int) -> dict[str, Any]:
    """The ``HoodieRecordIndexInfo`` of a key in file group ``file_id`` of ``partition_path``."""
    if _UUID.fullmatch(file_id):
        prefix, index = file_id, -1
    else:
        prefix, _, suffix = file_id.rpartition("-")
        index = int(suffix) if _INDEX.fullmatch(suffix) else -2
    if index >= -1 and _UUID.fullmatch(prefix):
        bits = uuid.UUID(prefix).int
        return {"partitionName": partition_path, "fileIdHighBits": _signed64(bits >> 64),
                "fileIdLowBits": _signed64(bits & ((1 << 64) - 1)), "fileIndex": index, "fileId": "",
                "instantTime": instant_ms, "fileIdEncoding": UUID_ENCODING, "position": None}  # fmt: skip
    return {"partitionName": partition_path, "fileIdHighBits": -1, "fileIdLowBits": -1, "fileIndex": -1,
            "fileId": file_id, "instantTime": instant_ms, "fileIdEncoding": RAW_ENCODING, "position": None}  # fmt: skip


def _location_value(partition_path: str, file_id: str, instant_ms: int) -> bytes:
    location = record_location(partition_path, file_id, instant_ms)
    return encode_value(MetadataRecord("", RecordType.RECORD_INDEX, {"recordIndexMetadata": location}))


def record_index_records(commit: CommitFiles) -> EncodedRecords:
    """One record-index update per key of each new base file of the commit, pointing at its new file group (for
    a writer's commit, per new key only: ``CommitFiles.new_keys``)."""
    instant_ms = instant_epoch_ms(commit.instant_time)
    storage = commit.storage
    rows: list[pa.Array] = []
    value_ids: list[np.ndarray] = []
    values: list[bytes] = []
    for partition, stats in sorted(commit.write_stats.items()):
        for stat in stats:
            file_id = stat.get("fileId")
            if not file_id:
                raise ValueError(f"write stat {stat.get('path')} of partition {partition!r} has no fileId")
            value_id = len(values)
            values.append(_location_value(stat.get("partitionPath", partition), file_id, instant_ms))
            if commit.new_keys is not None:  # a writer's commit: only its inserts get a (new) location
                keys = commit.new_keys.get(stat["path"])
                if keys is not None and len(keys):
                    rows.append(keys)
                    value_ids.append(np.full(len(keys), value_id, dtype=np.int32))
                continue
            with storage.fs.open_input_file(storage.join(stat["path"])) as handle:
                parquet = pq.ParquetFile(handle)
                if RECORD_KEY_COLUMN not in parquet.schema_arrow.names:
                    raise ValueError(f"{stat['path']} has no {RECORD_KEY_COLUMN} column: the record index needs "
                                     "the meta columns (hoodie.populate.meta.fields=true)")  # fmt: skip
                for group in range(parquet.num_row_groups):
                    keys = parquet.read_row_group(group, columns=[RECORD_KEY_COLUMN]).column(0).combine_chunks()
                    rows.append(keys)
                    value_ids.append(np.full(len(keys), value_id, dtype=np.int32))
    records = EncodedRecords.concat(rows, value_ids, values)
    unique = records.last_per_key()
    if len(unique) < len(records):  # a table written with duplicates (insert): the index holds one location per key
        log.warning("record index: %d duplicate record key(s) among the new files; one location kept per key, as "
                    "Hudi does", len(records) - len(unique))  # fmt: skip
    return unique

