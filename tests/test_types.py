"""The type checker is part of ``make test``: mypy must be clean on ``hudi_cluster_core`` (``py.typed`` is a
promise to plugin authors) and on the bundled plugins, checked against the strategy protocols. Its settings are
``[tool.mypy]`` in pyproject.toml."""

from __future__ import annotations

import os
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


PLUGIN_PACKAGES = sorted(str(init.parent.relative_to(ROOT)) for d in ("plugins", "contrib")
                         for init in (ROOT / d).glob("*/hudi_cluster_*/__init__.py"))  # fmt: skip


def test_mypy_checks_the_bundled_plugins_against_the_strategy_protocols():
    """Each bundled strategy subclasses its kind's protocol (hudi_cluster_core.protocols), so mypy checks every hook
    it implements against the hook's specification and that the required one is there."""
    env = {**os.environ, "MYPYPATH": str(ROOT)}  # the core of this checkout (an editable install hides it from mypy)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(ROOT / ".mypy_cache"), "--follow-imports=silent",
         *PLUGIN_PACKAGES],  # the core's own errors are the test above's
        cwd=ROOT, capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert done.returncode == 0, f"mypy found type errors in the plugins:\n{done.stdout}{done.stderr}"


def test_every_bundled_strategy_subclasses_its_protocol():
    from hudi_cluster_core.plugins import default_registry
    from hudi_cluster_core.protocols import PROTOCOLS

    registry = default_registry()
    strategies = [registry.resolve(info.kind, info.name) for info in registry.infos()]
    assert len(strategies) >= 14
    loose = [f"{s.kind}:{s.name}" for s in strategies if PROTOCOLS[s.kind] not in type(s).__mro__]
    assert loose == [], f"strategies mypy cannot check (subclass PlanStrategy, ExecutionStrategy or UpdateStrategy): {loose}"
