"""The clustering commit keeps the metadata table (issue 11): ``files`` and the stats partitions.

A COW v9 table Apache Hudi 1.1.1 wrote with the metadata table on (files, column_stats, partition_stats) is
clustered: the MDT stays with every partition it had, ``files`` lists the new base files (and the replaced ones,
until a clean); a partition we can't maintain (an expression index, say) is dropped alone with a warning; Apache
Hudi (metadata table on) and hudi-rs read the rows they read before; Hudi's own MDT listing equals storage; the
next Hudi upsert finds its keys and re-initialises no metadata partition. A SIGKILL between the MDT deltacommit
and the data replacecommit is recovered by the next run, and the rolled-back instant leaves no MDT deltacommit
behind. (The stats records themselves are compared with Hudi's own clustering in ``test_mdt_stats.py``.)
"""

from __future__ import annotations

import json
import logging
import shutil
import signal
from pathlib import Path

import pytest

from hudi_cluster_core.api import cluster
from hudi_cluster_core.failpoints import MDT_POINTS
from hudi_cluster_core.io.storage import Storage
from hudi_cluster_core.mdt import deltacommit
from hudi_cluster_core.table import load_table
from hudi_cluster_core.table.metadata_table import drop_metadata_partitions, metadata_partitions
from tests.support.apache_hudi import (
    assert_upsert_found_keys, hudi_upsert, make_small_file_table, make_updates, read_hoodie_properties,
    read_hudi_snapshot,
)  # fmt: skip
from tests.support.readers import assert_same_rows, read_hudi_rs
from tests.support.runs import run_cli
from tests.support.hudi_metadata import hudi_listing
from tests.test_mdt_hfile import _show_files

OPTIONS = {"hoodie.clustering.plan.strategy.sort.columns": "c_int"}
RS_MDT = {"hoodie.metadata.enable": "true"}


@pytest.fixture(scope="module")
def template(spark, tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("mdt_commit") / "template"
    make_small_file_table(spark, str(base), batches=3, rows_per_batch=12, metadata_enable=True)
    return base


def _copy(template: Path, tmp_path: Path) -> str:
    base = tmp_path / "t"
    shutil.copytree(template, base)
    return str(base)


def _storage_listing(base: str, partition: str) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in Path(base, partition).glob("*.parquet")}


def _mdt_timeline(base: str) -> set[str]:
    return {p.name for p in Path(base, ".hoodie/metadata/.hoodie/timeline").iterdir() if p.is_file()}


def _assert_listing_equals_storage(spark, base: str) -> None:
    partitions = sorted(p.name for p in Path(base).iterdir() if p.is_dir() and not p.name.startswith("."))
    assert len(partitions) >= 2, partitions
    for partition in partitions:
        storage = _storage_listing(base, partition)
        assert hudi_listing(spark, base, partition) == storage, f"Hudi's MDT listing of {partition} != storage"
        assert _show_files(spark, base, partition) == set(storage), f"show_metadata_table_files({partition}) != storage"


def test_clustering_keeps_the_metadata_table_and_an_unmaintained_index_is_dropped_alone(spark, template, tmp_path, caplog):
    base = _copy(template, tmp_path)
    props = read_hoodie_properties(base)
    built = props["hoodie.table.metadata.partitions"].split(",")
    assert {"files", "column_stats", "partition_stats"} <= set(built), built
    before_rs, before_hudi = read_hudi_rs(base, options=RS_MDT), read_hudi_snapshot(spark, base)
    init_before = {n for n in _mdt_timeline(base) if n.startswith("00000000000000000")}
    # an index clustering can't maintain: a secondary-index partition as the table config names it (a stand-in:
    # config entry and folder only); it must go alone, with a warning naming it
    unmaintained = "secondary_index_by_region"
    Path(base, ".hoodie/metadata", unmaintained).mkdir()
    _set_property(base, "hoodie.table.metadata.partitions", ",".join([*built, unmaintained]))

    with caplog.at_level(logging.WARNING, logger="hudi_cluster_core"):
        result = cluster(base, "scheduleAndExecute", OPTIONS, spark=spark).to_dict()
    instant = result["instant_time"]
    assert instant

    # the MDT stays with every partition it had; the unmaintained one was dropped alone, named in a warning
    props = read_hoodie_properties(base)
    assert props["hoodie.table.metadata.partitions"].split(",") == built
    for name in built:
        assert Path(base, ".hoodie/metadata", name).is_dir()
    assert not Path(base, ".hoodie/metadata", unmaintained).exists()
    assert any(unmaintained in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)
    # the MDT deltacommit of T wrote every kept partition and completed before the data replacecommit
    mdt_done = [n for n in _mdt_timeline(base) if n.startswith(f"{instant}_") and n.endswith(".deltacommit")]
    data_done = [p.name for p in Path(base, ".hoodie/timeline").glob(f"{instant}_*.replacecommit")]
    assert len(mdt_done) == 1 and len(data_done) == 1
    assert mdt_done[0].split("_")[1].split(".")[0] < data_done[0].split("_")[1].split(".")[0]
    written = deltacommit.metadata_timeline(Storage(base)).commit_metadata(
        next(i for i in deltacommit.metadata_timeline(Storage(base)).completed(("deltacommit",)) if i.time == instant))
    assert set(written["partitionToWriteStats"]) == set(built)

    # both readers, through the metadata table, read exactly what they read before
    assert_same_rows(before_rs, read_hudi_rs(base, options=RS_MDT), labels=("before", "after (hudi-rs, MDT)"))
    assert_same_rows(before_hudi, read_hudi_snapshot(spark, base), labels=("before", "after (Hudi, MDT)"))
    # Hudi's MDT listing (replaced files still listed) equals storage, sizes included
    _assert_listing_equals_storage(spark, base)

    # the next Apache Hudi upsert finds every key and re-initialises no metadata partition
    files_base = sorted(p.name for p in Path(base, ".hoodie/metadata/files").glob("*.hfile"))
    updates = _some_rows(before_hudi)
    stats = hudi_upsert(spark, base, updates)
    assert_upsert_found_keys(spark, base, updates, stats, rows_before=before_hudi.num_rows)
    assert files_base, "files has a base HFile"
    assert sorted(p.name for p in Path(base, ".hoodie/metadata/files").glob("*.hfile")) == files_base, \
        "the files partition was rebuilt"
    mdt = deltacommit.metadata_timeline(Storage(base))
    new_inits = [i.file_name for i in mdt.instants if i.time.startswith("00000000000000000")
                 and i.file_name not in init_before]  # fmt: skip
    assert not new_inits, f"Hudi re-initialised metadata partitions: {new_inits}"
    assert read_hoodie_properties(base)["hoodie.table.metadata.partitions"].split(",") == built
    _assert_listing_equals_storage(spark, base)
    assert_same_rows(read_hudi_rs(base, options=RS_MDT), read_hudi_snapshot(spark, base),
                     labels=("hudi-rs after upsert", "Hudi after upsert"))  # fmt: skip


def _set_property(base: str, key: str, value: str) -> None:
    from hudi_cluster_core import javaprops
    from hudi_cluster_core.table.metadata_table import rewrite_properties

    storage = Storage(base)
    props = javaprops.parse(Path(base, ".hoodie/hoodie.properties").read_text(encoding="utf-8"))
    props[key] = value
    rewrite_properties(storage, props)


def _some_rows(snapshot):
    from tests.support.apache_hudi import SMALL_FILE_SCHEMA

    rows = snapshot.select(SMALL_FILE_SCHEMA.names).cast(SMALL_FILE_SCHEMA).slice(0, 6)
    return make_updates(rows)


@pytest.mark.parametrize("point", ["mdt-after-log-files", "mdt-after-deltacommit"])
def test_sigkill_around_the_mdt_deltacommit_then_rerun_recovers(spark, template, tmp_path, point):
    assert point in MDT_POINTS
    base = _copy(template, tmp_path)
    before_rs, before_hudi = read_hudi_rs(base, options=RS_MDT), read_hudi_snapshot(spark, base)

    crashed = run_cli(base, failpoint=point)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr[-2000:]
    (pending,) = [i.time for i in load_table(base).timeline.pending_clustering]
    assert deltacommit.has_instant(Storage(base), pending), "the crash point comes after the MDT deltacommit began"
    assert_same_rows(before_rs, read_hudi_rs(base, options=RS_MDT), labels=("before", "after crash (hudi-rs)"))
    assert_same_rows(before_hudi, read_hudi_snapshot(spark, base), labels=("before", "after crash (Hudi)"))

    result = cluster(base, "scheduleAndExecute", OPTIONS, spark=spark).to_dict()
    assert pending in result["rolled_back"] and result["instant_time"] != pending
    assert not deltacommit.has_instant(Storage(base), pending), "an MDT deltacommit of the rolled-back instant remains"
    assert not [p for p in Path(base, ".hoodie/metadata").rglob(f".*_{pending}.log.*")]
    assert_same_rows(before_rs, read_hudi_rs(base, options=RS_MDT), labels=("before", "after rerun (hudi-rs)"))
    assert_same_rows(before_hudi, read_hudi_snapshot(spark, base), labels=("before", "after rerun (Hudi)"))
    _assert_listing_equals_storage(spark, base)


def test_metadata_enable_false_drops_the_whole_metadata_table(spark, template, tmp_path, caplog):
    base = _copy(template, tmp_path)
    before = read_hudi_rs(base)
    with caplog.at_level(logging.INFO, logger="hudi_cluster_core"):
        cluster(base, "scheduleAndExecute", {**OPTIONS, "hoodie.metadata.enable": "false"}, spark=spark)
    assert not Path(base, ".hoodie/metadata").exists()
    assert read_hoodie_properties(base)["hoodie.table.metadata.partitions"] == ""
    assert any("hoodie.metadata.enable=false" in r.getMessage() for r in caplog.records)
    assert_same_rows(before, read_hudi_rs(base), labels=("before", "after"))


def test_drop_metadata_partitions_alone(fixtures_dir, tmp_path):
    """On Hudi's own fixture: config first, then the folder, then the index definition; idempotent."""
    base = tmp_path / "t"
    shutil.copytree(fixtures_dir / "cow_v9_txns_simple_overwrite", base)
    for path in base.rglob("*"):
        path.chmod(path.stat().st_mode | 0o200)
    storage = Storage(str(base))
    assert drop_metadata_partitions(storage, ["column_stats", "record_index"]) == ["column_stats", "record_index"]
    assert metadata_partitions(storage) == ["files", "partition_stats"]
    assert not (base / ".hoodie/metadata/column_stats").exists() and not (base / ".hoodie/metadata/record_index").exists()
    assert (base / ".hoodie/metadata/files").is_dir() and (base / ".hoodie/metadata/partition_stats").is_dir()
    defs = json.loads((base / ".hoodie/.index_defs/index.json").read_text())["indexDefinitions"]
    assert defs == {}
    drop_metadata_partitions(storage, ["column_stats", "record_index"])  # again: nothing changes, no error
    assert metadata_partitions(storage) == ["files", "partition_stats"]
    assert load_table(str(base)).config.metadata_partitions == ("files", "partition_stats")


def test_an_index_the_config_turns_off_is_dropped_alone(spark, template, tmp_path, caplog):
    base = _copy(template, tmp_path)
    before = read_hudi_rs(base, options=RS_MDT)
    options = {**OPTIONS, "hoodie.metadata.index.partition.stats.enable": "false"}
    with caplog.at_level(logging.WARNING, logger="hudi_cluster_core"):
        result = cluster(base, "scheduleAndExecute", options, spark=spark)
    assert result.completed_file
    built = read_hoodie_properties(base)["hoodie.table.metadata.partitions"].split(",")
    assert "partition_stats" not in built and {"files", "column_stats"} <= set(built), built
    assert any("partition_stats" in r.getMessage() and "hoodie.metadata.index.partition.stats.enable=false"
               in r.getMessage() for r in caplog.records), [r.getMessage() for r in caplog.records]  # fmt: skip
    assert_same_rows(before, read_hudi_rs(base, options=RS_MDT), labels=("before", "after (hudi-rs)"))
    assert_same_rows(before, read_hudi_snapshot(spark, base), labels=("before", "after (Apache Hudi)"))
    _assert_listing_equals_storage(spark, base)


def test_only_an_explicit_false_turns_an_index_off():
    from hudi_cluster_core.mdt.partitions import disabled_by_config

    assert disabled_by_config({}) == {}
    assert disabled_by_config({"hoodie.metadata.record.index.enable": "true"}) == {}
    assert disabled_by_config({"hoodie.metadata.record.index.enable": " FALSE "}) == {
        "record_index": "hoodie.metadata.record.index.enable"}
