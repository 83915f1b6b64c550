"""A family is added by installing its distribution and removed by uninstalling it; the core then names the
distribution to install. pip runs in a throwaway venv (tests/support/throwaway_venv.py): the project's venv,
which other test runs share, is never modified."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.throwaway_venv import Venv, make_venv

FAMILY, DISTRIBUTION = "plugins/commit-time", "hudi-cluster-commit-time"


def cli(venv: Venv, *args: object):
    return venv.run("-m", "hudi_cluster_core.cli", *args)


def listed_distributions(venv: Venv) -> set[str]:
    listing = cli(venv, "plugins", "--json")
    assert listing.returncode == 0, listing.stderr
    return {d["distribution"] for d in json.loads(listing.stdout)}


def test_uninstall_removes_a_family_and_install_brings_it_back(tmp_path: Path):
    venv = make_venv(tmp_path / "venv", (FAMILY,))
    assert listed_distributions(venv) == {DISTRIBUTION}

    venv.pip("uninstall", "-y", DISTRIBUTION)
    assert DISTRIBUTION not in listed_distributions(venv)
    table = tmp_path / "table"
    missing = cli(venv, "run", "--base-path", table, "--mode", "scheduleAndExecute",
                  "--hoodie-conf", "hoodie.clustering.plan.strategy.class=commit-time")  # fmt: skip
    # the table path is checked after the strategy: either way one clear line, exit 2
    assert missing.returncode == 2 and "Traceback" not in missing.stderr, missing.stderr
    code = ("from hudi_cluster_core.plugins import StrategyRegistry\n"
            "StrategyRegistry().resolve('plan', 'commit-time')\n")  # fmt: skip
    resolve = venv.run("-c", code)
    assert "install the distribution 'hudi-cluster-commit-time'" in resolve.stderr, resolve.stderr

    venv.pip("install", "--no-deps", "-e", Path(__file__).resolve().parents[1] / FAMILY)
    assert listed_distributions(venv) == {DISTRIBUTION}
