"""The metadata-table writer (``hudi_cluster_core.mdt``): HFile, log blocks, routing, ``files`` records.

Three kinds of proof: (1) Hudi's own bytes: every MDT log file of fixture ``cow_v9_txns_simple_overwrite``
(written by Apache Hudi 1.1.1) decodes with our reader, re-frames byte-identically, and re-encodes with our HFile
writer to the same entries, index, file info, trailer counts and uncompressed blocks (only gzip output differs);
its keys sit in the file groups our routing picks. (2) Round trips and a property test. (3) Apache Hudi 1.1.1
and hudi-rs read an MDT deltacommit we wrote by hand into a table Hudi wrote with the metadata table on.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_cluster_core.avro import encode_commit_metadata
from hudi_cluster_core.io.storage import Storage
from hudi_cluster_core.mdt import deltacommit, hfile, log_block, records
from hudi_cluster_core.mdt.hfile import HFileError, read_hfile, write_hfile
from hudi_cluster_core.mdt.log_block import BlockType, HeaderKey
from hudi_cluster_core.mdt.records import MetadataRecord, RecordType
from hudi_cluster_core.table.naming import make_base_file_name, new_file_id, parse_log_file
from hudi_cluster_core.table.properties import load_table_config
from hudi_cluster_core.table.timeline import load_timeline
from tests.support.hudi_metadata import hudi_listing

FIXTURE = "cow_v9_txns_simple_overwrite"


def _fixture_logs(fixtures_dir: Path) -> list[Path]:
    return sorted((fixtures_dir / FIXTURE / ".hoodie" / "metadata").glob("*/.*.log.*"))


# ----------------------------------------------------------------------------------- Hudi-written bytes


def test_fixture_log_files_decode_and_reframe_byte_identical(fixtures_dir):
    logs = _fixture_logs(fixtures_dir)
    assert len(logs) == 42
    kinds = set()
    for path in logs:
        data = path.read_bytes()
        blocks = log_block.read_blocks(data)
        kinds.update(b.type for b in blocks)
        assert b"".join(map(log_block.encode_block, blocks)) == data, path.name
    assert kinds == {BlockType.HFILE_DATA, BlockType.DELETE}


def test_fixture_hfiles_match_our_writer_except_gzip_bytes(fixtures_dir):
    seen = 0
    for path in _fixture_logs(fixtures_dir):
        for block in log_block.read_blocks(path.read_bytes()):
            if block.type is not BlockType.HFILE_DATA:
                continue
            theirs = read_hfile(block.content)
            schema = block.header[HeaderKey.SCHEMA]
            assert schema == records.block_schema_json()  # header schema text, byte for byte
            decoded = [records.decode_value(k.decode(), v, schema) for k, v in theirs.entries]
            assert [r.avro()["key"] for r in decoded] == [""] * len(decoded)
            assert [records.encode_value(r) for r in decoded] == [v for _, v in theirs.entries]
            created = int.from_bytes(dict(theirs.file_info)[b"hfile.CREATE_TIME_TS"], "big")
            ours_block = log_block.hfile_data_block(block.header[HeaderKey.INSTANT_TIME], decoded, create_time_ms=created)
            assert ours_block.header == block.header and ours_block.footer == block.footer
            ours = read_hfile(ours_block.content)
            assert ours.entries == theirs.entries and ours.file_info == theirs.file_info
            assert [first for *_, first in ours.index] == [first for *_, first in theirs.index]
            assert list(ours.payloads.values()) == list(theirs.payloads.values())  # uncompressed data blocks
            same_counts = ("uncompressed_data_index_size", "data_index_count", "meta_index_count", "entry_count",
                           "num_data_index_levels", "first_data_block_offset", "last_data_block_offset",
                           "comparator", "codec")  # fmt: skip
            for name in same_counts:
                assert getattr(ours.trailer, name) == getattr(theirs.trailer, name), name
            seen += 1
    assert seen == 23


def test_fixture_keys_sit_in_the_file_group_routing_picks(fixtures_dir):
    groups: dict[str, set[str]] = {}
    logs = _fixture_logs(fixtures_dir)
    for path in logs:
        groups.setdefault(path.parent.name, set()).add(parse_log_file(path.name).file_id)
    checked = 0
    for path in logs:
        ids = sorted(groups[path.parent.name])
        for block in log_block.read_blocks(path.read_bytes()):
            if block.type is BlockType.HFILE_DATA:
                for key, _ in read_hfile(block.content).entries:
                    assert ids[log_block.file_group_index(key.decode(), len(ids))] == parse_log_file(path.name).file_id
                    checked += 1
    assert {k: len(v) for k, v in groups.items()} == {"column_stats": 2, "files": 1, "partition_stats": 1,
                                                      "record_index": 10}  # fmt: skip
    assert checked > 250


def test_java_string_hash():
    assert log_block.java_string_hash("") == 0
    assert log_block.java_string_hash("hello") == 99162322
    assert log_block.java_string_hash("Aa") == log_block.java_string_hash("BB") == 2112
    assert log_block.java_string_hash("polygenelubricants") == -2**31  # Integer.MIN_VALUE: abs stays negative in Java
    assert log_block.file_group_index("polygenelubricants", 10) == 8
    assert log_block.java_string_hash("\U0001F600") == 31 * 0xD83D + 0xDE00  # two UTF-16 units


# ------------------------------------------------------------------------------------------- round trips


def test_hfile_round_trip_single_and_many_blocks():
    entries = [(f"key-{i:04d}".encode(), bytes([i % 256]) * (i % 37)) for i in range(500)]
    for block_size in (hfile.MAX_BLOCK_BYTES, 200, 1):
        data = write_hfile(reversed(entries), create_time_ms=1234, block_size=block_size)
        read = read_hfile(data)
        assert read.entries == entries
        assert read.trailer.entry_count == 500 and read.trailer.data_index_count == len(read.index)
        assert read.trailer.comparator == hfile.COMPARATOR and data[-4:] == b"\x00\x00\x00\x03"
        assert all(read.get(k) == v for k, v in entries)
        assert read.get(b"key-") is None and read.get(b"zzz") is None and read.get(b"") is None
        info = dict(read.file_info)
        assert info[b"hfile.LASTKEY"] == b"\x00\x08key-0499"
        assert int.from_bytes(info[b"hfile.CREATE_TIME_TS"], "big") == 1234
    assert len(read_hfile(write_hfile(entries, block_size=1)).index) == 500
    assert write_hfile(entries) == write_hfile(list(reversed(entries)))  # deterministic


def test_hfile_rejects_duplicates_and_reads_uncompressed():
    with pytest.raises(HFileError, match="duplicate"):
        write_hfile([(b"a", b"1"), (b"a", b"2")])
    data = write_hfile([(b"b", b"2"), (b"a", b"1")], codec=hfile.Compression.NONE)
    assert read_hfile(data).entries == [(b"a", b"1"), (b"b", b"2")]
    assert read_hfile(write_hfile([])).entries == []
    with pytest.raises(HFileError):
        read_hfile(data[:-1])


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=40), st.binary(max_size=300), max_size=120),
       st.sampled_from([1, 64, 700, hfile.MAX_BLOCK_BYTES]), st.text(max_size=40))  # fmt: skip
def test_property_keys_sorted_and_every_record_found(table, block_size, probe):
    entries = [(k.encode("utf-8"), v) for k, v in table.items()]
    read = read_hfile(write_hfile(entries, block_size=block_size))
    rows = [k for k, _ in read.entries]
    assert rows == sorted(rows) and len(rows) == len(table)
    assert all(read.get(k) == v for k, v in entries)
    assert read.get(probe.encode("utf-8")) == table.get(probe)
    firsts = [first for *_, first in read.index]
    assert firsts == sorted(firsts)


def test_log_block_round_trip_and_name():
    recs = records.files_records({"": {"f1.parquet": 10}})
    block = log_block.hfile_data_block("20250101000000000", recs)
    data = log_block.encode_block(block)
    assert data[:6] == b"#HUDI#" and int.from_bytes(data[6:14], "big") == len(data) - 14
    assert int.from_bytes(data[-8:], "big") == len(data) - 8
    assert log_block.read_blocks(data + data) == [block, block]
    name = log_block.log_file_name("files-0000-0", "20250101000000000", "0-1-2")
    assert name == ".files-0000-0_20250101000000000.log.1_0-1-2"
    assert parse_log_file(name).file_id == "files-0000-0"


def test_files_records_from_write_stats():
    stats = {
        "eu": [{"path": "eu/a_0-1-2_T.parquet", "partitionPath": "eu", "fileSizeInBytes": 100},
               {"path": "eu/b_0-1-3_T.parquet", "partitionPath": "eu", "fileSizeInBytes": 200}],
        "us": [{"path": "us/c_0-1-4_T.parquet", "partitionPath": "us", "fileSizeInBytes": 300}],
    }  # fmt: skip
    recs = records.files_records_from_write_stats(stats)
    assert [(r.key, r.type) for r in recs] == [("__all_partitions__", RecordType.ALL_PARTITIONS),
                                               ("eu", RecordType.FILE_LIST), ("us", RecordType.FILE_LIST)]  # fmt: skip
    assert recs[0].fields["filesystemMetadata"] == {p: {"size": 0, "isDeleted": False} for p in ("eu", "us")}
    assert recs[1].fields["filesystemMetadata"] == {"a_0-1-2_T.parquet": {"size": 100, "isDeleted": False},
                                                    "b_0-1-3_T.parquet": {"size": 200, "isDeleted": False}}  # fmt: skip
    read = read_hfile(log_block.hfile_data_block("T", recs).content)
    assert [records.decode_value(k.decode(), v) for k, v in read.entries] == recs
    unpartitioned = records.files_records_from_write_stats({"": [{"path": "x.parquet", "fileSizeInBytes": 5}]})
    assert sorted(r.key for r in unpartitioned) == [".", "__all_partitions__"]
    deleted = records.files_records({}, {"eu": ["old.parquet"]})
    assert deleted[1].fields["filesystemMetadata"] == {"old.parquet": {"size": 0, "isDeleted": True}}
    with pytest.raises(ValueError, match="no file size"):
        records.files_records_from_write_stats({"eu": [{"path": "eu/a.parquet", "fileSizeInBytes": 0}]})
    with pytest.raises(ValueError, match="partition"):
        records.files_records_from_write_stats({"eu": [{"path": "us/a.parquet", "partitionPath": "us", "fileSizeInBytes": 1}]})


def test_route_spreads_by_hash():
    ids = [f"record-index-{i:04d}-0" for i in range(10)]
    recs = [MetadataRecord(f"k{i}", RecordType.RECORD_INDEX, {}) for i in range(100)]
    routed = log_block.route(recs, list(reversed(ids)))
    assert sum(map(len, routed.values())) == 100
    for file_id, group in routed.items():
        assert all(ids.index(file_id) == log_block.file_group_index(r.key, 10) for r in group)


# ------------------------------------------------------------------------------ Apache Hudi reads it back


def _show_files(spark, base: str, partition: str) -> set[str]:
    rows = spark.sql(f"call show_metadata_table_files(path => '{base}', partition => '{partition}')").collect()
    return {row["file_path"] for row in rows}


def test_apache_hudi_and_hudi_rs_read_our_mdt_deltacommit(spark, tmp_path):
    from tests.support.apache_hudi import make_small_file_table, read_hoodie_properties, read_hudi_snapshot
    from tests.support.readers import assert_same_rows, hudi_rs_file_slices, read_hudi_rs

    base = str(tmp_path / "mdt_table")
    written = make_small_file_table(spark, base, batches=1, rows_per_batch=12, metadata_enable=True)
    assert "files" in read_hoodie_properties(base)["hoodie.table.metadata.partitions"].split(",")
    storage = Storage(base)
    timeline = load_timeline(storage, load_table_config(storage))
    schema = timeline.commit_metadata(timeline.completed()[-1])["extraMetadata"]["schema"]
    before = hudi_listing(spark, base, "eu")

    # A new file group in eu: a copy of a base file Hudi wrote, under a new file id and instant T.
    instant = timeline.new_instant_time()
    source = sorted(Path(base, "eu").glob("*.parquet"))[0]
    name = make_base_file_name(new_file_id(0), "0-0-0", instant)
    shutil.copy(source, Path(base, "eu", name))
    size = Path(base, "eu", name).stat().st_size
    rows_in_copy = sum(1 for r in written.column("region").to_pylist() if r == "eu")
    stat = {"fileId": name.split("_")[0], "path": f"eu/{name}", "prevCommit": "null", "numWrites": rows_in_copy,
            "numDeletes": 0, "numUpdateWrites": 0, "numInserts": rows_in_copy, "totalWriteBytes": size,
            "totalWriteErrors": 0, "partitionPath": "eu", "fileSizeInBytes": size}  # fmt: skip
    pending = {"partitionToWriteStats": {}, "compacted": False, "extraMetadata": {}, "operationType": "INSERT"}
    storage.write_atomic(timeline.path_of(f"{instant}.commit.requested"), b"")
    storage.write_atomic(timeline.path_of(f"{instant}.inflight"), encode_commit_metadata(pending, layout_version=2, replace=False))

    # The MDT deltacommit T, before the data commit (Hudi's order); tiny blocks: one HFile data block per record.
    deltacommit.begin(storage, instant)
    mdt_stats = deltacommit.write_partition(storage, instant, "files",
                                            records.files_records_from_write_stats({"eu": [stat]}), block_size=1)  # fmt: skip
    done = deltacommit.complete(storage, instant, mdt_stats)
    (log_name,) = mdt_stats[0]["logFiles"]
    assert read_hfile(log_block.read_blocks(Path(base, ".hoodie/metadata/files", log_name).read_bytes())[0].content).trailer.data_index_count == 2
    # T is not completed on the data timeline yet: both readers ignore the MDT block, and the file.
    assert name not in hudi_listing(spark, base, "eu")
    assert read_hudi_rs(base, options={"hoodie.metadata.enable": "true"}).num_rows == written.num_rows

    mdt_completion = done.split("_")[1].split(".")[0]
    completion = timeline.completion_time_after(mdt_completion)
    assert completion > mdt_completion
    committed = {"partitionToWriteStats": {"eu": [stat]}, "compacted": False, "extraMetadata": {"schema": schema},
                 "operationType": "INSERT"}  # fmt: skip
    storage.write_atomic(timeline.path_of(f"{instant}_{completion}.commit"),
                         encode_commit_metadata(committed, layout_version=2, replace=False))  # fmt: skip

    # Apache Hudi 1.1.1: the procedure lists it; the metadata table gives its exact size; nothing else moved.
    assert _show_files(spark, base, "eu") == {*before, name}
    listing = hudi_listing(spark, base, "eu")
    assert listing == {**before, name: size}
    assert listing == {p.name: p.stat().st_size for p in Path(base, "eu").glob("*.parquet")}  # equals storage
    # hudi-rs trusts the files partition: it sees the new slice with the size the MDT gives
    slices = {s["base_file"] for s in hudi_rs_file_slices(base) if s["partition"] == "eu"}
    assert slices == set(listing)
    from hudi import HudiTable

    sizes = {s.base_file_name: s.base_file_size for s in HudiTable(base, {"hoodie.metadata.enable": "true"}).get_file_slices()}
    assert sizes[name] == size
    # Reads through the metadata table include the copied rows, and agree with a storage-listing read.
    with_mdt = read_hudi_snapshot(spark, base)
    assert with_mdt.num_rows == written.num_rows + rows_in_copy
    assert_same_rows(read_hudi_rs(base, options={"hoodie.metadata.enable": "true"}), with_mdt, drop=(),
                     labels=("hudi-rs", "Apache Hudi"))  # fmt: skip
    assert_same_rows(read_hudi_snapshot(spark, base, {"hoodie.metadata.enable": "false"}), with_mdt, drop=(),
                     labels=("Apache Hudi, storage listing", "Apache Hudi, metadata table"))  # fmt: skip
