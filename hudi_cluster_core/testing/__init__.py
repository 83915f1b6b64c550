"""The conformance kit for plan strategies: hypothesis strategies plus ``check_plan_strategy``.

Needs ``hypothesis`` (a test dependency). Every plugin in ``plugins/`` and ``contrib/`` runs it.
"""

from .conformance import PlanOutcome, check_plan_strategy, plan_with
from .strategies import PlanningInput, clustering_options, file_slices, planning_inputs, slice_stats

__all__ = [
    "PlanOutcome", "PlanningInput", "check_plan_strategy", "clustering_options", "file_slices", "plan_with",
    "planning_inputs", "slice_stats",
]  # fmt: skip
