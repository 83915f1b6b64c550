"""``SparkSortAndSizeExecutionStrategy``: rows of a group sorted (linear, z-order or Hilbert) and cut into files."""

from __future__ import annotations

from hudi_cluster_core.sdk import ExecutionStrategy, SortAndSizeParams, hookimpl, keys


class SortAndSizeExecutionStrategy(ExecutionStrategy):
    name = "sort-and-size"
    kind = "execution"
    java_class_names = (keys.SPARK_SORT_AND_SIZE_EXECUTION,)
    params_model = SortAndSizeParams
    summary = "Rewrites each group sorted by sort.columns (layout per hoodie.layout.optimize.strategy) into files near the target size."

    @hookimpl
    def execute_group(self, task):
        # bounded memory: a group above the task's budget spills; files roll at target.file.max.bytes
        return task.write_sorted(_columns(task), task.settings.get(keys.LAYOUT_STRATEGY, "LINEAR"))

    @hookimpl
    def execution_splits_group(self, task):
        return bool(_columns(task))  # a key range per task needs a sort key


def _columns(task) -> list[str]:
    return task.params.columns if task.params else []
