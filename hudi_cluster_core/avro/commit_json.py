"""Completed-commit metadata in both timeline layouts: v6 Jackson JSON (layout 1) and Avro (layout 2).

Decoding returns one shape for both layouts: ``partitionToWriteStats``, ``partitionToReplaceFileIds`` ({} unless
a replacecommit), ``compacted``, ``extraMetadata``, ``operationType``; every write stat carries all 31
HoodieWriteStat fields (absent ones None) plus any JSON-only keys Hudi printed (e.g. ``recordsStats``).

Layout 1 is the output of Jackson's ``writerWithDefaultPrettyPrinter()`` on Hudi's POJOs, reproduced byte for
byte: ``"key" : value``, two-space indent, arrays inline (``[ {`` ... ``} ]``), empty containers ``{ }`` and
``[ ]``, no trailing newline. Jackson prints a POJO's properties in field declaration order, so commit and
write-stat keys follow the 0.14/0.15 fixture files, not the Avro field order. ``partitionToReplaceFileIds``
goes last because Jackson lists superclass (HoodieCommitMetadata) fields first; no v6 replacecommit fixture
confirms it, and Jackson readers do not depend on key order.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from ..errors import PlanError, TableError
from .codec import MAGIC, decode_avro, encode_avro, record_fields, validate

_COMMIT_KEYS = ("partitionToWriteStats", "compacted", "extraMetadata", "operationType")
_REPLACE_KEY = "partitionToReplaceFileIds"
_ACCEPTED_KEYS = frozenset((*_COMMIT_KEYS, _REPLACE_KEY, "version"))

# HoodieWriteStat as Jackson prints it (Hudi 0.14/0.15 fixtures). Java `long` fields cannot be null, so
# Jackson always prints a number for them; the others print null when unset.
_JACKSON_STAT = (
    "fileId", "path", "cdcStats", "prevCommit", "numWrites", "numDeletes", "numUpdateWrites", "numInserts",
    "totalWriteBytes", "totalWriteErrors", "tempPath", "partitionPath", "totalLogRecords",
    "totalLogFilesCompacted", "totalLogSizeCompacted", "totalUpdatedRecordsCompacted", "totalLogBlocks",
    "totalCorruptLogBlock", "totalRollbackBlocks", "fileSizeInBytes", "minEventTime", "maxEventTime",
    "runtimeStats",
)  # fmt: skip
_JACKSON_NULLABLE = frozenset((
    "fileId", "path", "cdcStats", "prevCommit", "tempPath", "partitionPath", "minEventTime", "maxEventTime",
    "runtimeStats",
))  # fmt: skip
_JACKSON_RUNTIME = ("totalScanTime", "totalUpsertTime", "totalCreateTime")


def _write_stat_fields() -> list[str]:
    return [f["name"] for f in record_fields("HoodieCommitMetadata", "HoodieWriteStat")]


# ------------------------------------------------------------------------------------------------ decode


def decode_commit_metadata(data: bytes, *, layout_version: int, source: str = "<bytes>") -> dict:
    """Completed commit/deltacommit/replacecommit (or COW ``.inflight``) content in the normalised shape."""
    if not data:
        return {}
    if data.startswith(MAGIC):  # Hudi 1.x readers also try Avro first, whatever the layout
        raw = decode_avro(data, source=source)
    elif layout_version >= 2:
        raise TableError(
            f"{source}: not an Avro file (starts with {bytes(data[:8])!r}); "
            f"timeline layout {layout_version} stores commit metadata as Avro HoodieCommitMetadata"
        )
    else:
        try:
            raw = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            expected = "expected Hudi's HoodieCommitMetadata JSON"
            raise TableError(f"{source}: not JSON commit metadata ({exc}); {expected}") from None
    try:
        return _normalise(raw, source)
    except (AttributeError, TypeError, ValueError):
        raise TableError(f"{source}: commit metadata does not have HoodieCommitMetadata's shape") from None


def _normalise(raw: Mapping, source: str) -> dict:
    if not isinstance(raw, Mapping):
        raise TableError(f"{source}: commit metadata is a JSON {type(raw).__name__}; expected an object")
    names = _write_stat_fields()
    stats = {}
    for partition, items in (raw.get("partitionToWriteStats") or {}).items():
        if not isinstance(items, list) or not all(isinstance(s, Mapping) for s in items):
            raise TableError(f"{source}: partitionToWriteStats[{partition!r}] is not a list of write stats")
        stats[partition] = [{**s, **{n: None for n in names if n not in s}} for s in items]
    return {
        "partitionToWriteStats": stats,
        _REPLACE_KEY: dict(raw.get(_REPLACE_KEY) or {}),
        "compacted": bool(raw.get("compacted")),
        "extraMetadata": dict(raw.get("extraMetadata") or {}),
        "operationType": raw.get("operationType"),
    }


# ------------------------------------------------------------------------------------------------ encode


def encode_commit_metadata(meta: Mapping, *, layout_version: int, replace: bool) -> bytes:
    """Commit metadata as Hudi writes the completed file: Jackson JSON (layout 1) or Avro (layout 2).

    ``meta`` has the normalised shape (missing keys mean empty/None). ``replace`` selects
    HoodieReplaceCommitMetadata (adds ``partitionToReplaceFileIds``) over HoodieCommitMetadata.
    """
    unknown = [k for k in meta if k not in _ACCEPTED_KEYS]
    if unknown:
        accepted = ", ".join(sorted(_ACCEPTED_KEYS))
        raise PlanError(f"commit metadata has unknown key {unknown[0]!r}; accepted: {accepted}")
    if not replace and meta.get(_REPLACE_KEY):
        raise PlanError(
            f"commit metadata has {_REPLACE_KEY} but replace=False; only a replacecommit may replace file groups"
        )
    record: dict[str, Any] = {
        "partitionToWriteStats": meta.get("partitionToWriteStats") or {},
        "compacted": bool(meta.get("compacted")),
        "extraMetadata": meta.get("extraMetadata") or {},
        "version": meta.get("version"),  # Hudi 1.x leaves it null in commit records (fixtures)
        "operationType": meta.get("operationType"),
    }
    if replace:
        record[_REPLACE_KEY] = meta.get(_REPLACE_KEY) or {}
    schema_name = "HoodieReplaceCommitMetadata" if replace else "HoodieCommitMetadata"
    if layout_version >= 2:
        return encode_avro(record, schema_name)
    _validate_for_json(record, schema_name)
    del record["version"]  # not a property of the Java POJO
    record["partitionToWriteStats"] = {
        partition: [_jackson_stat(s) for s in stats] for partition, stats in record["partitionToWriteStats"].items()
    }
    return to_jackson_json(record).encode("utf-8")


def _validate_for_json(record: dict, schema_name: str) -> None:
    """Type-check the Avro-known part; JSON-only stat keys (``recordsStats``, ...) pass through as they are."""
    names = set(_write_stat_fields())

    def avro_part(stat):
        return {k: v for k, v in stat.items() if k in names} if isinstance(stat, Mapping) else stat

    stats = record["partitionToWriteStats"]
    if isinstance(stats, Mapping):
        stats = {p: [avro_part(s) for s in v] if isinstance(v, list) else v for p, v in stats.items()}
    validate({**record, "partitionToWriteStats": stats}, schema_name)


def _jackson_stat(stat: Mapping) -> dict:
    out = {}
    for key in _JACKSON_STAT:
        value = stat.get(key)
        if key == "runtimeStats" and value is not None:
            value = {k: value.get(k) or 0 for k in _JACKSON_RUNTIME}  # validated: no other keys
        out[key] = 0 if value is None and key not in _JACKSON_NULLABLE else value
    # Subclass and newer properties (HoodieDeltaWriteStat's logVersion, logFiles, ...; 1.x numUpdates) follow;
    # unset ones are left out, as a 0.14/0.15 POJO would not have them.
    out.update((k, v) for k, v in stat.items() if k not in out and v is not None)
    return out


# ----------------------------------------------------------------------------------------- Jackson printer

# Jackson escapes only '"', '\\' and control characters, with upper-case hex; non-ASCII stays UTF-8.
_ESCAPES = {i: f"\\u{i:04X}" for i in range(32)} | {
    0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\",
}  # fmt: skip


def _java_double(value: float) -> str:
    """Java's Double.toString: plain notation in [1e-3, 1e7), else ``d.dddE±n``; shortest digits."""
    if math.isnan(value) or math.isinf(value):
        return json.dumps("NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity"))
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)  # finite: NaN and infinities returned above
    text = "".join(map(str, digits))
    scientific = len(digits) - 1 + exponent
    if -3 <= scientific < 7:
        plain = format(Decimal(repr(abs(value))).normalize(), "f")
        body = plain if "." in plain else plain + ".0"
    else:
        body = f"{text[0]}.{text[1:] or '0'}E{scientific}"
    return ("-" if sign else "") + body


def _dump(value, level: int) -> str:
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, str):
        return '"' + value.translate(_ESCAPES) + '"'
    if isinstance(value, Mapping):
        if not value:
            return "{ }"
        pad = "\n" + "  " * (level + 1)
        entries = ",".join(f"{pad}{_dump(str(k), 0)} : {_dump(v, level + 1)}" for k, v in value.items())
        return "{" + entries + "\n" + "  " * level + "}"
    if isinstance(value, (list, tuple)):
        return "[ " + ", ".join(_dump(v, level) for v in value) + " ]" if value else "[ ]"
    accepted = "strings, numbers, booleans, maps, lists, null"
    raise PlanError(f"commit metadata holds {type(value).__name__} value {value!r}; JSON accepts {accepted}")


def to_jackson_json(value) -> str:
    """``value`` as Hudi's Jackson ``writerWithDefaultPrettyPrinter()`` prints it."""
    return _dump(value, 0)
