"""Tables in the shapes users have, each written by Apache Hudi 1.1.1 in test set-up (``tests/test_shapes.py``).

A :class:`Shape` names one table: how Apache Hudi writes it (a few commits through the Spark datasource, or SQL
for the shapes only SQL makes), the clustering options that make one plan of it, and what the test expects
(clustered and read back equal, or refused with one line, as Apache Hudi refuses it). Data is small and
deterministic; every shape keeps a string key ``id`` unique per partition, an ordering field ``ts`` (long) and a
data column ``note`` the final upsert sets.

The shapes, by what they exercise:

* **values**: every column type Hudi writes (decimals up to precision 38, timestamps and dates before 1970,
  binary, nested structs, arrays of structs, maps with null values, NaN/+-inf/-0.0, unicode) in COW and in MOR
  (updates in logs);
* **schema evolution**: columns added (top level and inside a struct, by inserts and by MOR updates), a nullable
  struct with a non-null field added later, int->long and float->double widened (COW and MOR), and with
  ``hoodie.schema.on.read.enable`` a column renamed and one dropped;
* **partitions**: none, multi-level, hive style, URL-encoded, timestamp key generator, custom key generator,
  partition columns dropped from the data files;
* **keys**: composite, virtual (``hoodie.populate.meta.fields=false``: COW, MOR, with the metadata table),
  duplicates (``insert``), ordering values out of order;
* **deletes**: hard (``delete``, ``_hoodie_is_deleted``) and soft (nulls) in COW and in MOR logs, under the
  metadata table with Hudi 1.1.1's default indexes;
* **history**: table versions 6, 8 and 9; no metadata table; CDC (COW, MOR); bulk_insert then insert_overwrite;
  cleans, compactions and archived commits; the record index with a timestamp key generator on MOR;
* **layouts Hudi refuses or treats apart**: a simple bucket index, ORC base files.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Callable, Mapping

import pyarrow as pa

from tests.support.apache_hudi import write_hudi_table

# One plan of the whole table: every file is small, one output group per partition may hold all of it.
CLUSTER_ALL = {
    "hoodie.clustering.plan.strategy.small.file.limit": str(100 << 20),
    "hoodie.clustering.plan.strategy.target.file.max.bytes": str(1 << 30),
    "hoodie.clustering.plan.strategy.max.bytes.per.group": str(2 << 30),
    "hoodie.clustering.plan.strategy.max.num.groups": "100",
}
# Keep MOR updates in log files (a Spark batch write on MOR may compact inline).
NO_COMPACTION = {"hoodie.compact.inline": "false"}
ARCHIVAL = {
    "hoodie.keep.min.commits": "3", "hoodie.keep.max.commits": "4", "hoodie.clean.commits.retained": "2",
    "hoodie.clean.automatic": "true", "hoodie.archive.automatic": "true",
}  # fmt: skip
REGIONS = ("us", "eu", "apac")

Build = Callable[["Writer"], None]


@dataclass(frozen=True)
class Shape:
    name: str
    build: Build
    writer: Mapping[str, object] = field(default_factory=dict)  # the Writer's fixed settings
    options: Mapping[str, str] = field(default_factory=dict)  # our clustering's extra options
    refused: str | None = None  # the run must stop with one line containing this, table untouched
    hudi_rs: bool = True  # hudi-rs 0.5.0 reads this shape (checked before and after)
    # columns hudi-rs 0.5.0 reads differently from Apache Hudi before the clustering (left out where hudi-rs's
    # reads are compared), and after it (left out of the comparison of the two readers after)
    rs_differs: tuple[str, ...] = ()
    rs_differs_after: tuple[str, ...] = ()
    upsert: bool = True  # Apache Hudi upserts every key afterwards
    duplicate_keys: bool = False  # Hudi's upsert then updates one copy of a duplicated key
    spark_conf: Mapping[str, str] = field(default_factory=dict)  # Apache Hudi's session needs these to read it


class Writer:
    """Apache Hudi writes to one table with the shape's fixed options (table type, version, keys, partitions)."""

    def __init__(self, spark, base_path: str, *, table_type: str = "COPY_ON_WRITE", table_version: int = 9,
                 partition_field: str = "region", record_key: str = "id", metadata: bool = True,
                 options: Mapping[str, str] | None = None):  # fmt: skip
        self.spark = spark
        self.base_path = base_path
        self.table_type = table_type
        self.table_version = table_version
        self.partition_field = partition_field
        self.record_key = record_key
        self.metadata = metadata
        self.options = dict(options or {})

    def write(self, rows: pa.Table, operation: str = "insert", **options: str) -> str:
        return write_hudi_table(
            self.spark, self.base_path, rows, table_type=self.table_type, table_version=self.table_version,
            record_key=self.record_key, partition_field=self.partition_field, operation=operation,
            metadata_enable=self.metadata, extra_options={**self.options, **options},
        )  # fmt: skip

    def sql(self, statement: str) -> None:
        self.spark.sql(statement)


# ------------------------------------------------------------------------------------------------- data

BASE_SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("region", pa.string()), ("note", pa.string()),
                         ("n", pa.int32())])  # fmt: skip


def rows(start: int, count: int, *, ts: int = 0, note: str = "v0", schema: pa.Schema = BASE_SCHEMA, **columns) -> pa.Table:
    """Rows ``start .. start+count-1`` with the base columns; ``columns``: more columns as functions of the row
    number (their types from ``schema``)."""
    data: dict[str, list] = {
        "id": [f"k{i:05d}" for i in range(start, start + count)],
        "ts": [1_000 + ts + i for i in range(start, start + count)],
        "region": [REGIONS[i % 3] for i in range(start, start + count)],
        "note": [f"{note}-{i}" for i in range(start, start + count)],
        "n": [i * 3 for i in range(start, start + count)],
    }
    for name, make in columns.items():
        data[name] = [make(i) for i in range(start, start + count)]
    return pa.table({f.name: pa.array(data[f.name], f.type) for f in schema}, schema=schema)


def with_schema(*extra: tuple[str, pa.DataType], base: pa.Schema = BASE_SCHEMA, drop: tuple[str, ...] = ()) -> pa.Schema:
    return pa.schema([f for f in base if f.name not in drop] + [pa.field(n, t) for n, t in extra])


_UNICODE = ("plain", "ünïcödé", "日本語テキスト", "emoji 🚀🔥", "combining e\u0301", "", "rtl עברית", "\u0000nul")
_DOUBLES = (math.nan, math.inf, -math.inf, -0.0, 0.0, 1e308, -1e-308, 5e-324, 0.1, -2.5)
_FLOATS = (math.nan, math.inf, -math.inf, -0.0, 1.5, 3.4028234663852886e38, 1.401298464324817e-45, 1 / 3)

TYPES_SCHEMA = with_schema(
    ("dec_small", pa.decimal128(5, 2)),
    ("dec_long", pa.decimal128(18, 0)),
    ("dec_big", pa.decimal128(38, 10)),
    ("ts_old", pa.timestamp("us", tz="UTC")),
    ("day_old", pa.date32()),
    ("blob", pa.binary()),
    ("dbl", pa.float64()),
    ("flt", pa.float32()),
    ("text", pa.string()),
    ("flag", pa.bool_()),
    ("big", pa.int64()),
    ("nested", pa.struct([("a", pa.int32()), ("inner", pa.struct([("s", pa.string()), ("d", pa.float64())]))])),
    ("items", pa.list_(pa.struct([("x", pa.int32()), ("y", pa.string())]))),
    ("tags", pa.map_(pa.string(), pa.int32())),
    ("words", pa.list_(pa.string())),
)


def _decimal_big(i: int) -> Decimal | None:
    if i % 7 == 3:
        return None
    sign = -1 if i % 2 else 1
    return Decimal(sign * (10**27 - 1 - i * 7919)).scaleb(-10) if i % 5 else Decimal(sign * i).scaleb(-10)


TYPE_COLUMNS: dict[str, Callable[[int], object]] = {
    "dec_small": lambda i: None if i % 9 == 4 else Decimal((-1) ** i * (i * 1237 % 99999)).scaleb(-2),
    "dec_long": lambda i: Decimal((-1) ** i * (10**18 - 1 - i)),
    "dec_big": _decimal_big,
    # before 1970, not before 1900: older ones need Spark's calendar rebase settings to be read at all
    "ts_old": lambda i: dt.datetime(1969, 12, 31, 23, 59, 59, tzinfo=dt.timezone.utc) - dt.timedelta(days=i % 6 * 3653, microseconds=i * 7)
    if i % 4 else dt.datetime(1900, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=i),
    "day_old": lambda i: dt.date(1969, 7, 20) - dt.timedelta(days=i * 400),
    "blob": lambda i: None if i % 6 == 1 else bytes((i * 37 + k) % 256 for k in range(i % 9)),
    "dbl": lambda i: _DOUBLES[i % len(_DOUBLES)],
    "flt": lambda i: _FLOATS[i % len(_FLOATS)],
    "text": lambda i: _UNICODE[i % len(_UNICODE)] + f"#{i}",
    "flag": lambda i: None if i % 5 == 2 else i % 2 == 0,
    "big": lambda i: [-(2**63), 2**63 - 1, 0, -1][i % 4] if i % 3 else i,
    "nested": lambda i: None if i % 8 == 5 else {"a": None if i % 3 == 0 else i, "inner": None if i % 4 == 1 else {"s": _UNICODE[i % 8], "d": _DOUBLES[i % 10]}},
    "items": lambda i: None if i % 7 == 6 else [{"x": i + k, "y": None if k == 1 else f"y{k}"} for k in range(i % 4)],
    "tags": lambda i: None if i % 10 == 9 else [(f"t{k}", None if (i + k) % 3 == 0 else k) for k in range(i % 3 + 1)],
    # no null elements: Hudi 1.1.1 writes parquet's old 2-level lists, which cannot hold them
    "words": lambda i: None if i % 11 == 10 else [_UNICODE[(i + k) % 8] for k in range(i % 5)],
}  # fmt: skip


def type_rows(start: int, count: int, ts: int = 0, note: str = "v0") -> pa.Table:
    return rows(start, count, ts=ts, note=note, schema=TYPES_SCHEMA, **TYPE_COLUMNS)


# ----------------------------------------------------------------------------------------------- builders


def _inserts(writer: Writer, batches: int = 3, size: int = 24, make=rows, **options: str) -> None:
    for b in range(batches):
        writer.write(make(b * size, size), "insert", **options)


def values_cow(w: Writer) -> None:
    _inserts(w, 3, 24, type_rows)


def values_mor(w: Writer) -> None:
    _inserts(w, 3, 24, type_rows, **NO_COMPACTION)
    w.write(type_rows(6, 30, ts=500, note="upd"), "upsert", **NO_COMPACTION)


def added_column_cow(w: Writer) -> None:
    _inserts(w, 2)
    schema = with_schema(("extra_i", pa.int32()), ("extra_s", pa.struct([("p", pa.string()), ("q", pa.int64())])))
    w.write(rows(48, 24, schema=schema, extra_i=lambda i: i * 3, extra_s=lambda i: {"p": f"p{i}", "q": i}), "insert")
    w.write(rows(10, 12, ts=900, note="upd", schema=schema, extra_i=lambda i: i * 3,
                 extra_s=lambda i: None if i % 2 else {"p": None, "q": -i}), "upsert")  # fmt: skip


def added_column_mor_updates(w: Writer) -> None:
    """The base files predate ``extra_i``; only the updates in the log files carry it."""
    _inserts(w, 3, 150, **NO_COMPACTION)
    schema = with_schema(("extra_i", pa.int32()))
    w.write(rows(0, 450, ts=900, note="upd", schema=schema, extra_i=lambda i: i * 3).filter(
        pa.array([i % 9 == 0 for i in range(450)])), "upsert", **NO_COMPACTION)  # fmt: skip


def added_nested_field(w: Writer) -> None:
    """A field added inside a struct by a later insert (older files' structs lack it)."""
    old = with_schema(("info", pa.struct([("a", pa.int32())])))
    new = with_schema(("info", pa.struct([("a", pa.int32()), ("b", pa.string())])))
    w.write(rows(0, 24, schema=old, info=lambda i: {"a": i}), "insert")
    w.write(rows(24, 24, schema=old, info=lambda i: None if i % 5 == 0 else {"a": i}), "insert")
    w.write(rows(48, 24, schema=new, info=lambda i: {"a": i, "b": f"b{i}"}), "insert")


def added_struct_with_required_field(w: Writer) -> None:
    """A nullable struct column added later whose struct has a non-null field: null in the older files."""
    _inserts(w, 2)
    struct = pa.struct([pa.field("z1", pa.int32(), nullable=False), pa.field("z2", pa.string())])
    schema = pa.schema(list(BASE_SCHEMA) + [pa.field("z", struct, nullable=True)])
    w.write(rows(48, 24, schema=schema, z=lambda i: {"z1": i, "z2": None if i % 2 else f"z{i}"}), "insert")


def widened_cow(w: Writer) -> None:
    """int -> long and float -> double: old files keep the narrow types."""
    old = with_schema(("w_int", pa.int32()), ("w_flt", pa.float32()), ("w_flt2", pa.float32()))
    new = with_schema(("w_int", pa.int64()), ("w_flt", pa.float64()), ("w_flt2", pa.float64()))
    for b in range(2):
        w.write(rows(b * 24, 24, schema=old, w_int=lambda i: i * 1000 + 7, w_flt=lambda i: (i + 1) / 3,
                     w_flt2=lambda i: _FLOATS[i % 8]), "insert")  # fmt: skip
    w.write(rows(48, 24, schema=new, w_int=lambda i: 2**40 + i, w_flt=lambda i: (i + 1) / 3, w_flt2=lambda i: 0.1 * i),
            "insert")  # fmt: skip


def widened_mor(w: Writer) -> None:
    """int base files, long updates in the logs."""
    old = with_schema(("w_int", pa.int32()))
    new = with_schema(("w_int", pa.int64()))
    for b in range(2):
        w.write(rows(b * 24, 24, schema=old, w_int=lambda i: i * 1000 + 7), "insert", **NO_COMPACTION)
    w.write(rows(5, 20, ts=900, note="upd", schema=new, w_int=lambda i: 2**40 + i), "upsert", **NO_COMPACTION)


def plain_inserts(w: Writer) -> None:
    _inserts(w, 3)


def plain_mor(w: Writer) -> None:
    _inserts(w, 3, **NO_COMPACTION)
    w.write(rows(3, 20, ts=900, note="upd"), "upsert", **NO_COMPACTION)


MULTI_SCHEMA = with_schema(("country", pa.string()), ("city", pa.string()))


def multi_level(w: Writer) -> None:
    for b in range(3):
        w.write(rows(b * 24, 24, schema=MULTI_SCHEMA, country=lambda i: ("de", "fr")[i % 2],
                     city=lambda i: ("a", "b", "c")[i % 3]), "insert")  # fmt: skip


URL_SCHEMA = with_schema(("path_part", pa.string()))
_AWKWARD = ("a/b", "with space", "percent%25", "x=y", "ünï", "q?&#")


def url_encoded(w: Writer) -> None:
    for b in range(3):
        w.write(rows(b * 24, 24, schema=URL_SCHEMA, path_part=lambda i: _AWKWARD[i % len(_AWKWARD)]), "insert")


TIMEKEY = {
    "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
    "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd",
    "hoodie.keygen.timebased.timezone": "UTC",
}
# Apache Hudi's own reader cannot parse a custom key generator's partition path with slashes in a part
CUSTOM_TIMEKEY = {**TIMEKEY, "hoodie.keygen.timebased.output.dateformat": "yyyyMMdd"}
EVENT_SCHEMA = with_schema(("event_ms", pa.int64()))


def _event_rows(start: int, count: int, **kw) -> pa.Table:
    return rows(start, count, schema=EVENT_SCHEMA, event_ms=lambda i: 1_700_000_000_000 + (i % 4) * 86_400_000, **kw)


def timestamp_keygen(w: Writer) -> None:
    for b in range(3):
        w.write(_event_rows(b * 24, 24), "insert")


def timestamp_keygen_mor(w: Writer) -> None:
    for b in range(3):
        w.write(_event_rows(b * 24, 24), "insert", **NO_COMPACTION)
    w.write(_event_rows(4, 30, ts=900, note="upd"), "upsert", **NO_COMPACTION)
    w.write(_event_rows(40, 6), "delete", **NO_COMPACTION)


COMPOSITE_SCHEMA = with_schema(("sub", pa.int32()))


def composite_key(w: Writer) -> None:
    for b in range(3):
        w.write(rows(b * 24, 24, schema=COMPOSITE_SCHEMA, sub=lambda i: i % 2), "insert")


def duplicates_and_late(w: Writer) -> None:
    """``insert`` keeps duplicates; a later upsert with lower ordering values loses to the stored ones."""
    w.write(rows(0, 24), "insert")
    w.write(rows(12, 24, note="dup"), "insert")  # keys k00012..23 twice
    w.write(rows(30, 10, ts=-500, note="late"), "upsert")  # older ordering values: the stored rows win


def duplicates_and_late_mor(w: Writer) -> None:
    w.write(rows(0, 48), "insert", **NO_COMPACTION)
    w.write(rows(30, 10, ts=-500, note="late"), "upsert", **NO_COMPACTION)
    w.write(rows(5, 10, ts=500, note="new"), "upsert", **NO_COMPACTION)


DELETE_SCHEMA = with_schema(("_hoodie_is_deleted", pa.bool_()))


def _with_flag(start: int, count: int, deleted: bool = False, **kw) -> pa.Table:
    return rows(start, count, schema=DELETE_SCHEMA, _hoodie_is_deleted=lambda i: deleted, **kw)


def _soft_deleted(start: int, count: int) -> pa.Table:
    """Soft deletes: the key, partition and ordering field kept, every other column null."""
    table = _with_flag(start, count, ts=700)
    for name in ("note", "n"):
        table = table.set_column(table.schema.get_field_index(name), name, pa.nulls(count, table.schema.field(name).type))
    return table


def deletes(w: Writer) -> None:
    opts = NO_COMPACTION if w.table_type == "MERGE_ON_READ" else {}
    for b in range(3):
        w.write(_with_flag(b * 24, 24), "insert", **opts)
    w.write(_with_flag(0, 8), "delete", **opts)  # hard delete
    w.write(_with_flag(20, 6, True, ts=800), "upsert", **opts)  # hard delete by _hoodie_is_deleted
    w.write(_soft_deleted(40, 6), "upsert", **opts)


def cdc(w: Writer) -> None:
    opts = {"hoodie.table.cdc.enabled": "true", **NO_COMPACTION}
    for b in range(2):
        w.write(rows(b * 24, 24), "insert", **opts)
    w.write(rows(3, 12, ts=900, note="upd"), "upsert", **opts)
    w.write(rows(30, 4), "delete", **opts)


def bulk_then_overwrite(w: Writer) -> None:
    w.write(rows(0, 48), "bulk_insert")
    w.write(rows(0, 24, note="ow").filter(pa.array([r == "us" for r in rows(0, 24)["region"].to_pylist()])),
            "insert_overwrite")  # fmt: skip
    w.write(rows(60, 24), "insert")


def cleaned_compacted_archived(w: Writer) -> None:
    opts = {**ARCHIVAL, "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"}
    for b in range(6):
        w.write(rows(b * 12, 12), "insert", **opts)
        w.write(rows(b * 12, 6, ts=100 * (b + 1), note=f"u{b}"), "upsert", **opts)


def schema_on_read(w: Writer) -> None:
    """Through Spark SQL (ALTER TABLE needs a catalog table): a column renamed, one dropped, then more inserts."""
    name = "sor_" + re.sub(r"\W", "_", w.base_path.rsplit("/", 1)[-1])
    w.sql("set hoodie.schema.on.read.enable=true")
    w.sql("set hoodie.datasource.write.schema.allow.auto.evolution.column.drop=true")
    w.sql(f"create table {name} (id string, ts bigint, note string, n int, gone string, old_name string, region string) "
          f"using hudi partitioned by (region) location '{w.base_path}' tblproperties (primaryKey='id', "
          f"preCombineField='ts', type='{'mor' if w.table_type == 'MERGE_ON_READ' else 'cow'}', "
          f"'hoodie.schema.on.read.enable'='true', 'hoodie.metadata.enable'='{str(w.metadata).lower()}')")  # fmt: skip
    for b in range(2):
        values = ", ".join(f"('k{i:05d}', {1000 + i}, 'v0-{i}', {3 * i}, 'g{i}', 'o{i}', '{REGIONS[i % 3]}')"
                           for i in range(b * 12, b * 12 + 12))  # fmt: skip
        w.sql(f"insert into {name} values {values}")
    w.sql(f"alter table {name} rename column old_name to new_name")
    w.sql(f"alter table {name} drop column gone")
    values = ", ".join(f"('k{i:05d}', {1000 + i}, 'v0-{i}', {3 * i}, 'r{i}', '{REGIONS[i % 3]}')" for i in range(24, 36))
    w.sql(f"insert into {name} values {values}")
    w.sql("set hoodie.compact.inline=false")
    w.sql(f"update {name} set note = concat('upd-', id) where n % 2 = 0")  # MOR: log files in the latest schema
    w.sql("reset hoodie.compact.inline")
    w.sql(f"drop table {name}")  # the catalog entry only; the table stays at its location
    w.sql("set hoodie.schema.on.read.enable=false")
    w.sql("set hoodie.datasource.write.schema.allow.auto.evolution.column.drop=false")


VIRTUAL_KEY_SCHEMA = with_schema(("sub", pa.int32()), ("day", pa.date32()))


def virtual_typed_mor(w: Writer) -> None:
    """A record key over a string and an int null in some rows (``sub:__null__``), updates in MOR logs. (Not a
    date: Apache Hudi's own SIMPLE index misses keys with a date part on such tables, tests/test_virtual_keys.py.)"""
    def make(start: int, count: int, **kw) -> pa.Table:
        return rows(start, count, schema=VIRTUAL_KEY_SCHEMA, sub=lambda i: None if i % 5 == 0 else -i,
                    day=lambda i: dt.date(1969, 12, 1) + dt.timedelta(days=i * 3), **kw)  # fmt: skip

    for b in range(3):
        w.write(make(b * 24, 24), "insert", **NO_COMPACTION)
    w.write(make(4, 30, ts=900, note="upd"), "upsert", **NO_COMPACTION)


def _shape(name: str, build: Build, *, writer: Mapping | None = None, **kw) -> Shape:
    return Shape(name, build, dict(writer or {}), **kw)


def writer_for(shape: Shape, spark, base_path: str) -> Writer:
    return Writer(spark, base_path, **shape.writer)  # type: ignore[arg-type]


MOR = {"table_type": "MERGE_ON_READ"}
# Hudi writes no bloom filter into a virtual-key table's files, and its BLOOM index then fails on them: such tables
# use the SIMPLE index
VIRTUAL = {"hoodie.populate.meta.fields": "false", "hoodie.index.type": "SIMPLE"}
# a table Spark SQL created: hive-style partitions; its later datasource writes keep schema on read
SCHEMA_ON_READ = {"hoodie.datasource.write.hive_style_partitioning": "true", "hoodie.schema.on.read.enable": "true"}
# Apache Hudi's Spark reader gives a timestamp key generator's source field as the partition path's string,
# hudi-rs as the column's value
EVENT_MS = ("event_ms",)

SHAPES: tuple[Shape, ...] = (
    _shape("values_cow", values_cow),
    _shape("values_mor", values_mor, writer=MOR),
    _shape("added_column_cow", added_column_cow),
    _shape("added_column_mor_updates", added_column_mor_updates, writer=MOR),
    _shape("added_nested_field", added_nested_field),
    _shape("added_struct_with_required_field", added_struct_with_required_field),
    _shape("widened_cow", widened_cow, rs_differs=("w_flt2",)),
    _shape("widened_mor", widened_mor, writer=MOR),
    _shape("schema_on_read_cow", schema_on_read, writer={"options": SCHEMA_ON_READ}),
    _shape("schema_on_read_mor", schema_on_read, writer={**MOR, "options": SCHEMA_ON_READ}),
    _shape("nonpartitioned", plain_inserts, writer={"partition_field": ""}),
    _shape("multi_level", multi_level, writer={"partition_field": "country,city"}),
    _shape("hive_style", plain_inserts, writer={"options": {"hoodie.datasource.write.hive_style_partitioning": "true"}}),
    _shape("url_encoded", url_encoded, writer={"partition_field": "path_part",
                                               "options": {"hoodie.datasource.write.partitionpath.urlencode": "true"}}),
    _shape("timestamp_keygen", timestamp_keygen, writer={"partition_field": "event_ms", "options": {
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator", **TIMEKEY}},
        rs_differs=EVENT_MS, rs_differs_after=EVENT_MS),
    _shape("custom_keygen", timestamp_keygen, writer={"partition_field": "region:SIMPLE,event_ms:TIMESTAMP", "options": {
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator", **CUSTOM_TIMEKEY}},
        hudi_rs=False),  # hudi-rs 0.5.0 takes `region:SIMPLE` for a column name
    _shape("drop_partition_columns", plain_inserts, hudi_rs=False,
           writer={"options": {"hoodie.datasource.write.drop.partition.columns": "true"}}),
    _shape("composite_key", composite_key, writer={"record_key": "id,sub"}),
    _shape("virtual_keys_cow", plain_inserts, writer={"metadata": False, "options": VIRTUAL}),
    _shape("virtual_keys_mor", plain_mor, writer={**MOR, "metadata": False, "options": VIRTUAL}),
    _shape("virtual_keys_mdt", plain_inserts, writer={"options": VIRTUAL}),
    _shape("virtual_keys_complex", composite_key, writer={"record_key": "id,sub", "metadata": False, "options": VIRTUAL}),
    _shape("duplicates_and_late", duplicates_and_late, duplicate_keys=True),
    _shape("duplicates_and_late_mor", duplicates_and_late_mor, writer=MOR),
    _shape("deletes_cow", deletes),
    _shape("deletes_mor", deletes, writer=MOR),
    _shape("cdc_cow", cdc, writer={"options": {"hoodie.table.cdc.enabled": "true"}}),
    _shape("cdc_mor", cdc, writer={**MOR, "options": {"hoodie.table.cdc.enabled": "true"}}),
    _shape("no_metadata_table", plain_inserts, writer={"metadata": False}),
    _shape("cow_v6", plain_inserts, writer={"table_version": 6, "metadata": False}),
    _shape("mor_v6", plain_mor, writer={**MOR, "table_version": 6, "metadata": False}),
    _shape("cow_v8", plain_inserts, writer={"table_version": 8}),
    _shape("mor_v8", plain_mor, writer={**MOR, "table_version": 8}),
    _shape("bulk_insert_then_overwrite", bulk_then_overwrite),
    _shape("cleaned_compacted_archived", cleaned_compacted_archived, writer=MOR),
    _shape("mor_timestamp_keygen_rli", timestamp_keygen_mor, writer={**MOR, "partition_field": "event_ms", "options": {
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
        "hoodie.metadata.record.index.enable": "true", **TIMEKEY}}, rs_differs=EVENT_MS, rs_differs_after=EVENT_MS),
    _shape("bucket_index", plain_inserts, writer={"options": {
        "hoodie.index.type": "BUCKET", "hoodie.index.bucket.engine": "SIMPLE", "hoodie.bucket.index.num.buckets": "4",
        "hoodie.bucket.index.hash.field": "id"}}, refused="simple bucket index"),
    _shape("orc_base_files", plain_inserts, writer={"options": {"hoodie.table.base.file.format": "ORC"}},
           hudi_rs=False, spark_conf={"spark.sql.orc.enableVectorizedReader": "false"},
           refused="its base files are ORC"),
    # virtual keys with the other key generators Hudi allows without meta fields (it refuses the timestamp-based and
    # custom ones: tests/test_keygen.py), typed key fields in MOR logs, and a sort by the generated record key
    _shape("virtual_keys_nonpartitioned", plain_inserts, writer={"partition_field": "", "metadata": False, "options": VIRTUAL}),
    _shape("virtual_keys_nonpartitioned_two_fields", composite_key, writer={
        "record_key": "id,sub", "partition_field": "", "metadata": False, "options": {
            **VIRTUAL, "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator"}}),
    _shape("virtual_keys_typed_mor", virtual_typed_mor, writer={**MOR, "record_key": "id,sub", "metadata": False,
                                                                 "options": VIRTUAL}),
    _shape("virtual_keys_sorted_by_key", plain_inserts, writer={"metadata": False, "options": VIRTUAL},
           options={"hoodie.clustering.plan.strategy.class": "key-range"}),
)
SHAPES_BY_NAME = {s.name: s for s in SHAPES}
