"""`hudi-cluster run`/`show` on bad input: HoodieClusteringJob's modes and short flags, a corrupt or unreadable
timeline file, a table the user cannot write. Each failure is one `hudi-cluster: error:` line, exit 2, and the
table is left as it was."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import hudi_cluster_core.api as api
from hudi_cluster_core.api import ClusterResult
from hudi_cluster_core.cli import main
from hudi_cluster_core.table import load_table
from hudi_cluster_core.write.append import append
from tests.support.apache_hudi import small_file_rows
from tests.test_cli_run import tree_digest

NOBODY = 65534


def _make_table(base: Path, version: int = 9, batches: int = 2) -> str:
    for batch in range(batches):
        append(str(base), small_file_rows(batch * 20, 20), table_name="orders", record_key="id",
               partition_field="region", precombine_field="ts", table_version=version)  # fmt: skip
    return str(base)


@pytest.fixture
def table(tmp_path) -> str:
    return _make_table(tmp_path / "orders")


def _cli(capsys, *args) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("hudi-cluster: error: ") and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def calls(monkeypatch) -> list[dict]:
    """Replace api.cluster: record what the CLI passed, do nothing."""
    seen: list[dict] = []

    def fake_cluster(base_path, mode, **kwargs):
        seen.append({"base_path": base_path, "mode": mode, **kwargs})
        return ClusterResult(None, mode, bool(kwargs.get("dry_run")), message="recorded")

    monkeypatch.setattr(api, "cluster", fake_cluster)
    return seen


# ------------------------------------------------------------------------------------------ modes and flags


@pytest.mark.parametrize(
    "mode, expected",
    [
        ("schedule", "schedule"), ("SCHEDULE", "schedule"), ("execute", "execute"), ("Execute", "execute"),
        ("scheduleAndExecute", "scheduleAndExecute"), ("scheduleandexecute", "scheduleAndExecute"),
        ("SCHEDULEANDEXECUTE", "scheduleAndExecute"), ("purge_pending_instant", "purge_pending_instant"),
        ("PURGE_PENDING_INSTANT", "purge_pending_instant"),
    ],
)  # fmt: skip
def test_modes_are_matched_case_insensitively_and_passed_canonical(table, capsys, calls, mode, expected):
    code, _, err = _cli(capsys, "run", "--base-path", table, "--mode", mode)
    assert code == 0, err
    assert [c["mode"] for c in calls] == [expected]


@pytest.mark.parametrize(
    "flags, expected",
    [([], "execute"), (["--schedule"], "schedule"), (["-sc"], "schedule"), (["--schedule", "--mode", "execute"], "execute")],
)
def test_without_mode_schedule_flag_decides_as_in_hoodieclusteringjob(table, capsys, calls, flags, expected):
    code, _, err = _cli(capsys, "run", "--base-path", table, *flags)
    assert code == 0, err
    assert [c["mode"] for c in calls] == [expected]


def test_unknown_mode_is_one_line_naming_the_accepted_values(table, capsys, calls):
    before = tree_digest(table)
    code, _, err = _cli(capsys, "run", "--base-path", table, "--mode", "clean")
    assert code == 2 and not calls
    line = _one_error_line(err)
    assert "'clean'" in line and all(m in line for m in ("schedule", "execute", "scheduleAndExecute", "purge_pending_instant"))
    assert tree_digest(table) == before


def test_hoodieclusteringjob_short_flags(table, capsys, calls):
    code, _, err = _cli(
        capsys, "run", "-sp", table, "-m", "scheduleAndExecute", "-it", "20300101000000000", "-pl", "3",
        "-ms", "local[1]", "-rc", "-jt", "5000",
    )  # fmt: skip
    assert code == 0, err
    (call,) = calls
    assert call["base_path"] == table and call["mode"] == "scheduleAndExecute"
    assert call["instant_time"] == "20300101000000000" and call["parallelism"] == 3 and call["spark_master"] == "local[1]"
    assert call["retry_last_failed_clustering_job"] is True and call["job_max_processing_time_ms"] == 5000


def test_ignored_compatibility_flags_warn_one_line_each(table, capsys, calls):
    code, _, err = _cli(capsys, "run", "-sp", table, "-sm", "4g", "-rt", "2", "-tn", "orders", "-sc")
    assert code == 0 and [c["mode"] for c in calls] == ["schedule"]
    assert calls[0]["spark_memory"] == "4g"  # a Spark setting now (tests/test_spark_settings.py), not ignored
    lines = err.splitlines()
    assert len(lines) == 2 and all(line.startswith("hudi-cluster: warning: ") for line in lines), err
    for flag in ("--retry", "--table-name"):
        assert sum(flag + " is accepted for HoodieClusteringJob compatibility and ignored" in line for line in lines) == 1
    code, _, err = _cli(capsys, "run", "-sp", table, "-sc")
    assert code == 0 and err == ""


def test_permission_error_during_the_run_is_one_line(table, capsys, monkeypatch):
    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied", f"{table}/us/new-file.parquet")

    monkeypatch.setattr(api, "cluster", denied)
    code, _, err = _cli(capsys, "run", "--base-path", table, "--mode", "scheduleAndExecute")
    assert code == 2
    assert f"{table}/us/new-file.parquet" in _one_error_line(err)


# ------------------------------------------------------------------------------------- corrupt timeline files


def _completed_commit(base: str) -> Path:
    timeline = load_table(base).timeline
    return Path(timeline.path_of(timeline.completed()[0].file_name))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


@pytest.mark.parametrize("version", [9, 6])
@pytest.mark.parametrize("damage", [_truncate, lambda path: path.write_bytes(b"\x00garbage")], ids=["truncated", "garbage"])
def test_corrupt_completed_commit_is_one_line_for_show_and_run(tmp_path, capsys, version, damage):
    base = _make_table(tmp_path / "orders", version)
    commit = _completed_commit(base)
    damage(commit)
    before = tree_digest(base)
    for args in (["show", base], ["show", base, "--json"], ["run", "--base-path", base, "--mode", "scheduleAndExecute"],
                 ["run", "--base-path", base, "--mode", "schedule", "--dry-run"]):  # fmt: skip
        code, out, err = _cli(capsys, *args)
        assert code == 2, (args, out)
        assert str(commit) in _one_error_line(err), args
    assert tree_digest(base) == before


def test_corrupt_plan_is_one_line_for_show_and_run(table, capsys):
    code, out, _ = _cli(capsys, "run", "--base-path", table, "--mode", "schedule", "--json")
    instant = json.loads(out)["instant_time"]
    timeline = load_table(table).timeline
    plan = Path(timeline.path_of(timeline.requested_file(instant).file_name))
    _truncate(plan)
    before = tree_digest(table)
    for args in (["show", table], ["run", "--base-path", table, "--mode", "execute", "--instant-time", instant],
                 ["run", "--base-path", table]):  # fmt: skip
        code, _, err = _cli(capsys, *args)
        assert code == 2 and str(plan) in _one_error_line(err), args
    assert tree_digest(table) == before


def test_an_empty_v6_completed_commit_is_legal(tmp_path, capsys):
    base = _make_table(tmp_path / "orders", version=6)
    timeline = load_table(base).timeline
    instant = timeline.new_instant_time()
    for name in (f"{instant}.commit.requested", f"{instant}.inflight", f"{instant}.commit"):
        Path(timeline.path_of(name)).write_bytes(b"")  # what Hudi writes for a commit with no data
    assert _cli(capsys, "show", base)[0] == 0
    code, out, err = _cli(capsys, "run", "--base-path", base, "--mode", "scheduleAndExecute", "--dry-run", "--json")
    assert code == 0, err
    assert json.loads(out)["input_file_groups"] == 6


# ------------------------------------------------------------------------------------------ unwritable table


def _as_other_user() -> list[str]:
    """Run a command as a user the table's directories do not let write (root writes through chmod)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.fail("running as root without setpriv (util-linux): cannot make a directory unwritable", pytrace=False)
    return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


@pytest.fixture
def shared_table():
    """A table that other users may read but not write (pytest's own temp dir is private to root)."""
    parent = Path(tempfile.mkdtemp(prefix="hudi-cluster-readonly-"))
    try:
        base = Path(_make_table(parent / "orders"))
        for path in (parent, *parent.rglob("*")):
            readable = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
            path.chmod(readable | (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH if path.is_dir() else 0)
                       | (stat.S_IWUSR if os.geteuid() == 0 else 0))  # fmt: skip
        yield str(base)
    finally:
        for path in (parent, *parent.rglob("*")):
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
        shutil.rmtree(parent)


def _cli_subprocess(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": tempfile.gettempdir(), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [*_as_other_user(), sys.executable, "-m", "hudi_cluster_core.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir(), timeout=120)


def test_a_table_the_user_cannot_write_is_one_line_before_anything_is_written(shared_table):
    before = tree_digest(shared_table)
    for mode in ("scheduleAndExecute", "schedule"):
        done = _cli_subprocess("run", "--base-path", shared_table, "--mode", mode)
        assert done.returncode == 2, done.stdout + done.stderr
        line = _one_error_line(done.stderr)
        assert "is not writable" in line and f"{shared_table}/.hoodie" in line
    assert tree_digest(shared_table) == before
    readable = _cli_subprocess("show", shared_table, "--json")  # the same user can read the table
    assert readable.returncode == 0 and json.loads(readable.stdout)["file_slices"], readable.stderr


def test_an_unreadable_commit_file_is_one_line(shared_table):
    commit = _completed_commit(shared_table)
    commit.chmod(0o600 if os.geteuid() == 0 else 0)  # root's alone, read as nobody; else unreadable for its owner too
    for args in (["show", shared_table], ["run", "--base-path", shared_table, "--mode", "schedule", "--dry-run"]):
        done = _cli_subprocess(*args)
        assert done.returncode == 2, done.stdout + done.stderr
        assert str(commit) in _one_error_line(done.stderr) and "cannot be read" in done.stderr


@pytest.mark.parametrize("args", [
    ["run", "--base-path", "hdfs://namenode:8020/warehouse/orders", "--mode", "scheduleAndExecute"],
    ["show", "hdfs://namenode:8020/warehouse/orders"],
    ["run", "--base-path", "viewfs://cluster/orders", "--mode", "schedule"],
    ["run", "--base-path", "RELATIVE", "--props", "hdfs://namenode:8020/conf/clustering.properties"],
], ids=["run on hdfs", "show on hdfs", "viewfs", "props on hdfs"])  # fmt: skip
def test_an_unsupported_scheme_is_one_line_naming_it_and_the_stores_that_work(tmp_path, args):
    """HDFS and any other scheme without a backend: one line naming the scheme and every supported store, exit 2,
    before anything is written (nothing appears under the working directory or the home directory)."""
    from hudi_cluster_core.io.registry import supported

    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir(), home.mkdir()
    _make_table(work / "orders")
    args = [str(work / "orders") if a == "RELATIVE" else a for a in args]
    before = tree_digest(str(work)), sorted(work.rglob("*"))  # bytes, and every path (an empty folder too)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HUDI_CLUSTER_")}
    result = subprocess.run([sys.executable, "-m", "hudi_cluster_core.cli", *args], cwd=work, text=True,
                            env={**env, "HOME": str(home), "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
                            capture_output=True, timeout=120)  # fmt: skip
    scheme = next(a for a in args if "://" in a).split("://")[0]
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert [line for line in result.stderr.splitlines() if line.strip()] == [
        line for line in result.stderr.splitlines() if line.startswith("hudi-cluster: error:")]
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert f"'{scheme}://' is not supported; supported: {supported()}" in result.stderr
    assert (tree_digest(str(work)), sorted(work.rglob("*"))) == before and list(home.iterdir()) == []
