"""Footers (issues 20.6, 24.3): read only when a strategy asks, then concurrently, each in one ranged read of the
file's end (its size is the listing's: no HEAD per file), with pyarrow's statistics.

* A size-based plan reads no statistics: only its output estimate reads footers, each once; a key-range plan reads
  each footer once, on several threads at once, for its statistics, its estimate, the dry run's prediction and the
  files-per-query figures together (one ranged read per file, two for the first ones read at once).
* Files Apache Hudi wrote (footers of ~430 KiB: a bloom filter): two requests for the first footer, one for each
  after it; a size that is not the file's falls back to opening it.
* Timestamp statistics equal pyarrow's own, without importing pandas in a planner's process.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_cluster_core.api import cluster
from hudi_cluster_core.io.storage import PARALLEL_REQUESTS, Storage, requests
from hudi_cluster_core.plan import footer_stats
from hudi_cluster_core.table import FileSlice, load_table
from hudi_cluster_core.table.naming import BaseFile
from tests.support.runs import orders_table

OPTIONS = {"hoodie.clustering.plan.strategy.sort.columns": "c_int"}


class _RangedReads:
    """Every ranged read (a ranged GET on an object store) made while installed, by path: real reads, recorded."""

    def __init__(self, monkeypatch):
        self.paths: Counter = Counter()
        real = Storage.read_range

        def read_range(storage, path, start, length):
            self.paths[path] += 1
            return real(storage, path, start, length)

        monkeypatch.setattr(Storage, "read_range", read_range)

    def of_base_files(self) -> Counter:
        return Counter({path: n for path, n in self.paths.items() if path.endswith(".parquet")})


def test_footers_are_read_only_for_a_strategy_that_asks_and_then_concurrently(tmp_path, monkeypatch):
    base = orders_table(tmp_path / "orders", commits=4, files_per_partition=2)
    threads: Counter = Counter()
    stats_asked: Counter = Counter()
    real, real_stats = footer_stats.read_file_footer, footer_stats.FooterStats.__call__

    def read(storage, path, size, reads=None):
        threads[threading.current_thread().name] += 1
        return real(storage, path, size, reads)

    def asked(provider, file_slice):
        stats_asked[file_slice] += 1
        return real_stats(provider, file_slice)

    monkeypatch.setattr(footer_stats, "read_file_footer", read)
    monkeypatch.setattr(footer_stats.FooterStats, "__call__", asked)
    ranged = _RangedReads(monkeypatch)
    with requests.counting() as size_based:
        result = cluster(base, "schedule", {}, dry_run=True)
    planned = sum(len(g["input_file_ids"]) for g in result.groups)
    assert not stats_asked, "size-based: no statistics asked for"
    # its output estimate reads the planned files' footers: once each, for the plan's numOutputFileGroups and the
    # dry run's prediction together
    assert sum(threads.values()) == planned > 0 and max(ranged.of_base_files().values()) <= 2, (threads, ranged.paths)
    eligible = len(load_table(base).view().latest_file_slices())
    threads.clear()
    ranged.paths.clear()

    # with sort columns the result predicts files per query from the footers of the plan's partitions: read once
    # each (the estimate's among them); on local files one after another, in the calling thread
    result = cluster(base, "schedule", OPTIONS, dry_run=True)
    assert result.files_per_query and sum(threads.values()) == eligible, threads
    assert not [name for name in threads if name.startswith("storage")], threads
    threads.clear()
    ranged.paths.clear()
    # concurrently where a request is a round trip waited for (an object store's rule, on this same store)
    monkeypatch.setattr(Storage, "request_threads", property(lambda storage: PARALLEL_REQUESTS))
    result = cluster(base, "schedule", OPTIONS, dry_run=True)
    assert result.files_per_query and sum(threads.values()) == eligible, threads
    assert len([name for name in threads if name.startswith("storage")]) >= 2, threads
    threads.clear()
    ranged.paths.clear()

    with requests.counting() as counted:
        result = cluster(base, "schedule", {"hoodie.clustering.plan.strategy.class": "key-range"}, dry_run=True)
    assert result.input_file_groups > 0 and result.files_per_query, "key-range sorts by the record key: a prediction"
    assert stats_asked, "key-range reads statistics"
    assert sum(threads.values()) == eligible, "each footer read once: statistics, estimates and prediction share it"
    # one request per footer, two for the first ones read at once (ours carry a bloom filter: footers larger than
    # FOOTER_READ; once one is met, the first read takes a whole footer)
    per_file = ranged.of_base_files()
    assert len(per_file) == eligible and max(per_file.values()) <= 2, per_file
    assert sum(1 for n in per_file.values() if n == 2) <= footer_stats.FOOTER_THREADS, per_file
    assert eligible < counted["range"] <= eligible + footer_stats.FOOTER_THREADS, counted
    assert "open" not in counted and counted.get("info") == size_based.get("info"), "sizes from the listing: no HEAD"
    assert len([name for name in threads if name.startswith("storage")]) >= 2, threads


def _opened_footer_stats(storage, file_slice):
    """The stats as read from the opened file (pyarrow asks the store for its size first): what to compare with."""
    path = storage.join(file_slice.partition, file_slice.base_file.name)
    with storage.open_input_file(path) as handle:
        metadata = pq.ParquetFile(handle).metadata
    kv = {k.decode(): v.decode() for k, v in (metadata.metadata or {}).items()}
    return metadata.num_rows, kv.get("hoodie_min_record_key"), kv.get("hoodie_max_record_key"), metadata.serialized_size


def test_a_footer_is_one_ranged_read_of_the_file_end_where_the_listing_gave_its_size(table_copy, monkeypatch):
    """Files Apache Hudi wrote (footers of ~430 KiB: a bloom filter): a first footer costs a ranged read of the last
    FOOTER_READ bytes and one of the rest; once a footer that size was met, one request each. A size that is not
    the file's falls back to opening the file. The stats are the opened file's."""
    table = load_table(table_copy("cow_v9_txns_simple_overwrite"))
    slices = table.view().latest_file_slices()
    assert len(slices) > 1 and all(s.base_file is not None and s.base_file.size for s in slices)
    reads = footer_stats.FooterReads()
    for n, file_slice in enumerate(slices):
        rows, low, high, footer_bytes = _opened_footer_stats(table.storage, file_slice)
        assert footer_bytes > footer_stats.FOOTER_READ, "a footer larger than the first read"
        with requests.counting() as counted:
            stats = footer_stats.read_footer_stats(table.storage, file_slice, reads)
        assert (stats.num_rows, stats.min_record_key, stats.max_record_key) == (rows, low, high) and rows > 0
        assert counted == {"range": 2 if n == 0 else 1}, (n, counted)
        assert "_hoodie_record_key" in stats.columns and "c_int" not in stats.columns

        wrong = replace(file_slice, base_file=replace(file_slice.base_file, size=file_slice.base_file.size - 5))
        with requests.counting() as counted:
            assert footer_stats.read_footer_stats(table.storage, wrong, reads) == stats
        assert counted.get("open") == 1, "a size that is not the file's: the file is opened"


TIMESTAMPS = {  # name -> type: each unit the statistics are built for here, UTC-adjusted or not, and nanoseconds
    "ts_us_utc": pa.timestamp("us", tz="UTC"), "ts_ms": pa.timestamp("ms"), "ts_us": pa.timestamp("us"),
    "ts_ms_utc": pa.timestamp("ms", tz="UTC"), "ts_ns_utc": pa.timestamp("ns", tz="UTC"),
}  # fmt: skip


def _timestamp_file(path: Path, names) -> FileSlice:
    values = [-1_724_127_382_740_206, 5, 1_724_127_382_740_206]
    data = {n: pa.array([v // (1000 if TIMESTAMPS[n].unit == "ms" else 1) for v in values], TIMESTAMPS[n]) for n in names}
    pq.write_table(pa.table({"_hoodie_record_key": ["a", "b", "c"], **data}), path)
    return FileSlice("", "f", "0", BaseFile(path.name, "f", "0-0-0", "0", path.stat().st_size))


def test_timestamp_statistics_are_pyarrows_own_without_importing_pandas(tmp_path):
    file_slice = _timestamp_file(tmp_path / "all.parquet", TIMESTAMPS)
    metadata = pq.read_metadata(tmp_path / "all.parquet")
    expected = {}
    for index in range(metadata.num_columns):
        chunk = metadata.row_group(0).column(index)
        expected[chunk.path_in_schema] = (chunk.statistics.min, chunk.statistics.max)
    stats = footer_stats.read_footer_stats(Storage(str(tmp_path)), file_slice)
    assert stats.columns == expected and repr(stats.columns) == repr(expected)

    # a planner's process reading footers with ms/us timestamp columns does not import pandas (most of a second)
    micros = _timestamp_file(tmp_path / "micros.parquet", [n for n in TIMESTAMPS if "ns" not in n])
    script = (
        "import sys, pickle; from hudi_cluster_core.io.storage import Storage; from hudi_cluster_core.plan import footer_stats; "
        f"stats = footer_stats.read_footer_stats(Storage(sys.argv[1]), pickle.loads({pickle.dumps(micros)!r})); "
        "assert stats.columns['ts_us_utc'][0].year == 1915, stats; print('pandas' in sys.modules)"
    )  # fmt: skip
    root = str(Path(__file__).resolve().parent.parent)
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, cwd=root,
                          env={**os.environ, "PYTHONPATH": root}, timeout=120)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "False", (done.stdout, done.stderr[-2000:])
