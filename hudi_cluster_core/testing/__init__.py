"""The conformance kit: hypothesis inputs and checked invariants for plan, execution and update strategies.

Needs ``hypothesis`` (a test dependency). Every plugin in ``plugins/`` and ``contrib/`` runs it::

    run_plan_kit(MyPlanStrategy())            # plan strategies
    run_execution_kit(MyExecutionStrategy())  # execution strategies, on real small tables
    run_update_kit(MyUpdateStrategy(), policy="reject")

A broken invariant fails with one short :class:`KitFailure` naming the strategy, the hook and the invariant.
"""

from .conformance import (
    KitFailure, PlanOutcome, check_plan_strategy, kit_settings, plan_with, run_kit, run_plan_kit,
)  # fmt: skip
from .update import check_update_strategy, run_update_kit, update_inputs
from .execution import ExecutionInput, check_execution_strategy, execution_inputs, run_execution_kit
from .strategies import (
    KitGenerationError, PlanningInput, check_non_trivial, clustering_options, file_slices, planning_inputs, slice_stats,
)  # fmt: skip

__all__ = [
    "KitFailure", "KitGenerationError", "PlanOutcome", "PlanningInput", "check_non_trivial", "check_plan_strategy",
    "clustering_options", "file_slices", "kit_settings", "plan_with", "planning_inputs", "run_kit", "run_plan_kit",
    "slice_stats", "ExecutionInput", "check_execution_strategy", "execution_inputs", "run_execution_kit",
    "check_update_strategy", "run_update_kit", "update_inputs",
]  # fmt: skip
