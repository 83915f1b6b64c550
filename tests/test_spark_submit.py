"""The job runs under spark-submit, as on a real cluster: the session spark-submit builds is the one used, and
Spark's start-up INFO lines stay out of the output."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from hudi_cluster_core.table import load_table
from hudi_cluster_core.writer.append import append
from tests.support.apache_hudi import small_file_rows
from tests.support.readers import assert_same_rows, read_hudi_rs

REPO = Path(__file__).resolve().parents[1]


def test_spark_submit_runs_the_clustering_job(tmp_path):
    base = str(tmp_path / "t")
    for batch in range(3):
        append(base, small_file_rows(batch * 20, 20), table_name="t", record_key="id", partition_field="region",
               precombine_field="ts", table_version=9)  # fmt: skip
    before = read_hudi_rs(base)
    spark_submit = Path(sys.executable).parent / "spark-submit"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    done = subprocess.run(
        [str(spark_submit), "--master", "local[2]", "--conf", "spark.ui.enabled=false",
         "--conf", "spark.app.name=submitted-by-test", str(REPO / "bin" / "hudi-cluster-submit.py"), "run",
         "--base-path", base, "--mode", "scheduleAndExecute", "--json"],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    # Spark's built-in log defaults (INFO) give way to ours before the session starts: no INFO line of Spark's
    assert not re.search(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d INFO ", done.stderr + done.stdout, re.M), done.stderr[-3000:]
    result = json.loads(done.stdout[done.stdout.index("{"):])
    assert result["message"] == "completed" and result["input_file_groups"] == 9
    assert [i.time for i in load_table(base).timeline.completed_clustering] == [result["instant_time"]]
    assert_same_rows(before, read_hudi_rs(base), labels=("before", "after"))
