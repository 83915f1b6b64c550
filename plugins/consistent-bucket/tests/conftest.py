"""The suite's session fixtures (Apache Hudi's Spark session), and this directory on sys.path for the helpers in
``cb_tables.py`` (pytest runs with --import-mode=importlib, which does not add test directories)."""

import sys
from pathlib import Path

from tests.conftest import fixtures_dir, spark, table_copy  # noqa: F401

sys.path.insert(0, str(Path(__file__).resolve().parent))
