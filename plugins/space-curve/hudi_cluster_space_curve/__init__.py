"""Z-order and Hilbert layout optimisation (Hudi's ``hoodie.layout.optimize.*``), DIRECT and SAMPLE builds.

Two strategies, both named ``space-curve``: a plan strategy (size-based groups) and the execution strategy
its plans name. See :mod:`.execution` for the params and how they map to Hudi's configuration.
"""

from hudi_cluster_core.sdk import hookimpl

from .execution import SpaceCurveExecutionStrategy, order_rows
from .params import SpaceCurveParams, params_for
from .plan import SpaceCurvePlanStrategy
from .sample import boundary_ranks, range_boundaries, sample_sort_indices

__all__ = [
    "SpaceCurveExecutionStrategy", "SpaceCurveParams", "SpaceCurvePlanStrategy", "boundary_ranks", "order_rows",
    "params_for", "range_boundaries", "sample_sort_indices",
]  # fmt: skip


@hookimpl
def hudi_cluster_strategies():
    return [SpaceCurvePlanStrategy(), SpaceCurveExecutionStrategy()]
