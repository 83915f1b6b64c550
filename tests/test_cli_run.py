"""`hudi-cluster run` as Hudi's HoodieClusteringJob: flags, --dry-run, --json, and bad input that leaves the table
untouched with one clear error (exit 2, no stack trace)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from hudi_cluster_core.cli import main
from hudi_cluster_core.table import load_table
from hudi_cluster_core.write.append import append
from tests.support.apache_hudi import small_file_rows

SORT = "hoodie.clustering.plan.strategy.sort.columns=c_int"


@pytest.fixture
def table(tmp_path) -> str:
    base = str(tmp_path / "orders")
    for batch in range(4):
        append(base, small_file_rows(batch * 20, 20), table_name="orders", record_key="id",
               partition_field="region", precombine_field="ts", table_version=9)  # fmt: skip
    return base


def tree_digest(base: str) -> str:
    """Every file's path and bytes: "untouched" means this does not change."""
    digest = hashlib.sha256()
    for path in sorted(Path(base).rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(base)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def run(capsys, *args):
    code = main(["run", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_dry_run_prints_the_plan_and_writes_nothing(table, capsys):
    before = tree_digest(table)
    code, out, _ = run(capsys, "--base-path", table, "--mode", "scheduleAndExecute", "--dry-run", "--json", "--hoodie-conf", SORT)
    assert code == 0 and tree_digest(table) == before
    result = json.loads(out)
    assert set(result) >= {"instant_time", "mode", "dry_run", "input_file_groups", "output_files", "bytes_rewritten", "groups"}
    slices = load_table(table).view().latest_file_slices()
    assert result["dry_run"] is True and result["input_file_groups"] == len(slices) and result["output_files"] >= 1
    assert {p["partition"] for p in result["partitions"]} == {s.partition for s in slices}
    assert sum(g["input_bytes"] for g in result["groups"]) == result["bytes_rewritten"] > 0
    code, text, _ = run(capsys, "--base-path", table, "--mode", "scheduleAndExecute", "--dry-run", "--hoodie-conf", SORT)
    assert code == 0 and "files " in text and " -> " in text and "dry run" in text


def test_schedule_then_execute_by_instant(table, capsys):
    code, out, _ = run(capsys, "--base-path", table, "--mode", "schedule", "--json", "--hoodie-conf", SORT)
    scheduled = json.loads(out)
    assert code == 0 and scheduled["dry_run"] is False
    assert [i.time for i in load_table(table).timeline.pending_clustering] == [scheduled["instant_time"]]
    code, out, _ = run(capsys, "--base-path", table, "--mode", "execute", "--instant-time", scheduled["instant_time"],
                       "--json", "--spark-master", "local[2]", "--parallelism", "2")  # fmt: skip
    executed = json.loads(out)
    assert code == 0 and executed["instant_time"] == scheduled["instant_time"]
    assert executed["input_file_groups"] == 12 and executed["output_files"] == len(executed["groups"]) == 3
    assert [i.time for i in load_table(table).timeline.completed_clustering] == [scheduled["instant_time"]]


def test_clusteringjob_properties_file_works_as_is(table, tmp_path, capsys):
    props = tmp_path / "clusteringjob.properties"
    props.write_text(
        "hoodie.clustering.async.enabled=true\n"
        "hoodie.clustering.async.max.commits=4\n"
        "hoodie.clustering.plan.strategy.target.file.max.bytes=1073741824\n"
        "hoodie.clustering.plan.strategy.small.file.limit=629145600\n"
        "hoodie.clustering.execution.strategy.class=org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy\n"
        "hoodie.clustering.plan.strategy.sort.columns=c_int,ts\n"
        "hoodie.datasource.write.recordkey.field=id\n"
        "hoodie.upsert.shuffle.parallelism=2\n"
    )
    code, out, err = run(capsys, "--base-path", table, "--props", str(props), "--mode", "schedule", "--json")
    assert code == 0, err
    plan = load_table(table).timeline.clustering_plan(json.loads(out)["instant_time"])["clusteringPlan"]
    # the sort columns, and the target the plan executes with (stored beside them: plan/stored_settings.py)
    assert plan["strategy"]["strategyParams"] == {"hoodie.clustering.plan.strategy.sort.columns": "c_int,ts",
                                                  "hoodie.clustering.plan.strategy.target.file.max.bytes": "1073741824"}


@pytest.mark.parametrize(
    "args, message",
    [
        (["--mode", "scheduleAndExecute", "--hoodie-conf", "hoodie.clustering.plan.strategy.small.file.limt=10"], "did you mean 'hoodie.clustering.plan.strategy.small.file.limit'"),
        (["--mode", "scheduleAndExecute", "--hoodie-conf", "hoodie.clustering.plan.strategy.max.num.groups=-1"], "accepted: an integer from 0"),
        (["--mode", "scheduleAndExecute", "--hoodie-conf", "hoodie.clustering.plan.partition.filter.mode=FOO"], "NONE, RECENT_DAYS, SELECTED_PARTITIONS, DAY_ROLLING"),
        (["--mode", "scheduleAndExecute", "--hoodie-conf", "hoodie.clustering.plan.strategy.class=size-basd"], "did you mean 'size-based'"),
        (["--mode", "scheduleAndExecute", "--hoodie-conf", "hoodie.clustering.plan.strategy.sort.columns=c_int,nope"], "nope not in the table; columns: id, ts"),
        (["--mode", "scheduleAndExecute", "--props", "/nonexistent/clusteringjob.properties"], "/nonexistent/clusteringjob.properties"),
        (["--mode", "execute", "--instant-time", "20200101000000000"], "no instant 20200101000000000"),
        (["--mode", "scheduleAndExecute", "--instant-time", "2020"], "17 digits"),
    ],
)  # fmt: skip
def test_bad_input_one_clear_error_and_table_untouched(table, capsys, args, message):
    before = tree_digest(table)
    code, out, err = run(capsys, "--base-path", table, *args)
    assert code == 2, out
    assert message in err and "Traceback" not in err and err.count("\n") <= 6
    assert tree_digest(table) == before


def test_not_a_table(tmp_path, capsys):
    code, _, err = run(capsys, "--base-path", str(tmp_path), "--mode", "scheduleAndExecute")
    assert code == 2 and "is not a Hudi table" in err
