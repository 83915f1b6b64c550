"""Hudi's single-file sort: every eligible file is its own group, rewritten sorted into exactly one file.

Hudi's Java strategy writes the sorted file under the *same* file id and lists that id as replaced; hudi-rs
0.5.0 hides a replaced file group wholesale, so it would lose those rows. We write a new file id instead:
the layout is the same (one sorted file per input file), and both readers see every row.
"""

from __future__ import annotations

from hudi_cluster_core.hookspecs import hookimpl
from hudi_cluster_core.plan.eligibility import select_eligible_slices
from hudi_cluster_core.plan.model import PlannedGroup
from hudi_cluster_core.io.curves import sort_rows
from hudi_cluster_size_based.execution import SortAndSizeParams

_P = "org.apache.hudi.client.clustering.plan.strategy."
_R = "org.apache.hudi.client.clustering.run.strategy."
EXECUTION_CLASS = _R + "SparkSingleFileSortExecutionStrategy"


class SingleFileSortPlanStrategy:
    name, kind = "single-file-sort", "plan"
    java_class_names = (_P + "SparkSingleFileSortPlanStrategy",)
    params_model = None
    summary = "Each file below small.file.limit becomes its own group with one sorted output file."

    @hookimpl
    def plan_select_slices(self, context, slices):
        return select_eligible_slices(context, slices)

    @hookimpl
    def plan_group_slices(self, context, slices):
        ordered = sorted(slices, key=lambda s: (s.partition, s.file_id))
        return [PlannedGroup((s,), 1) for s in ordered]

    @hookimpl
    def plan_finalize_groups(self, context, groups):
        return list(groups)[: int(context.config.get("hoodie.clustering.plan.strategy.max.num.groups"))]

    @hookimpl
    def plan_execution_strategy(self, context):
        params = {}
        sort_columns = context.config.get("hoodie.clustering.plan.strategy.sort.columns")
        if sort_columns:
            params["hoodie.clustering.plan.strategy.sort.columns"] = sort_columns
        configured = context.config.get("hoodie.clustering.execution.strategy.class")
        # Hudi pairs this plan with its own execution class; keep an explicit non-default choice
        default_run = _R + "SparkSortAndSizeExecutionStrategy"
        return (EXECUTION_CLASS if configured in (default_run, "sort-and-size") else configured), params


class SingleFileSortExecutionStrategy:
    name, kind = "single-file-sort", "execution"
    java_class_names = (EXECUTION_CLASS,)
    params_model = SortAndSizeParams
    summary = "Rewrites each single-file group sorted by sort.columns into exactly one new file."

    @hookimpl
    def execute_group(self, task):
        rows = sort_rows(task.read_arrow(), task.params.columns if task.params else [],
                         task.settings.get("hoodie.layout.optimize.strategy", "linear"))  # fmt: skip
        return task.write(rows, 1)


@hookimpl
def hudi_cluster_strategies():
    return [SingleFileSortPlanStrategy(), SingleFileSortExecutionStrategy()]
