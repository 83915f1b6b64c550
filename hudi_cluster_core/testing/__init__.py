"""The conformance kit: hypothesis inputs and checked invariants for plan, execution and update strategies.

Needs ``hypothesis`` (a test dependency). Every plugin in ``plugins/`` and ``contrib/`` runs it::

    run_plan_kit(MyPlanStrategy())            # plan strategies
    run_execution_kit(MyExecutionStrategy())  # execution strategies, on real small tables
    run_update_kit(MyUpdateStrategy(), policy="reject")

    strategy = load_strategy("plan", "my-strategy")  # as installed, through the registry's checks

A broken invariant fails with one short :class:`KitFailure` naming the strategy, the hook and the invariant (a
:class:`KitFinding` for a judgement call the strategy may silence with ``kit_silence``); the kit's own frames are
hidden from pytest's traceback.
"""

from .conformance import (
    FINDINGS, KitFailure, KitFinding, PlanOutcome, check_params_model, check_plan_strategy, kit_settings, plan_with,
    run_kit, run_plan_kit,
)  # fmt: skip
from .update import check_update_strategy, run_update_kit, update_inputs
from .execution import ExecutionInput, check_execution_strategy, execution_inputs, run_execution_kit
from .loading import import_plugin, load_strategy
from .strategies import (
    KitGenerationError, PlanningInput, check_non_trivial, clustering_options, edge_inputs, file_slices, planning_inputs,
    slice_stats,
)  # fmt: skip

__all__ = [
    "FINDINGS", "KitFailure", "KitFinding", "KitGenerationError", "PlanOutcome", "PlanningInput",
    "check_non_trivial", "check_params_model", "check_plan_strategy", "clustering_options", "edge_inputs",
    "file_slices", "kit_settings", "plan_with", "planning_inputs", "run_kit", "run_plan_kit", "slice_stats",
    "ExecutionInput", "check_execution_strategy", "execution_inputs", "run_execution_kit", "check_update_strategy",
    "run_update_kit", "update_inputs", "import_plugin", "load_strategy",
]  # fmt: skip
