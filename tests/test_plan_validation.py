"""A stored plan is checked before anything is written: every partition and file path it names must be a file of
the slice's file group, directly in an existing partition of the table. A bad one is one error line naming the
plan file and the bad path (exit 2), and neither the table nor any other table changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

from hudi_cluster_core.avro import decode_avro, encode_avro
from hudi_cluster_core.cli import main
from hudi_cluster_core.table import load_table
from hudi_cluster_core.writer.append import append
from tests.support.apache_hudi import small_file_rows
from tests.test_cli_run import tree_digest


def _small_table(base: Path) -> str:
    for batch in range(2):
        append(str(base), small_file_rows(batch * 20, 20), table_name=base.name, record_key="id",
               partition_field="region", precombine_field="ts", table_version=9)  # fmt: skip
    return str(base)


@pytest.fixture
def tables(tmp_path, capsys) -> tuple[str, str, str]:
    """(table with a scheduled plan, its instant, a second table next to it)."""
    orders, other = _small_table(tmp_path / "orders"), _small_table(tmp_path / "other")
    assert main(["run", "--base-path", orders, "--mode", "schedule", "--json"]) == 0
    instant = json.loads(capsys.readouterr().out)["instant_time"]
    return orders, instant, other


def _plan_file(base: str, instant: str) -> str:
    timeline = load_table(base).timeline
    return timeline.path_of(timeline.requested_file(instant).file_name)


def _rewrite_first_group(base: str, instant: str, edit: Callable[[list[dict]], None]) -> str:
    """Apply ``edit`` to the slices of the plan's first group; returns the plan file."""
    path = _plan_file(base, instant)
    record = decode_avro(Path(path).read_bytes())
    edit(record["clusteringPlan"]["inputGroups"][0]["slices"])
    Path(path).write_bytes(encode_avro(record, "HoodieRequestedReplaceMetadata"))
    return path


def _a_file(base: str, partition: str, pattern: str = "*.parquet") -> Path:
    return sorted((Path(base) / partition).glob(pattern))[0]


def _file_id(path: Path) -> str:
    return path.name.split("_", 1)[0]


# each case edits the slices of the plan's first group and returns the bad value the error line must name;
# a partition is changed on every slice of the group (a group spanning partitions is refused earlier)
def _set_partition(slices: list[dict], partition: str) -> None:
    for s in slices:
        s["partitionPath"] = partition


def _absolute_partition(slices, orders, other):
    _set_partition(slices, str(Path(other) / "us"))
    return str(Path(other) / "us")


def _dotdot_partition(slices, orders, other):
    _set_partition(slices, "../other/us")  # exists, with a partition metafile: only its spelling gives it away
    return "../other/us"


def _backslash_partition(slices, orders, other):
    _set_partition(slices, "..\\other\\us")
    return "..\\\\other\\\\us"  # repr() in the message doubles the backslashes


def _unknown_partition(slices, orders, other):
    _set_partition(slices, "nope")
    return "nope"


def _hoodie_partition(slices, orders, other):
    _set_partition(slices, ".hoodie/timeline")
    return ".hoodie/timeline"


def _data_file_in_other_table(slices, orders, other):
    s = slices[0]
    foreign = _a_file(other, s["partitionPath"])
    s["dataFilePath"], s["fileId"] = f"file:{foreign}", _file_id(foreign)
    return s["dataFilePath"]


def _etc_passwd(slices, orders, other):
    s = slices[0]
    s["dataFilePath"] = "../../etc/passwd"
    return "../../etc/passwd"


def _dotdot_inside_data_path(slices, orders, other):
    s = slices[0]
    foreign = _a_file(other, s["partitionPath"])
    s["dataFilePath"] = f"file:{orders}/{s['partitionPath']}/../../other/{s['partitionPath']}/{foreign.name}"
    s["fileId"] = _file_id(foreign)
    return s["dataFilePath"]


def _file_id_mismatch(slices, orders, other):
    s = slices[0]
    sibling = next(p for p in (Path(orders) / s["partitionPath"]).glob("*.parquet") if _file_id(p) != s["fileId"])
    s["dataFilePath"] = f"file:{sibling}"
    return s["dataFilePath"]


def _missing_file(slices, orders, other):
    s = slices[0]
    s["dataFilePath"] = f"file:{orders}/{s['partitionPath']}/{s['fileId']}_0-1-0_20200101000000000.parquet"
    return s["dataFilePath"]


def _other_scheme(slices, orders, other):
    s = slices[0]
    s["dataFilePath"] = "hdfs://namenode:8020" + s["dataFilePath"].removeprefix("file:")
    return "hdfs://namenode:8020"


def _log_file_outside(slices, orders, other):
    s = slices[0]
    log = f"file:{other}/{s['partitionPath']}/.{s['fileId']}_20200101000000000.log.1_0-1-0"
    s["deltaFilePaths"] = [log]
    return log


def _log_file_missing(slices, orders, other):
    s = slices[0]
    log = f"file:{orders}/{s['partitionPath']}/.{s['fileId']}_20200101000000000.log.1_0-1-0"
    s["deltaFilePaths"] = [log]
    return log


CASES = [
    _absolute_partition, _dotdot_partition, _backslash_partition, _unknown_partition, _hoodie_partition,
    _data_file_in_other_table, _etc_passwd, _dotdot_inside_data_path, _file_id_mismatch, _missing_file,
    _other_scheme, _log_file_outside, _log_file_missing,
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.__name__.strip("_"))
def test_a_plan_path_outside_its_file_group_is_one_error_and_nothing_is_written(tables, capsys, case):
    orders, instant, other = tables
    bad = {}
    plan_file = _rewrite_first_group(orders, instant, lambda slices: bad.setdefault("value", case(slices, orders, other)))
    before = tree_digest(orders), tree_digest(other)
    code = main(["run", "--base-path", orders, "--mode", "execute", "--instant-time", instant])
    out, err = capsys.readouterr()
    assert code == 2, out
    assert err.startswith("hudi-cluster: error: ") and err.count("\n") == 1, err
    assert plan_file in err and bad["value"] in err, err
    assert (tree_digest(orders), tree_digest(other)) == before
    assert load_table(orders).timeline.get(instant).state.name == "REQUESTED"


def test_a_slice_without_files_is_rejected(tables, capsys):
    orders, instant, _ = tables
    plan_file = _rewrite_first_group(orders, instant, lambda slices: slices[0].update(dataFilePath="", deltaFilePaths=[]))
    before = tree_digest(orders)
    assert main(["run", "--base-path", orders, "--mode", "execute", "--instant-time", instant]) == 2
    err = capsys.readouterr().err
    assert plan_file in err and "no base file" in err and err.count("\n") == 1
    assert tree_digest(orders) == before


def test_our_own_plan_validates_and_executes(tables, capsys):
    orders, instant, _ = tables
    assert main(["run", "--base-path", orders, "--mode", "execute", "--instant-time", instant, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["message"] == "completed"


@pytest.mark.parametrize("version, table_type", [(9, "MERGE_ON_READ"), (6, "COPY_ON_WRITE")])
def test_a_plan_apache_hudi_scheduled_validates_and_executes(spark, tmp_path, capsys, version, table_type):
    from tests.support.apache_hudi import (
        hudi_schedule_clustering, make_small_file_table, make_updates, read_hudi_snapshot, write_hudi_table,
    )  # fmt: skip
    from tests.support.readers import assert_same_rows, read_hudi_rs

    base = str(tmp_path / "t")
    no_compaction = {"hoodie.compact.inline": "false", "hoodie.datasource.compaction.async.enable": "false"}
    rows = make_small_file_table(spark, base, batches=3, rows_per_batch=30, table_version=version,
                                 table_type=table_type, extra_options=no_compaction)  # fmt: skip
    if table_type == "MERGE_ON_READ":  # log files, so Hudi's deltaFilePaths are checked too
        write_hudi_table(spark, base, make_updates(rows.slice(0, 20)), operation="upsert", extra_options=no_compaction)
    before = read_hudi_snapshot(spark, base)
    instant = hudi_schedule_clustering(spark, base, order="c_int,ts")
    slices = [s for g in load_table(base).timeline.clustering_plan(instant)["clusteringPlan"]["inputGroups"] for s in g["slices"]]
    assert all(s["dataFilePath"].startswith("file:/") for s in slices)
    assert table_type == "COPY_ON_WRITE" or any(s["deltaFilePaths"] for s in slices), "no log files in Hudi's plan"
    code = main(["run", "--base-path", base, "--mode", "execute", "--instant-time", instant, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert json.loads(captured.out)["message"] == "completed"
    assert_same_rows(before, read_hudi_snapshot(spark, base), labels=("hudi before", "hudi after"))
    assert_same_rows(before, read_hudi_rs(base), labels=("hudi before", "hudi-rs after"))
