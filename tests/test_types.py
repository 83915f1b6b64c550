"""The type checker is part of ``make test``: mypy must be clean on ``hudi_cluster_core`` (``py.typed`` is a
promise to plugin authors). Its settings are ``[tool.mypy]`` in pyproject.toml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_is_clean_on_the_core():
    """Fails, with mypy's report, on any type error (or when mypy is missing: it is in the test extras)."""
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(ROOT / ".mypy_cache"), "hudi_cluster_core"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, f"mypy found type errors:\n{done.stdout}{done.stderr}"


def test_py_typed_ships_with_the_package():
    import hudi_cluster_core

    assert (Path(hudi_cluster_core.__file__).parent / "py.typed").is_file()
