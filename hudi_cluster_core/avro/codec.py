"""Hudi's Avro timeline records: schemas, the object-container framing Hudi writes, and validation.

Every Avro timeline file is an object container holding one record. Hudi (Java ``DataFileWriter`` with no
codec set) writes a header whose metadata holds only ``avro.schema`` (no ``avro.codec``), then one block.
fastavro's own writer always adds ``avro.codec`` and re-serialises the schema, so the container is framed
here and fastavro only encodes the record body.

The ``.avsc`` files are the writer schemas Hudi 1.1.1 embeds (taken from the v9 fixture headers), pretty
printed with Java's key order kept, so :func:`schema_json` reproduces Java's ``Schema.toString()`` exactly.
``HoodieMetadataRecord`` (a metadata-table record, not a timeline file) is the schema of the MDT log-block
headers in fixture ``cow_v9_txns_simple_overwrite`` without the five meta fields Hudi adds in front.
"""

from __future__ import annotations

import functools
import io
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import fastavro
import fastavro.validation

from ..errors import PlanError, TableError

SCHEMA_NAMES: tuple[str, ...] = (
    "HoodieRequestedReplaceMetadata",
    "HoodieCommitMetadata",
    "HoodieReplaceCommitMetadata",
    "HoodieRollbackPlan",
    "HoodieRollbackMetadata",
    "HoodieCompactionPlan",
)
# Records stored in table data, not timeline files: the metadata table's HFile values (hudi_cluster_core.mdt).
DATA_SCHEMA_NAMES: tuple[str, ...] = ("HoodieMetadataRecord",)

MAGIC = b"Obj\x01"
_SCHEMA_DIR = Path(__file__).with_name("schemas")
_HEADER = fastavro.parse_schema({
    "type": "record", "name": "org.apache.avro.file.Header",
    "fields": [
        {"name": "magic", "type": {"type": "fixed", "name": "Magic", "size": 4}},
        {"name": "meta", "type": {"type": "map", "values": "bytes"}},
        {"name": "sync", "type": {"type": "fixed", "name": "Sync", "size": 16}},
    ],
})  # fmt: skip


@functools.cache
def _raw(name: str) -> dict:
    if name not in SCHEMA_NAMES + DATA_SCHEMA_NAMES:
        raise ValueError(f"unknown Hudi schema {name!r}; known: {', '.join(SCHEMA_NAMES + DATA_SCHEMA_NAMES)}")
    return json.loads((_SCHEMA_DIR / f"{name}.avsc").read_text(encoding="utf-8"))


@functools.cache
def schema(name: str) -> dict:
    """The parsed fastavro schema of top-level record ``name`` (cached: do not mutate)."""
    return cast("dict[str, Any]", fastavro.parse_schema(_raw(name)))


@functools.cache
def schema_json(name: str) -> str:
    """The writer schema text Hudi 1.1.1 puts in the container header (Java ``Schema.toString()``)."""
    return json.dumps(_raw(name), separators=(",", ":"), ensure_ascii=False)


def record_fields(schema_name: str, record_name: str | None = None) -> list[dict]:
    """Field definitions of ``record_name`` (default: the top-level record) as found in ``schema_name``."""
    wanted = record_name or schema_name

    def find(node):
        if isinstance(node, list):
            return next(filter(None, map(find, node)), None)
        if isinstance(node, dict):
            if node.get("type") == "record" and node.get("name") == wanted:
                return node["fields"]
            return next(filter(None, map(find, node.values())), None)
        return None

    fields = find(_raw(schema_name))
    if fields is None:
        raise ValueError(f"{schema_name} has no record named {wanted!r}")
    return fields


# ---------------------------------------------------------------------------------------------- container


def encode_container(record: Mapping, schema_text: str, sync_marker: bytes) -> bytes:
    """One-record null-codec container exactly as Java's DataFileWriter frames it (header: avro.schema only)."""
    body = io.BytesIO()
    fastavro.schemaless_writer(body, fastavro.parse_schema(json.loads(schema_text)), record)
    out = io.BytesIO()
    fastavro.schemaless_writer(
        out, _HEADER, {"magic": MAGIC, "meta": {"avro.schema": schema_text.encode("utf-8")}, "sync": sync_marker}
    )
    fastavro.schemaless_writer(out, "long", 1)  # records in the block
    fastavro.schemaless_writer(out, "long", body.tell())
    out.write(body.getvalue())
    out.write(sync_marker)
    return out.getvalue()


def decode_avro(data: bytes, *, source: str = "<bytes>") -> dict:
    """The single record of an Avro timeline file, as the writer schema in its header describes it."""
    expected = "expected an Avro object container holding one Hudi timeline record"
    if not data:
        raise TableError(f"{source}: file is empty; {expected}")
    if not data.startswith(MAGIC):
        raise TableError(f"{source}: not an Avro file (starts with {bytes(data[:8])!r}); {expected}")
    try:
        records = list(fastavro.reader(io.BytesIO(data)))
    except Exception as exc:  # fastavro raises many types on corrupt input; all mean the same to a user
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())
        raise TableError(f"{source}: corrupt or truncated Avro container ({reason}); {expected}") from None
    if len(records) != 1:
        raise TableError(f"{source}: Avro container holds {len(records)} records; {expected}")
    return cast("dict[str, Any]", records[0])


def encode_avro(record: Mapping, schema_name: str) -> bytes:
    """``record`` as Hudi writes a timeline file, with our ``.avsc`` as writer schema; validated first."""
    validate(record, schema_name)
    return encode_container(record, schema_json(schema_name), os.urandom(16))


# --------------------------------------------------------------------------------------------- validation


class _Mismatch(Exception):
    def __init__(self, path: str, message: str, wrong_type: bool = False):
        super().__init__(path, message)
        self.path, self.message, self.wrong_type = path, message, wrong_type


def _wrong_type(path: str, value, typ) -> _Mismatch:
    return _Mismatch(path, f"is {_show(value)}; accepted: {_describe(typ)}", wrong_type=True)


def validate(record: Mapping, schema_name: str) -> None:
    """Raise PlanError naming the first field of ``record`` that does not fit ``schema_name``.

    Whether a value fits a primitive (or logical, enum, fixed) type is fastavro's answer
    (``fastavro.validation.validate``: ints within range, no bool for a number, ...). Records, arrays, maps and
    unions are walked here rather than handed to fastavro whole, for what fastavro does not do:

    * the error names the field by its path (``clusteringPlan.inputGroups[0].numOutputFileGroups``): fastavro's
      names the record type and field only, not which array item or map key, and for a union lists every
      branch's failure;
    * unknown keys are errors: fastavro ignores them, so a misspelt optional field would be written as null;
    * strings and map keys must encode as UTF-8: fastavro accepts a lone surrogate, and its writer then fails
      part-way with a ``UnicodeEncodeError`` that names no field;
    * an array is a list or tuple (fastavro takes any non-``str`` sequence, bytes included).

    A field without a default must be present, nullable or not (fastavro's ``strict=True``; Java's Avro
    builders require it too).
    """
    try:
        _check(record, _raw(schema_name), "", {})
    except _Mismatch as bad:
        where = f"field {bad.path}" if bad.path else "record"
        raise PlanError(f"{schema_name}: {where} {bad.message}") from None


def _is_text(value) -> bool:
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _describe(typ) -> str:
    if isinstance(typ, list):
        return " or ".join(map(_describe, typ))
    if isinstance(typ, str):
        return typ
    kind = typ["type"]
    if kind == "record":
        return f"record {typ['name']}"
    if kind == "array":
        return f"array of {_describe(typ['items'])}"
    if kind == "map":
        return f"map of {_describe(typ['values'])}"
    return _describe(kind)


def _show(value) -> str:
    text = repr(value)
    return (text if len(text) <= 60 else text[:57] + "...") + f" ({type(value).__name__})"


def _check(value, typ, path: str, names: dict) -> None:
    if isinstance(typ, list):
        if value is None and "null" in typ:
            return
        options = [t for t in typ if t != "null"]
        if len(options) == 1:  # every Hudi union is [null, T]: descend for a precise message
            try:
                return _check(value, options[0], path, names)
            except _Mismatch as bad:
                if bad.wrong_type and bad.path == path:
                    raise _wrong_type(path, value, typ) from None
                raise
        for option in options:
            try:
                return _check(value, option, path, names)
            except _Mismatch:
                continue
        raise _wrong_type(path, value, typ)
    if isinstance(typ, str) and typ in names:
        return _check(value, names[typ], path, names)
    kind = typ["type"] if isinstance(typ, dict) else typ
    if isinstance(typ, dict) and "name" in typ:  # a named type (record, enum, fixed) defined here
        names[typ["name"]] = typ
    if kind == "record":
        if not isinstance(value, Mapping):
            raise _wrong_type(path, value, typ)
        known = [f["name"] for f in typ["fields"]]
        unknown = [k for k in value if k not in known]
        if unknown:
            raise _Mismatch(path, f"has unknown key {unknown[0]!r}; {typ['name']} fields: {', '.join(known)}")
        for field in typ["fields"]:
            name = field["name"]
            where = f"{path}.{name}" if path else name
            if name in value:
                _check(value[name], field["type"], where, names)
            elif "default" not in field:
                raise _Mismatch(where, f"is missing; accepted: {_describe(field['type'])}")
    elif kind == "array":
        if not isinstance(value, (list, tuple)):
            raise _wrong_type(path, value, typ)
        for index, item in enumerate(value):
            _check(item, typ["items"], f"{path}[{index}]", names)
    elif kind == "map":
        if not isinstance(value, Mapping) or not all(_is_text(k) for k in value):
            raise _wrong_type(path, value, typ)
        for key, item in value.items():
            _check(item, typ["values"], f"{path}[{key!r}]", names)
    elif not _fits(value, typ) or (kind == "string" and not _is_text(value)):
        raise _wrong_type(path, value, typ)


def _fits(value, typ) -> bool:
    """fastavro's answer for one value of a type that holds no fields (no record, array, map or union)."""
    return bool(fastavro.validation.validate(value, typ, raise_errors=False))
