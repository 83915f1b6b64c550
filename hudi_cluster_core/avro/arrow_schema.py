"""A table's Avro schema (as Hudi records it in commit metadata) as the Arrow schema a rewrite targets.

The types are those pyarrow reads from the parquet files Hudi writes for that schema (parquet-avro), so that a
column no schema change touched keeps its type exactly: ``int``/``long``/``float``/``double``/``boolean``/
``string``/``bytes``; ``fixed`` (fixed-size binary); decimals (128-bit up to precision 38); ``date``;
``time-millis``/``-micros``; ``timestamp-*`` (UTC) and ``local-timestamp-*`` (no zone); ``uuid`` and enums as
strings; records as structs, arrays as lists (elements named ``element``, as parquet names them), maps with
string keys. A union of ``null`` and one type is that type, nullable; a field without ``null`` is not nullable.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

META_FIELDS = (
    "_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
    "_hoodie_file_name",
)  # fmt: skip

_PRIMITIVES = {
    "boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(), "double": pa.float64(),
    "string": pa.string(), "bytes": pa.binary(), "enum": pa.string(),
}  # fmt: skip
_LOGICAL = {
    ("int", "date"): pa.date32(), ("int", "time-millis"): pa.time32("ms"), ("long", "time-micros"): pa.time64("us"),
    ("long", "timestamp-millis"): pa.timestamp("ms", tz="UTC"), ("long", "timestamp-micros"): pa.timestamp("us", tz="UTC"),
    ("long", "timestamp-nanos"): pa.timestamp("ns", tz="UTC"), ("long", "local-timestamp-millis"): pa.timestamp("ms"),
    ("long", "local-timestamp-micros"): pa.timestamp("us"), ("long", "local-timestamp-nanos"): pa.timestamp("ns"),
    ("string", "uuid"): pa.string(),
}  # fmt: skip


class UnsupportedAvroType(ValueError):
    """An Avro type with no Arrow counterpart here (a union of several non-null types)."""


def arrow_schema(avro_text: str, *, drop: tuple[str, ...] = ()) -> pa.Schema:
    """The Arrow schema of a table's Avro record schema, Hudi's five meta columns first (added when the Avro
    schema lacks them, as the schema Hudi records for a datasource write does); ``drop``: fields left out
    (partition columns a table keeps only in its paths)."""
    record = json.loads(avro_text)
    fields = [_field(f) for f in record.get("fields", []) if f["name"] not in drop]
    names = {f.name for f in fields}
    meta = [pa.field(name, pa.string()) for name in META_FIELDS if name not in names]
    return pa.schema(meta + fields)


def _field(spec: dict[str, Any]) -> pa.Field:
    arrow_type, nullable = _type(spec["type"])
    return pa.field(spec["name"], arrow_type, nullable=nullable)


def _type(avro: Any) -> tuple[pa.DataType, bool]:
    """(Arrow type, nullable) of an Avro type."""
    if isinstance(avro, list):
        branches = [b for b in avro if b != "null"]
        if len(branches) != 1:
            raise UnsupportedAvroType(f"union {json.dumps(avro)}: only a union of null and one type is supported")
        return _type(branches[0])[0], len(branches) < len(avro)
    if isinstance(avro, str):
        if avro in _PRIMITIVES:
            return _PRIMITIVES[avro], False
        raise UnsupportedAvroType(f"Avro type {avro!r} (a named type reference) is not supported")
    kind, logical = avro.get("type"), avro.get("logicalType")
    if logical == "decimal" and kind in ("bytes", "fixed"):
        precision, scale = int(avro["precision"]), int(avro.get("scale", 0))
        return (pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)), False
    if (kind, logical) in _LOGICAL:
        return _LOGICAL[kind, logical], False
    if kind == "record":
        return pa.struct([_field(f) for f in avro.get("fields", [])]), False
    if kind == "array":
        item, nullable = _type(avro["items"])
        return pa.list_(pa.field("element", item, nullable=nullable)), False
    if kind == "map":
        item, nullable = _type(avro["values"])
        return pa.map_(pa.string(), pa.field("value", item, nullable=nullable)), False
    if kind == "fixed":
        return pa.binary(int(avro["size"])), False
    return _type(kind)
