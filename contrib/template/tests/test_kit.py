"""The conformance kit on the template strategy (copy this file with the template)."""

from pathlib import Path

from hudi_cluster_core.testing import load_strategy, run_plan_kit

CHECKOUT = Path(__file__).resolve().parents[1]  # where the package is when it is not installed


def test_plan_kit():
    run_plan_kit(load_strategy("plan", "template", "hudi_cluster_template", search_path=CHECKOUT))
