"""The suite keeps no tables it no longer needs (conftest.py): the last CI run but one failed with 'No space left on
device' after the runs before it had kept about 11 GB each. Checked on an inner pytest run of the same conftest."""

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


def test_a_passing_module_leaves_nothing_a_failing_one_keeps_its_tables(pytester):
    pytester.makeconftest((REPO / "conftest.py").read_text())
    pytester.makeini("[pytest]\ntmp_path_retention_policy = failed\n")
    pytester.makepyfile(test_a=MODULE_TABLE.format(name="passes", ok=True),
                        test_b=MODULE_TABLE.format(name="fails", ok=False))  # fmt: skip
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
    pytester.makeconftest((REPO / "conftest.py").read_text())
    pytester.makeini("[pytest]\ntmp_path_retention_policy = failed\n")
    pytester.makepyfile(test_a=MODULE_TABLE.format(name="passes", ok=True))
    temp = tmp_path / "temp"  # the inner run's system temp directory (pytester's own runs name a --basetemp, kept)
    temp.mkdir()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=pytester.path,
                          env={**os.environ, "TMPDIR": str(temp)}, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert not [p for p in temp.rglob("*") if not p.is_dir()], sorted(map(str, temp.rglob("*")))
