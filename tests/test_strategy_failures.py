"""A strategy whose hook raises an error of its own (a plugin's bug, not bad input): one line naming the strategy,
its plugin (distribution and version), the error's type and message; exit 1; the traceback only with ``-v``; the
table as it was, nothing pending.

The plugin is a real distribution on the path (a dist-info with its entry point), so the CLI finds it the way it
finds any installed plugin.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hudi_cluster_core.table import load_table
from tests.test_cli_errors import _make_table
from tests.test_cli_run import tree_digest

PLUGIN = '''
from hudi_cluster_core.sdk import hookimpl


class Failing:
    kind = "plan"

    def __init__(self, name, error):
        self.name, self.error = name, error

    @hookimpl
    def plan_group_slices(self, context, slices):
        raise self.error


@hookimpl
def hudi_cluster_strategies():
    return [Failing("fails-with-key-error", KeyError("region")),
            Failing("fails-with-runtime-error", RuntimeError("the grouper lost its place"))]
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """``hudi-cluster-failing`` 0.1: the plugin above, installed as a dist-info beside its module."""
    site = tmp_path_factory.mktemp("site")
    (site / "hudi_cluster_failing.py").write_text(PLUGIN)
    info = site / "hudi_cluster_failing-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hudi-cluster-failing\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[hudi_cluster.strategies]\nfailing = hudi_cluster_failing\n")
    return site


def _run(site: Path, table: str, strategy: str, *flags: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "hudi_cluster_core.cli", *flags, "run", "--base-path", table,
               "--mode", "scheduleAndExecute", "--hoodie-conf", f"hoodie.clustering.plan.strategy.class={strategy}"]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("strategy, error", [
    ("fails-with-key-error", "KeyError: 'region'"),
    ("fails-with-runtime-error", "RuntimeError: the grouper lost its place"),
])  # fmt: skip
def test_a_strategys_own_error_is_one_line_naming_it_exit_1_and_the_table_untouched(site, tmp_path, strategy, error):
    table = _make_table(tmp_path / "orders")
    before = tree_digest(table)
    done = _run(site, table, strategy)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [
        f"hudi-cluster: error: plan strategy '{strategy}' (plugin hudi-cluster-failing 0.1): hook plan_group_slices "
        f"raised {error}"
    ], done.stderr
    assert tree_digest(table) == before
    assert load_table(table).timeline.pending_clustering == []


def test_verbose_shows_the_strategys_traceback(site, tmp_path):
    table = _make_table(tmp_path / "orders")
    done = _run(site, table, "fails-with-key-error", "-v")
    assert done.returncode == 1, done.stderr
    assert "Traceback" in done.stderr and "raise self.error" in done.stderr, done.stderr
    assert done.stderr.rstrip().splitlines()[-1].startswith("hudi-cluster: error: plan strategy 'fails-with-key-error'")
    assert load_table(table).timeline.pending_clustering == []
