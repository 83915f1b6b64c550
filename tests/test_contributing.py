"""CONTRIBUTING.md works as written: every ```sh block runs, in order, against a temp copy of the template.

The blocks run from a temp "checkout" holding a copy of ``contrib/template`` (they write next to it, in ``..``),
with ``.venv/bin/`` pointing at this project's venv. They install a renamed copy of the template into that venv;
a ``finally`` uninstalls it whatever happens, so the environment is left as it was found.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = REPO / ".venv" / "bin"
GUIDE = REPO / "CONTRIBUTING.md"
DISTRIBUTION, STRATEGY = "hudi-cluster-my-strategy", "my-strategy"
SH_BLOCK = re.compile(r"^```sh\n(.*?)^```$", re.S | re.M)
RELATIVE_VENV = re.compile(r"(?<![\w/.-])\.venv/bin/")
# Runs of this test in other checkouts share the venv: one at a time, or one's uninstall breaks the other.
LOCK_FILE = REPO / ".venv" / ".test-contributing.lock"


def sh_blocks() -> list[str]:
    return [match.group(1) for match in SH_BLOCK.finditer(GUIDE.read_text(encoding="utf-8"))]


def run_block(block: str, cwd: Path) -> subprocess.CompletedProcess:
    script = RELATIVE_VENV.sub(f"{VENV_BIN}/", block)
    env = {**os.environ, "PIP_NO_INPUT": "1"}
    return subprocess.run(["bash", "-euxo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)  # fmt: skip


def installed_strategies() -> set[tuple[str, str]]:
    listing = subprocess.run([VENV_BIN / "hudi-cluster", "plugins", "--json"], capture_output=True, text=True, check=True)
    return {(dist["distribution"], s["name"]) for dist in json.loads(listing.stdout) for s in dist["strategies"]}


def is_installed() -> bool:
    return subprocess.run([VENV_BIN / "pip", "show", "-q", DISTRIBUTION], capture_output=True).returncode == 0


def failure(index: int, block: str, result: subprocess.CompletedProcess) -> str:
    return (f"CONTRIBUTING.md sh block {index} failed (exit {result.returncode}):\n{block}\n"
            f"--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-6000:]}")  # fmt: skip


def test_the_guide_covers_every_step():
    commands = "\n".join(sh_blocks())
    for step in ("cp -r contrib/template", ".venv/bin/pip install ../hudi-cluster-my-strategy", "plugins --json",
                 "--hoodie-conf hoodie.clustering.plan.strategy.class=my-strategy", "--props", ".venv/bin/pytest",
                 "pip wheel --no-deps", f"pip uninstall -y {DISTRIBUTION}"):  # fmt: skip
        assert step in commands, f"CONTRIBUTING.md no longer runs {step!r}"
    assert f"pip uninstall -y {DISTRIBUTION}" in sh_blocks()[-1], "the last block must restore the environment"


def test_every_command_in_the_guide_runs(tmp_path: Path):
    blocks = sh_blocks()
    checkout = tmp_path / "checkout"
    shutil.copytree(REPO / "contrib" / "template", checkout / "contrib" / "template",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build", ".hypothesis"))  # fmt: skip
    with open(LOCK_FILE, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            assert (DISTRIBUTION, STRATEGY) not in installed_strategies(), "installed before the guide installs it"
            for index, block in enumerate(blocks[:-1], start=1):
                result = run_block(block, checkout)
                assert result.returncode == 0, failure(index, block, result)
            assert (DISTRIBUTION, STRATEGY) in installed_strategies()
            assert list((tmp_path / "my-strategy-dist").glob("hudi_cluster_my_strategy-*.whl"))
            layout = subprocess.run([VENV_BIN / "hudi-cluster", "show", "--json", tmp_path / "my-strategy-demo" / "orders"],
                                    capture_output=True, text=True, check=True)  # fmt: skip
            table = json.loads(layout.stdout)  # the guide's run clustered each partition's two files into one
            assert table["completed_clustering"] and sorted(s["partition"] for s in table["file_slices"]) == ["eu", "us"]

            result = run_block(blocks[-1], checkout)
            assert result.returncode == 0, failure(len(blocks), blocks[-1], result)
            assert not is_installed()
            assert (DISTRIBUTION, STRATEGY) not in installed_strategies()
            configured = subprocess.run(
                [VENV_BIN / "hudi-cluster", "run", "--base-path", tmp_path / "my-strategy-demo" / "orders",
                 "--mode", "schedule", "--dry-run", "--hoodie-conf", f"hoodie.clustering.plan.strategy.class={STRATEGY}"],
                capture_output=True, text=True,
            )  # fmt: skip
            assert configured.returncode == 2 and f"={STRATEGY}: unknown plan strategy" in configured.stderr, configured.stderr
        finally:
            if is_installed():
                subprocess.run([VENV_BIN / "pip", "uninstall", "-y", DISTRIBUTION], capture_output=True, check=True)
