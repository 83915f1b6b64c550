"""The clustering commit keeps the metadata table's stats partitions: ``column_stats``, ``partition_stats`` and
``bloom_filters`` (issue 11).

The strongest check: Apache Hudi 1.1.1 schedules one clustering plan on a table it wrote with the metadata table on;
two copies of that table then execute the same plan (same instant), one with our clustering and one with Hudi's
own. The MDT records each side wrote for the instant must agree field by field, modulo file names: keys, columns,
min/max with their wrapper types, value/null counts, value types, tight-bound and deleted flags, bloom filter type
and timestamp. Sizes are where the two writers differ (parquet-mr vs pyarrow pages): ours must equal our footers,
and our partition stats must equal Hudi's with Hudi's new-file sizes swapped for ours.

Then on our copy: Hudi's ``show_metadata_table_column_stats`` returns every new file's footer stats; reads with
data skipping on return exactly hudi-rs's rows for filters on indexed columns; Hudi's next upsert re-initialises no
metadata partition and reads stay right. COW (with bloom_filters) and MOR (log updates and deletes) tables.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import math
import struct
import shutil
from decimal import Decimal
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_cluster_core.api import cluster
from hudi_cluster_core.mdt import column_ranges, footers, index_keys, log_block, value_types
from hudi_cluster_core.mdt.column_ranges import ColumnRange, ValueType
from hudi_cluster_core.mdt.hfile import read_hfile
from tests.support.apache_hudi import (
    SMALL_FILE_SCHEMA, hudi_execute_clustering, hudi_schedule_clustering, hudi_upsert, make_small_file_table,
    make_updates, read_hoodie_properties, read_hudi_snapshot, write_hudi_table,
)  # fmt: skip
from tests.support.hudi_metadata import hudi_metadata
from tests.support.readers import assert_same_rows, read_hudi_rs

STATS_PARTITIONS = ("column_stats", "partition_stats", "bloom_filters")
BLOOM_ON = {"hoodie.metadata.index.bloom.filter.enable": "true"}
RS_MDT = {"hoodie.metadata.enable": "true"}


# ------------------------------------------------------------------------------------------- table set-up


def _make_template(spark, base: str, table_type: str, extra: dict[str, str]) -> None:
    """A Hudi-written table with the MDT on (MOR: with log updates and deletes)."""
    rows = make_small_file_table(spark, base, batches=3, rows_per_batch=12, table_type=table_type,
                                 metadata_enable=True, extra_options=extra)  # fmt: skip
    if table_type == "MERGE_ON_READ":
        hudi_upsert(spark, base, make_updates(rows.slice(0, 8)), extra_options=extra)  # log files
        write_hudi_table(spark, base, rows.slice(30, 3), operation="delete", extra_options=extra)  # delete blocks


@pytest.fixture(scope="module")
def clustered(spark, tmp_path_factory):
    """kind -> (ours, theirs, our instant, Hudi's instant, options, rows before): two copies of one Hudi-written
    table, each given a plan by Hudi's planner (plans hold absolute paths, so each copy gets its own), one
    executed by us and one by Apache Hudi."""
    made = {}
    for kind, table_type, extra in (("cow", "COPY_ON_WRITE", BLOOM_ON), ("mor", "MERGE_ON_READ", {})):
        root = tmp_path_factory.mktemp(f"mdt_stats_{kind}")
        template = str(root / "template")
        _make_template(spark, template, table_type, extra)
        ours, theirs = str(root / "ours"), str(root / "theirs")
        shutil.copytree(template, ours)
        shutil.copytree(template, theirs)
        before = read_hudi_snapshot(spark, template)
        instants = []
        for base in (ours, theirs):
            instant = hudi_schedule_clustering(spark, base, extra, order="c_int")
            assert instant, "Apache Hudi scheduled no clustering"
            instants.append(instant)
        result = cluster(ours, "execute", extra, instant_time=instants[0], spark=spark)
        assert result.instant_time == instants[0] and result.completed_file, result.message
        assert hudi_execute_clustering(spark, theirs, instants[1], extra) == [instants[1]]
        made[kind] = (ours, theirs, instants[0], instants[1], extra, before)
    return made


# ---------------------------------------------------------------------------------------- reading the MDT


def _instant_records(base: str, instant: str) -> dict[str, dict[str, dict]]:
    """MDT partition -> key -> decoded record, of the blocks instant ``instant`` wrote."""
    found: dict[str, dict[str, dict]] = {}
    for path in sorted(Path(base, ".hoodie/metadata").glob(f"*/.*_{instant}.log.*[0-9]")):  # no .crc
        for block in log_block.read_blocks(path.read_bytes()):
            if block.type is not log_block.BlockType.HFILE_DATA:
                continue
            schema = fastavro.parse_schema(json.loads(block.header[log_block.HeaderKey.SCHEMA]))
            for row, value in read_hfile(block.content).entries:
                record = fastavro.schemaless_reader(io.BytesIO(value), schema, None, return_record_name=True,
                                                    return_record_name_override=True)  # fmt: skip
                found.setdefault(path.parent.name, {})[row.decode()] = record
    return found


def _new_files(base: str, instant: str) -> dict[str, Path]:
    return {p.name: p for p in Path(base).rglob(f"*_{instant}.parquet") if ".hoodie" not in p.parts}


def _canonical_names(base: str, instant: str) -> dict[str, str]:
    """New file name -> a name both sides share: partition + the file's smallest record key."""
    names = {}
    for name, path in _new_files(base, instant).items():
        keys = pq.read_table(path, columns=["_hoodie_record_key"]).column(0).to_pylist()
        names[name] = f"{path.parent.name}/{min(keys)}"
    return names


def _normalised(base: str, instant: str) -> dict[tuple, dict]:
    """The stats records of ``instant``, keyed and stripped of what names or sizes a file: (partition, key
    modulo file id, canonical file) -> fields. Sizes are checked separately."""
    canonical = _canonical_names(base, instant)
    by_md5 = {index_keys.file_id(name): label for name, label in canonical.items()}
    result = {}
    for partition, records in _instant_records(base, instant).items():
        if partition not in STATS_PARTITIONS:
            continue
        for key, record in records.items():
            if partition == "bloom_filters":
                bloom = dict(record["BloomFilterMetadata"])
                assert bloom.pop("timestamp") == instant
                file_label = by_md5[key[12:]]
                result[(partition, key[:12], file_label)] = {"type": record["type"], **bloom}
                continue
            stats = dict(record["ColumnStatsMetadata"])
            file_label = canonical.get(stats["fileName"], stats["fileName"])
            for size in ("totalSize", "totalUncompressedSize"):
                stats.pop(size)
            stats["fileName"] = file_label
            result[(partition, key[:24], file_label)] = {"type": record["type"], **stats}
    return result


# ------------------------------------------------------------------------------------- the same as Hudi's


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_stats_records_equal_apache_hudis_own_clustering(clustered, kind):
    ours, theirs, instant, hudi_instant, _, _ = clustered[kind]
    mine, hudis = _normalised(ours, instant), _normalised(theirs, hudi_instant)
    expected = {"column_stats", "partition_stats"} | ({"bloom_filters"} if kind == "cow" else set())
    assert {k[0] for k in hudis} == expected, "Hudi's own clustering wrote other partitions than the test expects"
    assert sorted(mine) == sorted(hudis)
    differing = {k: (mine[k], hudis[k]) for k in hudis if mine[k] != hudis[k]}
    assert not differing, "\n".join(f"{k}:\n  ours {a}\n  hudi {b}" for k, (a, b) in list(differing.items())[:5])


def _footer_sizes(path: Path) -> dict[str, tuple[int, int]]:
    """Column -> (compressed, uncompressed) bytes summed over the file's row groups (pyarrow's footer view)."""
    metadata = pq.read_metadata(path)
    sizes: dict[str, tuple[int, int]] = {}
    for group in range(metadata.num_row_groups):
        for index in range(metadata.num_columns):
            chunk = metadata.row_group(group).column(index)
            done = sizes.get(chunk.path_in_schema, (0, 0))
            sizes[chunk.path_in_schema] = (done[0] + chunk.total_compressed_size, done[1] + chunk.total_uncompressed_size)
    return sizes


def _sizes_by(base: str, instant: str, partition: str) -> dict[tuple[str, str], tuple[int, int]]:
    """(fileName, column) -> (totalSize, totalUncompressedSize) of the stats records ``instant`` wrote."""
    records = _instant_records(base, instant).get(partition, {})
    return {(r["ColumnStatsMetadata"]["fileName"], r["ColumnStatsMetadata"]["columnName"]):
            (r["ColumnStatsMetadata"]["totalSize"], r["ColumnStatsMetadata"]["totalUncompressedSize"])
            for r in records.values()}  # fmt: skip


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_stats_sizes_are_our_footers_and_partition_sizes_swap_hudis_new_files_for_ours(clustered, kind):
    ours, theirs, instant, hudi_instant, _, _ = clustered[kind]
    file_sizes = _sizes_by(ours, instant, "column_stats")
    assert {name for name, _ in file_sizes} == set(_new_files(ours, instant))
    assert_stats_sizes_are_footers(ours, theirs, instant, hudi_instant)


def assert_stats_sizes_are_footers(ours: str, theirs: str, instant: str, hudi_instant: str) -> None:
    """Our clustering's column stats carry each new file's footer sizes, and its partition stats are Hudi's (after
    Hudi's own clustering of the same table) with Hudi's new files' sizes swapped for ours."""
    new_ours, new_theirs = _new_files(ours, instant), _new_files(theirs, hudi_instant)
    for (name, column), sizes in _sizes_by(ours, instant, "column_stats").items():
        assert sizes == _footer_sizes(new_ours[name])[column], (name, column)
    # partition stats merge committed files' stats (the same on both copies) with the new files' stats
    theirs_by_partition = _sizes_by(theirs, hudi_instant, "partition_stats")
    for (partition, column), sizes in _sizes_by(ours, instant, "partition_stats").items():
        hudi_total = theirs_by_partition[(partition, column)]
        hudi_new = [_footer_sizes(p)[column] for p in new_theirs.values() if p.parent.name == partition]
        our_new = [_footer_sizes(p)[column] for p in new_ours.values() if p.parent.name == partition]
        expected = tuple(hudi_total[i] - sum(s[i] for s in hudi_new) + sum(s[i] for s in our_new) for i in (0, 1))
        assert sizes == expected, (partition, column)


# ------------------------------------------------------------------ Hudi's own records in the shared fixtures


def _fixture_column_stats(table: Path) -> dict[str, dict]:
    return {key: record["ColumnStatsMetadata"] for path in sorted(table.glob(".hoodie/metadata/column_stats/.*.log.*"))
            for key, record in _block_records(path).items()}  # fmt: skip


def _block_records(path: Path) -> dict[str, dict]:
    found = {}
    for block in log_block.read_blocks(path.read_bytes()):
        if block.type is log_block.BlockType.HFILE_DATA:
            schema = fastavro.parse_schema(json.loads(block.header[log_block.HeaderKey.SCHEMA]))
            for row, value in read_hfile(block.content).entries:
                found[row.decode()] = fastavro.schemaless_reader(io.BytesIO(value), schema, None, return_record_name=True,
                                                                 return_record_name_override=True)  # fmt: skip
    return found


@pytest.mark.parametrize("name, count", [("cow_v9_txns_simple_overwrite", 128), ("mor_v9_nonpartitioned_rollback", 30)])
def test_footer_stats_and_keys_equal_hudis_column_stats_records_in_the_fixtures(fixtures_dir, name, count):
    """Every column_stats record Apache Hudi wrote into the fixture is reproduced from the file's footer: the key,
    the wrapper record of min/max, the values, counts, sizes and value type (timestamps, dates, decimals,
    booleans, strings, longs)."""
    table = fixtures_dir / name
    records = _fixture_column_stats(table)
    assert len(records) == count
    wrappers = set()
    for key, stats in records.items():
        (path,) = [p for p in table.rglob(stats["fileName"]) if ".hoodie" not in p.parts]
        partition = "" if path.parent == table else path.parent.name
        assert index_keys.column_stats_key(stats["columnName"], partition, stats["fileName"]) == key
        (ours,) = footers.footer_ranges(pq.read_metadata(path), stats["fileName"], [stats["columnName"]])
        assert ours == column_ranges.from_avro(stats), (stats["fileName"], stats["columnName"])
        mine = ours.avro()
        for side in ("minValue", "maxValue"):
            if stats[side] is not None:
                assert mine[side]["-type"] == stats[side][0]  # the same wrapper branch of the union
                wrappers.add(stats[side][0].rsplit(".", 1)[1])
    if name.startswith("cow"):
        assert {"StringWrapper", "LongWrapper", "IntWrapper", "BytesWrapper", "BooleanWrapper"} <= wrappers


def test_partition_stats_keys_of_the_fixture(fixtures_dir):
    table = fixtures_dir / "cow_v9_txns_simple_overwrite"
    for path in table.glob(".hoodie/metadata/partition_stats/.*.log.*"):
        for key, record in _block_records(path).items():
            stats = record["ColumnStatsMetadata"]
            assert index_keys.partition_stats_key(stats["columnName"], stats["fileName"]) == key
            assert stats["isTightBound"] is True


# ----------------------------------------------------------------------------------------- properties


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=-(2**130), max_value=2**130))
def test_java_bytes_is_the_shortest_twos_complement(number):
    raw = column_ranges.java_bytes(number)
    assert int.from_bytes(raw, "big", signed=True) == number
    redundant_sign_byte = len(raw) > 1 and (raw[0], raw[1] >> 7) in ((0, 0), (255, 1))
    assert not redundant_sign_byte, raw.hex()


_VALUES = {
    ValueType(column_ranges.STRING): st.text(max_size=6),
    ValueType(column_ranges.LONG): st.integers(min_value=-(2**63), max_value=2**63 - 1),
    ValueType(column_ranges.DOUBLE): st.floats(allow_nan=True, allow_infinity=True),
    ValueType(column_ranges.DECIMAL, "10,2"): st.integers(min_value=-(10**10), max_value=10**10).map(column_ranges.java_bytes),
    ValueType(column_ranges.BYTES): st.binary(max_size=4),
}


def _java_order_reference(value_type: ValueType, value):
    """Java's compareTo, written independently: UTF-16 units, signed bytes, Double.compare (via
    doubleToLongBits, NaN canonical), BigDecimal by value."""
    kind = value_type.ordinal
    if kind == column_ranges.STRING:
        raw = value.encode("utf-16-be")
        return list(struct.unpack(f">{len(raw) // 2}H", raw))
    if kind == column_ranges.BYTES:
        return list(struct.unpack(f"{len(value)}b", value))
    if kind == column_ranges.DECIMAL:
        return Decimal(int.from_bytes(value, "big", signed=True))
    if kind == column_ranges.DOUBLE:
        (bits,) = struct.unpack(">q", struct.pack(">d", float("nan") if math.isnan(value) else value))
        if math.isnan(value):
            bits = 0x7FF8000000000000
        return bits ^ ((bits >> 63) & 0x7FFFFFFFFFFFFFFF)
    return value


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(_VALUES, key=lambda v: v.ordinal)).flatmap(
    lambda vt: st.tuples(st.just(vt), st.lists(st.tuples(st.one_of(st.none(), _VALUES[vt]), st.integers(0, 50)),
                                                min_size=1, max_size=6))), st.randoms())  # fmt: skip
def test_merging_ranges_is_min_max_and_sums_in_any_order(case, rng):
    value_type, parts = case
    ranges = [ColumnRange(f"f{i}", "c", v, v, n, n + (v is not None), 10 * n, 20 * n, value_type)
              for i, (v, n) in enumerate(parts)]  # fmt: skip
    shuffled = list(ranges)
    rng.shuffle(shuffled)
    total, again = column_ranges.merge_all(ranges), column_ranges.merge_all(shuffled)
    assert total is not None and again is not None
    values = [v for v, _ in parts if v is not None]
    key = lambda v: _java_order_reference(value_type, v)  # noqa: E731
    if values:
        assert key(total.min) == key(min(values, key=key)) and key(total.max) == key(max(values, key=key))
        assert key(again.min) == key(total.min) and key(again.max) == key(total.max)
    else:
        assert total.min is None and total.max is None
    assert (total.null_count, total.value_count, total.total_size) == (again.null_count, again.value_count, again.total_size)
    assert total.value_count == sum(r.value_count for r in ranges) and total.null_count == sum(n for _, n in parts)


# --------------------------------------------------------------------------- Apache Hudi reads our records


def _sql(value: str) -> str:
    return "'" + value.replace("'", "\\'") + "'"


def _expected_shown(values: pa.ChunkedArray, which: str) -> str:
    """How ``show_metadata_table_column_stats`` prints a min/max of ours, computed from the rows themselves."""
    value = (pc.min if which == "min" else pc.max)(values).as_py()
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, Decimal):  # the stored unscaled bytes, printed as a Java byte[]
        unscaled = int(value.scaleb(values.type.scale))
        return str([b - 256 if b > 127 else b for b in column_ranges.java_bytes(unscaled)])
    if isinstance(value, dt.datetime):
        return str((value - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(microseconds=1))
    if isinstance(value, dt.date):
        return str((value - dt.date(1970, 1, 1)).days)
    return str(value)


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_hudi_shows_our_column_stats_equal_to_the_new_files_rows(spark, clustered, kind, tmp_path):
    """Through Hudi's own procedure (a catalog table on a copy of ours): each new file's min, max and null count
    per column equal what its rows give."""
    ours, _, instant, _, _, _ = clustered[kind]
    copy = str(tmp_path / "t")
    shutil.copytree(ours, copy)
    new = _new_files(copy, instant)
    name = f"mdt_stats_show_{kind}"
    spark.sql(f"create table {name} using hudi location {_sql(copy)}")
    columns = ["c_int", "c_long", "c_double", "c_string", "c_date", "c_timestamp", "c_decimal", "c_bool",
               "_hoodie_record_key", "_hoodie_commit_time"]  # fmt: skip
    try:
        for partition in sorted({p.parent.name for p in new.values()}):
            rows = spark.sql(f"call show_metadata_table_column_stats(table => {_sql(name)}, "
                             f"partition => {_sql(partition)}, targetColumns => {_sql(','.join(columns))})").collect()  # fmt: skip
            shown = {(r["file_name"], r["column_name"]): r for r in rows}
            files = {n for n, p in new.items() if p.parent.name == partition}
            assert {f for f, _ in shown} == files, f"Hudi's latest files in {partition} are not our new files"
            for file_name in files:
                data = pq.read_table(new[file_name], columns=columns)
                for column in columns:
                    row = shown[(file_name, column)]
                    values = data.column(column)
                    shown_range = (row["min_value"], row["max_value"])
                    if column == "c_double":  # Java prints doubles its own way: compare the numbers
                        assert tuple(map(float, shown_range)) == (pc.min(values).as_py(), pc.max(values).as_py())
                    else:
                        expected = (_expected_shown(values, "min"), _expected_shown(values, "max"))
                        assert shown_range == expected, (file_name, column)
                    assert row["null_number"] == values.null_count, (file_name, column)
    finally:
        spark.sql(f"drop table if exists {name}")


# ------------------------------------------------------------------------ reads with data skipping, upserts

SKIPPING = {"hoodie.enable.data.skipping": "true", "hoodie.metadata.enable": "true",
            "hoodie.metadata.index.column.stats.enable": "true"}  # fmt: skip
FILTERS = {
    "c_int > 20000": lambda t: pc.greater(t["c_int"], 20000),
    "c_string < 'delta'": lambda t: pc.less(t["c_string"], "delta"),
    "c_date >= date'2025-01-01'": lambda t: pc.greater_equal(t["c_date"], pa.scalar(dt.date(2025, 1, 1))),
    "c_decimal < 0": lambda t: pc.less(t["c_decimal"], pa.scalar(Decimal("0.00"), pa.decimal128(10, 2))),
    "region = 'eu' and c_long > 0": lambda t: pc.and_(pc.equal(t["region"], "eu"), pc.greater(t["c_long"], 0)),
    "_hoodie_record_key in ('k000007', 'k000020')": lambda t: pc.is_in(t["_hoodie_record_key"],
                                                                       pa.array(["k000007", "k000020"])),
}  # fmt: skip


def _hudi_filtered(spark, base: str, condition: str) -> pa.Table:
    from tests.support.apache_hudi import _df_to_arrow, _sorted

    reader = spark.read.format("hudi")
    for key, value in SKIPPING.items():
        reader = reader.option(key, value)
    return _sorted(_df_to_arrow(reader.load(base).filter(condition)))


def _assert_skipping_reads_equal_hudi_rs(spark, base: str) -> None:
    everything = read_hudi_rs(base, options=RS_MDT)
    for condition, mask in FILTERS.items():
        expected = everything.filter(pc.fill_null(mask(everything), False))
        assert 0 < expected.num_rows < everything.num_rows, f"{condition} selects nothing or everything"
        got = _hudi_filtered(spark, base, condition)
        assert_same_rows(expected, got.select(expected.column_names), labels=("hudi-rs", f"Hudi, skipping: {condition}"))


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_data_skipping_reads_equal_hudi_rs(spark, clustered, kind):
    ours, _, _, _, _, before = clustered[kind]
    assert_same_rows(before, read_hudi_rs(ours, options=RS_MDT), labels=("before", "hudi-rs after"))
    _assert_skipping_reads_equal_hudi_rs(spark, ours)


def _init_instants(base: str) -> set[str]:
    return {p.name for p in Path(base, ".hoodie/metadata/.hoodie/timeline").iterdir()
            if p.name.startswith("00000000000000000")}  # fmt: skip


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_next_hudi_upsert_reinitialises_no_metadata_partition(spark, clustered, kind, tmp_path):
    """The next Apache Hudi upsert finds every key in place, adds no initialisation instant to the metadata
    timeline, keeps every partition listed, and reads stay right. (Its BLOOM index reads the filters from the
    footers here: ``hoodie.bloom.index.use.metadata=true`` fails on this JVM in Spark's Kryo broadcast, Java 17
    module access, before any lookup; our bloom_filters records are read through Hudi's API in the next test.)"""
    from tests.support.apache_hudi import assert_upsert_found_keys

    ours, _, instant, _, extra, before = clustered[kind]
    base = str(tmp_path / "t")
    shutil.copytree(ours, base)
    partitions = read_hoodie_properties(base)["hoodie.table.metadata.partitions"].split(",")
    assert set(STATS_PARTITIONS) & set(partitions) == ({"column_stats", "partition_stats"} |
                                                       ({"bloom_filters"} if kind == "cow" else set()))  # fmt: skip
    inits = _init_instants(base)
    moved = {pq.read_table(p, columns=["_hoodie_record_key"]).column(0)[0].as_py() for p in _new_files(base, instant).values()}
    current = read_hudi_rs(base, options=RS_MDT)
    picked = current.filter(pc.is_in(current["_hoodie_record_key"], pa.array(sorted(moved))))
    updates = make_updates(picked.select(SMALL_FILE_SCHEMA.names).cast(SMALL_FILE_SCHEMA))
    stats = hudi_upsert(spark, base, updates, extra_options=extra)
    assert_upsert_found_keys(spark, base, updates, stats, rows_before=current.num_rows)
    assert _init_instants(base) == inits, "Hudi re-initialised a metadata partition"
    assert read_hoodie_properties(base)["hoodie.table.metadata.partitions"].split(",") == partitions
    _assert_skipping_reads_equal_hudi_rs(spark, base)


def test_hudi_reads_our_bloom_filters_through_the_metadata_table(spark, clustered):
    """Hudi's metadata reader (``HoodieBackedTableMetadata.getBloomFilter``) returns, for every new file, the filter
    its footer holds: the same serialised bytes, and it contains every record key of the file."""
    ours, _, instant, _, _, _ = clustered["cow"]
    with hudi_metadata(spark, ours) as metadata:
        new = _new_files(ours, instant)
        assert new
        for name, path in new.items():
            found = metadata.getBloomFilter(path.parent.name, name)
            assert found.isPresent(), f"no bloom filter for {name} in the metadata table"
            bloom = found.get()
            footer = pq.read_metadata(path).metadata[b"org.apache.hudi.bloomfilter"].decode()
            assert bloom.serializeToString() == footer
            keys = pq.read_table(path, columns=["_hoodie_record_key"]).column(0).to_pylist()
            assert all(bloom.mightContain(key) for key in keys)


@pytest.mark.parametrize("name, done, partitions", [
    ("cow_v9_txns_simple_overwrite", "20260403184001282_20260403184002260.replacecommit",
     ("column_stats", "partition_stats")),
    ("mor_v9_nonpartitioned_rollback", "20260403184302162_20260403184303142.deltacommit", ("column_stats",)),
])  # fmt: skip
def test_builders_reproduce_hudis_stats_records_byte_for_byte_on_the_fixtures(table_copy, name, done, partitions):
    """A commit of Hudi's own in a fixture (COW partitioned: an insert_overwrite; MOR non-partitioned: an insert),
    made pending again (its completed file removed): our builders, given that commit's write stats, produce exactly
    the stats values Hudi wrote for it, byte for byte. The partition stats read the column_stats of the committed
    files from the fixture's MDT (base HFiles and log blocks), replaced file groups included as Hudi does
    (valueCount counts them)."""
    from hudi_cluster_core.io.storage import Storage
    from hudi_cluster_core.mdt import column_stats, records
    from hudi_cluster_core.mdt.commit_files import CommitFiles

    base = Path(table_copy(name))
    instant = done.split("_")[0]
    completed = base / ".hoodie/timeline" / done
    meta = next(iter(fastavro.reader(io.BytesIO(completed.read_bytes()))))
    completed.unlink()
    storage = Storage(str(base))
    commit = CommitFiles(storage, instant, meta["partitionToWriteStats"], meta.get("partitionToReplaceFileIds") or {},
                         read_hoodie_properties(base))  # fmt: skip
    builders = {"column_stats": column_stats.column_stats_records, "partition_stats": column_stats.partition_stats_records}
    for partition in partitions:
        theirs = {}
        for path in base.glob(f".hoodie/metadata/{partition}/.*_{instant}.log.*[0-9]"):
            for block in log_block.read_blocks(path.read_bytes()):
                theirs.update({k.decode(): v for k, v in read_hfile(block.content).entries})
        ours = {r.key: records.encode_value(r) for r in builders[partition](commit)}
        assert len(ours) == len(theirs) > 0 and ours == theirs, partition


def test_partition_stats_is_dropped_where_hudi_would_not_keep_it(table_copy, caplog):
    """On a non-partitioned table (Hudi enables partition_stats only for partitioned ones), and without
    column_stats (Hudi computes partition stats from it): partition_stats is dropped alone, the rest kept."""
    import logging

    from hudi_cluster_core.io.storage import Storage
    from hudi_cluster_core.mdt.commit import prepare_metadata_table
    from hudi_cluster_core.table import load_table
    from hudi_cluster_core.table.metadata_table import drop_metadata_partitions, metadata_partitions, rewrite_properties

    nonpartitioned = Path(table_copy("mor_v9_nonpartitioned_rollback"))
    storage = Storage(str(nonpartitioned))
    props = read_hoodie_properties(nonpartitioned)
    props["hoodie.table.metadata.partitions"] += ",partition_stats"
    rewrite_properties(storage, props)
    shutil.copytree(nonpartitioned / ".hoodie/metadata/column_stats", nonpartitioned / ".hoodie/metadata/partition_stats")
    with caplog.at_level(logging.WARNING, logger="hudi_cluster_core"):
        kept = prepare_metadata_table(load_table(str(nonpartitioned)), True)
    assert "column_stats" in kept and "partition_stats" not in kept
    assert "partition_stats" not in metadata_partitions(storage) and "column_stats" in metadata_partitions(storage)
    assert not (nonpartitioned / ".hoodie/metadata/partition_stats").exists()
    assert any("partition_stats" in r.getMessage() for r in caplog.records)

    partitioned = Path(table_copy("cow_v9_txns_simple_overwrite"))
    storage = Storage(str(partitioned))
    drop_metadata_partitions(storage, ["column_stats"])
    kept = prepare_metadata_table(load_table(str(partitioned)), True)
    assert "files" in kept and "partition_stats" not in kept and "partition_stats" not in metadata_partitions(storage)


@pytest.mark.parametrize("data, seed, expected", [
    (b"", 0, 0xEF46DB3751D8E999), (b"abc", 0, 0x44BC2CF5AD770999),
    (b"Nobody inspects the spammish repetition", 0, 0xFBCEA83C8A378BF1),  # >= 32 bytes: the four-lane path
    (b"xxhash", 20141025, 0xB559B98D844E0635),
])  # fmt: skip
def test_xxh64_published_vectors(data, seed, expected):
    assert index_keys.xxh64(data, seed) == expected


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=80), st.text(max_size=40), st.text(min_size=1, max_size=80))
def test_stats_keys_are_fixed_width_base64_of_the_hashes(column, partition, file_name):
    import base64
    import hashlib

    key = index_keys.column_stats_key(column, partition, file_name)
    assert len(key) == 12 + 12 + 24
    assert key == index_keys.partition_stats_key(column, partition) + index_keys.file_id(file_name)
    assert base64.b64decode(key[24:]) == hashlib.md5(file_name.encode()).digest()
    expected_partition = partition or "."  # the non-partitioned table's partition id hashes "."
    assert base64.b64decode(key[12:24]) == struct.pack(">Q", index_keys.xxh64(expected_partition.encode()))
    assert index_keys.bloom_filter_key(partition, file_name) == key[12:]


def test_partition_stats_widen_older_files_to_the_table_type_and_leave_out_other_changes():
    """Schema evolution: partition stats take the table schema's type (Hudi's getColumnRangeInPartition); older
    files' int/long/float stats are widened as Java widens them; a change that would not keep min and max bounds
    (long to string) gives None, never an error."""
    as_int = ColumnRange("old.parquet", "c", -3, 7, 0, 4, 10, 20, ValueType(column_ranges.INT))
    as_float = ColumnRange("old.parquet", "c", 0.1, 2.5, 0, 4, 10, 20, ValueType(column_ranges.FLOAT))
    as_long = ColumnRange("new.parquet", "c", -(2**40), 5, 1, 3, 10, 20, ValueType(column_ranges.LONG))
    long_type, double_type = ValueType(column_ranges.LONG), ValueType(column_ranges.DOUBLE)
    merged = column_ranges.merge_all(value_types.convert(r, long_type) for r in (as_int, as_long))
    assert merged is not None and (merged.min, merged.max, merged.value_type) == (-(2**40), 7, long_type)
    widened = value_types.convert(as_float, double_type)
    assert widened is not None and (widened.min, widened.max) == (0.1, 2.5)  # Double.valueOf(0.1f + "")
    assert value_types.convert(as_long, ValueType(column_ranges.STRING)) is None
    assert value_types.value_type_of_avro(["null", {"type": "fixed", "name": "f", "size": 5, "logicalType": "decimal",
                                                    "precision": 10, "scale": 2}]) == ValueType(column_ranges.DECIMAL, "10,2")  # fmt: skip
    assert value_types.value_type_of_avro({"type": "long", "logicalType": "timestamp-micros"}) == ValueType(16)
    assert value_types.value_type_of_avro(["null", {"type": "int", "logicalType": "date"}]) == ValueType(column_ranges.DATE)
    assert value_types.value_type_of_avro(["null", {"type": "array", "items": "int"}]) is None
