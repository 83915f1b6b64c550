"""A family is added by installing its distribution and removed by uninstalling it; the core then names the
distribution to install. Runs pip against the project's own venv and restores it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PIP = [sys.executable, "-m", "pip", "-q"]


def cli(*args):
    return subprocess.run([sys.executable, "-m", "hudi_cluster_core.cli", *args], capture_output=True, text=True)


def listed_distributions():
    return {d["distribution"] for d in json.loads(cli("plugins", "--json").stdout)}


def test_uninstall_removes_a_family_and_install_brings_it_back(tmp_path):
    assert "hudi-cluster-commit-time" in listed_distributions()
    subprocess.run([*PIP, "uninstall", "-y", "hudi-cluster-commit-time"], check=True)
    try:
        assert "hudi-cluster-commit-time" not in listed_distributions()
        missing = cli("run", "--base-path", str(tmp_path), "--mode", "scheduleAndExecute", "--hoodie-conf", "hoodie.clustering.plan.strategy.class=commit-time")
        # the table path is checked after the strategy: either way one clear line, exit 2
        assert missing.returncode == 2 and "Traceback" not in missing.stderr
        from hudi_cluster_core.errors import PluginError
        from hudi_cluster_core.plugins import StrategyRegistry

        try:
            StrategyRegistry().resolve("plan", "commit-time")
        except PluginError as error:
            assert "install the distribution 'hudi-cluster-commit-time'" in str(error)
        else:
            raise AssertionError("commit-time still resolves after uninstall")
    finally:
        subprocess.run([*PIP, "install", "--no-deps", "-e", str(REPO / "plugins" / "commit-time")], check=True)
    assert "hudi-cluster-commit-time" in listed_distributions()
