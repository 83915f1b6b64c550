"""Every table shape users have (``tests/support/shapes.py``), written by Apache Hudi 1.1.1, clustered by us, and
judged by Apache Hudi and hudi-rs: both read the same rows, value by value, before and after; Apache Hudi's
``validate_metadata_table_files`` finds the metadata table's listing equal to storage; then Apache Hudi upserts
every key once and both readers see each key once with its new value. A shape Apache Hudi refuses to cluster is
refused here in one line, the table untouched."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hudi_cluster_core.api import cluster
from hudi_cluster_core.errors import HudiClusterError
from hudi_cluster_core.table import load_table
from tests.support.apache_hudi import META_COLUMNS, read_hudi_snapshot
from tests.support.readers import assert_same_rows, read_hudi_rs
from tests.support.shapes import CLUSTER_ALL, SHAPES, SHAPES_BY_NAME, Shape, writer_for


def _timeline_files(base: str) -> list[str]:
    hoodie = Path(base) / ".hoodie"
    return sorted(str(p.relative_to(hoodie)) for p in hoodie.rglob("*") if p.is_file() and ".temp" not in p.parts)


def validate_metadata_table(spark, base: str) -> None:
    """Apache Hudi's ``validate_metadata_table_files``: the metadata table's file listing equals storage's."""
    if not (Path(base) / ".hoodie" / "metadata" / ".hoodie").is_dir():
        return
    name = "shape_" + Path(base).name.replace("-", "_")
    spark.sql(f"create table if not exists {name} using hudi location '{base}'")
    try:
        rows = [r.asDict() for r in spark.sql(f"call validate_metadata_table_files(table => '{name}', verbose => true)").collect()]
    finally:
        spark.sql(f"drop table if exists {name}")
    bad = [r for r in rows if not r.get("is_present_in_fs") or not r.get("is_present_in_metadata")
           or r.get("fs_size") != r.get("metadata_size")]  # fmt: skip
    assert not bad, f"metadata table listing differs from storage: {bad[:5]}"


def _data_columns(table: pa.Table) -> pa.Table:
    return table.drop_columns([c for c in META_COLUMNS if c in table.column_names])


def final_upsert(spark, shape: Shape, base: str, snapshot: pa.Table) -> pa.Table:
    """Apache Hudi upserts every row of ``snapshot`` with a new ``note`` and a higher ``ts``; returns the rows
    (data columns) both readers must then see."""
    if shape.rs_differs_after:  # Apache Hudi's reader gives those columns in another type than the table's
        snapshot = read_hudi_rs(base)
    data = _data_columns(snapshot)
    # Apache Hudi reads a virtual-key table without meta columns: the notes then name the id
    key_column = "_hoodie_record_key" if "_hoodie_record_key" in snapshot.column_names else "id"
    keys = [str(k) for k in snapshot[key_column].to_pylist()]
    data = data.set_column(data.schema.get_field_index("note"), "note", pa.array([f"final-{k}" for k in keys]))
    data = data.set_column(data.schema.get_field_index("ts"), "ts", pc.add(data["ts"], 1_000_000))
    writer_for(shape, spark, base).write(data, "upsert")
    return data


def _check_upserted(shape: Shape, expected: pa.Table, got: pa.Table, reader: str) -> None:
    got = _data_columns(got)
    if not shape.duplicate_keys:
        assert_same_rows(expected, got, drop=shape.rs_differs_after,
                         labels=("upserted", reader), key="id")  # fmt: skip
        return
    # ``insert`` kept some keys twice; Hudi's upsert updates one copy of such a key (it would without us too)
    counts = Counter(zip(expected["region"].to_pylist(), expected["id"].to_pylist()))
    assert Counter(zip(got["region"].to_pylist(), got["id"].to_pylist())) == counts, f"{reader}: rows per key changed"
    new = {(r, k) for r, k, n in zip(got["region"].to_pylist(), got["id"].to_pylist(), got["note"].to_pylist())
           if n == f"final-{k}"}  # fmt: skip
    assert new == set(counts), f"{reader}: keys without their upserted value: {sorted(set(counts) - new)[:5]}"


def check_shape(spark, shape: Shape, base: str) -> None:
    for key, value in shape.spark_conf.items():
        spark.conf.set(key, value)
    try:
        _check_shape(spark, shape, base)
    finally:
        for key in shape.spark_conf:
            spark.conf.unset(key)


def _check_shape(spark, shape: Shape, base: str) -> None:
    before_hudi = read_hudi_snapshot(spark, base)
    before_rs = read_hudi_rs(base) if shape.hudi_rs else None
    if before_rs is not None:
        assert_same_rows(before_hudi, before_rs, drop=("_hoodie_file_name", *shape.rs_differs),
                         labels=("Apache Hudi", "hudi-rs"))  # fmt: skip
    files_before = _timeline_files(base)
    options = {**CLUSTER_ALL, **shape.options}
    if shape.refused:
        with pytest.raises(HudiClusterError, match=shape.refused):
            cluster(base, "scheduleAndExecute", options, spark=spark)
        assert _timeline_files(base) == files_before, "a refused run changed the table"
        return
    result = cluster(base, "scheduleAndExecute", options, spark=spark)
    assert result.completed_file and result.input_file_groups, f"nothing clustered: {result.to_json()}"
    after_hudi = read_hudi_snapshot(spark, base)
    assert_same_rows(before_hudi, after_hudi, labels=("Apache Hudi before", "Apache Hudi after"))
    if before_rs is not None:
        after_rs = read_hudi_rs(base)
        assert_same_rows(before_rs, after_rs, drop=("_hoodie_file_name", *shape.rs_differs),
                         labels=("hudi-rs before", "hudi-rs after"))  # fmt: skip
        assert_same_rows(after_hudi, after_rs, drop=("_hoodie_file_name", *shape.rs_differs_after),
                         labels=("Apache Hudi after", "hudi-rs after"))  # fmt: skip
    validate_metadata_table(spark, base)
    if shape.upsert:
        expected = final_upsert(spark, shape, base, after_hudi)
        _check_upserted(shape, expected, read_hudi_snapshot(spark, base), "Apache Hudi")
        if shape.hudi_rs:
            _check_upserted(shape, expected, read_hudi_rs(base), "hudi-rs")


@pytest.fixture(scope="module")
def built(spark, tmp_path_factory):
    """Each shape written once by Apache Hudi; tests cluster a copy."""
    import shutil

    root = tmp_path_factory.mktemp("shapes")
    cache: dict[str, Path] = {}

    def copy(shape: Shape) -> str:
        if shape.name not in cache:
            path = root / "built" / shape.name
            shape.build(writer_for(shape, spark, str(path)))
            cache[shape.name] = path
        target = root / "run" / f"{shape.name}_{len(list((root / 'run').glob('*'))) if (root / 'run').is_dir() else 0}"
        shutil.copytree(cache[shape.name], target)
        return str(target)

    return copy


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
def test_shape(spark, built, shape):
    check_shape(spark, shape, built(shape))


def test_cdc_logs_are_log_files_of_their_slice_as_in_apache_hudis_view(spark, built):
    """A COW table with CDC writes ``.cdc`` change logs. Apache Hudi's file-system view (``show_fsview_latest``)
    lists them as log files of their slice, and its clustering plans carry them; its readers skip them when they
    merge. Ours lists and plans them the same way (and skips them too, see the cdc shapes)."""
    base = built(SHAPES_BY_NAME["cdc_cow"])
    table = load_table(base)
    ours = {(s.partition, s.file_id): sorted(log.name for log in s.log_files) for s in table.view().latest_file_slices()}
    name = "fsview_" + Path(base).name
    spark.sql(f"create table if not exists {name} using hudi location '{base}'")
    try:
        theirs = {}
        for partition in table.view().partitions:
            for row in spark.sql(f"call show_fsview_latest(table => '{name}', partition_path => '{partition}')").collect():
                logs = re.findall(r"pathStr='[^']*/([^/']+)'", row["delta_files_compaction_scheduled"]
                                  + row["delta_files_compaction_unscheduled"])  # fmt: skip
                theirs[(row["partition"], row["file_id"])] = sorted(logs)
    finally:
        spark.sql(f"drop table if exists {name}")
    assert ours == theirs
    assert any(n.endswith(".cdc") for names in ours.values() for n in names)
    scheduled = cluster(base, "schedule", CLUSTER_ALL, spark=spark)
    plan = load_table(base).timeline.clustering_plan(scheduled.instant_time)
    planned = [p for g in plan["clusteringPlan"]["inputGroups"] for s in g["slices"] for p in s["deltaFilePaths"]]
    assert sorted(p.rsplit("/", 1)[-1] for p in planned) == sorted(n for names in ours.values() for n in names)
