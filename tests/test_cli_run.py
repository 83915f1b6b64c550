"""`hudi-cluster run` as Hudi's HoodieClusteringJob: flags, --dry-run, --json, and bad input that leaves the table
untouched with one clear error (exit 2, no stack trace)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hudi_cluster_core.cli import main
from hudi_cluster_core.table import load_table
from hudi_cluster_core.writer.append import append
from tests.support.apache_hudi import small_file_rows

REPO = Path(__file__).resolve().parents[1]
SORT = "hoodie.clustering.plan.strategy.sort.columns=c_int"
METRICS = {"files_added", "files_removed", "partitions_clustered", "files_considered", "files_skipped", "rows_read",
           "rows_written", "bytes_read", "bytes_written", "duration_s"}  # fmt: skip


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
    assert set(result) >= METRICS
    slices = load_table(table).view().latest_file_slices()
    assert result["dry_run"] is True and result["input_file_groups"] == len(slices) and result["output_files"] >= 1
    assert {p["partition"] for p in result["partitions"]} == {s.partition for s in slices}
    assert sum(g["input_bytes"] for g in result["groups"]) == result["bytes_rewritten"] > 0
    # nothing written: the planned file count, no sizes, no rows; what it would read is known
    assert result["files_added"] == {"count": result["output_files"], "min_bytes": None, "avg_bytes": None,
                                     "max_bytes": None, "total_bytes": None}  # fmt: skip
    assert result["rows_read"] is None and result["rows_written"] is None and result["bytes_written"] is None
    assert result["files_removed"]["count"] == len(slices) and result["bytes_read"] == result["bytes_rewritten"]
    assert result["files_considered"] == len(slices) and result["files_skipped"] == 0
    code, text, _ = run(capsys, "--base-path", table, "--mode", "scheduleAndExecute", "--dry-run", "--hoodie-conf", SORT)
    assert code == 0 and "files " in text and " -> " in text and "dry run" in text
    assert text.splitlines()[-1].startswith(f"  total: {len(slices)} file(s) (")


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
    after = load_table(table)
    (completed,) = after.timeline.completed_clustering
    assert completed.time == scheduled["instant_time"]
    # what was written, as the commit records it
    stats = [s for group in after.timeline.commit_metadata(completed)["partitionToWriteStats"].values() for s in group]
    sizes = sorted(s["fileSizeInBytes"] for s in stats)
    assert executed["files_added"] == {"count": 3, "min_bytes": sizes[0], "avg_bytes": round(sum(sizes) / 3),
                                       "max_bytes": sizes[-1], "total_bytes": sum(sizes)}  # fmt: skip
    assert executed["bytes_written"] == sum(sizes) and executed["rows_written"] == sum(s["numWrites"] for s in stats)
    assert executed["rows_read"] == executed["rows_written"] == 80  # 4 batches of 20 rows, every row read once
    removed = executed["files_removed"]
    assert removed["count"] == 12 and removed["total_bytes"] == executed["bytes_read"] == scheduled["bytes_read"] > 0
    assert removed["min_bytes"] <= removed["avg_bytes"] <= removed["max_bytes"]
    assert executed["partitions_clustered"] == 3 and executed["files_considered"] == 12 and executed["files_skipped"] == 0
    took = executed["duration_s"]
    assert set(took) == {"plan", "spark", "commit", "total"} and took["spark"] > 0 and took["commit"] > 0
    assert took["plan"] + took["spark"] + took["commit"] <= took["total"] + 0.01
    # where the time went, start-up included: the command line's steps, then the run's own phases, in order
    phases = executed["phases_s"]
    assert list(phases) == ["interpreter", "imports", "checks", "plan", "session_start", "session_wait", "first_task",
                            "tasks", "commit", "metadata_table", "since_process_start"]  # fmt: skip
    assert phases["plan"] == took["plan"] and phases["commit"] == took["commit"]
    assert abs(phases["session_wait"] + phases["tasks"] - took["spark"]) <= 0.002
    assert 0 <= phases["first_task"] < phases["tasks"] and 0 <= phases["metadata_table"] <= phases["commit"]
    assert phases["since_process_start"] >= phases["interpreter"] + took["total"]
    assert set(scheduled["phases_s"]) == {"interpreter", "imports", "checks", "plan", "since_process_start"}
    # show --clustering: the instant with its state, groups, partitions and bytes written
    assert main(["show", table, "--clustering", "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert listed == {"instant_time": completed.time, "state": "completed", "archived": False, "groups": 3,
                      "partitions": 3, "bytes_written": sum(sizes), "input_bytes": None}  # fmt: skip
    assert main(["show", table, "--clustering"]) == 0
    assert f"{completed.time}  completed" in capsys.readouterr().out


def test_a_pending_plan_in_show_clustering(table, capsys):
    code, out, _ = run(capsys, "--base-path", table, "--mode", "schedule", "--json", "--hoodie-conf", SORT)
    scheduled = json.loads(out)
    assert main(["show", table, "--clustering", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {"instant_time": scheduled["instant_time"], "state": "requested", "archived": False, "groups": 3,
         "partitions": 3, "bytes_written": None, "input_bytes": scheduled["bytes_read"]}
    ]  # fmt: skip


def test_the_api_result_is_a_dict_and_a_json_string(table):
    from hudi_cluster_core.api import cluster

    result = cluster(table, "scheduleAndExecute", {"hoodie.clustering.plan.strategy.sort.columns": "c_int"}, dry_run=True)
    assert json.loads(result.to_json()) == result.to_dict() and set(result.to_dict()) >= METRICS
    assert result.to_dict()["phases_s"] == {"plan": result.duration_s["plan"]}  # no command line: the run's own
    assert result.summary().splitlines()[-1].startswith("  total: 12 file(s) (")


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


SPARK_LOG_LINE = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d (WARN|INFO) ", re.M)  # Spark's console pattern
ESCAPE = "\x1b["


def test_setup_of_a_set_up_tree_then_the_demo_say_it_plainly(tmp_path):
    """`make demo` on a tree already set up: scripts/setup.sh prints one plain line per step (no tool's output, no
    setuptools deprecation block), then the demo runs without a terminal: no escape codes, no Spark log line."""
    tree = tmp_path / "tree"
    (tree / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "setup.sh", tree / "scripts")
    shutil.copy(REPO / "scripts" / "build-jvm-archive", tree / "scripts")
    for name in (".venv", ".cache"):  # this checkout's, set up before the tests run
        (tree / name).symlink_to(REPO / name)
    installed = (REPO / ".venv" / ".hudi-cluster-installed").stat().st_mtime
    for project in ["pyproject.toml", "constraints.txt", *(str(p.relative_to(REPO)) for p in REPO.glob("plugins/*/pyproject.toml")),
                    *(str(p.relative_to(REPO)) for p in REPO.glob("contrib/*/pyproject.toml"))]:  # fmt: skip
        (tree / project).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / project, tree / project)
        os.utime(tree / project, (installed - 60, installed - 60))  # as they were when the set-up ran
    made = tmp_path / "spark-classes.jsa"  # the JVM class archive, as a set-up made it (not this checkout's own)
    made.write_bytes(b"an archive")
    setup = subprocess.run(["bash", str(tree / "scripts" / "setup.sh")], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "HUDI_CLUSTER_JVM_ARCHIVE": str(made)})  # fmt: skip
    said = setup.stdout + setup.stderr
    assert setup.returncode == 0, said
    lines = said.splitlines()
    assert lines[:5] == [
        "set-up: .venv up to date", "set-up: Apache Hudi 1.1.1 bundle and S3A jars cached",
        "set-up: JVM class archive of Spark ready (made once: scripts/build-jvm-archive)",
        "set-up: fake-gcs-server v1.56.1 installed", "set-up: Azurite 3.35.0 installed",
    ] and len(lines) == 6 and re.fullmatch(r"set-up done \(Java \d+\)", lines[5]), said  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HUDI_CLUSTER_", "PYSPARK_", "SPARK_"))}
    demo = subprocess.run([sys.executable, "-m", "hudi_cluster_core.cli", "demo", "--base-path", str(tmp_path / "demo"),
                           "--batches", "3", "--rows-per-batch", "100"], capture_output=True, text=True, env=env,
                          timeout=600)  # fmt: skip
    shown = demo.stdout + demo.stderr
    assert demo.returncode == 0 and "rows checked equal" in demo.stdout, shown[-3000:]
    assert ESCAPE not in shown and not SPARK_LOG_LINE.search(shown), shown[-3000:]
    assert re.search(r"^  total: 9 file\(s\) \(.*\) -> 3 file\(s\)", demo.stdout, re.M), demo.stdout
