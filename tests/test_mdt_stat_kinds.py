"""Column stats of every kind Apache Hudi 1.1.1 writes are accepted, and what we write for them is Hudi's (issue 19).

The kinds: NULL-typed ranges (``ValueType`` ordinal 1, which Hudi writes for a MOR log file of a delete block), the
V1 stats of table version 8 (null ``valueType``, wrappers by Java class: ``DateWrapper``, ``DecimalWrapper``...),
every ``ValueType`` a Spark table has (int, long, float, double, string, bytes, decimal, date, timestamp, boolean),
all-null columns. As in ``test_mdt_stats``: Apache Hudi writes a table, schedules one clustering plan on two copies;
we execute one, Hudi the other, and the ``column_stats`` and ``partition_stats`` records each wrote for its instant
must agree field by field (sizes: ours are our footers').

Then what can't be merged as it is never stops a commit: a committed file's record of an unknown type or of a
type contradicting the table's is rebuilt from the file's footer (byte for byte what Hudi wrote for it), V1
records in a V2 index are converted exactly, and a log file's unusable record leaves a non-tight partition record
of the new files; the conversion rules hold as properties.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import shutil
from decimal import Decimal
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_cluster_core.api import cluster
from hudi_cluster_core.mdt import column_ranges, column_stats, deltacommit, log_block, records, value_types
from hudi_cluster_core.mdt.column_ranges import ColumnRange, ValueType
from hudi_cluster_core.mdt.hfile import read_hfile
from tests.support.apache_hudi import (
    hudi_execute_clustering, hudi_schedule_clustering, read_hoodie_properties, read_hudi_snapshot, write_hudi_table,
)  # fmt: skip
from tests.support.readers import assert_same_rows, read_hudi_rs
from tests.test_mdt_stats import _instant_records, _normalised, assert_stats_sizes_are_footers

# One plan of the whole table: one output group per partition.
CLUSTER_ALL = {
    "hoodie.clustering.plan.strategy.small.file.limit": str(100 << 20),
    "hoodie.clustering.plan.strategy.target.file.max.bytes": str(1 << 30),
    "hoodie.clustering.plan.strategy.max.bytes.per.group": str(2 << 30),
}
NO_COMPACTION = {"hoodie.compact.inline": "false"}
KINDS_SCHEMA = pa.schema([
    ("id", pa.string()), ("ts", pa.int64()), ("region", pa.string()), ("note", pa.string()), ("n", pa.int32()),
    ("big", pa.int64()), ("dbl", pa.float64()), ("flt", pa.float32()), ("dec", pa.decimal128(10, 2)),
    ("wide", pa.decimal128(38, 10)), ("day", pa.date32()), ("at", pa.timestamp("us", tz="UTC")),
    ("flag", pa.bool_()), ("blob", pa.binary()), ("empty", pa.string()),
])  # fmt: skip


def kind_rows(start: int, count: int, *, ts: int = 0, note: str = "v0") -> pa.Table:
    """Rows ``start..start+count-1``: every column type, some nulls, negative values, an all-null column."""
    data = []
    for i in range(start, start + count):
        data.append({
            "id": f"k{i:04d}", "ts": 1000 + ts + i, "region": ("us", "eu")[i % 2],
            "note": None if i % 7 == 3 else f"{note}-ünï-{i}", "n": (-1) ** i * i * 37, "big": (-1) ** i * 2**40 * i,
            "dbl": None if i % 5 == 1 else (-1) ** i * i / 3, "flt": (-1) ** i * i / 7,
            "dec": Decimal((-1) ** i * i * 1234).scaleb(-2), "wide": Decimal(i * 10**20 + 7).scaleb(-10),
            "day": dt.date(1969, 7, 20) + dt.timedelta(days=i * 40),
            "at": dt.datetime(1960, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(days=i * 400, microseconds=i),
            "flag": None if i % 4 == 2 else i % 3 == 0, "blob": bytes((i * 31 + k) % 256 for k in range(i % 5)),
            "empty": None,
        })  # fmt: skip
    return pa.Table.from_pylist(data, schema=KINDS_SCHEMA)


def _write_kinds_table(spark, base: str, table_type: str, version: int) -> None:
    """Inserts in three commits; MOR: updates in log files, then a hard delete (a delete block: NULL-typed stats
    under V2, valueless V1 stats under V1); COW: an update rewrites base files."""
    opts = {**NO_COMPACTION}
    for b in range(3):
        write_hudi_table(spark, base, kind_rows(b * 12, 12), table_type=table_type, table_version=version,
                         partition_field="region", metadata_enable=True, extra_options=opts)  # fmt: skip
    write_hudi_table(spark, base, kind_rows(3, 10, ts=500, note="upd"), operation="upsert", extra_options=opts)
    if table_type == "MERGE_ON_READ":
        write_hudi_table(spark, base, kind_rows(20, 4), operation="delete", extra_options=opts)


KINDS = {"mor_v9": ("MERGE_ON_READ", 9), "cow_v8": ("COPY_ON_WRITE", 8), "mor_v8": ("MERGE_ON_READ", 8)}


@pytest.fixture(scope="module")
def clustered(spark, tmp_path_factory):
    """kind -> (template, ours, theirs, our instant, Hudi's instant): one Hudi-written table per kind, a plan by
    Hudi's planner on each of two copies, one executed by us and one by Apache Hudi."""
    made = {}
    for kind, (table_type, version) in KINDS.items():
        root = tmp_path_factory.mktemp(f"stat_kinds_{kind}")
        template, ours, theirs = str(root / "template"), str(root / "ours"), str(root / "theirs")
        _write_kinds_table(spark, template, table_type, version)
        shutil.copytree(template, ours)
        shutil.copytree(template, theirs)
        instants = [hudi_schedule_clustering(spark, base, CLUSTER_ALL, order="n") for base in (ours, theirs)]
        assert all(instants), "Apache Hudi scheduled no clustering"
        result = cluster(ours, "execute", CLUSTER_ALL, instant_time=instants[0], spark=spark)
        assert result.instant_time == instants[0] and result.completed_file, result.message
        assert hudi_execute_clustering(spark, theirs, instants[1], CLUSTER_ALL) == [instants[1]]
        made[kind] = (template, ours, theirs, instants[0], instants[1])
    return made


def _stats_records(base: str, partition: str) -> list[dict]:
    """Every ColumnStatsMetadata Hudi or we wrote into MDT ``partition`` (log blocks), with wrapper names."""
    found = []
    for path in sorted(Path(base, ".hoodie/metadata", partition).glob(".*.log.*[0-9]")):
        for block in log_block.read_blocks(path.read_bytes()):
            if block.type is log_block.BlockType.HFILE_DATA:
                schema = fastavro.parse_schema(json.loads(block.header[log_block.HeaderKey.SCHEMA]))
                for _, value in read_hfile(block.content).entries:
                    record = fastavro.schemaless_reader(io.BytesIO(value), schema, None, return_record_name=True,
                                                        return_record_name_override=True)  # fmt: skip
                    found.append(record["ColumnStatsMetadata"])
    return found


# ------------------------------------------------------------------------------- the kinds Hudi writes


def test_the_tables_hold_every_kind_of_stats(clustered):
    """The set-up is what it claims: the v9 MOR table has NULL-typed log stats and typed ones of every type, the v8
    tables V1 stats (null valueType) with Date and Decimal wrappers, and an index definition at V1."""
    v9 = _stats_records(clustered["mor_v9"][0], "column_stats")
    ordinals = {(s["valueType"] or {}).get("typeOrdinal") for s in v9}
    assert {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16} <= ordinals, ordinals
    assert any(s["valueType"]["typeOrdinal"] == 1 and ".log." in s["fileName"] for s in v9)
    for kind in ("cow_v8", "mor_v8"):
        template = clustered[kind][0]
        v1 = _stats_records(template, "column_stats")
        assert v1 and all(s["valueType"] is None for s in v1)
        wrappers = {s["minValue"][0].rsplit(".", 1)[1] for s in v1 if s["minValue"] is not None}
        assert {"DateWrapper", "DecimalWrapper", "StringWrapper", "LongWrapper", "IntWrapper"} <= wrappers, wrappers
        assert column_stats.index_version(records_storage(template), read_hoodie_properties(template)) == 1


def records_storage(base: str | Path):
    from hudi_cluster_core.io.storage import Storage

    return Storage(str(base))


@pytest.mark.parametrize("kind", list(KINDS))
def test_stats_records_equal_apache_hudis_own_clustering(clustered, kind):
    """column_stats and partition_stats of the clustering, record by record: keys, wrappers, values, counts, value
    types (null under V1), tight-bound flags."""
    _, ours, theirs, instant, hudi_instant = clustered[kind]
    mine, hudis = _normalised(ours, instant), _normalised(theirs, hudi_instant)
    assert {k[0] for k in hudis} == {"column_stats", "partition_stats"}
    assert sorted(mine) == sorted(hudis)
    differing = {k: (mine[k], hudis[k]) for k in hudis if mine[k] != hudis[k]}
    assert not differing, "\n".join(f"{k}:\n  ours {a}\n  hudi {b}" for k, (a, b) in list(differing.items())[:5])


@pytest.mark.parametrize("kind", list(KINDS))
def test_stats_sizes_are_our_footers_and_partition_sizes_swap_hudis_new_files_for_ours(clustered, kind):
    _, ours, theirs, instant, hudi_instant = clustered[kind]
    assert_stats_sizes_are_footers(ours, theirs, instant, hudi_instant)


SKIPPING = {"hoodie.enable.data.skipping": "true", "hoodie.metadata.enable": "true",
            "hoodie.metadata.index.column.stats.enable": "true"}  # fmt: skip


@pytest.mark.parametrize("kind", list(KINDS))
def test_reads_with_data_skipping_and_the_next_upsert(spark, clustered, kind, tmp_path):
    """Apache Hudi reads our copy with data skipping (column stats and partition stats) as hudi-rs reads it, then
    upserts into it (recomputing partition stats over our records) and still reads every key."""
    _, ours, _, _, _ = clustered[kind]
    base = str(tmp_path / "t")
    shutil.copytree(ours, base)
    everything = read_hudi_rs(base, options={"hoodie.metadata.enable": "true"})
    reader = spark.read.format("hudi")
    for key, value in SKIPPING.items():
        reader = reader.option(key, value)
    for condition, selects in (("n > 300", lambda r: r["n"] > 300),
                               ("day < date'1971-01-01'", lambda r: r["day"] < dt.date(1971, 1, 1)),
                               ("dec < 0", lambda r: r["dec"] < 0), ("big >= 0", lambda r: r["big"] >= 0),
                               ("note < 'upd-ünï-9'", lambda r: r["note"] is not None and r["note"] < "upd-ünï-9")):  # fmt: skip
        got = [row["id"] for row in reader.load(base).filter(condition).select("id").collect()]
        want = [r["id"] for r in everything.to_pylist() if selects(r)]
        assert 0 < len(want) < everything.num_rows and sorted(got) == sorted(want), condition
    write_hudi_table(spark, base, kind_rows(0, 6, ts=900, note="final"), operation="upsert", extra_options=NO_COMPACTION)
    after = read_hudi_snapshot(spark, base)
    assert sorted(after["id"].to_pylist()) == sorted(everything["id"].to_pylist())
    assert_same_rows(after, read_hudi_rs(base), labels=("Apache Hudi", "hudi-rs"))


def test_default_columns_are_the_ones_hudi_recorded(clustered):
    """With no ``sourceFields`` recorded, Hudi's rule picks what Hudi itself recorded: under V1 no decimal that
    DecimalWrapper can't hold (``wide``, decimal(38,10)), bytes kept (Hudi's default Avro merger)."""
    from hudi_cluster_core.io.storage import Storage
    from hudi_cluster_core.table import load_table
    from hudi_cluster_core.table.schema import table_schema

    for kind in KINDS:
        template = clustered[kind][0]
        defs_path = Path(template, ".hoodie/.index_defs/index.json")
        recorded = json.loads(defs_path.read_text())["indexDefinitions"]["column_stats"]["sourceFields"]
        copy = Path(clustered[kind][1]).parent / f"defaults_{kind}"
        shutil.copytree(template, copy)
        defs = json.loads(Path(copy, ".hoodie/.index_defs/index.json").read_text())
        defs["indexDefinitions"]["column_stats"]["sourceFields"] = []
        Path(copy, ".hoodie/.index_defs/index.json").write_text(json.dumps(defs))
        storage = Storage(str(copy))
        columns = column_stats.indexed_columns(storage, read_hoodie_properties(copy), table_schema(load_table(str(copy))))
        assert columns == recorded, kind
        assert ("wide" in columns) == (kind == "mor_v9") and "blob" in columns


# ------------------------------------------------------------- what can't be merged never stops a commit


def test_a_column_the_schema_no_longer_has_is_not_indexed(table_copy):
    """``sourceFields`` naming a column the table schema no longer has (dropped by schema evolution): the column is
    neither indexed for the new files nor merged into partition stats (Hudi takes its columns from the schema)."""
    from hudi_cluster_core.table import load_table
    from hudi_cluster_core.table.schema import table_schema

    base = Path(table_copy(TXNS))
    defs_path = base / ".hoodie/.index_defs/index.json"
    defs = json.loads(defs_path.read_text())
    recorded = defs["indexDefinitions"]["column_stats"]["sourceFields"]
    defs["indexDefinitions"]["column_stats"]["sourceFields"] = [*recorded[:5], "gone", *recorded[5:]]
    defs_path.write_text(json.dumps(defs))
    columns = column_stats.indexed_columns(records_storage(base), read_hoodie_properties(base),
                                           table_schema(load_table(str(base))))  # fmt: skip
    assert columns == recorded

TXNS = "cow_v9_txns_simple_overwrite"
TXNS_DONE = "20260403184001282_20260403184002260.replacecommit"
TXNS_OLD_FILE = ("eu", "edc44bf5-7467-412e-9395-4b5646ee26c4-0_0-27-64_20260403183955124.parquet")


def _pending_commit(base: Path, done: str):
    """The completed commit ``done`` of a fixture made pending again, as CommitFiles for our builders."""
    from hudi_cluster_core.io.storage import Storage
    from hudi_cluster_core.mdt.commit_files import CommitFiles

    completed = base / ".hoodie/timeline" / done
    meta = next(iter(fastavro.reader(io.BytesIO(completed.read_bytes()))))
    completed.unlink()
    return CommitFiles(Storage(str(base)), done.split("_")[0], meta["partitionToWriteStats"],
                       meta.get("partitionToReplaceFileIds") or {}, read_hoodie_properties(base))  # fmt: skip


def _hudis_values(base: Path, instant: str, partition: str) -> dict[str, bytes]:
    found = {}
    for path in base.glob(f".hoodie/metadata/{partition}/.*_{instant}.log.*[0-9]"):
        for block in log_block.read_blocks(path.read_bytes()):
            found.update({k.decode(): v for k, v in read_hfile(block.content).entries})
    return found


def _committed_range(storage, partition: str, file_name: str, column: str) -> ColumnRange:
    from hudi_cluster_core.mdt import index_keys
    from hudi_cluster_core.mdt.partition_reader import read_partition

    key = index_keys.column_stats_key(column, partition, file_name)
    merged = column_stats._merged_range(read_partition(storage, "column_stats", {key}.__contains__)[key])
    assert merged is not None
    return merged


def _inject(storage, instant: str, stats: list[dict]) -> None:
    """A metadata-table deltacommit (of an instant the data table never had) putting ``stats`` into column_stats,
    each keyed by its column, partition and file name."""
    from hudi_cluster_core.mdt import index_keys

    partition_of = {name: partition for partition, name in [TXNS_OLD_FILE]}
    rows = [records.MetadataRecord(index_keys.column_stats_key(s["columnName"], partition_of.get(s["fileName"], s.pop("-partition", "")),
                                                               s["fileName"]), records.RecordType.COLUMN_STATS,
                                   {"ColumnStatsMetadata": {k: v for k, v in s.items() if k != "-partition"}})
            for s in stats]  # fmt: skip
    deltacommit.begin(storage, instant)
    written = deltacommit.write_partition(storage, instant, "column_stats", rows)
    deltacommit.complete(storage, instant, written, completion_time=instant[:-3] + "999")


def _txns_column(storage, column: str):
    from hudi_cluster_core.table import load_table
    from hudi_cluster_core.table.schema import table_schema

    return column_stats._schema_fields(table_schema(load_table(storage.base_uri)))[column]


def test_unusable_stats_of_a_base_file_are_rebuilt_from_its_footer_as_hudi_wrote_them(table_copy):
    """A committed base file's records replaced (tight bound) by ones of an unknown type (ordinal 42), of a type
    contradicting the table's (a string range for a decimal column), and by their V1 renditions (null valueType,
    DateWrapper, DecimalWrapper, LongWrapper: converted exactly): our partition stats for Hudi's own insert_overwrite
    are still byte for byte the ones Hudi wrote."""
    base = Path(table_copy(TXNS))
    commit = _pending_commit(base, TXNS_DONE)
    storage, (partition, name) = commit.storage, TXNS_OLD_FILE
    bad = []
    for column in ("txn_ts", "is_international"):  # unknown type
        stats = _committed_range(storage, partition, name, column).avro(tight_bound=True)
        bad.append({**stats, "valueType": {"typeOrdinal": 42, "additionalInfo": None}})
    amount = _committed_range(storage, partition, name, "amount")
    bad.append({**amount.avro(tight_bound=True), "valueType": {"typeOrdinal": column_ranges.STRING, "additionalInfo": None},
                "minValue": {"-type": column_ranges._NS + "StringWrapper", "value": "0"},
                "maxValue": {"-type": column_ranges._NS + "StringWrapper", "value": "zz"}})  # fmt: skip
    for column in ("txn_date", "fee_amount", "txn_datetime", "currency"):  # V1 renditions
        found = _committed_range(storage, partition, name, column)
        v1 = value_types.convert(found, value_types.table_type(_txns_column(storage, column), 1))
        assert v1 is not None and v1.value_type.ordinal == column_ranges.V1, column
        bad.append(v1.avro(tight_bound=True))
    assert {s["minValue"]["-type"].rsplit(".", 1)[1] for s in bad[-4:]} == {"DateWrapper", "DecimalWrapper",
                                                                           "LongWrapper", "StringWrapper"}  # fmt: skip
    _inject(storage, "20260403184009000", bad)
    theirs = _hudis_values(base, commit.instant_time, "partition_stats")
    ours = {r.key: records.encode_value(r) for r in column_stats.partition_stats_records(commit)}
    assert len(ours) == len(theirs) > 0 and ours == theirs


def test_an_unusable_stat_of_a_log_file_leaves_a_non_tight_record_of_the_new_files(spark, clustered, tmp_path, caplog):
    """A log file's record of column ``n`` replaced by one of an unknown type (no footer to rebuild it from): our
    clustering still commits; that column's partition record covers our new files alone, not tight-bound (Hudi's
    readers merge it into the record they have), with a warning naming the file; every other record is tight."""
    import logging

    from hudi_cluster_core.io.storage import Storage

    base = tmp_path / "t"
    shutil.copytree(clustered["mor_v9"][0], base)
    storage = Storage(str(base))
    logs = [p for p in sorted(Path(base, "us").glob(".*.log.*[0-9]"))]
    typed = [(p, r) for p in logs if (r := _committed_range(storage, "us", p.name, "n")).value_type.ordinal == column_ranges.INT]
    log_file, found = typed[0]  # an update's log file (a delete's has NULL-typed stats)
    _inject(storage, "20000101000000000", [{**found.avro(tight_bound=True), "-partition": "us",
                                            "valueType": {"typeOrdinal": 42, "additionalInfo": None}}])  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="hudi_cluster_core"):
        result = cluster(str(base), "scheduleAndExecute", CLUSTER_ALL, spark=spark)
    assert result.completed_file, result.message
    assert any(log_file.name in r.getMessage() and "'n'" in r.getMessage() for r in caplog.records)
    written = _instant_records(str(base), result.instant_time)
    partition_stats = {(s["fileName"], s["columnName"]): s for s in
                       (r["ColumnStatsMetadata"] for r in written["partition_stats"].values())}  # fmt: skip
    assert [k for k, s in partition_stats.items() if not s["isTightBound"]] == [("us", "n")]
    new_ranges = [column_ranges.from_avro(r["ColumnStatsMetadata"]) for r in written["column_stats"].values()]
    expected = column_ranges.merge_all(r for r in new_ranges if r.column == "n" and (Path(base, "us") / r.name).exists())
    assert expected is not None
    assert column_ranges.from_avro(partition_stats[("us", "n")]) == replace_name(expected, "us")


def replace_name(column_range: ColumnRange, name: str) -> ColumnRange:
    from dataclasses import replace

    return replace(column_range, name=name)


# ------------------------------------------------------------------------------------------ properties

_V1 = {w: ValueType(column_ranges.V1, v1_wrapper=w) for w in column_ranges.V1_WRAPPERS}
_INT_T, _LONG_T, _DOUBLE_T = ValueType(column_ranges.INT), ValueType(column_ranges.LONG), ValueType(column_ranges.DOUBLE)


def _number(value_type: ValueType, value) -> Decimal:
    """The exact number a stored value stands for (decimals: their value; ints, longs, doubles: themselves)."""
    return Decimal(value_types._to_number(value_type, value))


_SOURCES = {  # a type and values of it (as stored)
    "int": (_INT_T, st.integers(-(2**31), 2**31 - 1)),
    "long": (_LONG_T, st.integers(-(2**62), 2**62)),
    "v1 int": (_V1["IntWrapper"], st.integers(-(2**31), 2**31 - 1)),
    "v1 long": (_V1["LongWrapper"], st.integers(-(2**62), 2**62)),
    "decimal(12,4)": (ValueType(column_ranges.DECIMAL, "12,4"),
                      st.integers(-(10**12) + 1, 10**12 - 1).map(column_ranges.java_bytes)),
    "v1 decimal": (_V1["DecimalWrapper"], st.integers(-(10**20), 10**20).map(lambda u: Decimal(u).scaleb(-15))),
}
_TARGETS = [_LONG_T, _DOUBLE_T, ValueType(column_ranges.DECIMAL, "20,2"), ValueType(column_ranges.DECIMAL, "38,10"),
            ValueType(column_ranges.DECIMAL, "6,0"), _V1["LongWrapper"], _V1["DecimalWrapper"],
            ValueType(column_ranges.STRING), ValueType(column_ranges.DATE)]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(_SOURCES)).flatmap(lambda s: st.tuples(st.just(s), st.lists(_SOURCES[s][1], min_size=1,
                                                                                          max_size=5))),
       st.sampled_from(_TARGETS))  # fmt: skip
def test_a_converted_range_still_bounds_every_value_or_is_refused(case, target):
    """Converting stats to another type either gives a range whose min and max bound every value of the file in
    the new type (rounded outwards where a scale shrinks; doubles within Java's rounding), or None: never wrong
    bounds, never an error."""
    source_name, values = case
    source = _SOURCES[source_name][0]
    key = lambda v: column_ranges.java_key(source, v)  # noqa: E731
    low, high = min(values, key=key), max(values, key=key)
    original = ColumnRange("f", "c", low, high, 1, len(values) + 1, 10, 20, source)
    converted = value_types.convert(original, target)
    if converted is None:
        return
    assert converted.value_type == target and (converted.null_count, converted.value_count) == (1, len(values) + 1)
    if target.kind == column_ranges.DOUBLE:
        assert converted.min == float(_number(source, low)) and converted.max == float(_number(source, high))
        return
    # the kinds that keep a value's number: longs, decimals, and ints read as days (a V1 IntWrapper of a date)
    assert target.kind in (column_ranges.LONG, column_ranges.DECIMAL, column_ranges.DATE), f"{source} -> {target}"
    for value in values:
        assert _number(target, converted.min) <= _number(source, value) <= _number(target, converted.max)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(_SOURCES)).flatmap(lambda s: st.tuples(st.just(s), _SOURCES[s][1])),
       st.integers(0, 9), st.integers(0, 9), st.booleans())  # fmt: skip
def test_a_null_typed_range_merges_into_a_typed_one(case, nulls, values, null_first):
    """A NULL-typed range (a delete block's) or a valueless V1 one takes any type with its counts, and merging it
    with a typed range gives the typed range with the counts summed, in either order."""
    name, value = case
    typed = ColumnRange("f", "c", value, value, 2, 5, 7, 9, _SOURCES[name][0])
    for empty_type in (ValueType(column_ranges.NULL), ValueType(column_ranges.V1)):
        empty = ColumnRange("g", "c", None, None, nulls, values, 0, 0, empty_type)
        assert value_types.convert(empty, typed.value_type) == ColumnRange("g", "c", None, None, nulls, values, 0, 0,
                                                                           typed.value_type)  # fmt: skip
        merged = column_ranges.merge(empty, typed) if null_first else column_ranges.merge(typed, empty)
        assert (merged.min, merged.max, merged.value_type) == (value, value, typed.value_type)
        assert (merged.null_count, merged.value_count) == (2 + nulls, 5 + values)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(_SOURCES)).flatmap(lambda s: st.tuples(st.just(s), _SOURCES[s][1], _SOURCES[s][1])),
       st.booleans())  # fmt: skip
def test_records_read_back_as_written(case, tight):
    """V1 and V2 records encoded with the metadata table's block schema and read back as our reader reads them
    give the same range (V1 decimals through DecimalWrapper's decimal(30,15))."""
    name, a, b = case
    source = _SOURCES[name][0]
    key = lambda v: column_ranges.java_key(source, v)  # noqa: E731
    original = ColumnRange("f.parquet", "c", min(a, b, key=key), max(a, b, key=key), 1, 3, 10, 20, source)
    record = records.MetadataRecord("k", records.RecordType.COLUMN_STATS, {"ColumnStatsMetadata": original.avro(tight_bound=tight)})
    schema = fastavro.parse_schema(json.loads(records.block_schema_json()))
    decoded = fastavro.schemaless_reader(io.BytesIO(records.encode_value(record)), schema, None, return_record_name=True,
                                         return_record_name_override=True)  # fmt: skip
    assert column_ranges.from_avro(decoded["ColumnStatsMetadata"]) == original
    assert (decoded["ColumnStatsMetadata"]["valueType"] is None) == (source.ordinal == column_ranges.V1)
