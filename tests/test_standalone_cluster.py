"""Clustering on a real Spark standalone cluster: a master and two workers started here on loopback, whose
``python3`` is a bare venv (no pyarrow, no hudi_cluster_core), so executors do not share the driver's environment.

The README's "On a Spark cluster" blocks run as written (only the master URL and table path substituted), from a
shell with no activated venv: the packed environment, ``spark-submit`` of ``bin/hudi-cluster-submit.py``, and
``hudi-cluster run --spark-master`` with ``--spark-conf``/``--spark-memory``/``--parallelism``. Each run clusters a
copy of a table Apache Hudi 1.1.1 wrote; hudi-rs and Apache Hudi read the same rows after; Spark's event log
(switched on through ``SPARK_CONF_DIR``, not the commands) shows every task ran on the workers' executors, and the
executors' working directories hold the unpacked archive.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hudi_cluster_core.table import load_table
from tests.support.apache_hudi import make_small_file_table, read_hudi_snapshot
from tests.support.readers import assert_same_rows, read_hudi_rs
from tests.support.runs import error_lines, table_problems
from tests.support.standalone import StandaloneCluster, added_executors, clean_env, event_log, task_executors

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
PLACEHOLDER_MASTER, PLACEHOLDER_TABLE = "spark://master-host:7077", "/data/hudi/orders"
SH_BLOCK = re.compile(r"^```sh\n(.*?)^```$", re.S | re.M)


def cluster_blocks() -> list[str]:
    """The ```sh blocks of the README's "On a Spark cluster" section, in order."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## On a Spark cluster", 1)[1].split("\n## ", 1)[0]
    return [m.group(1) for m in SH_BLOCK.finditer(section)]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("standalone")
    bare = root / "bare-python"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", bare], check=True)
    with StandaloneCluster(root / "cluster", worker_python_dir=bare / "bin") as running:
        yield running


@pytest.fixture(scope="module")
def hudi_written(spark, tmp_path_factory):
    """A small table Apache Hudi 1.1.1 wrote (3 partitions, 3 small files each), and its rows by both readers."""
    base = str(tmp_path_factory.mktemp("hudi-written") / "t")
    make_small_file_table(spark, base, batches=3, rows_per_batch=20)
    return base, read_hudi_rs(base), read_hudi_snapshot(spark, base)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """Where the README's commands run: a directory whose .venv, bin/ and scripts/ are this checkout's (so the
    archive and Spark's files land here), with a SPARK_CONF_DIR that turns Spark's event log on."""
    work = tmp_path_factory.mktemp("submit-from")
    for name in (".venv", "bin", "scripts"):
        (work / name).symlink_to(REPO / name)
    (work / "events").mkdir()
    (work / "conf").mkdir()
    (work / "conf" / "spark-defaults.conf").write_text(
        f"spark.eventLog.enabled true\nspark.eventLog.dir {work / 'events'}\nspark.ui.enabled false\n"
    )
    return work


def copy_table(hudi_written, into: Path) -> str:
    base = into / "t"
    shutil.copytree(hudi_written[0], base)
    return str(base)


def run_block(block: str, workdir: Path, master: str, table: str, **env: str) -> subprocess.CompletedProcess:
    """A README block in bash, as a user with no activated venv would run it (no .venv/bin on PATH)."""
    script = block.replace(PLACEHOLDER_MASTER, master).replace(PLACEHOLDER_TABLE, table)
    path = ":".join(p for p in clean_env().get("PATH", "").split(":") if ".venv" not in p)
    full_env = clean_env(PATH=path, SPARK_CONF_DIR=str(workdir / "conf"), MASTER=master, TABLE=table, **env)
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=workdir, env=full_env, capture_output=True,
                          text=True, timeout=900)  # fmt: skip


def new_app(cluster, before: set[str]) -> dict:
    apps = [a for a in cluster.state()["completedapps"] + cluster.state()["activeapps"] if a["id"] not in before]
    assert len(apps) == 1, apps
    return apps[0]


def app_ids(cluster) -> set[str]:
    state = cluster.state()
    return {a["id"] for a in state["completedapps"] + state["activeapps"]}


def assert_ran_on_the_workers(cluster, workdir: Path, app_id: str) -> list[dict]:
    events = event_log(workdir / "events", app_id)
    executors = added_executors(events)
    workers = {w["webuiaddress"] for w in cluster.state()["workers"]}
    ran_on = task_executors(events)
    assert ran_on, "no task of the run finished"
    assert "driver" not in ran_on and set(ran_on) <= set(executors), (ran_on, executors)
    assert {executors[e] for e in ran_on} <= workers, (executors, workers)
    unpacked = [d for d in cluster.executor_dirs(app_id) if (d / "env" / "bin" / "python").exists()]
    assert unpacked, f"no executor of {app_id} unpacked the archive: {cluster.executor_dirs(app_id)}"
    return events


def assert_same_rows_both_readers(spark, hudi_written, base: str, instant: str) -> None:
    _, rs_before, hudi_before = hudi_written
    assert [i.time for i in load_table(base).timeline.completed_clustering] == [instant]
    assert table_problems(base) == []
    assert_same_rows(rs_before, read_hudi_rs(base), labels=("hudi-rs before", "hudi-rs after"))
    assert_same_rows(hudi_before, read_hudi_snapshot(spark, base), labels=("Apache Hudi before", "Apache Hudi after"))


def test_the_readme_has_the_three_cluster_blocks():
    blocks = cluster_blocks()
    assert len(blocks) == 3, blocks
    assert "scripts/pack-executor-env" in blocks[0]
    assert ".venv/bin/spark-submit" in blocks[1] and "bin/hudi-cluster-submit.py run" in blocks[1]
    assert PLACEHOLDER_MASTER in blocks[1] and PLACEHOLDER_TABLE in blocks[1]
    assert "--spark-master" in blocks[2] and "--spark-memory" in blocks[2] and "--parallelism" in blocks[2]


def test_executors_without_our_packages_fail_in_one_line(cluster, hudi_written, tmp_path, spark):
    base = copy_table(hudi_written, tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "hudi_cluster_core.cli", "run", "--base-path", base, "--mode", "scheduleAndExecute",
         "--spark-master", cluster.master_url, "--spark-conf", "spark.task.maxFailures=1"],
        env=clean_env(PYSPARK_PYTHON="python3"), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-3000:]
    (line,) = error_lines(done.stderr)
    assert "the executors' Python (python3) cannot import hudi_cluster_core" in line, line
    assert "scripts/pack-executor-env" in line and "spark.archives=" in line and "rolled back" in line, line
    assert "Traceback" not in done.stderr and "\tat org.apache" not in done.stderr, done.stderr[-3000:]
    assert table_problems(base) == [] and load_table(base).timeline.completed_clustering == []
    assert_same_rows(hudi_written[1], read_hudi_rs(base), labels=("before", "after the failed run"))


@pytest.fixture(scope="module")
def submitted(cluster, hudi_written, workdir, tmp_path_factory):
    """The README's pack and spark-submit blocks, run once; returns the table, the submit's result and its app."""
    pack, submit, _ = cluster_blocks()
    base = copy_table(hudi_written, tmp_path_factory.mktemp("submitted"))
    packed = run_block(pack, workdir, cluster.master_url, base)
    assert packed.returncode == 0, packed.stderr[-3000:]
    assert (workdir / "hudi-cluster-env.tar.gz").is_file()
    before = app_ids(cluster)
    done = run_block(submit, workdir, cluster.master_url, base)
    return base, done, new_app(cluster, before) if done.returncode == 0 else None


def test_readme_spark_submit_recipe_clusters_on_the_executors(submitted, cluster, hudi_written, workdir, spark):
    base, done, app = submitted
    assert done.returncode == 0, done.stderr[-4000:]
    assert "scheduleAndExecute: completed" in done.stdout, done.stdout
    instant = re.search(r"completed \(instant (\d+)\)", done.stdout).group(1)
    assert_same_rows_both_readers(spark, hudi_written, base, instant)
    assert_ran_on_the_workers(cluster, workdir, app["id"])


def test_readme_cli_recipe_maps_memory_and_parallelism(submitted, cluster, hudi_written, workdir, tmp_path, spark):
    assert (workdir / "hudi-cluster-env.tar.gz").is_file()  # packed by the README's first block (``submitted``)
    cli = cluster_blocks()[2]
    base = copy_table(hudi_written, tmp_path)
    before = app_ids(cluster)
    done = run_block(cli, workdir, cluster.master_url, base)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "scheduleAndExecute: completed" in done.stdout, done.stdout
    instant = re.search(r"completed \(instant (\d+)\)", done.stdout).group(1)
    assert_same_rows_both_readers(spark, hudi_written, base, instant)
    app = new_app(cluster, before)
    assert app["memoryperslave"] == 2048, app  # --spark-memory 2g became spark.executor.memory on the cluster
    events = assert_ran_on_the_workers(cluster, workdir, app["id"])
    (environment,) = [e for e in events if e["Event"] == "SparkListenerEnvironmentUpdate"]
    assert environment["Spark Properties"]["spark.default.parallelism"] == "2"
    assert environment["Spark Properties"]["spark.executor.memory"] == "2g"
    stages = [e for e in events if e["Event"] == "SparkListenerStageSubmitted"]
    # a Spark job per group: 3 small groups, one task each (--parallelism 2: at most 2 of them at once)
    assert [s["Stage Info"]["Number of Tasks"] for s in stages] == [1, 1, 1]
    log_lines = [line for line in done.stderr.splitlines() if "hudi_cluster_core.run.progress" in line]
    assert log_lines and "3/3 group(s)" in log_lines[-1] and "(100%)" in log_lines[-1], log_lines
