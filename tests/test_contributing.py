"""CONTRIBUTING.md works as written: every ```sh block runs, in order, against a temp copy of the template.

The blocks write the guide's plan strategy and its worked execution strategy, install them, run them on Spark
and run their tests (the conformance kit included), so the code in the guide is the code that is tested.

The blocks run from a temp "checkout" holding ``contrib/template`` and ``scripts/new-strategy`` (they write next
to it, in ``..``), with ``.venv/bin/`` pointing at a throwaway venv (tests/support/throwaway_venv.py) that has the
core and the size-based family installed editable: the guide installs and uninstalls its plugin there, so the
project's venv is never modified.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pyarrow.parquet as pq

from tests.support.throwaway_venv import Venv, make_venv

REPO = Path(__file__).resolve().parent.parent
GUIDE = REPO / "CONTRIBUTING.md"
DISTRIBUTION, STRATEGY = "hudi-cluster-my-strategy", "my-strategy"
SH_BLOCK = re.compile(r"^```sh\n(.*?)^```$", re.S | re.M)
RELATIVE_VENV = re.compile(r"(?<![\w/.-])\.venv/bin/")


def sh_blocks() -> list[str]:
    return [match.group(1) for match in SH_BLOCK.finditer(GUIDE.read_text(encoding="utf-8"))]


def run_block(block: str, cwd: Path, venv: Venv) -> subprocess.CompletedProcess:
    script = RELATIVE_VENV.sub(f"{venv.bin}/", block)
    # the guide's commands run the throwaway venv's python, on Spark executors too: a PYSPARK_PYTHON this test
    # process inherited or set (an earlier test's Spark session) would run them in the project venv, which lacks
    # the guide's plugin
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env.update(PATH=f"{venv.bin}:{env.get('PATH', '')}", PIP_NO_INPUT="1")
    return subprocess.run(["bash", "-euxo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)  # fmt: skip


def installed_strategies(venv: Venv, kind: str = "plan") -> set[tuple[str, str]]:
    listing = subprocess.run([venv.bin / "hudi-cluster", "plugins", "--json"], capture_output=True, text=True, check=True)
    return {(dist["distribution"], s["name"]) for dist in json.loads(listing.stdout) for s in dist["strategies"]
            if s.get("kind", kind) == kind}  # fmt: skip


def failure(index: int, block: str, result: subprocess.CompletedProcess) -> str:
    return (f"CONTRIBUTING.md sh block {index} failed (exit {result.returncode}):\n{block}\n"
            f"--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-6000:]}")  # fmt: skip


def test_the_guide_covers_every_step():
    commands = "\n".join(sh_blocks())
    for step in ("scripts/new-strategy my-strategy", "def plan_group_slices", ".venv/bin/pip install ../hudi-cluster-my-strategy",
                 "def execute_group", "hoodie.clustering.execution.strategy.class=my-strategy", "run_execution_kit",
                 "plugins --json", "--hoodie-conf hoodie.clustering.plan.strategy.class=my-strategy",
                 "hoodie.clustering.plan.strategy.class=hudi_cluster_my_strategy.MyStrategyPlanStrategy", "--props",
                 "check_plan_strategy", ".venv/bin/pytest", "HudiTable(", ".read()", "pip wheel --no-deps",
                 f"pip uninstall -y {DISTRIBUTION}"):  # fmt: skip
        assert step in commands, f"CONTRIBUTING.md no longer runs {step!r}"
    assert f"pip uninstall -y {DISTRIBUTION}" in sh_blocks()[-1], "the last block must remove the plugin"


def test_the_guide_names_the_required_hooks_the_core_requires():
    from hudi_cluster_core.plugins import REQUIRED_HOOKS

    guide = GUIDE.read_text(encoding="utf-8")
    for kind, hooks in REQUIRED_HOOKS.items():
        assert all(f"| `{kind}` | `{hook}`" in guide for hook in hooks), f"the guide's hook table is out of date: {kind}"


def test_every_command_in_the_guide_runs(tmp_path: Path):
    blocks = sh_blocks()
    venv = make_venv(tmp_path / "venv", ("plugins/size-based",))
    checkout = tmp_path / "checkout"
    shutil.copytree(REPO / "contrib" / "template", checkout / "contrib" / "template",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build", ".hypothesis"))  # fmt: skip
    shutil.copytree(REPO / "scripts", checkout / "scripts")
    assert (DISTRIBUTION, STRATEGY) not in installed_strategies(venv)
    for index, block in enumerate(blocks[:-1], start=1):
        result = run_block(block, checkout, venv)
        assert result.returncode == 0, failure(index, block, result)
    assert (DISTRIBUTION, STRATEGY) in installed_strategies(venv)
    assert (DISTRIBUTION, STRATEGY) in installed_strategies(venv, "execution")
    assert list((tmp_path / "my-strategy-dist").glob("hudi_cluster_my_strategy-*.whl"))
    layout = subprocess.run([venv.bin / "hudi-cluster", "show", "--json", tmp_path / "my-strategy-demo" / "orders"],
                            capture_output=True, text=True, check=True)  # fmt: skip
    table = json.loads(layout.stdout)  # the guide's run clustered each partition's two files into one
    assert table["completed_clustering"] and sorted(s["partition"] for s in table["file_slices"]) == ["eu", "us"]
    orders = tmp_path / "my-strategy-demo" / "orders"
    for file_slice in table["file_slices"]:  # written by the guide's execution strategy, sorted by amount
        amounts = pq.read_table(orders / file_slice["partition"] / file_slice["base_file"]).column("amount").to_pylist()
        assert len(amounts) == 4 and amounts == sorted(amounts), file_slice

    result = run_block(blocks[-1], checkout, venv)
    assert result.returncode == 0, failure(len(blocks), blocks[-1], result)
    assert (DISTRIBUTION, STRATEGY) not in installed_strategies(venv)
    configured = subprocess.run(
        [venv.bin / "hudi-cluster", "run", "--base-path", tmp_path / "my-strategy-demo" / "orders",
         "--mode", "schedule", "--dry-run", "--hoodie-conf", f"hoodie.clustering.plan.strategy.class={STRATEGY}"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert configured.returncode == 2 and f"={STRATEGY}: unknown plan strategy" in configured.stderr, configured.stderr
