"""Local runs without Spark (run/local_pool.py): which runs take them, that they write what Spark's path writes, and
that no task process outlives its run, whatever ends it (a failed task, the driver killed)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from hudi_cluster_core.errors import ConfigError
from hudi_cluster_core.run.local_pool import ENGINE_ENV, local_cores
from hudi_cluster_core.run.session_start import _descendants
from tests.support.readers import read_hudi_rs
from tests.support.runs import cli_command, cli_env, error_lines, inflight_clustering, orders_table, table_problems, wait_for


@pytest.mark.parametrize(
    "engine, master, memory, conf, cores",
    [
        (None, None, None, (), os.cpu_count()),  # local[*], the default master
        ("auto", "local", None, (), 1),
        ("auto", "local[3]", None, (), 3),
        ("AUTO", "local[*]", None, (), os.cpu_count()),
        ("auto", "local[2,3]", None, (), None),  # task retries: Spark's
        ("auto", "spark://127.0.0.1:7077", None, (), None),
        ("auto", "local[2]", "2g", (), None),  # a Spark setting asks for Spark
        ("auto", "local[2]", None, ("spark.executor.pyspark.memory=1g",), None),
        ("spark", "local[2]", None, (), None),
        ("local", "local[2]", None, (), 2),
    ],
)
def test_a_run_takes_the_local_pool_where_it_would_build_a_local_session_of_its_own(monkeypatch, engine, master,
                                                                                     memory, conf, cores):  # fmt: skip
    monkeypatch.delenv(ENGINE_ENV, raising=False)
    monkeypatch.delenv("SPARK_MASTER", raising=False)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.setattr("hudi_cluster_core.run.local_pool._spark_running", lambda: False)
    assert local_cores(engine, master, memory, conf) == cores


def test_the_engine_comes_from_the_environment_and_a_bad_one_or_one_that_cannot_apply_is_refused(monkeypatch):
    monkeypatch.delenv("SPARK_MASTER", raising=False)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.setattr("hudi_cluster_core.run.local_pool._spark_running", lambda: False)
    monkeypatch.setenv(ENGINE_ENV, "spark")
    assert local_cores(None, "local[2]", None, ()) is None
    with pytest.raises(ConfigError, match=r"--engine 'gpu': accepted: auto, local, spark"):
        local_cores("gpu", None, None, ())
    with pytest.raises(ConfigError, match=r"--engine local: .*its Spark master is 'yarn'"):
        local_cores("local", "yarn", None, ())
    with pytest.raises(ConfigError, match="it was given a Spark session"):
        local_cores("local", None, None, (), spark_given=True)
    monkeypatch.setattr("hudi_cluster_core.run.local_pool._spark_running", lambda: True)
    assert local_cores("auto", "local[2]", None, ()) is None
    with pytest.raises(ConfigError, match="a Spark session is already running"):
        local_cores("local", "local[2]", None, ())


def _rows(base: str) -> list[str]:
    table = read_hudi_rs(base)
    data = table.drop_columns([c for c in table.column_names if c.startswith("_hoodie_")]).to_pylist()
    return sorted((repr(sorted(row.items())) for row in data))


def test_the_local_engine_writes_what_spark_writes_and_starts_no_jvm(tmp_path):
    bases = {engine: orders_table(tmp_path / engine, commits=3) for engine in ("local", "spark")}
    before = _rows(bases["local"])
    results = {}
    for engine, base in bases.items():
        env = cli_env()
        if engine == "local":  # a JVM could not start: the run must not need one
            env["JAVA_HOME"] = str(tmp_path / "no-java")
        done = subprocess.run(cli_command(base, "--engine", engine, "--spark-master", "local[2]", "--json"), env=env,
                              text=True, capture_output=True, timeout=600)  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        results[engine] = json.loads(done.stdout)
    for engine, base in bases.items():
        assert _rows(base) == before, engine
        assert table_problems(base) == []
    local, spark = results["local"], results["spark"]
    for key in ("rows_read", "rows_written", "partitions_clustered"):
        assert local[key] == spark[key], key
    for key in ("files_removed", "files_added"):  # the two tables' files differ by a few bytes (commit times)
        assert local[key]["count"] == spark[key]["count"], key


def _task_processes(driver: int) -> list[int]:
    """The driver's descendants that run tasks (the fork server's children): the fork server is one of them."""
    return _descendants(driver)


def test_a_driver_killed_mid_task_leaves_no_task_process_running(tmp_path):
    base = orders_table(tmp_path / "t", commits=3)
    run = subprocess.Popen(cli_command(base, "--engine", "local", "--spark-master", "local[2]"),
                           env=cli_env(pause="task-after-first-file=120"), text=True, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)  # fmt: skip
    try:
        wait_for(lambda: inflight_clustering(base) and len(_task_processes(run.pid)) >= 2, timeout=120,
                 what="the run's tasks")  # fmt: skip
        time.sleep(1.0)  # the tasks reach their pause
        below = _task_processes(run.pid)
        run.send_signal(signal.SIGKILL)
        run.wait(30)
        wait_for(lambda: not [pid for pid in below if _alive(pid)], timeout=15, what="the task processes to end")
    finally:
        if run.poll() is None:
            run.kill()
        run.communicate()
    again = subprocess.run(cli_command(base, "--engine", "local"), env=cli_env(), text=True, capture_output=True,
                           timeout=600)  # fmt: skip
    assert again.returncode == 0, again.stderr[-3000:]
    assert table_problems(base) == []
    assert len(_rows(base)) == 90


def test_a_task_process_that_dies_fails_the_run_in_one_line_and_leaves_nothing_pending(tmp_path):
    base = orders_table(tmp_path / "t", commits=3)
    before = _rows(base)
    run = subprocess.Popen(cli_command(base, "--engine", "local", "--spark-master", "local[2]"),
                           env=cli_env(pause="task-after-first-file=120"), text=True, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)  # fmt: skip
    try:
        # a worker is a grandchild of the driver (a child of the fork server)
        wait_for(lambda: inflight_clustering(base) and _workers(run.pid), timeout=120, what="the run's tasks")
        time.sleep(1.0)
        os.kill(_workers(run.pid)[0], signal.SIGKILL)  # as the kernel's OOM killer would
        _, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode != 0
    lines = error_lines(err)
    assert len(lines) == 1 and "a clustering task's process ended (exit code -9)" in lines[0], err[-3000:]
    assert "Traceback" not in err
    assert table_problems(base) == []
    assert _rows(base) == before


def _workers(driver: int) -> list[int]:
    from hudi_cluster_core.run.session_start import _children

    return [pid for child in _children(driver) for pid in _children(child)]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def test_the_worker_module_imports_no_spark():
    done = subprocess.run([os.sys.executable, "-c", "import sys, hudi_cluster_core.run.local_worker, "
                           "hudi_cluster_core.run.local_pool; print('pyspark' in sys.modules)"],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])  # fmt: skip
    assert done.stdout.strip() == "False", done.stderr


def test_a_script_without_a_main_guard_runs_once(tmp_path):
    """A process started by a fork server runs the caller's ``__main__`` again unless told not to: a script that
    calls ``cluster()`` at its top level would call it again in every worker."""
    base = orders_table(tmp_path / "t", commits=3)
    script = tmp_path / "script.py"
    script.write_text(
        "from hudi_cluster_core.api import cluster\n"
        "print('ran', flush=True)\n"
        f"result = cluster({base!r}, options={{'hoodie.clustering.plan.strategy.sort.columns': 'c_int'}}, "
        "spark_master='local[2]', engine='local')\n"
        "print(result.completed_file is not None, flush=True)\n"
    )  # fmt: skip
    done = subprocess.run([os.sys.executable, str(script)], env=_with_this_code(cli_env()), text=True,
                          capture_output=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["ran", "True"], done.stdout
    assert table_problems(base) == []


def test_ctrl_c_while_the_fork_server_imports_gives_one_line_and_no_traceback(tmp_path):
    """A terminal's Ctrl-C reaches the whole process group: the fork server, started first, is importing pyarrow
    and pandas for a good part of a second; it must not print a traceback of its own."""
    base = orders_table(tmp_path / "t", commits=3)
    run = subprocess.Popen(cli_command(base, "--engine", "local", "--spark-master", "local[2]"), env=cli_env(),
                           text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
    try:
        wait_for(lambda: any(b"forkserver" in _cmdline(pid) for pid in _descendants(run.pid)), timeout=60,
                 what="the fork server")  # fmt: skip
        os.killpg(run.pid, signal.SIGINT)
        _, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode in (0, 130), err[-3000:]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-3000:]
    if run.returncode:
        lines = [line for line in err.splitlines() if line.startswith("hudi-cluster:")]
        assert len(lines) == 1 and "interrupted" in lines[0], err[-3000:]
    assert table_problems(base) == []


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read()
    except OSError:
        return b""


def _with_this_code(env: dict[str, str]) -> dict[str, str]:
    """A script's own folder comes first on its path: this checkout's code must come before any other install."""
    return {**env, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}


INLINE_STRATEGY = """
import sys, types
import pyarrow.compute as pc
from hudi_cluster_core.api import cluster
from hudi_cluster_core.plugins import StrategyRegistry
from hudi_cluster_core.sdk import ExecutionStrategy, SortAndSizeParams, hookimpl


class InlineExecution(ExecutionStrategy):
    name, kind, params_model = "inline-sort", "execution", SortAndSizeParams
    java_class_names = ("example.InlineExecution",)
    summary = "Each group into its planned files, sorted by sort.columns."

    @hookimpl
    def execute_group(self, task):
        rows = task.read_arrow()
        columns = task.params.columns if task.params else []
        rows = rows.take(pc.sort_indices(rows, sort_keys=[(c, "ascending", "at_start") for c in columns]))
        return task.write(rows, task.num_output_file_groups)


if __name__ == "__main__":
    plugin = types.ModuleType("inline_plugin")
    plugin.hudi_cluster_strategies = hookimpl(lambda: [InlineExecution()])
    options = {"hoodie.clustering.plan.strategy.sort.columns": "c_int",
               "hoodie.clustering.execution.strategy.class": "inline-sort"}
    result = cluster(sys.argv[1], options=options, spark_master="local[2]", engine="local",
                     registry=StrategyRegistry(extra_plugins=(plugin,)))
    print(result.completed_file is not None, result.rows_written)
"""


def test_a_strategy_defined_in_the_callers_script_runs_in_the_local_pool(tmp_path):
    """Spark ships a class of ``__main__`` by value (cloudpickle); so must the pool, whose workers run no
    ``__main__`` of the caller's."""
    base = orders_table(tmp_path / "t", commits=3)
    before = _rows(base)
    script = tmp_path / "inline.py"
    script.write_text(INLINE_STRATEGY)
    done = subprocess.run([os.sys.executable, str(script), base], env=_with_this_code(cli_env()), text=True,
                          capture_output=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["True", "90"], done.stdout
    assert _rows(base) == before
    assert table_problems(base) == []
