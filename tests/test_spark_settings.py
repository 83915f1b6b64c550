"""``--spark-memory``, ``--parallelism`` and ``--spark-conf`` become Spark settings, or are refused in one line
before anything is written; none is ignored. (On a standalone cluster, ``spark.executor.memory`` and
``spark.default.parallelism``: tests/test_standalone_cluster.py.)"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hudi_cluster_core.api import cluster
from hudi_cluster_core.cli import main
from hudi_cluster_core.errors import ConfigError
from hudi_cluster_core.run.spark_settings import check_active_conf, executor_environment_problem
from hudi_cluster_core.table import load_table
from tests.support.readers import assert_same_rows, read_hudi_rs
from tests.support.runs import error_lines, make_append_table, table_problems
from tests.support.standalone import clean_env, event_log
from tests.test_cli_run import tree_digest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def table_template(tmp_path_factory) -> str:
    return make_append_table(str(tmp_path_factory.mktemp("settings") / "t"), batches=3, rows=20)


def copy_of(template: str, tmp_path: Path) -> str:
    import shutil

    target = tmp_path / "t"
    shutil.copytree(template, target)
    return str(target)


@pytest.mark.parametrize("args, message", [
    (("--spark-memory", "lots"), "--spark-memory 'lots': accepted: a JVM size such as 512m, 4g"),
    (("--parallelism", "0"), "--parallelism 0: accepted: a whole number of 1 or more"),
    (("--spark-conf", "executor.memory=4g"), "--spark-conf 'executor.memory=4g': accepted: KEY=VALUE with a Spark key"),
    (("--spark-conf", "spark.executor.memory"), "--spark-conf 'spark.executor.memory': accepted: KEY=VALUE"),
    (("--spark-master", "bogus://x"), "--spark-master 'bogus://x': accepted: local, local[N], local[*], spark://HOST:PORT"),
])  # fmt: skip
def test_bad_spark_flags_are_one_line_and_write_nothing(table_template, tmp_path, capsys, args, message):
    base = copy_of(table_template, tmp_path)
    before = tree_digest(base)
    code = main(["run", "--base-path", base, "--mode", "scheduleAndExecute", *args])
    err = capsys.readouterr().err
    assert code == 2 and error_lines(err) == [line for line in err.splitlines()], err
    assert message in err and "Traceback" not in err
    assert tree_digest(base) == before


def test_api_refuses_spark_settings_for_a_session_it_was_given(table_template, tmp_path, spark):
    base = copy_of(table_template, tmp_path)
    with pytest.raises(ConfigError, match="apply to a session this call builds"):
        cluster(base, "scheduleAndExecute", spark=spark, spark_memory="2g")
    assert load_table(base).timeline.pending_clustering == []


def test_a_running_session_takes_no_new_jvm_setting(spark):
    conf = spark.sparkContext.getConf()
    check_active_conf(conf, {"spark.master": conf.get("spark.master"), "spark.sql.shuffle.partitions": "3"})
    with pytest.raises(ConfigError, match=r"spark.executor.memory=3g cannot apply: a Spark session is already running"):
        check_active_conf(conf, {"spark.executor.memory": "3g"})


def test_executor_environment_failures_become_one_line_with_what_to_do():
    missing = executor_environment_problem("...\nModuleNotFoundError: No module named 'pyarrow'\n\tat org...", "python3")
    assert missing and missing.startswith("the executors' Python (python3) cannot import pyarrow")
    assert "scripts/pack-executor-env" in missing and "PYSPARK_PYTHON=./env/bin/python" in missing
    no_python = executor_environment_problem(
        'java.io.IOException: Cannot run program "./env/bin/python": error=2, No such file or directory', "./env/bin/python"
    )
    assert no_python and "cannot start Python ./env/bin/python (error=2, No such file or directory)" in no_python
    assert executor_environment_problem("pyarrow.lib.ArrowInvalid: bad file", "python3") is None


def test_local_run_sizes_the_driver_jvm_and_logs_progress_to_100_percent(table_template, tmp_path):
    """Local master: the tasks run in the driver's JVM, so --spark-memory is its heap. Spark's event log shows the
    driver's block manager memory, which Spark derives from the JVM's actual maximum heap. Without a terminal the
    progress is plain log lines (every change here: interval 0), never going back, ending at 100%."""
    base = copy_of(table_template, tmp_path)
    before = read_hudi_rs(base)
    events, conf = tmp_path / "events", tmp_path / "conf"
    events.mkdir(), conf.mkdir()
    (conf / "spark-defaults.conf").write_text(f"spark.eventLog.enabled true\nspark.eventLog.dir {events}\n")
    done = subprocess.run(
        [sys.executable, "-m", "hudi_cluster_core.cli", "run", "--base-path", base, "--mode", "scheduleAndExecute",
         "--spark-master", "local[1]", "--spark-memory", "700m", "--parallelism", "1", "--json"],
        env=clean_env(SPARK_CONF_DIR=str(conf), HUDI_CLUSTER_PROGRESS_INTERVAL_S="0"), capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["message"] == "completed"
    lines = [line.split("run.progress: ", 1)[1] for line in done.stderr.splitlines() if "run.progress: " in line]
    counts = [int(re.search(r": (\d)/3 group\(s\)", line).group(1)) for line in lines]
    assert counts and counts == sorted(counts) and counts[-1] == 3, lines
    assert re.search(r": 3/3 group\(s\), (\d+\.\d [KM]iB)/\1 rewritten \(100%\), 0 task\(s\) running, "
                     r"elapsed \d+ s, ETA 0 s$", lines[-1])  # fmt: skip
    assert "\x1b[" not in done.stderr  # no terminal: no bar, no escape codes
    (app,) = os.listdir(events)
    log = event_log(events, app)
    (environment,) = [e for e in log if e["Event"] == "SparkListenerEnvironmentUpdate"]
    assert environment["Spark Properties"]["spark.driver.memory"] == "700m"
    assert environment["Spark Properties"]["spark.default.parallelism"] == "1"
    # start-up for a local session (run/spark.py): C1 only, workers forked from a daemon with the task's imports
    assert "-XX:TieredStopAtLevel=1" in environment["Spark Properties"]["spark.driver.extraJavaOptions"]
    assert environment["Spark Properties"]["spark.python.daemon.module"] == "hudi_cluster_core.run.worker_daemon"
    (driver,) = [e for e in log if e["Event"] == "SparkListenerBlockManagerAdded"]
    # unified memory = (heap - 300 MiB reserved) * 0.6: about 240 MiB for a 700 MiB heap, about 434 MiB at the 1g default
    assert 200 * 2**20 < driver["Maximum Memory"] < 300 * 2**20, driver
    # a Spark job per group (3 small groups: one task each), one job at a time with --parallelism 1
    assert [s["Stage Info"]["Number of Tasks"] for s in log if s["Event"] == "SparkListenerStageSubmitted"] == [1, 1, 1]
    assert table_problems(base) == []
    assert_same_rows(before, read_hudi_rs(base), labels=("before", "after"))


def test_spark_memory_under_spark_submit_with_a_local_master_is_refused(table_template, tmp_path):
    """The driver JVM already runs under spark-submit: its heap cannot change, so the flag is refused up front
    (nothing scheduled), naming spark-submit's own flag."""
    base = copy_of(table_template, tmp_path)
    before = tree_digest(base)
    done = subprocess.run(
        [str(Path(sys.executable).parent / "spark-submit"), "--master", "local[1]", "--conf", "spark.ui.enabled=false",
         str(REPO / "bin" / "hudi-cluster-submit.py"), "run", "--base-path", base, "--mode", "scheduleAndExecute",
         "--spark-memory", "2g"],
        env=clean_env(PYSPARK_DRIVER_PYTHON=sys.executable), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    output = done.stdout + done.stderr  # spark-submit hands the Python driver's stderr to its own stdout
    assert done.returncode == 2, output[-3000:]
    (line,) = error_lines(output)
    assert "--spark-memory 2g: with the local master local[1] tasks run in the driver's JVM" in line, line
    assert "spark-submit --driver-memory 2g" in line and "Traceback" not in output
    assert tree_digest(base) == before


def test_a_spark_session_that_cannot_start_is_one_line_and_rolled_back(table_template, tmp_path):
    """A Spark setting the JVM refuses (here an event-log folder that does not exist) stops the run in one line
    naming Java's reason; the plan scheduled just before is rolled back, leaving the rows as they were."""
    base = copy_of(table_template, tmp_path)
    before = read_hudi_rs(base)
    missing = tmp_path / "no-such-folder"
    done = subprocess.run(
        [sys.executable, "-m", "hudi_cluster_core.cli", "run", "--base-path", base, "--mode", "scheduleAndExecute",
         "--spark-master", "local[1]", "--spark-conf", "spark.eventLog.enabled=true",
         "--spark-conf", f"spark.eventLog.dir={missing}"],
        env=clean_env(), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-3000:]
    (line,) = error_lines(done.stderr)
    assert f"the Spark session could not start: java.io.FileNotFoundException: File file:{missing} does not exist" in line
    assert "rolled back" in line and "Traceback" not in done.stderr and "\tat org.apache" not in done.stderr
    assert table_problems(base) == [] and load_table(base).timeline.completed_clustering == []
    assert_same_rows(before, read_hudi_rs(base), labels=("before", "after"))


def test_spark_conf_pyspark_python_is_the_python_tasks_run(table_template, tmp_path):
    """PySpark reads the executors' Python from PYSPARK_PYTHON only; ``--spark-conf spark.pyspark.python=...`` is
    mapped onto it, not ignored. Here it names a Python that is not there (an archive not shipped, say): the tasks
    cannot start and the run stops in one line naming it and what to do."""
    base = copy_of(table_template, tmp_path)
    before = read_hudi_rs(base)
    python = "./env/bin/python"  # relative to the task's working directory, where no archive was unpacked
    done = subprocess.run(
        [sys.executable, "-m", "hudi_cluster_core.cli", "run", "--base-path", base, "--mode", "scheduleAndExecute",
         "--spark-master", "local[1]", "--spark-conf", f"spark.pyspark.python={python}"],
        env=clean_env(), capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-3000:]
    (line,) = error_lines(done.stderr)
    assert f"the executors cannot start Python {python} (error=2, No such file or directory)" in line, line
    assert "spark.archives=hudi-cluster-env.tar.gz#env" in line and "rolled back" in line, line
    assert table_problems(base) == [] and load_table(base).timeline.completed_clustering == []
    assert_same_rows(before, read_hudi_rs(base), labels=("before", "after"))
