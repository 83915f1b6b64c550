"""Record keys and partition paths from the table's key generator, as Apache Hudi 1.1.1 makes them.

A table written with ``hoodie.populate.meta.fields=false`` ("virtual keys") has its five ``_hoodie_*`` columns in
every file, all null: whoever needs a row's record key computes it from the key fields, with the table's key
generator. So do we, for the bloom filter and key range in the footers of the files we write. Facts from Hudi's
sources (``hudi-client-common``: ``KeyGenUtils``, ``Simple/Complex/Nonpartitioned/TimestampBased/CustomAvroKeyGenerator``;
``hudi-common``: ``KeyGenerator.constructRecordKey``, ``KeyGeneratorType``, ``PartitionPathEncodeUtils``):

* **Which generator**: ``hoodie.table.keygenerator.class`` (a class name), else ``hoodie.table.keygenerator.type``,
  else Hudi's inference (``KeyGenUtils.inferKeyGeneratorType``): no partition fields -> non-partitioned, a
  ``field:TYPE`` partition field -> custom, one key and one partition field -> simple, else complex.
* **Record key** of one field (simple, timestamp-based, non-partitioned and custom with one field): the value's
  text; a null or empty value fails the write, so a table never holds one. Of several fields (complex,
  non-partitioned, custom), and of one field in the complex generator on table version 9 (or on 8 and below
  unless ``hoodie.write.complex.keygen.new.encoding=true``: ``KeyGenUtils.encodeSingleKeyFieldNameForComplexKeyGen``):
  ``field:value`` parts joined by ``,``, a null value as ``__null__`` and an empty one as ``__empty__``; not all of
  them may be null or empty. A value's text is Java's (:mod:`.java_text`).
* **Partition path**: per partition field its value's text, ``__HIVE_DEFAULT_PARTITION__`` when null, empty or
  missing, else URL-escaped with ``hoodie.datasource.write.partitionpath.urlencode``; ``field=`` in front with
  ``hoodie.datasource.write.hive_style_partitioning``; parts joined by ``/``. The timestamp-based generator
  formats its first field as a time (:mod:`.timestamp_partition`); the custom one takes each field's kind from
  ``field:SIMPLE`` / ``field:TIMESTAMP``.

The table's ``hoodie.properties`` holds these settings (Hudi persists the ``hoodie.keygen.timebased.*`` keys and
the two partitioning flags there); the job's config fills what it lacks, as Hudi's writer takes them from its
own config. ``...keygenerator.consistent.logical.timestamp.enabled`` is a writer setting only.
Apache Hudi 1.1.1 refuses to write a virtual-key table with any but the simple, complex and non-partitioned
generators (``BaseHoodieWriteClient.validateAgainstTableProperties``); the others are here for tables with meta
columns and for completeness.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import ConfigError, TableError
from .java_text import UnprintableType, java_text
from .timestamp_partition import TimestampPartition

SIMPLE, COMPLEX, NON_PARTITION, TIMESTAMP, CUSTOM = "SIMPLE", "COMPLEX", "NON_PARTITION", "TIMESTAMP", "CUSTOM"
KINDS = (SIMPLE, COMPLEX, NON_PARTITION, TIMESTAMP, CUSTOM)
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
NULL_PART, EMPTY_PART = "__null__", "__empty__"
CLASS_KEY, TYPE_KEY = "hoodie.table.keygenerator.class", "hoodie.table.keygenerator.type"
_WRITER_CLASS_KEY = "hoodie.datasource.write.keygenerator.class"
HIVE_STYLE_KEY = "hoodie.datasource.write.hive_style_partitioning"
URL_ENCODE_KEY = "hoodie.datasource.write.partitionpath.urlencode"
CONSISTENT_TIMESTAMP_KEY = "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled"
NEW_COMPLEX_ENCODING_KEY = "hoodie.write.complex.keygen.new.encoding"
_PACKAGE = "org.apache.hudi.keygen."
_CLASSES = {
    "SimpleKeyGenerator": SIMPLE, "SimpleAvroKeyGenerator": SIMPLE, "ComplexKeyGenerator": COMPLEX,
    "ComplexAvroKeyGenerator": COMPLEX, "NonpartitionedKeyGenerator": NON_PARTITION,
    "NonpartitionedAvroKeyGenerator": NON_PARTITION, "TimestampBasedKeyGenerator": TIMESTAMP,
    "TimestampBasedAvroKeyGenerator": TIMESTAMP, "CustomKeyGenerator": CUSTOM, "CustomAvroKeyGenerator": CUSTOM,
}  # fmt: skip
_TYPES = {SIMPLE: SIMPLE, "SIMPLE_AVRO": SIMPLE, COMPLEX: COMPLEX, "COMPLEX_AVRO": COMPLEX, NON_PARTITION: NON_PARTITION,
          "NON_PARTITION_AVRO": NON_PARTITION, TIMESTAMP: TIMESTAMP, "TIMESTAMP_AVRO": TIMESTAMP, CUSTOM: CUSTOM,
          "CUSTOM_AVRO": CUSTOM}  # fmt: skip
# Java's escapePathName: control characters and these become %XX (PartitionPathEncodeUtils.charToEscape)
_ESCAPED = {chr(c) for c in range(0x20)} | set("\"#%'*/:=?\\\x7f{[]^")


@dataclass(frozen=True)
class PartitionField:
    name: str
    timestamp: bool = False  # formatted as a time (timestamp-based generator, custom ``field:TIMESTAMP``)


@dataclass(frozen=True)
class KeyGenerator:
    kind: str
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[PartitionField, ...]
    field_names_in_key: bool  # ``field:value,...`` record keys
    hive_style: bool = False
    url_encode: bool = False
    consistent_timestamps: bool = False
    timestamp: TimestampPartition | None = None  # how partition fields of kind timestamp are formatted

    @property
    def columns(self) -> tuple[str, ...]:
        """The top-level columns keys and partition paths are made of."""
        names = (*self.record_key_fields, *(f.name for f in self.partition_fields))
        return tuple(dict.fromkeys(name.split(".")[0] for name in names))

    def record_keys(self, rows: pa.Table) -> pa.Array:
        """Every row's record key (a string array without nulls)."""
        if not self.field_names_in_key:
            name = self.record_key_fields[0]
            keys = self._text(rows, name, missing_ok=False)
            bad = pc.or_kleene(pc.is_null(keys), pc.equal(pc.utf8_length(keys), 0))
            if pc.any(bad).as_py():
                raise TableError(f"record key field '{name}' is null or empty in {pc.sum(bad).as_py()} row(s); "
                                 "Apache Hudi's key generator refuses such keys")  # fmt: skip
            return keys
        parts, blank_rows = [], None
        for name in self.record_key_fields:
            text = self._text(rows, name, missing_ok=False)
            blank = pc.fill_null(pc.equal(pc.utf8_length(text), 0), True)
            blank_rows = blank if blank_rows is None else pc.and_(blank_rows, blank)
            text = pc.if_else(pc.is_null(text), NULL_PART, pc.if_else(blank, EMPTY_PART, text))
            parts.append(pc.binary_join_element_wise(name, text, ":"))
        if blank_rows is not None and pc.any(blank_rows).as_py():
            raise TableError(f"record key fields {list(self.record_key_fields)} are all null or empty in "
                             f"{pc.sum(blank_rows).as_py()} row(s); Apache Hudi's key generator refuses such keys")  # fmt: skip
        return pc.binary_join_element_wise(*parts, ",")

    def partition_paths(self, rows: pa.Table) -> pa.Array:
        """Every row's partition path (``""`` for a non-partitioned table)."""
        if self.kind == NON_PARTITION or not self.partition_fields:
            return pa.array([""] * rows.num_rows, pa.string())
        fields = self.partition_fields[:1] if self.kind == TIMESTAMP else self.partition_fields
        parts = [self._partition_part(rows, field) for field in fields]
        return parts[0] if len(parts) == 1 else pc.binary_join_element_wise(*parts, "/")

    def _partition_part(self, rows: pa.Table, field: PartitionField) -> pa.Array:
        if field.timestamp:
            assert self.timestamp is not None
            values = _column(rows, field.name)
            text = self.timestamp.format(pa.nulls(rows.num_rows) if values is None else values, self.consistent_timestamps)
        else:
            text = self._text(rows, field.name, missing_ok=True)
            text = pc.if_else(pc.fill_null(pc.equal(pc.utf8_length(text), 0), True), DEFAULT_PARTITION, text)
        if self.url_encode:
            text = escape_path_names(text)
        return pc.binary_join_element_wise(f"{field.name}=", text, "") if self.hive_style else text

    def _text(self, rows: pa.Table, name: str, *, missing_ok: bool) -> pa.Array:
        values = _column(rows, name)
        if values is None:
            if missing_ok:  # Hudi reads a missing partition field as null
                return pa.nulls(rows.num_rows, pa.string())
            raise TableError(f"record key field '{name}' is not a column of the table's files "
                             f"(columns: {', '.join(rows.column_names)})")  # fmt: skip
        try:
            return java_text(values, self.consistent_timestamps)
        except UnprintableType as exc:
            raise TableError(f"key field '{name}': {exc}") from None


def _column(rows: pa.Table, name: str) -> pa.Array | None:
    """Column ``name``, ``a.b`` being field ``b`` of struct column ``a`` (null where a struct is null)."""
    head, *rest = name.split(".")
    if head not in rows.column_names:
        return None
    values = rows.column(head).combine_chunks()
    for part in rest:
        if not pa.types.is_struct(values.type) or values.type.get_field_index(part) < 0:
            return None
        values = pc.struct_field(values, part)
    return values


def escape_path_names(text: pa.Array) -> pa.Array:
    """Hudi's ``PartitionPathEncodeUtils.escapePathName`` per value (distinct values are few)."""
    distinct = pc.unique(text)
    escaped = pa.array([None if v is None else "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in v)
                        for v in distinct.to_pylist()], pa.string())  # fmt: skip
    return pc.take(escaped, pc.index_in(text, distinct))


def key_generator(table: Mapping[str, str], job: Mapping[str, str] | None = None) -> KeyGenerator:
    """The key generator of a table (its ``hoodie.properties``), with the job's Hudi keys where the table has none."""
    job = job or {}

    def setting(key: str, default: str = "") -> str:
        value = table.get(key)
        return str(value if value not in (None, "") else job.get(key, default)).strip()

    record_fields = tuple(f.strip() for f in setting("hoodie.table.recordkey.fields").split(",") if f.strip())
    if not record_fields:
        raise ConfigError("hoodie.table.recordkey.fields is empty: without meta fields the record key comes from "
                          "these fields; accepted: the table's comma-separated record key fields")  # fmt: skip
    specs = tuple(p.strip() for p in setting("hoodie.table.partition.fields").split(",") if p.strip())
    kind = _kind(table, job, record_fields, specs)
    if kind == CUSTOM and specs and ":" not in specs[0]:  # v6 tables keep bare names; the writer keeps the types
        specs = tuple(p.strip() for p in setting("hoodie.datasource.write.partitionpath.field").split(",") if p.strip())
    partitions = () if kind == NON_PARTITION else tuple(_partition_field(kind, spec) for spec in specs)
    if kind in (SIMPLE, TIMESTAMP) and len(record_fields) > 1:
        raise ConfigError(f"hoodie.table.recordkey.fields={','.join(record_fields)}: the {kind.lower()} key generator "
                          "takes one record key field; accepted: one field, or a complex key generator")  # fmt: skip
    new_encoding = setting(NEW_COMPLEX_ENCODING_KEY, "false").lower() == "true"
    encode_single = int(setting("hoodie.table.version", "9") or 9) >= 9 or not new_encoding
    named = len(record_fields) > 1 or (kind == COMPLEX and encode_single)
    timestamp = TimestampPartition.from_settings(setting) if any(p.timestamp for p in partitions) else None
    return KeyGenerator(
        kind, record_fields, partitions, named, hive_style=_flag(setting(HIVE_STYLE_KEY), HIVE_STYLE_KEY),
        url_encode=_flag(setting(URL_ENCODE_KEY), URL_ENCODE_KEY),
        consistent_timestamps=_flag(str(job.get(CONSISTENT_TIMESTAMP_KEY, "")), CONSISTENT_TIMESTAMP_KEY),
        timestamp=timestamp,
    )  # fmt: skip


def _kind(table: Mapping[str, str], job: Mapping[str, str], record_fields: tuple, specs: tuple) -> str:
    class_name = str(table.get(CLASS_KEY) or "").strip()
    if class_name:
        kind = _CLASSES.get(class_name.removeprefix(_PACKAGE)) if class_name.startswith(_PACKAGE) else None
        if kind is None:
            raise ConfigError(f"{CLASS_KEY}={class_name}: record keys of a table without meta fields are computed "
                              f"here only for Hudi's built-in generators; accepted: {', '.join(_PACKAGE + c for c in _CLASSES)}")  # fmt: skip
        return kind
    type_name = str(table.get(TYPE_KEY) or "").strip().upper()
    if type_name:
        if type_name not in _TYPES:
            raise ConfigError(f"{TYPE_KEY}={type_name}: accepted: {', '.join(_TYPES)}")
        return _TYPES[type_name]
    if str(job.get(_WRITER_CLASS_KEY) or "").strip():
        return _kind({CLASS_KEY: str(job[_WRITER_CLASS_KEY])}, {}, record_fields, specs)
    if not specs:
        return NON_PARTITION
    if ":" in specs[0]:
        return CUSTOM
    return SIMPLE if len(specs) == 1 and len(record_fields) == 1 else COMPLEX


def _partition_field(kind: str, spec: str) -> PartitionField:
    if kind != CUSTOM:
        return PartitionField(spec, timestamp=kind == TIMESTAMP)
    name, _, partition_type = spec.partition(":")
    if partition_type.upper() not in ("SIMPLE", "TIMESTAMP"):
        raise ConfigError(f"hoodie.table.partition.fields: custom key generator field {spec!r}; accepted: "
                          "field:SIMPLE or field:TIMESTAMP, e.g. city:simple,ts:timestamp")  # fmt: skip
    return PartitionField(name, timestamp=partition_type.upper() == "TIMESTAMP")


def _flag(value: str, key: str) -> bool:
    if value.lower() not in ("", "true", "false"):
        raise ConfigError(f"{key}={value!r}: accepted: true, false")
    return value.lower() == "true"
