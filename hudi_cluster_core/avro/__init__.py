"""Hudi's Avro and JSON timeline records (fastavro): plans, commit metadata, rollback and compaction plans."""

from .codec import (
    DATA_SCHEMA_NAMES,
    SCHEMA_NAMES,
    decode_avro,
    encode_avro,
    encode_container,
    record_fields,
    schema,
    schema_json,
    validate,
)
from .commit_json import decode_commit_metadata, encode_commit_metadata, to_jackson_json

__all__ = [
    "DATA_SCHEMA_NAMES",
    "SCHEMA_NAMES",
    "decode_avro",
    "decode_commit_metadata",
    "encode_avro",
    "encode_commit_metadata",
    "encode_container",
    "record_fields",
    "schema",
    "schema_json",
    "to_jackson_json",
    "validate",
]
