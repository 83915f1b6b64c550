"""Apache Hudi's default clustering: size-based plan, sort-and-size execution."""

from hudi_cluster_core.sdk import hookimpl

from .execution import SortAndSizeExecutionStrategy
from .plan import SizeBasedPlanStrategy


@hookimpl
def hudi_cluster_strategies():
    return [SizeBasedPlanStrategy(), SortAndSizeExecutionStrategy()]
