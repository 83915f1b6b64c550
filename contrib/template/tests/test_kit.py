"""The conformance kit on the template strategy (copy this file with the template)."""

import importlib
import sys
from pathlib import Path

from hudi_cluster_core.testing import run_plan_kit

PACKAGE = "hudi_cluster_template"


def strategy_package():
    try:
        return importlib.import_module(PACKAGE)
    except ModuleNotFoundError as exc:
        if exc.name != PACKAGE:
            raise
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's copy, when not installed
        return importlib.import_module(PACKAGE)


def test_plan_kit():
    run_plan_kit(strategy_package().TemplatePlanStrategy())
