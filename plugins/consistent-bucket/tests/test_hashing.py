"""Hashing metadata and record -> bucket, reproduced for tables Apache Hudi 1.1.1 wrote."""

from __future__ import annotations

from pathlib import Path

import pytest
from cb_tables import bucket_options, file_id_of, hashing_metadata, write_bucket_table

from hudi_cluster_consistent_bucket.hashing import (
    DELETE, HASH_MASK, INIT_INSTANT, REPLACE, HashingMetadata, Node, Ring, covers, extract_hash_keys,
    hash_fields, initial_metadata, initial_nodes, load_valid_metadata, nodes_from_json, nodes_to_json,
    write_metadata,
)  # fmt: skip
from hudi_cluster_core.io.storage import Storage
from tests.support.apache_hudi import small_file_rows
from tests.support.readers import hudi_rs_file_slices, read_hudi_rs

# what Apache Hudi 1.1.1 wrote for partition "us" of a 2-bucket table, and the child nodes its planner put in the
# clustering plan when it split both buckets (a scratch run; the prefixes of new buckets are random in Hudi)
HUDI_US_INITIAL = """{
  "version" : 0,
  "partitionPath" : "us",
  "instant" : "00000000000000",
  "numBuckets" : 2,
  "seqNo" : 0,
  "nodes" : [ {
    "value" : 1073741824,
    "fileIdPrefix" : "7a77c13c-05b8-3e08-a6fc-5e21640c1b1c",
    "tag" : "NORMAL"
  }, {
    "value" : 2147483647,
    "fileIdPrefix" : "be9b2a12-8c22-3116-8ce8-965c455c1c93",
    "tag" : "NORMAL"
  } ]
}"""
HUDI_SPLIT_CHILDREN = (
    '[ {\n  "value" : 536870911,\n  "fileIdPrefix" : "359d6850-2f4f-49cd-9e33-403dad1286a1",\n  "tag" : "REPLACE"\n'
    '}, {\n  "value" : 1073741824,\n  "fileIdPrefix" : "dd47e49f-7a4b-4a35-a11d-b236a9872619",\n  "tag" : "REPLACE"\n} ]'
)


@pytest.fixture(scope="module")
def partitioned_table(spark, tmp_path_factory) -> str:
    base = str((tmp_path_factory.mktemp("cb-hashing") / "partitioned").resolve())
    write_bucket_table(spark, base, small_file_rows(0, 1500), options=bucket_options(num_buckets=5))
    return base


@pytest.fixture(scope="module")
def complex_key_table(spark, tmp_path_factory) -> str:
    """Non-partitioned, record key ``id,c_int`` (ComplexKeyGenerator), hashed on ``c_int`` only."""
    base = str((tmp_path_factory.mktemp("cb-hashing") / "complex").resolve())
    options = bucket_options(num_buckets=7, **{"hoodie.bucket.index.hash.field": "c_int"})
    write_bucket_table(spark, base, small_file_rows(0, 800), options=options, record_key="id,c_int", partitioned=False)
    return base


# ---------------------------------------------------------------------------------------------- metadata


def test_initial_metadata_text_matches_hudi_byte_for_byte():
    assert initial_metadata("us", 2).to_json() == HUDI_US_INITIAL
    assert HashingMetadata.from_bytes(HUDI_US_INITIAL.encode()) == initial_metadata("us", 2)


@pytest.mark.parametrize("partition", ["us", "eu", "apac"])
def test_initial_nodes_and_prefixes_reproduced_for_a_hudi_table(partitioned_table, partition):
    on_disk = hashing_metadata(partitioned_table, partition, INIT_INSTANT)
    assert on_disk == initial_metadata(partition, 5)
    path = Path(partitioned_table, ".hoodie/.bucket_index/consistent_hashing_metadata", partition, f"{INIT_INSTANT}.hashing_meta")
    assert path.read_text() == initial_metadata(partition, 5).to_json()


def test_initial_prefixes_of_the_non_partitioned_table(complex_key_table):
    assert hashing_metadata(complex_key_table, "", INIT_INSTANT) == initial_metadata("", 7)


def test_initial_node_values_cover_the_ring():
    for n in (1, 2, 3, 7, 256, 1000):
        values = [node.value for node in initial_nodes("p", n)]
        assert values == sorted(set(values)) and values[-1] == HASH_MASK and len(values) == n


# ------------------------------------------------------------------------------------------ record -> bucket


def _check_rows_sit_in_their_buckets(base: str, fields: list[str]) -> int:
    rows = read_hudi_rs(base)
    rings = {}
    checked = 0
    for key, partition, name in zip(rows["_hoodie_record_key"].to_pylist(), rows["_hoodie_partition_path"].to_pylist(),
                                    rows["_hoodie_file_name"].to_pylist()):  # fmt: skip
        ring = rings.setdefault(partition, Ring(hashing_metadata(base, partition).nodes))
        assert file_id_of(name) == ring.bucket_of_key(key, fields).file_id, (partition, key)
        checked += 1
    for file_slice in hudi_rs_file_slices(base):
        assert file_slice["file_id"] in rings[file_slice["partition"]].by_file_id
    return checked


def test_record_to_bucket_reproduced_for_a_hudi_table(partitioned_table):
    assert _check_rows_sit_in_their_buckets(partitioned_table, ["id"]) == 1500


def test_record_to_bucket_with_a_complex_key_and_a_hash_field_subset(complex_key_table):
    keys = read_hudi_rs(complex_key_table)["_hoodie_record_key"].to_pylist()
    assert all(k.startswith("id:") and ",c_int:" in k for k in keys)
    assert _check_rows_sit_in_their_buckets(complex_key_table, hash_fields("c_int", ["id", "c_int"])) == 800
    assert len({file_id_of(n) for n in read_hudi_rs(complex_key_table)["_hoodie_file_name"].to_pylist()}) == 7


def test_extract_hash_keys_follows_hudi():
    assert extract_hash_keys("k000001", ["id"]) == ["k000001"]
    assert extract_hash_keys("id:k1", ["id"]) == ["id:k1"]  # one field: no ',' so the key is the value
    assert extract_hash_keys("a:1,b:2", ["b"]) == ["2"]
    assert extract_hash_keys("a:1,b:2", ["b", "a"]) == ["1", "2"]  # record-key order
    assert extract_hash_keys("a:1,b:2", []) == ["1", "2"]
    assert extract_hash_keys("a:1,b:2", ["c"]) == ["a:1,b:2"]
    ts = "col1:val1,col2:2014-10-22 13:50:42,col3:val3"
    assert extract_hash_keys(ts, ["col2"]) == ["2014-10-22 13:50:42"]
    assert extract_hash_keys(ts, ["col1", "col3"]) == ["val1", "val3"]
    assert extract_hash_keys("a:__null__,b:__empty__", ["a", "b"]) == [None, ""]
    assert extract_hash_keys("a:x,y,b:2", ["a"]) == ["x,y"]


# ----------------------------------------------------------------------------------------------- the ring


def test_split_of_hudis_initial_buckets_gives_hudis_child_values():
    ring = Ring(HashingMetadata.from_bytes(HUDI_US_INITIAL.encode()).nodes)
    low = ring.split(ring.nodes[0], ("359d6850-2f4f-49cd-9e33-403dad1286a1", "dd47e49f-7a4b-4a35-a11d-b236a9872619"))
    assert nodes_to_json(low) == HUDI_SPLIT_CHILDREN
    assert nodes_from_json(HUDI_SPLIT_CHILDREN) == list(low)
    high = ring.split(ring.nodes[1], ("a", "b"))
    assert [n.value for n in high] == [1610612735, 2147483647]


def test_ring_wraps_and_finds_neighbours():
    ring = Ring([Node(100, "a"), Node(200, "b"), Node(300, "c")])
    assert [ring.bucket(h).value for h in (0, 100, 101, 300, 301, HASH_MASK)] == [100, 100, 200, 300, 100, 100]
    assert ring.former(100).value == 300 and ring.latter(300).value == 100
    # the wrapping bucket (300, 100] splits across 0
    first = ring.split(ring.nodes[0], ("x", "y"))
    assert first[0].value == (300 + 100 + HASH_MASK + 1) // 2 & HASH_MASK
    assert covers(ring.apply(first), 300, 100) == list(first)


def test_merge_children_and_apply():
    ring = Ring([Node(100, "a"), Node(200, "b"), Node(300, "c")])
    children = ring.merge([ring.nodes[0], ring.nodes[1]], "m")
    assert [(c.value, c.file_id_prefix, c.tag) for c in children] == [(100, None, DELETE), (200, "m", REPLACE)]
    merged = ring.apply(children)
    assert [(n.value, n.file_id_prefix) for n in merged.nodes] == [(200, "m"), (300, "c")]
    with pytest.raises(ValueError):
        ring.merge([ring.nodes[0], ring.nodes[2]], "m")
    assert '"fileIdPrefix" : null' in nodes_to_json(children)


def test_valid_metadata_follows_hudis_rules(tmp_path):
    storage = Storage(str(tmp_path))
    first = initial_metadata("p", 2)
    write_metadata(storage, first)
    second = HashingMetadata("p", "20260101000000000", 2, 1, first.nodes[:1])
    write_metadata(storage, second)
    load = lambda **kw: load_valid_metadata(storage, "p", **{"completed": (), **kw})  # noqa: E731
    assert load() == first  # 2026... is neither committed nor completed
    assert load(completed=["20260101000000000"]) == second
    assert load(pending=["20260101000000000"], latest_file_ids=[first.nodes[0].file_id]) == first
    assert load(latest_file_ids=[first.nodes[0].file_id]) == second  # archived instant, its bucket files exist
    assert load(completed=["20260101000000000"], exclude=["20260101000000000"]) == first
    (Path(tmp_path) / ".hoodie/.bucket_index/consistent_hashing_metadata/p/20260101000000000.commit").write_bytes(b"")
    assert load() == second
    assert not [p for p in (Path(tmp_path) / ".hoodie/.bucket_index/consistent_hashing_metadata/p").iterdir()
                if p.name.endswith(".tmp")]  # fmt: skip
