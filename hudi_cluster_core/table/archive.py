"""The archived timeline: instants archival moved out of the active timeline (docs/format.md#archived-timeline).

Two layouts, by table version:

* **v6** keeps ``.hoodie/<hoodie.archivelog.folder>/.commits_.archive.<N>_<token>``: Hudi log files whose Avro
  data blocks hold ``HoodieArchivedMetaEntry`` records, one per instant *state*. Each block header carries the
  writer schema, so records are decoded with it and no ``.avsc`` of ours is needed.
* **v8/v9** keep the LSM history in ``.hoodie/timeline/history/``: ``_version_`` names the live
  ``manifest_<N>``, which lists parquet files of ``HoodieLSMTimelineInstant`` rows (completed instants only);
  their ``metadata`` and ``plan`` columns are one-record Avro containers like active timeline files.

Listing reads only the instant fields (a projected Avro schema for v6, three parquet columns for v8+); commit
metadata and clustering plans are read when asked for. The file-system view never needs the archive (see
``view.py``); ``show --archived`` does.
"""

from __future__ import annotations

import io
import json
import posixpath
import struct
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterator, cast

import fastavro
import pyarrow.parquet as pq

from ..avro import decode_avro, decode_commit_metadata
from ..errors import TableError
from ..io.log_format import LogFormatError, read_log_blocks
from ..io.storage import Storage
from .naming import LOG_FILE_RE
from .properties import TableConfig
from .timeline import WRITE_ACTIONS, State

AVRO_DATA_BLOCK = 3  # HoodieLogBlockType ordinal
SCHEMA_HEADER_KEY = 2  # HeaderMetadataType.SCHEMA ordinal
ARCHIVE_FILE_PREFIX = ".commits_.archive"
LSM_VERSION_FILE = "_version_"
LSM_MANIFEST_PREFIX = "manifest_"

# The instant fields of HoodieArchivedMetaEntry, as a reader schema: Avro schema resolution skips the bulky
# metadata fields while listing. Fields an old writer lacks read as null.
_ENTRY_FIELDS = ("commitTime", "actionType", "actionState", "stateTransitionTime")
_ENTRY_PROJECTION: dict[str, Any] = cast("dict[str, Any]", fastavro.parse_schema({
    "type": "record", "name": "HoodieArchivedMetaEntry", "namespace": "org.apache.hudi.avro.model",
    "fields": [{"name": n, "type": ["null", "string"], "default": None} for n in _ENTRY_FIELDS],
}))  # fmt: skip
# Where a v6 archived record keeps its payload, by state (MetadataConversionUtils): completed write metadata,
# then the clustering plan of the requested state.
_COMMIT_FIELDS = ("hoodieReplaceCommitMetadata", "hoodieCommitMetadata")
_PLAN_FIELD = "hoodieRequestedReplaceMetadata"


@dataclass(frozen=True)
class ArchivedInstant:
    time: str
    action: str  # the action of its latest archived state (a completed compaction is "commit")
    state: State
    completion_time: str | None  # v6: stateTransitionTime of the completed record, when the writer kept it
    source: str  # the archive file it was read from

    @property
    def is_completed(self) -> bool:
        return self.state is State.COMPLETED


@dataclass(frozen=True)
class _LogRecord:
    """Where one v6 archived record's bytes are, to decode them in full when asked."""

    path: str
    offset: int
    length: int
    schema_text: str


@dataclass(frozen=True)
class _LsmRow:
    path: str


_Locator = _LogRecord | _LsmRow


class ArchivedTimeline:
    """Instants of the archive, one per requested time in its latest state, sorted by time."""

    def __init__(self, storage: Storage, config: TableConfig):
        self.storage = storage
        self.config = config
        self._locators: dict[tuple[str, State], _Locator] = {}
        self._schemas: dict[str, dict] = {}
        self._last_read: tuple[str, bytes] | None = None  # metadata of neighbouring instants shares a file
        self._last_column: tuple[str, str, dict[str, bytes | None]] | None = None  # (file, column, time -> value)

    @property
    def directory(self) -> str:
        props = self.config.props
        if self.config.timeline_layout_version >= 2:
            return self.storage.join(
                ".hoodie", self.config.timeline_dir, props.get("hoodie.timeline.history.path", "history")
            )
        return self.storage.join(".hoodie", props.get("hoodie.archivelog.folder", "archived"))

    @cached_property
    def instants(self) -> tuple[ArchivedInstant, ...]:
        found = self._lsm_instants() if self.config.timeline_layout_version >= 2 else self._log_instants()
        latest: dict[str, ArchivedInstant] = {}
        for instant in sorted(found, key=lambda i: (i.time, i.state)):
            latest[instant.time] = instant
        return tuple(sorted(latest.values(), key=lambda i: i.time))

    def completed(self, actions=WRITE_ACTIONS) -> list[ArchivedInstant]:
        return [i for i in self.instants if i.is_completed and i.action in actions]

    def commit_metadata(self, instant: ArchivedInstant) -> dict:
        """Completed commit metadata in the shape ``decode_commit_metadata`` gives for active instants."""
        locator = self._locator(instant, State.COMPLETED)
        if isinstance(locator, _LsmRow):
            data = self._lsm_column(locator.path, instant.time, "metadata")
            return decode_commit_metadata(data or b"", layout_version=2, source=f"{locator.path} ({instant.time})")
        record = self._log_record(locator)
        raw = next((record[f] for f in _COMMIT_FIELDS if record.get(f) is not None), None)
        return _commit_shape(raw or {}, f"{locator.path} ({instant.time})")

    def clustering_plan(self, instant: ArchivedInstant) -> dict | None:
        """The HoodieRequestedReplaceMetadata archived with a replacecommit, if it is a clustering plan."""
        self.instants  # listing fills the locators
        if (instant.time, State.REQUESTED) in self._locators:
            plan = self._log_record(self._locators[instant.time, State.REQUESTED]).get(_PLAN_FIELD)
        else:
            locator = self._locator(instant, State.COMPLETED)
            if not isinstance(locator, _LsmRow):
                return None
            data = self._lsm_column(locator.path, instant.time, "plan")
            plan = decode_avro(data, source=f"{locator.path} ({instant.time})") if data else None
        if not plan or plan.get("operationType") != "CLUSTER" or not plan.get("clusteringPlan"):
            return None
        return plan

    @cached_property
    def completed_clustering(self) -> list[ArchivedInstant]:
        """Archived replacecommits that were clusterings (operationType CLUSTER, as on the active timeline)."""
        return [
            i for i in self.completed(("replacecommit",))
            if self.commit_metadata(i).get("operationType") == "CLUSTER"
        ]  # fmt: skip

    def _locator(self, instant: ArchivedInstant, state: State) -> _Locator:
        self.instants  # listing fills the locators
        try:
            return self._locators[instant.time, state]
        except KeyError:
            raise TableError(
                f"{self.directory}: the archive holds no {state.name.lower()} record of instant {instant.time}"
            ) from None

    # ------------------------------------------------------------------------------ v6: Hudi log files

    def _log_instants(self) -> list[ArchivedInstant]:
        found = []
        for path in self._archive_log_files():
            data = self._read(path)
            for record in self._records(path, data):
                fields = self._decode(record, data, _ENTRY_PROJECTION)
                if not fields.get("commitTime") or not fields.get("actionType"):
                    raise TableError(f"{path}: an archived record has no commitTime or actionType")
                state_name = (fields.get("actionState") or "COMPLETED").upper()  # old archives: completed only
                if state_name not in State.__members__:
                    raise TableError(f"{path}: archived instant {fields['commitTime']} has state {state_name!r}")
                state = State[state_name]
                completion = fields.get("stateTransitionTime") if state is State.COMPLETED else None
                found.append(ArchivedInstant(fields["commitTime"], fields["actionType"], state, completion, path))
                self._locators[fields["commitTime"], state] = record
        return found

    def _archive_log_files(self) -> list[str]:
        """Archive log files, oldest first (by log version, then write token)."""
        files = []
        for entry in self.storage.list(self.directory):
            match = LOG_FILE_RE.match(entry.name)
            if not entry.is_dir and entry.name.startswith(ARCHIVE_FILE_PREFIX) and match:
                files.append((int(match.group(4)), match.group(6) or "", entry.path))
        return [path for _, _, path in sorted(files)]

    def _records(self, path: str, data: bytes) -> Iterator[_LogRecord]:
        """Every record of every Avro data block, in file order."""
        for schema_text, start, end in _avro_blocks(path, data):
            version, = _unpack(">i", data, start, end, path)
            position = start + 4
            count = None
            if version >= 2:  # HoodieAvroDataBlockVersion.hasRecordCount
                count, = _unpack(">i", data, position, end, path)
                position += 4
            read = 0
            while (count is None and position < end) or (count is not None and read < count):
                length, = _unpack(">i", data, position, end, path)
                position += 4
                if length < 0 or position + length > end:
                    raise TableError(f"{path}: corrupt archived record at byte {position}: length {length}")
                yield _LogRecord(path, position, length, schema_text)
                position += length
                read += 1

    def _writer_schema(self, schema_text: str) -> dict:
        if schema_text not in self._schemas:
            self._schemas[schema_text] = cast("dict[str, Any]", fastavro.parse_schema(json.loads(schema_text)))
        return self._schemas[schema_text]

    def _log_record(self, locator: _Locator) -> dict:
        assert isinstance(locator, _LogRecord)
        return self._decode(locator, self._read(locator.path), None)

    def _decode(self, record: _LogRecord, data: bytes, reader_schema: dict | None) -> dict:
        try:
            writer_schema = self._writer_schema(record.schema_text)
            return cast("dict[str, Any]", fastavro.schemaless_reader(
                io.BytesIO(data[record.offset : record.offset + record.length]), writer_schema, reader_schema
            ))
        except Exception as exc:  # fastavro raises many types on corrupt input; all mean the same to a user
            reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
            raise TableError(f"{record.path}: corrupt archived record at byte {record.offset} ({reason})") from None

    # ------------------------------------------------------------------------------------- v8+: LSM history

    def _lsm_instants(self) -> list[ArchivedInstant]:
        found = []
        for path in self._lsm_files():
            table = self._read_parquet(path, ["instantTime", "completionTime", "action"])
            for row in table.to_pylist():
                if not row["instantTime"] or not row["action"]:
                    raise TableError(f"{path}: an archived instant has no instantTime or action")
                found.append(ArchivedInstant(row["instantTime"], row["action"], State.COMPLETED, row["completionTime"], path))
                self._locators[row["instantTime"], State.COMPLETED] = _LsmRow(path)
        return found

    def _lsm_files(self) -> list[str]:
        """The parquet files the live manifest lists (``_version_``, else the highest manifest number)."""
        version_path = posixpath.join(self.directory, LSM_VERSION_FILE)
        version = None
        if self.storage.exists(version_path):
            text = self._read(version_path).decode("ascii", "replace").strip()
            if not text.isdigit():
                raise TableError(f"{version_path}: expected a manifest number, found {text[:40]!r}")
            version = int(text)
        else:
            numbers = [
                int(e.name[len(LSM_MANIFEST_PREFIX):]) for e in self.storage.list(self.directory)
                if e.name.startswith(LSM_MANIFEST_PREFIX) and e.name[len(LSM_MANIFEST_PREFIX):].isdigit()
            ]  # fmt: skip
            version = max(numbers, default=None)
        if version is None:
            return []
        manifest = posixpath.join(self.directory, f"{LSM_MANIFEST_PREFIX}{version}")
        try:
            files = [f["fileName"] for f in json.loads(self._read(manifest))["files"]]
        except (ValueError, KeyError, TypeError) as exc:
            raise TableError(f"{manifest}: not an LSM timeline manifest ({type(exc).__name__}: {exc})") from None
        return [posixpath.join(self.directory, name) for name in sorted(files)]

    def _lsm_column(self, path: str, instant_time: str, column: str) -> bytes | None:
        if not (self._last_column and self._last_column[:2] == (path, column)):
            table = self._read_parquet(path, ["instantTime", column])
            values = dict(zip(table.column("instantTime").to_pylist(), table.column(column).to_pylist()))
            self._last_column = (path, column, values)
        values = self._last_column[2]
        if instant_time not in values:
            raise TableError(f"{path}: archived instant {instant_time} is missing")
        return values[instant_time]

    def _read_parquet(self, path: str, columns: list[str]):
        try:
            return pq.read_table(path, columns=columns, filesystem=self.storage.fs)
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            raise TableError(f"{path}: unreadable LSM timeline file ({' '.join(str(exc).split())})") from None

    # -------------------------------------------------------------------------------------------- shared

    def _read(self, path: str) -> bytes:
        if self._last_read and self._last_read[0] == path:
            return self._last_read[1]
        try:
            data = self.storage.read_bytes(path)
        except OSError as exc:
            raise TableError(f"archive file {path} cannot be read: {exc}") from None
        self._last_read = (path, data)
        return data


def _unpack(fmt: str, data: bytes, position: int, end: int, path: str) -> tuple:
    size = struct.calcsize(fmt)
    if position < 0 or position + size > end:
        raise TableError(f"{path}: corrupt or truncated Hudi log file at byte {position}")
    return struct.unpack_from(fmt, data, position)


def _avro_blocks(path: str, data: bytes) -> Iterator[tuple[str, int, int]]:
    """(writer schema, content start, content end) of each Avro data block of an archive log file."""
    try:
        for block in read_log_blocks(data, path):
            if block.type != AVRO_DATA_BLOCK:
                continue
            if SCHEMA_HEADER_KEY not in block.header:
                raise TableError(f"{path}: Avro data block at byte {block.offset} has no schema in its header")
            yield block.header[SCHEMA_HEADER_KEY], block.content_start, block.content_end
    except LogFormatError as exc:
        raise TableError(str(exc)) from None


def _commit_shape(raw: dict, source: str) -> dict:
    """A decoded archived HoodieCommitMetadata/HoodieReplaceCommitMetadata in the active timeline's shape."""
    if not isinstance(raw, dict):
        raise TableError(f"{source}: archived commit metadata is not a record")
    return {
        "partitionToWriteStats": {p: list(stats or []) for p, stats in (raw.get("partitionToWriteStats") or {}).items()},
        "partitionToReplaceFileIds": dict(raw.get("partitionToReplaceFileIds") or {}),
        "compacted": bool(raw.get("compacted")),
        "extraMetadata": dict(raw.get("extraMetadata") or {}),
        "operationType": raw.get("operationType"),
    }


def load_archived_timeline(storage: Storage, config: TableConfig) -> ArchivedTimeline:
    """The table's archive (read lazily: nothing is read until its instants are asked for)."""
    return ArchivedTimeline(storage, config)
