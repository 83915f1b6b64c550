"""The test harness drives the real Apache Hudi 1.1.1: tables it writes, Hudi's own clustering, BLOOM-index
upserts, and every fixture table, each read by both Apache Hudi (Spark) and hudi-rs."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import shutil
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

from tests.support import apache_hudi
from tests.support.apache_hudi import (
    HudiBundleMissing,
    assert_upsert_found_keys,
    commit_stats,
    completed_instants,
    hudi_execute_clustering,
    hudi_schedule_and_execute,
    hudi_schedule_clustering,
    hudi_show_clustering,
    hudi_upsert,
    make_small_file_table,
    make_updates,
    read_hoodie_properties,
    read_hudi_incremental,
    read_hudi_snapshot,
    small_file_rows,
    timeline_files,
    write_hudi_table,
)
from tests.support.readers import assert_same_rows, comparable_rows, hudi_rs_file_slices, read_hudi_rs, row_diff

BATCHES, ROWS_PER_BATCH = 6, 50
DATA_COLUMNS = apache_hudi.SMALL_FILE_SCHEMA.names
FIXTURES = Path(__file__).resolve().parent / "fixtures"  # tests/fixtures/README.md
MANIFEST = json.loads((FIXTURES / "MANIFEST.json").read_text())


def data_only(table: pa.Table) -> pa.Table:
    return table.select(DATA_COLUMNS)


@pytest.fixture(scope="module")
def small_tables(spark, tmp_path_factory):
    """One partitioned COW table per version, 6 insert batches x 50 rows, written once for this module."""
    root = tmp_path_factory.mktemp("small")
    tables = {}
    for version in (6, 9):
        path = str(root / f"cow_v{version}")
        written = make_small_file_table(spark, path, batches=BATCHES, rows_per_batch=ROWS_PER_BATCH, table_version=version, partitioned=True)
        tables[version] = (path, written)
    return tables


def copy_of(small_tables, version, tmp_path) -> tuple[str, pa.Table]:
    path, written = small_tables[version]
    target = tmp_path / Path(path).name
    shutil.copytree(path, target)
    return str(target), written


# ------------------------------------------------------------------------------ written by Apache Hudi

@pytest.mark.parametrize("version", [6, 9])
def test_small_file_table_properties_and_timeline(small_tables, version):
    path, _ = small_tables[version]
    props = read_hoodie_properties(path)
    assert props["hoodie.table.version"] == str(version)
    assert props["hoodie.table.type"] == "COPY_ON_WRITE"
    assert props["hoodie.table.partition.fields"] == "region"
    assert props["hoodie.table.recordkey.fields"] == "id"
    # Hudi 1.1.1 writes the v9 property names even for a v6 table (ordering.fields, keygenerator.type).
    assert props["hoodie.table.ordering.fields"] == "ts"
    assert props["hoodie.table.keygenerator.type"] == "SIMPLE"
    assert "hoodie.table.metadata.partitions" not in props or props["hoodie.table.metadata.partitions"] == ""
    assert not (Path(path) / ".hoodie" / "metadata").exists()

    commits = completed_instants(path)
    assert len(commits) == BATCHES and {c.action for c in commits} == {"commit"}
    hoodie = Path(path) / ".hoodie"
    if version == 6:
        assert props["hoodie.timeline.layout.version"] == "1"
        # layout 1: instant files directly in .hoodie/, no completion time in the name, JSON metadata
        assert all((hoodie / c.file_name).is_file() and c.completion_time is None for c in commits)
        assert (hoodie / commits[0].file_name).read_bytes().lstrip()[:1] == b"{"
        assert not (hoodie / "timeline").exists()
    else:
        assert props["hoodie.timeline.layout.version"] == "2"
        assert all((hoodie / "timeline" / c.file_name).is_file() and c.completion_time for c in commits)
        assert (hoodie / "timeline" / commits[0].file_name).read_bytes()[:4] == b"Obj\x01"
        assert not list(hoodie.glob("*.commit"))
    for commit in commits:
        stats = commit_stats(path, commit.time)
        assert stats.operation_type == "INSERT"
        assert stats.num_inserts == ROWS_PER_BATCH and len(stats.files) == 3  # one new file group per region


@pytest.mark.parametrize("version", [6, 9])
def test_small_file_table_reads_back_in_both_readers(spark, small_tables, version):
    path, written = small_tables[version]
    assert written.num_rows == BATCHES * ROWS_PER_BATCH
    assert written.schema == apache_hudi.SMALL_FILE_SCHEMA
    slices = hudi_rs_file_slices(path)
    assert len(slices) == BATCHES * 3 >= BATCHES
    assert {s["partition"] for s in slices} == {"us", "eu", "apac"}
    assert all(s["base_file"] and not s["log_files"] for s in slices)

    by_hudi_rs, by_hudi = read_hudi_rs(path), read_hudi_snapshot(spark, path)
    assert_same_rows(by_hudi_rs, by_hudi, drop=(), labels=("hudi-rs", "Apache Hudi"))
    assert_same_rows(data_only(by_hudi_rs), written, labels=("hudi-rs", "written"), key="id")
    assert by_hudi["_hoodie_record_key"].to_pylist() == by_hudi["id"].to_pylist()
    assert by_hudi["_hoodie_partition_path"].to_pylist() == by_hudi["region"].to_pylist()


def test_small_file_rows_are_deterministic():
    a, b = small_file_rows(10, 20, seed=3), small_file_rows(10, 20, seed=3)
    assert a.equals(b) and not a.equals(small_file_rows(10, 20, seed=4))
    assert small_file_rows(0, 30).slice(10, 20).equals(small_file_rows(10, 20))  # independent of batching
    assert a["id"][0].as_py() == "k000010" and a.column("c_string").null_count > 0


# ------------------------------------------------------------------------------ Hudi's own clustering

@pytest.mark.parametrize("version", [6, 9])
def test_hudi_run_clustering_then_bloom_upsert(spark, small_tables, tmp_path, version):
    path, written = copy_of(small_tables, version, tmp_path)
    before = hudi_rs_file_slices(path)

    instants = hudi_schedule_and_execute(spark, path)

    assert len(instants) == 1
    instant = instants[0]
    after = hudi_rs_file_slices(path)
    assert len(after) == 3 < len(before)  # one file group per partition
    assert all(s["base_file"].endswith(f"_{instant}.parquet") for s in after)
    assert read_hoodie_properties(path)["hoodie.table.version"] == str(version)  # not upgraded
    names = {i.file_name for i in timeline_files(path) if i.time == instant}
    if version == 6:
        assert names == {f"{instant}.replacecommit.requested", f"{instant}.replacecommit.inflight", f"{instant}.replacecommit"}
    else:
        completed = next(i for i in completed_instants(path) if i.time == instant)
        assert names == {f"{instant}.clustering.requested", f"{instant}.clustering.inflight", completed.file_name}
        assert completed.action == "replacecommit"
    stats = commit_stats(path, instant)
    assert stats.operation_type == "CLUSTER" and stats.num_writes == written.num_rows
    assert sorted(f for ids in stats.replaced_file_ids.values() for f in ids) == sorted(s["file_id"] for s in before)
    assert hudi_show_clustering(spark, path) == [apache_hudi.ClusteringInstant(instant, "COMPLETED", 3)]

    by_hudi_rs, by_hudi = read_hudi_rs(path), read_hudi_snapshot(spark, path)
    assert_same_rows(by_hudi_rs, by_hudi, drop=(), labels=("hudi-rs", "Apache Hudi"))
    assert_same_rows(data_only(by_hudi_rs), written, labels=("hudi-rs", "written"), key="id")

    # BLOOM-index upsert of existing keys (in every partition) into the clustered file groups
    updates = make_updates(written.take(list(range(0, written.num_rows, 15))))
    upsert = hudi_upsert(spark, path, updates)
    assert upsert.operation_type == "UPSERT"
    snapshot = assert_upsert_found_keys(spark, path, updates, upsert, rows_before=written.num_rows)
    assert_same_rows(read_hudi_rs(path), snapshot, drop=(), labels=("hudi-rs", "Apache Hudi"))


@pytest.mark.parametrize("version", [6, 9])
def test_hudi_schedule_then_execute(spark, tmp_path, version):
    path = str(tmp_path / f"t{version}")
    written = make_small_file_table(spark, path, batches=3, rows_per_batch=10, table_version=version, partitioned=False)
    assert len(hudi_rs_file_slices(path)) == 3

    instant = hudi_schedule_clustering(spark, path)

    assert instant is not None
    assert hudi_show_clustering(spark, path) == [apache_hudi.ClusteringInstant(instant, "REQUESTED", 1)]
    pending = {i.file_name for i in timeline_files(path) if i.time == instant}
    assert pending == {f"{instant}.{'replacecommit' if version == 6 else 'clustering'}.requested"}
    assert len(hudi_rs_file_slices(path)) == 3  # a plan alone changes nothing for readers
    assert_same_rows(data_only(read_hudi_snapshot(spark, path)), written, key="id")

    assert hudi_execute_clustering(spark, path, instant) == [instant]

    assert hudi_show_clustering(spark, path) == [apache_hudi.ClusteringInstant(instant, "COMPLETED", 1)]
    assert len(hudi_rs_file_slices(path)) == 1
    assert_same_rows(read_hudi_rs(path), read_hudi_snapshot(spark, path), drop=(), labels=("hudi-rs", "Apache Hudi"))
    assert hudi_schedule_clustering(spark, path) is None  # one file group left: nothing to plan


# ------------------------------------------------------------------------------ other write paths

@pytest.mark.parametrize("version", [6, 9])
def test_mor_upsert_to_log_files_and_delete(spark, tmp_path, version):
    path = str(tmp_path / f"mor{version}")
    written = make_small_file_table(spark, path, batches=2, rows_per_batch=12, table_version=version, table_type="MERGE_ON_READ")
    props = read_hoodie_properties(path)
    assert props["hoodie.table.type"] == "MERGE_ON_READ" and props["hoodie.table.version"] == str(version)

    updates = make_updates(written.slice(0, 6))
    upsert = hudi_upsert(spark, path, updates)
    assert upsert.action == "deltacommit" and all(".log." in f for f in upsert.files)
    assert_upsert_found_keys(spark, path, updates, upsert, rows_before=written.num_rows)
    with_logs = [s for s in hudi_rs_file_slices(path) if s["log_files"]]
    assert len(with_logs) == 3
    log_instant = with_logs[0]["log_files"][0].split("_")[1].split(".")[0]
    base_instant = with_logs[0]["base_file"].rsplit("_", 1)[1].split(".")[0]
    # v6 names a log after its slice's base instant, v8+ after the deltacommit that wrote it
    assert log_instant == (base_instant if version == 6 else upsert.instant)
    assert_same_rows(read_hudi_rs(path), read_hudi_snapshot(spark, path), drop=(), labels=("hudi-rs", "Apache Hudi"))

    gone = written.slice(20, 3)  # deleted by key, partition and ordering value only (a list of dicts)
    write_hudi_table(spark, path, gone.select(["id", "ts", "region"]).to_pylist(), operation="delete")
    by_hudi_rs = read_hudi_rs(path)
    assert by_hudi_rs.num_rows == written.num_rows - 3
    assert not set(gone["id"].to_pylist()) & set(by_hudi_rs["id"].to_pylist())
    assert_same_rows(by_hudi_rs, read_hudi_snapshot(spark, path), drop=(), labels=("hudi-rs", "Apache Hudi"))


@pytest.mark.parametrize("version", [6, 9])
def test_incremental_read_semantics(spark, small_tables, version):
    path, written = small_tables[version]
    commits = completed_instants(path)
    # Instant objects: "after commit 1 up to commit 3" on either version
    rows = read_hudi_incremental(spark, path, commits[0], commits[2])
    assert sorted(set(rows["_hoodie_commit_time"].to_pylist())) == [c.time for c in commits[1:3]]
    assert rows.num_rows == 2 * ROWS_PER_BATCH
    # plain strings go to Hudi as they are: v6 compares instant times, v9 completion times
    first = read_hudi_incremental(spark, path, commits[0].time)
    expected = commits[1:] if version == 6 else commits
    assert sorted(set(first["_hoodie_commit_time"].to_pylist())) == [c.time for c in expected]


def test_metadata_table_v9(spark, tmp_path):
    path = str(tmp_path / "mdt")
    written = make_small_file_table(spark, path, batches=2, rows_per_batch=10, table_version=9, metadata_enable=True)
    assert "files" in read_hoodie_properties(path)["hoodie.table.metadata.partitions"].split(",")
    assert (Path(path) / ".hoodie" / "metadata" / ".hoodie" / "hoodie.properties").is_file()
    # a later write without metadata_enable keeps the metadata table (the default follows the table)
    hudi_upsert(spark, path, make_updates(written.slice(0, 2)))
    assert (Path(path) / ".hoodie" / "metadata").is_dir()
    assert "files" in read_hoodie_properties(path)["hoodie.table.metadata.partitions"]
    assert_same_rows(read_hudi_rs(path), read_hudi_snapshot(spark, path), drop=(), labels=("hudi-rs", "Apache Hudi"))


def test_bundle_missing_fails_with_setup_hint(monkeypatch, tmp_path):
    monkeypatch.setattr(apache_hudi, "BUNDLE_JAR", tmp_path / "absent.jar")
    with pytest.raises(HudiBundleMissing, match="make setup"):
        apache_hudi.bundle_jar()


# ----------------------------------------------------------------------------- fixture tables

# Apache Hudi 1.1.1 reads every fixture table; no exclusions needed (checked for all 8 tables).
@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_fixture_reads_same_in_both_readers(spark, fixtures_dir, name):
    path = str(fixtures_dir / name)
    expected = json.loads((fixtures_dir / f"{name}.expected.json").read_text())
    listing = _listing(fixtures_dir / name)

    by_hudi_rs, by_hudi = read_hudi_rs(path), read_hudi_snapshot(spark, path)

    assert _listing(fixtures_dir / name) == listing  # reading in place wrote nothing (tests may run as root)

    assert by_hudi_rs.num_rows == by_hudi.num_rows == expected["rows"] == MANIFEST[name]["rows"]
    keys = sorted(by_hudi["_hoodie_record_key"].to_pylist())
    assert hashlib.sha256("\n".join(keys).encode()).hexdigest() == expected["sorted_record_keys_sha256"]
    assert_same_rows(by_hudi_rs, by_hudi, drop=(), labels=("hudi-rs", "Apache Hudi"))
    assert by_hudi.column_names == by_hudi_rs.column_names
    if name == "cow_v6_empty":
        assert by_hudi.num_rows == 0 and by_hudi_rs.num_rows == 0


def _listing(root: Path) -> dict:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}


def test_table_copy_is_writable(table_copy, fixtures_dir):
    path = Path(table_copy("cow_v6_nonpartitioned"))
    assert path.is_absolute() and path != fixtures_dir / "cow_v6_nonpartitioned"
    props = path / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text())
    assert len(hudi_rs_file_slices(path)) == 1


# ------------------------------------------------------------------------------ comparison helpers

def test_comparable_rows_normalises_types():
    ts = dt.datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=dt.timezone.utc)
    a = pa.table(
        {
            "k": pa.array(["x", "y"]),
            "t": pa.array([ts, None], pa.timestamp("us", tz="UTC")),
            "d": pa.array([Decimal("1.50"), Decimal("-0.00")], pa.decimal128(10, 2)),
            "f": pa.array([math.nan, -0.0], pa.float32()),
            "i": pa.array([1, 2], pa.int8()),
            "m": pa.array([[("b", 2), ("a", 1)], None], pa.map_(pa.string(), pa.int32())),
            "s": pa.array([{"p": 1, "q": "z"}, None], pa.struct([("p", pa.int32()), ("q", pa.string())])),
            "l": pa.array([[dt.date(2024, 1, 2)], []], pa.list_(pa.date32())),
        }
    )
    b = pa.table(
        {
            "l": pa.array([[], [dt.date(2024, 1, 2)]], pa.large_list(pa.date64())),
            "k": pa.array(["y", "x"], pa.large_string()),
            "t": pa.array([None, ts.replace(tzinfo=None)], pa.timestamp("ns")),
            "d": pa.array([Decimal("0"), Decimal("1.5000")], pa.decimal128(12, 4)),
            "f": pa.array([0.0, math.nan], pa.float64()),
            "i": pa.array([2, 1], pa.int64()),
            "m": pa.array([None, [("a", 1), ("b", 2)]], pa.map_(pa.string(), pa.int64())),
            "s": pa.array([None, {"q": "z", "p": 1}], pa.struct([("q", pa.string()), ("p", pa.int64())])),
        }
    )
    assert comparable_rows(a) == comparable_rows(b)
    row = next(r for r in (dict(zip(sorted(a.column_names), t)) for t in comparable_rows(a)) if r["k"] == "x")
    assert row["t"] == 1714564800123456 and row["d"] == "1.5" and row["f"] == "NaN"
    assert row["m"] == (("a", 1), ("b", 2)) and row["s"] == (("p", 1), ("q", "z")) and row["l"] == ("2024-01-02",)


def test_assert_same_rows_explains_differences():
    a = pa.table({"_hoodie_record_key": ["1", "2", "3"], "v": [1, 2, 3], "_hoodie_file_name": ["f", "f", "f"]})
    b = pa.table({"_hoodie_record_key": ["1", "2", "2"], "v": [1, 20, 2], "_hoodie_file_name": ["g", "g", "g"]})
    assert_same_rows(a, a.select(["v", "_hoodie_file_name", "_hoodie_record_key"]))  # column order is not data
    assert_same_rows(a, b.set_column(1, "v", pa.array([1, 2, 3])).set_column(0, "_hoodie_record_key", pa.array(["1", "2", "3"])))
    message = row_diff(a, b, labels=("hudi-rs", "Apache Hudi"))
    assert "hudi-rs has 3 rows, Apache Hudi has 3" in message
    assert "first differing keys (_hoodie_record_key): ['2', '3']" in message
    assert "only in hudi-rs" in message
    with pytest.raises(AssertionError, match="columns differ"):
        assert_same_rows(a, b.drop_columns(["v"]))
