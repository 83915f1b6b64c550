"""Hudi's single-file sort: every eligible file is its own group, rewritten sorted into exactly one file.

Hudi's Java strategy writes the sorted file under the *same* file id and lists that id as replaced; hudi-rs
0.5.0 hides a replaced file group wholesale, so it would lose those rows. We write a new file id instead:
the layout is the same (one sorted file per input file), and both readers see every row.
"""

from __future__ import annotations

from dataclasses import replace

from hudi_cluster_core.sdk import (
    ONE_FILE, ExecutionStrategy, PlannedGroup, PlanStrategy, SortAndSizeParams, execution_strategy, hookimpl, keys,
)  # fmt: skip

_P = "org.apache.hudi.client.clustering.plan.strategy."
_R = "org.apache.hudi.client.clustering.run.strategy."
EXECUTION_CLASS = _R + "SparkSingleFileSortExecutionStrategy"
DEFAULT_EXECUTION = (keys.SPARK_SORT_AND_SIZE_EXECUTION, "sort-and-size")


class SingleFileSortPlanStrategy(PlanStrategy):
    name, kind = "single-file-sort", "plan"
    java_class_names = (_P + "SparkSingleFileSortPlanStrategy",)
    summary = "Each file below small.file.limit becomes its own group with one sorted output file."
    # every group is one file, rewritten sorted, whatever its size (Hudi's strategy does the same, sort columns or not)
    kit_silence = ("lone-slice-at-target",)

    @hookimpl
    def plan_group_slices(self, context, slices):
        ordered = sorted(slices, key=lambda s: (s.partition, s.file_id))
        return [PlannedGroup((s,), 1) for s in ordered]

    @hookimpl
    def plan_execution_strategy(self, context):
        configured, params = execution_strategy(context)
        # Hudi pairs this plan with its own execution class; keep an explicit non-default choice
        return (EXECUTION_CLASS if configured in DEFAULT_EXECUTION else configured), params


class SingleFileSortExecutionStrategy(ExecutionStrategy):
    name, kind = "single-file-sort", "execution"
    java_class_names = (EXECUTION_CLASS,)
    params_model = SortAndSizeParams
    summary = "Rewrites each single-file group sorted by sort.columns into exactly one new file."

    @hookimpl
    def execute_group(self, task):
        # the core's bounded-memory sort (spilling past hudi.cluster.task.memory.bytes) into one file: its target
        # is a size no file reaches, so the writer never rolls
        one_file = replace(task, target_file_max_bytes=ONE_FILE)
        return one_file.write_sorted(task.params.columns if task.params else [],
                                     task.settings.get(keys.LAYOUT_STRATEGY, "LINEAR"))  # fmt: skip


@hookimpl
def hudi_cluster_strategies():
    return [SingleFileSortPlanStrategy(), SingleFileSortExecutionStrategy()]
