"""Repository-wide test set-up.

One JVM per test process, and it must carry Apache Hudi's bundle: jars cannot be added to a running JVM, so if
our runtime started a plain Spark session first, every later Apache Hudi read in the process would fail with
``ClassNotFoundException: hudi.DefaultSource``. So, in tests, the session our runtime asks for is the Apache
Hudi one (same local Spark, plus Hudi's jar and extensions). Subprocess tests (CLI, spark-submit, crash) still
use the runtime's own session builder.
"""

import os
import shutil
import tempfile
from pathlib import Path

import pytest

import hudi_cluster_core.run.spark as spark_runtime


def _hudi_session(master=None, app_name="hudi-cluster", conf=None, *, hold_signals=True):
    from tests.support.apache_hudi import hudi_spark_session

    return hudi_spark_session()


spark_runtime.get_spark = _hudi_session


# --- Disk: the suite writes about 11 GB of tables in all, and must not keep them -------------------------------
# A passing test's ``tmp_path`` is removed when it ends (``tmp_path_retention_policy = "failed"`` in
# pyproject.toml). What a module's fixtures made with ``tmp_path_factory.mktemp`` is removed when the module's
# last test ends, unless a test of the module failed; directories named ``session-*`` live for the whole session
# (the tables Apache Hudi writes once, ``tests/conftest.py``). Child processes, the JVMs' Python workers and the
# CLI runs a test kills among them, make their temp files in one directory removed at the session's end, so a
# killed process leaves nothing in the system's temp directory.
SESSION_PREFIX = "session-"
NEEDED_GB = 5
_module_scratch: dict = {"path": None, "before": frozenset(), "failed": 0}


def pytest_configure(config):
    # asked (and cached by tempfile) before TMPDIR changes: this process keeps the system's temp directory, where
    # pytest's basetemp goes, so what a failed test leaves outlives the session
    _warn_when_short_of_room(config, tempfile.gettempdir())
    children = tempfile.mkdtemp(prefix="hudi-cluster-tests-")
    os.chmod(children, 0o1777)  # like /tmp: tests run the CLI as another user too
    config._hudi_children_tmp = children
    os.environ["TMPDIR"] = children


def _warn_when_short_of_room(config, where: str) -> None:
    """A full run needs about 5 GB at once in the temp directory ``where`` (4.4 GB measured); short of that, tests
    fail with 'No space left on device', so the warnings summary says so first."""
    free = shutil.disk_usage(where).free / 1e9
    if free < NEEDED_GB:
        message = f"{where} has {free:.1f} GB free; a full test run needs about {NEEDED_GB} GB there at once"
        config.issue_config_time_warning(pytest.PytestConfigWarning(message), stacklevel=2)


def pytest_unconfigure(config):
    children = getattr(config, "_hudi_children_tmp", None)
    if children:
        shutil.rmtree(children, ignore_errors=True)


def _basetemp(item) -> Path:
    return item.config._tmp_path_factory.getbasetemp()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if _module_scratch["path"] != item.path:
        _module_scratch.update(path=item.path, before=frozenset(_basetemp(item).iterdir()),
                               failed=item.session.testsfailed)  # fmt: skip


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_teardown(item, nextitem):
    try:
        return (yield)
    finally:
        module_ended = nextitem is None or nextitem.path != item.path  # its module-scoped fixtures are torn down
        passed = item.session.testsfailed == _module_scratch["failed"]  # a failure keeps what it failed on
        if module_ended and passed and _module_scratch["path"] == item.path:
            for entry in set(_basetemp(item).iterdir()) - _module_scratch["before"]:
                if not entry.name.startswith(SESSION_PREFIX) and entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry, ignore_errors=True)
