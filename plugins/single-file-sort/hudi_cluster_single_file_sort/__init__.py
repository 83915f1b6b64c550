"""Hudi's single-file sort: every eligible file is its own group, rewritten sorted into exactly one file.

Hudi's Java strategy writes the sorted file under the *same* file id and lists that id as replaced; hudi-rs
0.5.0 hides a replaced file group wholesale, so it would lose those rows. We write a new file id instead:
the layout is the same (one sorted file per input file), and both readers see every row.
"""

from __future__ import annotations

from hudi_cluster_core.io.curves import sort_rows
from hudi_cluster_core.sdk import PlannedGroup, SortAndSizeParams, execution_strategy, hookimpl, keys

_P = "org.apache.hudi.client.clustering.plan.strategy."
_R = "org.apache.hudi.client.clustering.run.strategy."
EXECUTION_CLASS = _R + "SparkSingleFileSortExecutionStrategy"
DEFAULT_EXECUTION = (keys.SPARK_SORT_AND_SIZE_EXECUTION, "sort-and-size")


class SingleFileSortPlanStrategy:
    name, kind = "single-file-sort", "plan"
    java_class_names = (_P + "SparkSingleFileSortPlanStrategy",)
    summary = "Each file below small.file.limit becomes its own group with one sorted output file."

    @hookimpl
    def plan_group_slices(self, context, slices):
        ordered = sorted(slices, key=lambda s: (s.partition, s.file_id))
        return [PlannedGroup((s,), 1) for s in ordered]

    @hookimpl
    def plan_execution_strategy(self, context):
        configured, params = execution_strategy(context)
        # Hudi pairs this plan with its own execution class; keep an explicit non-default choice
        return (EXECUTION_CLASS if configured in DEFAULT_EXECUTION else configured), params


class SingleFileSortExecutionStrategy:
    name, kind = "single-file-sort", "execution"
    java_class_names = (EXECUTION_CLASS,)
    params_model = SortAndSizeParams
    summary = "Rewrites each single-file group sorted by sort.columns into exactly one new file."

    @hookimpl
    def execute_group(self, task):
        rows = sort_rows(task.read_arrow(), task.params.columns if task.params else [],
                         task.settings.get(keys.LAYOUT_STRATEGY, "LINEAR"))  # fmt: skip
        return task.write(rows, 1)


@hookimpl
def hudi_cluster_strategies():
    return [SingleFileSortPlanStrategy(), SingleFileSortExecutionStrategy()]
