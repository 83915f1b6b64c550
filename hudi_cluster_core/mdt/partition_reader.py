"""Reading one metadata-table partition's current records, as Hudi's reader merges them
(docs/format.md#mdt-valid-instants).

A file group of an MDT partition is a base HFile (written by the partition's initialisation or an MDT compaction)
plus log files of later deltacommits, each one or more HFILE_DATA blocks. What counts:

* the latest base file whose instant completed on the MDT timeline;
* log blocks of MDT deltacommits that completed after that base file's instant (the v8+ slice rule) and whose
  instant is not pending on the data timeline: Hudi reads only blocks of instants the data table completed (or
  that the data table never had, such as the partition's initialisation ``0000000000000000N``).

Records of one key are returned oldest first; callers merge them (``HoodieMetadataPayload`` semantics differ by
partition). DELETE blocks (a clean's tombstones for files it removed) are skipped: the callers here look up only
keys of files that are still live, which no clean has removed.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from typing import Any

import fastavro

from ..io.storage import Storage, in_parallel
from ..table.metadata_table import metadata_storage, metadata_timeline
from ..table.naming import parse_base_file, parse_log_file
from ..table.properties import load_table_config
from ..table.timeline import Timeline, load_timeline
from .hfile import read_hfile
from .log_block import BlockType, HeaderKey, read_blocks


def _decoder(schema_text: str) -> Callable[[bytes], dict[str, Any]]:
    schema = fastavro.parse_schema(json.loads(schema_text))

    def decode(value: bytes) -> dict[str, Any]:
        record = fastavro.schemaless_reader(io.BytesIO(value), schema, None, return_record_name=True,
                                            return_record_name_override=True)  # fmt: skip
        assert isinstance(record, dict)
        return record

    return decode


def _hfile_records(content: bytes, schema_text: str, wanted: Callable[[str], bool]) -> Iterator[tuple[str, dict]]:
    hfile = read_hfile(content)
    file_schema = dict(hfile.file_info).get(b"schema")
    decode = _decoder(schema_text or (file_schema or b"").decode("utf-8"))
    for row, value in hfile.entries:
        key = row.decode("utf-8")
        if wanted(key):
            yield key, decode(value)


def read_partition(storage: Storage, partition: str, wanted: Callable[[str], bool], *, mdt_timeline: Timeline | None = None,
                   data_pending: set[str] | None = None) -> dict[str, list[dict]]:  # fmt: skip
    """MDT key -> its records (decoded ``HoodieMetadataRecord`` dicts, oldest first) for keys ``wanted`` accepts,
    over every file group of MDT ``partition``. ``mdt_timeline`` and ``data_pending`` (the instants pending on the
    data timeline): when the caller has read them (else they are read here)."""
    mdt = metadata_storage(storage)
    timeline = mdt_timeline or metadata_timeline(storage)
    mdt_done = {i.time: i.completion_time or i.time for i in timeline.completed(("deltacommit", "commit"))}
    if data_pending is None:
        data_pending = {i.time for i in load_timeline(storage, load_table_config(storage)).pending()}

    bases: dict[str, tuple[str, str]] = {}  # file id -> (instant, file name) of its latest committed base
    logs: dict[str, list[tuple[str, int, str, str]]] = {}
    for entry in mdt.list(mdt.join(partition)):
        if entry.is_dir:
            continue
        log = parse_log_file(entry.name)
        if log is not None:
            if log.instant in mdt_done and log.instant not in data_pending:
                logs.setdefault(log.file_id, []).append((mdt_done[log.instant], log.version, log.write_token, entry.name))
            continue
        base = parse_base_file(entry.name)
        if base is not None and base.instant in mdt_done and base.instant > bases.get(base.file_id, ("", ""))[0]:
            bases[base.file_id] = (base.instant, entry.name)

    found: dict[str, list[dict]] = {}
    for file_id in sorted(set(bases) | set(logs)):
        base_instant, base_name = bases.get(file_id, ("", ""))
        # compacted into the base file: the log files of deltacommits completed at or before its instant
        names = [name for completion, _, _, name in sorted(logs.get(file_id, [])) if completion > base_instant]
        contents = _read_all(mdt, [mdt.join(partition, n) for n in ([base_name] if base_name else []) + names])
        if base_name:
            for key, record in _hfile_records(contents.pop(0), "", wanted):
                found.setdefault(key, []).append(record)
        for name, content in zip(names, contents):
            for block in read_blocks(content, f"{partition}/{name}", skip_corrupt=True):
                if block.type is BlockType.HFILE_DATA:
                    for key, record in _hfile_records(block.content, block.header.get(HeaderKey.SCHEMA, ""), wanted):
                        found.setdefault(key, []).append(record)
                elif block.type is not BlockType.DELETE:
                    raise ValueError(f"MDT log {partition}/{name}: block type {block.type.name} is not read here")
    return found


def _read_all(storage: Storage, paths: list[str]) -> list[bytes]:
    """The bytes of ``paths`` (one file group's base and log files), read at once on an object store (each is a
    round trip, and a file group's log files are many until the MDT compacts them); one by one on local files."""
    return in_parallel(storage.read_bytes, paths, storage.request_threads)
