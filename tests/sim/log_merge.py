"""MERGE_ON_READ slices read in Python, for the simulation of the consistent-bucket table.

* :class:`SimFileGroupReader` stands for hudi-rs's file-group reader (``run/slice_reader.py``), which reaches the
  store itself and cannot see the simulated one: it reads the slice's base file and log files through the
  simulated store (every read a scheduling point) and merges them as hudi-rs does on a version 9 table: every
  record of the files it is given, by record key, the highest ordering value winning, a tie going to the later
  record (the log over the base file, a later log over an earlier one);
* :func:`latest_slice_rows` is the checks' reader, by Apache Hudi's rules for a snapshot query: the file group's
  latest slice (a log file joins the slice with the largest base instant at or before its instant's completion
  time), and, in it, only the log blocks of committed instants (Hudi's log scanner skips the others).

Only Avro data blocks are decoded: the writers of the simulation write no other kind of block.
"""

from __future__ import annotations

import io
import json
import re
import struct
from typing import Callable, Iterable, Iterator

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

from hudi_cluster_core.mdt.log_block import BlockType, HeaderKey, read_blocks

KEY, ORDERING = "_hoodie_record_key", "ts"  # the simulated table's ordering field (``tests/sim/simulation.py``)
LOG_FILE = re.compile(r"^\.(.+?)_(\d{17})\.log\.(\d+)_(.*)$")  # .{fileId}_{instant}.log.{version}_{token}


def log_blocks(data: bytes, source: str) -> list[tuple[str, list[dict]]]:
    """(the writing instant, its records) of each data block of one log file, in file order."""
    found = []
    for block in read_blocks(data, source):
        if block.type != BlockType.AVRO_DATA:
            raise ValueError(f"{source}: a {block.type.name} block; the simulation's writers write Avro data blocks")
        schema = fastavro.parse_schema(json.loads(block.header[HeaderKey.SCHEMA]))
        content = io.BytesIO(block.content)
        _version, count = struct.unpack(">ii", content.read(8))
        records = []
        for _ in range(count):
            (length,) = struct.unpack(">i", content.read(4))
            records.append(fastavro.schemaless_reader(io.BytesIO(content.read(length)), schema, None))
        found.append((block.header[HeaderKey.INSTANT_TIME], records))
    return found


def merge(base: Iterable[dict], logs: Iterable[Iterable[dict]]) -> list[dict]:
    """Records by key: the highest ordering value wins, a later record winning a tie."""
    merged: dict[str, dict] = {}
    for records in (base, *logs):
        for record in records:
            held = merged.get(record[KEY])
            if held is None or held[ORDERING] <= record[ORDERING]:
                merged[record[KEY]] = record
    return list(merged.values())


class SimFileGroupReader:
    """hudi-rs's ``create_file_group_reader_with_options(...)``, on the simulated store."""

    def __init__(self, storage):
        self.storage = storage

    def _rows(self, base: str, logs: list[str]) -> pa.RecordBatch:
        rows = pq.read_table(self.storage.join(base), filesystem=self.storage.fs)
        blocks = [records for log in logs for _, records in log_blocks(self.storage.read_bytes(self.storage.join(log)), log)]
        merged = merge(rows.to_pylist(), blocks)
        return pa.Table.from_pylist(merged, schema=rows.schema).combine_chunks().to_batches()[0] if merged else \
            pa.RecordBatch.from_pylist([], schema=rows.schema)

    def read_file_slice_from_paths(self, base: str, logs: list[str]) -> pa.RecordBatch:
        return self._rows(base, logs)

    def read_file_slice_from_paths_stream(self, base: str, logs: list[str], options) -> Iterator[pa.RecordBatch]:
        yield self._rows(base, logs)


def slice_reader_on(storage_of: Callable[[object], object]):
    """``SliceReader._reader`` answering with a :class:`SimFileGroupReader` of the reader's storage."""

    def reader(self):
        if self._rs_reader is None:
            self._rs_reader = SimFileGroupReader(storage_of(self))
        return self._rs_reader

    return reader


def latest_slice_rows(base: tuple[str, list[dict]] | None, logs: dict[str, bytes], completion: dict[str, str],
                      is_committed: Callable[[str], bool], base_instants: list[str]) -> list[dict]:  # fmt: skip
    """The rows of one file group's latest slice. ``base``: the latest committed base file's (instant, rows);
    ``logs``: name -> bytes of the group's log files whose name's instant is committed; ``completion``: instant ->
    completion time on the active timeline; ``base_instants``: every committed base file's instant."""
    latest = base[0] if base else None
    in_slice = []
    for name in sorted(logs, key=_log_order):
        instant = LOG_FILE.match(name).group(2)
        moment = completion.get(instant, instant)
        joined = max((b for b in base_instants if b <= moment), default=None)
        if joined == latest:
            in_slice.append(name)
    blocks = [records for name in in_slice for instant, records in log_blocks(logs[name], name) if is_committed(instant)]
    return merge(base[1] if base else [], blocks)


def _log_order(name: str) -> tuple[str, int, str]:
    match = LOG_FILE.match(name)
    return match.group(2), int(match.group(3)), match.group(4)
