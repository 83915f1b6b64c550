"""The suite keeps no tables it no longer needs (conftest.py): a CI run failed with 'No space left on device' after
the runs before it on the same disk had kept about 11 GB each. Checked on inner pytest runs of the same conftest."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

pytest_plugins = "pytester"

REPO = Path(__file__).resolve().parents[1]

MODULE_TABLE = """
import os
import pytest

@pytest.fixture(scope="module")
def table(tmp_path_factory):
    path = tmp_path_factory.mktemp("{name}")
    (path / "data").write_bytes(b"x" * 1000)
    return path

def test_writes(table, tmp_path, tmp_path_factory):
    (tmp_path / "scratch").write_text("scratch")
    tmp_path_factory.mktemp("session-{name}")  # a session-long directory: kept until the session ends
    with open(os.path.join(os.path.dirname(__file__), "children_tmp_{name}"), "w") as out:
        out.write(os.environ["TMPDIR"])
    assert {ok}
"""


def _inner_project(pytester, **modules: bool) -> None:
    """Our conftest and pytest setting, and a module per name (True: its test passes)."""
    pytester.makeconftest((REPO / "conftest.py").read_text())
    pytester.makeini("[pytest]\ntmp_path_retention_policy = failed\n")
    pytester.makepyfile(**{f"test_{name}": MODULE_TABLE.format(name=name, ok=ok) for name, ok in modules.items()})


def test_a_passing_module_leaves_nothing_a_failing_one_keeps_its_tables(pytester):
    _inner_project(pytester, passes=True, fails=False)
    basetemp = pytester.path / "basetemp"
    result = pytester.runpytest_subprocess(f"--basetemp={basetemp}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)

    left = sorted(p.name for p in basetemp.iterdir() if not p.is_symlink())
    assert [n for n in left if "passes" in n] == ["session-passes0"], left  # module table and tmp_path gone
    assert "fails0" in left and any(n.startswith("test_writes") for n in left), left  # what it failed on stays
    for name in ("passes", "fails"):
        children = Path((pytester.path / f"children_tmp_{name}").read_text())
        assert children.name.startswith("hudi-cluster-tests-") and not children.exists()  # removed at the end


def test_a_passing_run_leaves_no_temp_directory(pytester, tmp_path):
    _inner_project(pytester, passes=True)
    temp = tmp_path / "temp"  # the inner run's system temp directory (pytester's own runs name a --basetemp, kept)
    temp.mkdir()
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(command, cwd=pytester.path, env={**os.environ, "TMPDIR": str(temp)}, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert not [p for p in temp.rglob("*") if not p.is_dir()], sorted(map(str, temp.rglob("*")))
