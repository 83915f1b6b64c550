"""Our append writer keeps the metadata table (issue 13, step 1), as Apache Hudi's insert does.

A COW v9 partitioned table Apache Hudi 1.1.1 wrote with the metadata table on (files, column_stats,
partition_stats, bloom_filters, record_index) gets an append of new keys from us. The MDT keeps every partition,
its deltacommit of our instant completes before our commit; Apache Hudi (with data skipping on the column stats
and the record index) and hudi-rs read the same rows, the appended ones included; Hudi's MDT listing equals
storage; Hudi's next upsert with RECORD_INDEX finds the appended keys in place and initialises no MDT partition.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_cluster_core.write.append import append
from tests.support.apache_hudi import (
    SMALL_FILE_SCHEMA, assert_upsert_found_keys, hudi_upsert, instant_metadata, make_small_file_table, make_updates,
    read_hoodie_properties, read_hudi_snapshot, small_file_rows,
)  # fmt: skip
from tests.support.readers import assert_same_rows, read_hudi_rs
from tests.test_mdt_commit import _assert_listing_equals_storage
from tests.test_mdt_record_index import _init_files, _is_init, _mdt_timeline, _point_lookup, _record_index_of

# every index our commits keep; Hudi's writer drops an index its config does not enable, so its writes say them all
ALL_INDEXES = {
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.index.column.stats.enable": "true",
    "hoodie.metadata.index.partition.stats.enable": "true",
    "hoodie.metadata.index.bloom.filter.enable": "true",
    "hoodie.metadata.record.index.enable": "true",
}
INDEXES = {"files", "column_stats", "partition_stats", "bloom_filters", "record_index"}
RS_MDT = {"hoodie.metadata.enable": "true"}
SKIPPING = {**ALL_INDEXES, "hoodie.enable.data.skipping": "true"}


@pytest.fixture(scope="module")
def template(spark, tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("append_mdt") / "t"
    make_small_file_table(spark, str(base), batches=2, rows_per_batch=12, metadata_enable=True, extra_options=ALL_INDEXES)
    assert set(read_hoodie_properties(base)["hoodie.table.metadata.partitions"].split(",")) == INDEXES
    return base


def test_append_keeps_every_index_and_hudi_finds_the_appended_keys(spark, template, tmp_path):
    base = str(tmp_path / "t")
    shutil.copytree(template, base)
    before = read_hudi_snapshot(spark, base)
    init_before = {n for n in _mdt_timeline(base) if _is_init(n)}
    rli_init = _init_files(base, "record_index")
    appended = small_file_rows(1000, 9)

    instant = append(base, appended)["instant_time"]

    assert set(read_hoodie_properties(base)["hoodie.table.metadata.partitions"].split(",")) == INDEXES
    mdt_done = [n for n in _mdt_timeline(base) if n.startswith(f"{instant}_") and n.endswith(".deltacommit")]
    data_done = [p.name for p in Path(base, ".hoodie/timeline").glob(f"{instant}_*.commit")]
    assert len(mdt_done) == 1 and len(data_done) == 1, (mdt_done, data_done)
    assert mdt_done[0].split("_")[1].split(".")[0] < data_done[0].split("_")[1].split(".")[0]
    assert not list(Path(base, ".hoodie/.temp").glob(f"{instant}*")), "markers left behind"
    # the record index holds exactly the appended keys, each in the new file group holding it
    index = _record_index_of(base, instant)
    assert set(index) == set(appended["id"].to_pylist())
    stats = instant_metadata(base, instant)["partitionToWriteStats"]
    new_groups = {(p, s["fileId"]) for p, st in stats.items() for s in st}
    snapshot = read_hudi_snapshot(spark, base, ALL_INDEXES)
    assert snapshot.num_rows == before.num_rows + appended.num_rows
    for key, partition, name in zip(snapshot["_hoodie_record_key"].to_pylist(), snapshot["_hoodie_partition_path"].to_pylist(),
                                    snapshot["_hoodie_file_name"].to_pylist()):  # fmt: skip
        if key in index:
            assert (partition, name.split("_")[0]) in new_groups

    # both readers through the metadata table; Hudi with data skipping finds every appended key
    assert_same_rows(read_hudi_rs(base, options=RS_MDT), snapshot, labels=("hudi-rs", "Hudi"))
    for key in appended["id"].to_pylist()[::3]:
        rows, files = _point_lookup(spark, base, key, SKIPPING)
        assert [r["id"] for r in rows] == [key] and files == 1, (key, rows, files)
    _assert_listing_equals_storage(spark, base)

    # Hudi's next upsert with the record index finds appended and older keys in place, initialising nothing
    rows = pa.concat_tables([appended, before.select(SMALL_FILE_SCHEMA.names).cast(SMALL_FILE_SCHEMA).slice(0, 3)])
    updates = make_updates(rows, tag="rli")
    upsert = hudi_upsert(spark, base, updates, index_type="RECORD_INDEX", extra_options=ALL_INDEXES)
    assert_upsert_found_keys(spark, base, updates, upsert, rows_before=snapshot.num_rows)
    assert not {n for n in _mdt_timeline(base) if _is_init(n)} - init_before, "a metadata partition was initialised"
    assert _init_files(base, "record_index") == rli_init
    assert set(read_hoodie_properties(base)["hoodie.table.metadata.partitions"].split(",")) == INDEXES
    assert_same_rows(read_hudi_rs(base, options=RS_MDT), read_hudi_snapshot(spark, base), labels=("hudi-rs", "Hudi"))
