"""Arrow schema -> the Avro schema Hudi records for a table (``extraMetadata.schema``, ``create.schema``).

Readers build their read schema from it (hudi-rs converts it back to Arrow), so each type must map back to the
parquet type we write: decimals are Avro ``fixed`` with the minimal byte width, as pyarrow and Spark write them.
"""

from __future__ import annotations

import json

import pyarrow as pa

from ..errors import ConfigError


def _decimal_bytes(precision: int) -> int:
    return next(n for n in range(1, 17) if 2 ** (8 * n - 1) > 10**precision - 1) if precision else 1


def _avro_type(arrow: pa.DataType, name: str, namespace: str):
    if pa.types.is_string(arrow) or pa.types.is_large_string(arrow):
        return "string"
    if pa.types.is_boolean(arrow):
        return "boolean"
    if pa.types.is_int8(arrow) or pa.types.is_int16(arrow) or pa.types.is_int32(arrow):
        return "int"
    if pa.types.is_int64(arrow):
        return "long"
    if pa.types.is_float32(arrow):
        return "float"
    if pa.types.is_float64(arrow):
        return "double"
    if pa.types.is_binary(arrow) or pa.types.is_large_binary(arrow):
        return "bytes"
    if pa.types.is_date32(arrow):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_timestamp(arrow):
        return {"type": "long", "logicalType": "timestamp-micros" if arrow.tz else "local-timestamp-micros"}
    if pa.types.is_decimal(arrow):
        return {
            "type": "fixed", "name": "fixed", "namespace": f"{namespace}.{name}", "size": _decimal_bytes(arrow.precision),
            "logicalType": "decimal", "precision": arrow.precision, "scale": arrow.scale,
        }  # fmt: skip
    if pa.types.is_list(arrow) or pa.types.is_large_list(arrow):
        return {"type": "array", "items": _nullable(_avro_type(arrow.value_type, "array", f"{namespace}.{name}"))}
    if pa.types.is_map(arrow):
        return {"type": "map", "values": _nullable(_avro_type(arrow.item_type, "value", f"{namespace}.{name}"))}
    if pa.types.is_struct(arrow):
        return {
            "type": "record", "name": name, "namespace": namespace,
            "fields": [_field(arrow.field(i), f"{namespace}.{name}") for i in range(arrow.num_fields)],
        }  # fmt: skip
    raise ConfigError(f"column '{name}' has Arrow type {arrow}, which the append writer does not map to Avro")


def _nullable(avro_type):
    return ["null", avro_type]


def _field(field: pa.Field, namespace: str) -> dict:
    avro = _avro_type(field.type, field.name, namespace)
    if field.nullable:
        return {"name": field.name, "type": _nullable(avro), "default": None}
    return {"name": field.name, "type": avro}


def arrow_to_avro_schema(schema: pa.Schema, table_name: str) -> str:
    record = f"{table_name}_record"
    namespace = f"hoodie.{table_name}"
    fields = [_field(f, f"{namespace}.{record}") for f in schema if not f.name.startswith("_hoodie_")]
    return json.dumps({"type": "record", "name": record, "namespace": namespace, "fields": fields}, separators=(",", ":"))


