"""The clustering commit keeps the metadata table's ``record_index`` partition (issue 11).

Tables written in set-up by Apache Hudi 1.1.1 with the record index on (COW partitioned; MOR non-partitioned with
log updates and deletes) are clustered twice: by us and, on a copy, by Apache Hudi's own clustering. The record
index updates of the two clustering instants agree field by field, modulo the new file ids (each key must point
at the new file group that holds it) and the instant (each must be its own instant, in ms, in the JVM's zone).
Then Apache Hudi upserts with the RECORD_INDEX and the BLOOM index find every key in the clustered file groups,
re-initialise no metadata partition, and Apache Hudi and hudi-rs read the same rows; point lookups by record key
with the record index used for data skipping return the right rows.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import string
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from hudi_cluster_core.api import cluster
from hudi_cluster_core.mdt import log_block
from hudi_cluster_core.mdt.encoded import EncodedRecords, file_group_indices, java_string_hashes
from hudi_cluster_core.mdt.hfile import MAX_BLOCK_BYTES, HFileError, read_hfile, write_hfile
from hudi_cluster_core.mdt.record_index import instant_epoch_ms, record_location
from hudi_cluster_core.mdt.records import MetadataRecord, RecordType, decode_value, encode_value
from tests.support.apache_hudi import (
    SMALL_FILE_SCHEMA, assert_upsert_found_keys, hudi_schedule_and_execute, hudi_upsert, instant_metadata,
    make_small_file_table, make_updates, read_hoodie_properties, read_hudi_snapshot, write_hudi_table,
)  # fmt: skip
from tests.support.readers import assert_same_rows, read_hudi_rs

# Only files and record_index, so this module proves the record index alone (the stats indexes are
# test_mdt_stats's; the crash campaign's record-index table has all of them).
RLI = {
    "hoodie.metadata.record.index.enable": "true",
    "hoodie.metadata.index.column.stats.enable": "false",
    "hoodie.metadata.index.partition.stats.enable": "false",
}
OPTIONS = {"hoodie.clustering.plan.strategy.sort.columns": "c_int"}
RS_MDT = {"hoodie.metadata.enable": "true"}
INIT_TIMES = re.compile(r"0{12}\d{5}")  # MDT partition initialisations: 00000000000000000, ...001, ... (Hudi counts up)


def _is_init(name: str) -> bool:
    """Whether an MDT timeline file or log/base file name carries an initialisation instant."""
    return any(INIT_TIMES.fullmatch(part) for part in re.split(r"[_.]", name))


# ------------------------------------------------------------------------------------------ unit: encoding


@contextmanager
def _local_zone(zone: str) -> Iterator[None]:
    old = os.environ.get("TZ")
    os.environ["TZ"] = zone
    time.tzset()
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = old
        time.tzset()


INSTANTS = ("20260307135937430", "20240310023000123", "20241103013000500", "20241006023000000",
            "20231231235959999", "20240418173550")  # fmt: skip  (US spring gap, US fall overlap, Lord Howe gap)
ZONES = ("UTC", "America/Chicago", "Asia/Kolkata", "Australia/Lord_Howe", "America/St_Johns")


def test_instant_epoch_ms_reads_the_instant_in_the_local_zone_as_java_does(spark):
    jvm = spark._jvm
    formatter = jvm.java.time.format.DateTimeFormatter.ofPattern("yyyyMMddHHmmssSSS")
    for zone in ZONES:
        with _local_zone(zone):
            for instant in INSTANTS:
                padded = instant + "999" if len(instant) == 14 else instant
                java = jvm.java.time.LocalDateTime.parse(padded, formatter).atZone(jvm.java.time.ZoneId.of(zone))
                assert instant_epoch_ms(instant) == java.toInstant().toEpochMilli(), (zone, instant)
    # and Hudi's own parser, in the Spark JVM's default zone (what its record index stores)
    default_zone = jvm.java.util.TimeZone.getDefault().getID()
    generator = jvm.org.apache.hudi.common.table.timeline.HoodieInstantTimeGenerator
    with _local_zone(default_zone):
        for instant in INSTANTS:
            assert instant_epoch_ms(instant) == generator.parseDateFromInstantTime(instant).getTime(), instant
    with pytest.raises(ValueError, match="yyyyMMddHHmmssSSS"):
        instant_epoch_ms("2024-01-01")


@pytest.mark.parametrize("file_id, encoding", [
    (f"{uuid.uuid4()}-0", 0), (f"{uuid.uuid4()}-17", 0), (str(uuid.uuid4()), 0), ("ffffffff-ffff-ffff-ffff-ffffffffffff-3", 0),
    ("my-raw-file-id", 1),
])  # fmt: skip
def test_record_location_equals_hudis_createRecordIndexUpdate(spark, file_id, encoding):
    """Our encoded value decodes to the record Hudi 1.1.1 builds (run in the Spark JVM) for the same inputs."""
    import json

    instant = "20260307135937430"
    payload = spark._jvm.org.apache.hudi.metadata.HoodieMetadataPayload.createRecordIndexUpdate(
        "key-1", "p/1", file_id, instant, encoding).getData()
    java = json.loads(payload.getInsertValue(None).get().get("recordIndexMetadata").toString())
    zone = spark._jvm.java.util.TimeZone.getDefault().getID()
    with _local_zone(zone):
        ours = record_location("p/1", file_id, instant_epoch_ms(instant))
    assert ours == java
    value = encode_value(MetadataRecord("", RecordType.RECORD_INDEX, {"recordIndexMetadata": ours}))
    assert decode_value("key-1", value).fields["recordIndexMetadata"] == java


def test_vectorised_java_hash_and_routing_match_the_scalar_ones():
    rng = random.Random(7)
    keys = [f"k{n:06d}" for n in range(2000)] + [str(uuid.uuid4()) for _ in range(500)]
    keys += ["", "ü", "日本語キー", "emoji-\U0001F600", "a" * 300, "Aa", "BB"]  # non-ASCII, surrogate pairs, collisions
    keys += ["".join(rng.choice(string.printable) for _ in range(rng.randint(1, 40))) for _ in range(500)]
    rows = pa.array(keys, pa.string())
    assert java_string_hashes(rows).tolist() == [log_block.java_string_hash(k) for k in keys]
    assert java_string_hashes(rows.slice(10, 100)).tolist() == [log_block.java_string_hash(k) for k in keys[10:110]]
    for count in (1, 7, 10):
        assert file_group_indices(rows, count).tolist() == [log_block.file_group_index(k, count) for k in keys]


def test_encoded_records_route_and_write_sorted_hfile_blocks_within_1_mib():
    """60,000 keys from 3 files: every key lands in the group routing picks, rows sorted by bytes, blocks <= 1 MiB,
    and every key reads back with its file's value."""
    rows = [pa.array([f"key-{n:07d}-{n % 97}" for n in range(start, start + 20_000)]) for start in (0, 20_000, 40_000)]
    values = [f"value-of-file-{i}-".encode() * 2 for i in range(3)]
    ids = [np.full(20_000, i, np.int32) for i in range(3)]
    records = EncodedRecords.concat(rows, ids, values)
    assert len(records) == 60_000
    file_ids = [f"record-index-000{i}-0" for i in range(10)]
    routed = log_block.route(records, file_ids)
    assert sum(len(r) for r in routed.values()) == 60_000
    for file_id, part in routed.items():
        assert isinstance(part, EncodedRecords)
        keys = [row.decode() for row in part.rows.to_pylist()]
        assert {file_ids[log_block.file_group_index(k, 10)] for k in keys} == {file_id}
    some = records.take(np.arange(len(records))[::-1].copy())  # all of them, in reverse order
    block = log_block.hfile_data_block("20260101000000000", some)
    hfile = read_hfile(block.content)
    written = [row for row, _ in hfile.entries]
    assert written == sorted(written) and len(written) == len(some)
    assert hfile.trailer.data_index_count > 1
    for offset, _, _ in hfile.index:
        assert len(hfile.payloads[offset]) <= MAX_BLOCK_BYTES
    for row, value in hfile.entries[:: max(1, len(hfile.entries) // 500)]:
        n = int(row.decode().split("-")[1])
        assert value == values[n // 20_000] and hfile.get(row) == value


@pytest.mark.parametrize("block_size", [1, 300, MAX_BLOCK_BYTES])
def test_bulk_hfile_is_byte_identical_to_the_entry_by_entry_writer(block_size):
    keys = [f"k{n:05d}" for n in range(3000)] + ["ü-key", "日本", "Z", ""]
    random.Random(3).shuffle(keys)
    values = [b"", b"short", b"x" * 700]
    records = EncodedRecords.concat([pa.array(keys)], [np.arange(len(keys), dtype=np.int32) % 3], values)
    info = [(b"schema", b"{}")]
    bulk = records.hfile(file_info=info, create_time_ms=42, block_size=block_size)
    assert bulk == write_hfile(list(records.entries()), file_info=info, create_time_ms=42, block_size=block_size)
    with pytest.raises(HFileError, match="duplicate"):
        EncodedRecords.concat([pa.array(["a", "b", "a"])], [np.zeros(3, np.int32)], [b"v"]).hfile()


# ----------------------------------------------------------------------------------- Hudi-written tables


def _rows(start: int, count: int) -> pa.Table:
    from tests.support.apache_hudi import small_file_rows

    return small_file_rows(start, count)


@pytest.fixture(scope="module")
def cow_template(spark, tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("rli_cow") / "t"
    make_small_file_table(spark, str(base), batches=3, rows_per_batch=15, metadata_enable=True, extra_options=RLI)
    return base


@pytest.fixture(scope="module")
def mor_template(spark, tmp_path_factory) -> Path:
    """MOR, non-partitioned: 3 insert batches, then log updates and log deletes touching every file group."""
    base = tmp_path_factory.mktemp("rli_mor") / "t"
    make_small_file_table(spark, str(base), batches=3, rows_per_batch=15, partitioned=False,
                          table_type="MERGE_ON_READ", metadata_enable=True, extra_options=RLI)  # fmt: skip
    updates = make_updates(_rows(0, 45).filter(pa.array([n % 3 == 0 for n in range(45)])), tag="log")
    hudi_upsert(spark, str(base), updates, extra_options=RLI)
    deletes = _rows(0, 45).filter(pa.array([n % 5 == 1 for n in range(45)]))
    write_hudi_table(spark, str(base), deletes, operation="delete", extra_options=RLI)
    logs = list(base.glob(".*.log.*"))
    assert logs, "the MOR template has log files"
    return base


def _copy(template: Path, target: Path) -> str:
    shutil.copytree(template, target)
    return str(target)


def _mdt_names(base: str, partition: str) -> set[str]:
    return {p.name for p in Path(base, ".hoodie/metadata", partition).iterdir()}


def _init_files(base: str, partition: str) -> set[str]:
    """Files of ``partition`` an initialisation wrote: base or log files of an init instant ``0000...0N`` (an MDT
    compaction's base files carry a regular instant)."""
    return {n for n in _mdt_names(base, partition) if not n.endswith(".crc") and _is_init(n)}


def _mdt_timeline(base: str) -> set[str]:
    return {p.name for p in Path(base, ".hoodie/metadata/.hoodie/timeline").iterdir() if p.is_file()}


def _record_index_of(base: str, instant: str) -> dict[str, tuple[str, dict]]:
    """key -> (MDT file group, recordIndexMetadata) of the record-index log blocks instant ``instant`` wrote."""
    found: dict[str, tuple[str, dict]] = {}
    for path in sorted(Path(base, ".hoodie/metadata/record_index").glob(f".record-index-*_{instant}.log.*")):
        if path.name.endswith(".crc"):
            continue  # Hadoop's checksum sidecar of a log Hudi wrote
        file_group = path.name[1:].split(f"_{instant}")[0]
        for block in log_block.read_blocks(path.read_bytes()):
            assert block.type is log_block.BlockType.HFILE_DATA
            schema = block.header[log_block.HeaderKey.SCHEMA]
            for row, value in read_hfile(block.content).entries:
                record = decode_value(row.decode("utf-8"), value, schema)
                assert record.type is RecordType.RECORD_INDEX
                assert row.decode() not in found, f"{row!r} twice in the record index of {instant}"
                found[row.decode()] = (file_group, record.fields["recordIndexMetadata"])
    return found


def _file_id_of(location: dict) -> str:
    if location["fileIdEncoding"] == 1:
        return location["fileId"]
    bits = ((location["fileIdHighBits"] % (1 << 64)) << 64) | (location["fileIdLowBits"] % (1 << 64))
    uid = str(uuid.UUID(int=bits))
    return uid if location["fileIndex"] == -1 else f"{uid}-{location['fileIndex']}"


def _clustering_instant(base: str, before: set[str]) -> str:
    (instant,) = [p.name.split("_")[0] for p in Path(base, ".hoodie/timeline").glob("*.replacecommit")
                  if p.name.split("_")[0] not in before]  # fmt: skip
    return instant


def _replacecommits(base: str) -> set[str]:
    return {p.name.split("_")[0] for p in Path(base, ".hoodie/timeline").glob("*.replacecommit")}


def _check_against_storage(spark, base: str, instant: str, index: dict[str, tuple[str, dict]], jvm_zone: str) -> None:
    """Every key of the table is in the instant's record index, pointing at the file group holding it now."""
    snapshot = read_hudi_snapshot(spark, base)
    where = {key: (partition, name.split("_")[0]) for key, partition, name in zip(
        snapshot["_hoodie_record_key"].to_pylist(), snapshot["_hoodie_partition_path"].to_pylist(),
        snapshot["_hoodie_file_name"].to_pylist())}  # fmt: skip
    assert set(index) == set(where), f"keys differ: {sorted(set(index) ^ set(where))[:10]}"
    with _local_zone(jvm_zone):
        expected_ms = instant_epoch_ms(instant)
    for key, (_, location) in index.items():
        assert (location["partitionName"], _file_id_of(location)) == where[key], key
        assert location["instantTime"] == expected_ms, (key, location["instantTime"], expected_ms)


@pytest.fixture(scope="module", params=["cow", "mor"])
def clustered(request, spark, cow_template, mor_template, tmp_path_factory):
    """(ours, hudis, rows before): copies of the template clustered by us and by Apache Hudi."""
    template = cow_template if request.param == "cow" else mor_template
    work = tmp_path_factory.mktemp(f"rli_{request.param}")
    ours, hudis = _copy(template, work / "ours"), _copy(template, work / "hudis")
    before = read_hudi_snapshot(spark, ours)
    assert "record_index" in read_hoodie_properties(ours)["hoodie.table.metadata.partitions"].split(",")
    options = dict(OPTIONS)
    if request.param == "mor":  # one partition: ask for ~3 output files, so a point lookup has files to skip
        base_bytes = sum(p.stat().st_size for p in Path(ours).glob("*.parquet"))
        options["hoodie.clustering.plan.strategy.target.file.max.bytes"] = str(base_bytes // 3)
    cluster(ours, "scheduleAndExecute", options, spark=spark)
    hudi_schedule_and_execute(spark, hudis, {**RLI, **options})
    return request.param, ours, hudis, before


def test_record_index_of_our_clustering_equals_hudis(spark, clustered):
    kind, ours, hudis, before = clustered
    assert set(read_hoodie_properties(ours)["hoodie.table.metadata.partitions"].split(",")) == {"files", "record_index"}
    jvm_zone = spark._jvm.java.util.TimeZone.getDefault().getID()
    index = {}
    for base in (ours, hudis):
        instant = _clustering_instant(base, set())
        index[base] = _record_index_of(base, instant)
        assert index[base], f"{base}: no record-index records in the clustering {instant}"
        _check_against_storage(spark, base, instant, index[base], jvm_zone)
    # same keys, routed to the same MDT file groups, and equal fields but for the new file id and the instant
    assert set(index[ours]) == set(index[hudis])
    assert len(index[ours]) == before.num_rows
    variable = ("fileIdHighBits", "fileIdLowBits", "instantTime")
    for key, (group, location) in index[ours].items():
        hudi_group, hudi_location = index[hudis][key]
        assert group == hudi_group, key
        assert {k: v for k, v in location.items() if k not in variable} == \
            {k: v for k, v in hudi_location.items() if k not in variable}, key  # fmt: skip
    # one log file per MDT file group touched, in both
    assert {g for g, _ in index[ours].values()} == {g for g, _ in index[hudis].values()}
    if kind == "mor":
        deleted = {f"k{n:06d}" for n in range(45) if n % 5 == 1}
        assert not deleted & set(index[ours]), "a key deleted in a log got a record-index entry"


LOOKUP_WITH_RLI = {"hoodie.metadata.enable": "true", "hoodie.enable.data.skipping": "true",
                   "hoodie.metadata.record.index.enable": "true"}  # fmt: skip
LOOKUP_PLAIN = {"hoodie.metadata.enable": "true", "hoodie.enable.data.skipping": "false"}


def _point_lookup(spark, base: str, key: str, options: dict[str, str]) -> tuple[list, int]:
    """Rows of ``id = key`` through Apache Hudi, and how many files its scan read (the scan's ``numFiles``)."""
    reader = spark.read.format("hudi")
    for name, value in options.items():
        reader = reader.option(name, value)
    df = reader.load(base).filter(f"id = '{key}'")
    rows = df.collect()
    leaves = df._jdf.queryExecution().executedPlan().collectLeaves()
    files = [leaves.apply(i).metrics().apply("numFiles").value() for i in range(leaves.size())
             if leaves.apply(i).metrics().contains("numFiles")]  # fmt: skip
    assert len(files) == 1, f"expected one file scan in the plan, found {files}"
    return rows, files[0]


def test_hudi_upserts_find_every_key_in_place_after_our_clustering(spark, clustered):
    kind, ours, _, before = clustered
    clustering = _clustering_instant(ours, set())
    new_groups = {s["fileId"] for stats in instant_metadata(ours, clustering)["partitionToWriteStats"].values() for s in stats}
    timeline_before = _mdt_timeline(ours)
    rli_init_files = _init_files(ours, "record_index")
    assert rli_init_files, "record_index was initialised by Hudi (files of an init instant 0000...0N)"
    rows = before.select(SMALL_FILE_SCHEMA.names).cast(SMALL_FILE_SCHEMA)
    for index_type, (start, count) in (("RECORD_INDEX", (0, 6)), ("BLOOM", (6, 6))):
        updates = make_updates(rows.slice(start, count), tag=index_type.lower())
        stats = hudi_upsert(spark, ours, updates, index_type=index_type, extra_options=RLI)
        assert_upsert_found_keys(spark, ours, updates, stats, rows_before=before.num_rows)
        written = {s["fileId"] for st in instant_metadata(ours, stats.instant)["partitionToWriteStats"].values() for s in st}
        assert written and written <= new_groups, f"{index_type} upsert wrote outside the clustered groups: {written - new_groups}"
    new = _mdt_timeline(ours) - timeline_before
    assert not [n for n in new if _is_init(n)], f"a metadata partition was re-initialised: {sorted(new)}"
    assert _init_files(ours, "record_index") == rli_init_files, "record_index was rebuilt"
    assert "record_index" in read_hoodie_properties(ours)["hoodie.table.metadata.partitions"].split(",")
    assert_same_rows(read_hudi_rs(ours, options=RS_MDT), read_hudi_snapshot(spark, ours),
                     labels=("hudi-rs after upserts", "Hudi after upserts"))  # fmt: skip


def test_point_lookups_through_the_record_index(spark, clustered):
    """Hudi prunes a point query to the one file group the record index names (no other index is on): the right
    row comes back from a single file, where the unpruned scan reads them all."""
    kind, ours, _, _ = clustered
    snapshot = read_hudi_snapshot(spark, ours)
    keys = snapshot["id"].to_pylist()
    for key in keys[:: max(1, len(keys) // 6)]:
        rows, files = _point_lookup(spark, ours, key, LOOKUP_WITH_RLI)
        assert [r["id"] for r in rows] == [key], (key, rows)
        plain_rows, all_files = _point_lookup(spark, ours, key, LOOKUP_PLAIN)
        assert [r["id"] for r in plain_rows] == [key]
        # (a small non-partitioned table may be one file after clustering: then the missing key below shows pruning)
        assert files == 1 and (all_files > 1 or kind == "mor"), f"{key}: {files} file(s) read with the record index, {all_files} without"
    rows, files = _point_lookup(spark, ours, "no-such-key", LOOKUP_WITH_RLI)
    assert rows == [] and files == 0


# ------------------------------------------------------------------------- record indexes not kept here


def test_partitioned_record_index_is_dropped_alone_global_one_kept(table_copy, caplog):
    """On Hudi's own fixture (files, column_stats, partition_stats and a global record_index): the global record index
    is kept; marked partitioned (``isPartitioned=true``, Hudi 1.1's per-partition layout) it is dropped alone with a
    warning naming it, and so is one of a table without meta columns."""
    import json
    import logging

    from hudi_cluster_core.io.storage import Storage
    from hudi_cluster_core.mdt.record_index import unsupported
    from hudi_cluster_core.mdt.commit import prepare_metadata_table
    from hudi_cluster_core.table import load_table
    from hudi_cluster_core.table.metadata_table import metadata_partitions

    base = table_copy("cow_v9_txns_simple_overwrite")
    storage = Storage(base)
    config = dict(load_table(base).config.props)
    assert unsupported(storage, config) is None
    assert unsupported(storage, {**config, "hoodie.populate.meta.fields": "false"}) is not None
    assert "record_index" in prepare_metadata_table(load_table(base), True)

    base = table_copy("cow_v9_txns_simple_overwrite")
    defs_path = Path(base, ".hoodie/.index_defs/index.json")
    defs = json.loads(defs_path.read_text())
    defs["indexDefinitions"]["record_index"]["indexOptions"]["isPartitioned"] = "true"
    defs_path.write_text(json.dumps(defs))
    with caplog.at_level(logging.WARNING, logger="hudi_cluster_core"):
        kept = prepare_metadata_table(load_table(base), True)
    assert "record_index" not in kept and "files" in kept
    assert "record_index" not in metadata_partitions(Storage(base))
    assert not Path(base, ".hoodie/metadata/record_index").exists()
    assert any("record_index" in r.getMessage() and "partitioned" in r.getMessage() for r in caplog.records)
