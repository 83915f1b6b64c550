"""Session-scoped fixtures for the test suite: Apache Hudi's Spark session, the fixture tables."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

FIXTURES_DIR = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """``tests/fixtures``: real tables written by Apache Hudi (tests/fixtures/README.md); read them in place, never
    change them (``table_copy`` gives a writable copy)."""
    path = FIXTURES_DIR
    if not (path / "MANIFEST.json").is_file():
        pytest.fail(f"fixture tables not found at {path}", pytrace=False)
    return path


@pytest.fixture(scope="session")
def spark():
    """The one SparkSession with the Apache Hudi 1.1.1 bundle (``tests/support/apache_hudi.py``).

    Fails (does not skip) when the bundle is missing: run ``make setup``."""
    from tests.support.apache_hudi import HudiBundleMissing, hudi_spark_session

    try:
        return hudi_spark_session()
    except HudiBundleMissing as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def table_copy(fixtures_dir, tmp_path_factory):
    """``table_copy(name) -> str``: a fresh, writable copy of fixture table ``name`` under pytest's temp dir
    (each call makes a new copy); returns its absolute path."""

    def copy(name: str) -> str:
        source = fixtures_dir / name
        if not source.is_dir():
            raise FileNotFoundError(f"no fixture table {name!r} in {fixtures_dir}")
        target = tmp_path_factory.mktemp(name) / name
        shutil.copytree(source, target)
        for path in (target, *target.rglob("*")):  # fixture files may be read-only; copies keep the mode
            path.chmod(path.stat().st_mode | stat.S_IWUSR | (stat.S_IXUSR if path.is_dir() else 0))
        return str(target.resolve())

    return copy


@pytest.fixture(scope="session")
def hudi_tables(spark, tmp_path_factory):
    """Tables as users have them, written once per test session by Apache Hudi 1.1.1 with aggressive archival and
    cleaning (``tests/support/archived_tables.py``): ``hudi_tables.copy(kind, label)`` gives a fresh copy to change;
    kinds ``cow_v6``, ``cow_v9``, ``mor_v9``, ``mor_v9_late_upserts``, ``cow_v9_mdt``, ``cow_v9_rli``."""
    from tests.support.archived_tables import TableBuilder

    return TableBuilder(spark, tmp_path_factory.mktemp("session-hudi-tables"))
