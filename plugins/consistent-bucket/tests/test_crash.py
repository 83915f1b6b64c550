"""A crash after the new hashing_meta is written but before the replacecommit: readers and Apache Hudi's writer
keep using the old buckets (``<T>.hashing_meta`` does not count while T is not completed), and the next run (roll
back, or re-execute T) leaves a table whose metadata, files and rows agree."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from cb_tables import KB, bucket_options, file_id_of, hashing_metadata, write_bucket_table

from hudi_cluster_consistent_bucket.hashing import INIT_INSTANT, Ring, list_metadata_files
from hudi_cluster_core.failpoints import ENV
from hudi_cluster_core.io.storage import Storage
from hudi_cluster_core.table import load_table
from tests.support.apache_hudi import hudi_upsert, make_updates, read_hudi_snapshot, small_file_rows
from tests.support.readers import assert_same_rows, read_hudi_rs

OPTIONS = bucket_options(2, 20 * KB, **{"hoodie.bucket.index.max.num.buckets": 8})


def run_cli(base, *extra, failpoint=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HUDI_CLUSTER_FAILPOINT")}
    if failpoint:
        env[ENV] = failpoint
    confs = [a for k, v in {**OPTIONS, "hoodie.clustering.plan.strategy.class": "consistent-bucket",
                            "hoodie.clustering.execution.strategy.class": "consistent-bucket"}.items()
             for a in ("--hoodie-conf", f"{k}={v}")]  # fmt: skip
    command = [sys.executable, "-m", "hudi_cluster_core.cli", "run", "--base-path", base, "--mode", "scheduleAndExecute",
               "--spark-master", "local[2]", "--json", *confs, *extra]  # fmt: skip
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("retry", [False, True], ids=["roll-back", "re-execute"])
def test_crash_between_hashing_meta_and_commit(spark, tmp_path, retry):
    base = str((tmp_path / "crash").resolve())
    write_bucket_table(spark, base, small_file_rows(0, 3000), options=OPTIONS)
    before = read_hudi_rs(base)

    crashed = run_cli(base, failpoint="before-commit-file")
    assert crashed.returncode != 0
    table = load_table(base)
    (pending,) = [i.time for i in table.timeline.pending()]
    for partition in ("us", "eu", "apac"):
        assert pending in list_metadata_files(Storage(base), partition).hashing  # written, but must not count
    assert_same_rows(before, read_hudi_rs(base))
    assert_same_rows(before, read_hudi_snapshot(spark, base))

    done = run_cli(base, *(["--retry-last-failed-clustering-job"] if retry else []))
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert (result["instant_time"] == pending) is retry
    if not retry:  # the rolled-back instant's hashing_meta stays behind; it never counts (no marker, not completed)
        files = list_metadata_files(Storage(base), "us")
        assert pending in files.hashing and pending not in files.committed
    after = read_hudi_rs(base)
    assert_same_rows(before, after)
    assert_same_rows(before, read_hudi_snapshot(spark, base))
    new_rings = {}
    for partition in ("us", "eu", "apac"):
        meta = hashing_metadata(base, partition)
        assert meta.instant == result["instant_time"] and meta.seq_no == 1 and len(meta.nodes) == 4
        new_rings[partition] = Ring(meta.nodes)

    # Apache Hudi's writer takes the committed metadata (not a stale one) and finds every key in its new bucket
    updates = make_updates(small_file_rows(0, 300), tag="after-crash")
    stats = hudi_upsert(spark, base, updates, index_type="BUCKET", extra_options=OPTIONS)
    assert stats.num_inserts == 0 and stats.num_update_writes == 300
    rows = read_hudi_snapshot(spark, base)
    assert_same_rows(read_hudi_rs(base), rows)
    assert rows.num_rows == 3000 and len(set(rows["_hoodie_record_key"].to_pylist())) == 3000
    for key, partition, name in zip(rows["_hoodie_record_key"].to_pylist(), rows["_hoodie_partition_path"].to_pylist(),
                                    rows["_hoodie_file_name"].to_pylist()):  # fmt: skip
        assert file_id_of(name) == new_rings[partition].bucket_of_key(key, ["id"]).file_id
    for partition in ("us", "eu", "apac"):
        committed = list_metadata_files(Storage(base), partition).committed
        assert result["instant_time"] in committed and INIT_INSTANT in committed
