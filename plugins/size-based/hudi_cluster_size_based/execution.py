"""``SparkSortAndSizeExecutionStrategy``: rows of a group sorted (linear, z-order or Hilbert) and cut into files."""

from __future__ import annotations

from hudi_cluster_core.io.curves import sort_rows
from hudi_cluster_core.sdk import SortAndSizeParams, hookimpl, keys


class SortAndSizeExecutionStrategy:
    name = "sort-and-size"
    kind = "execution"
    java_class_names = (keys.SPARK_SORT_AND_SIZE_EXECUTION,)
    params_model = SortAndSizeParams
    summary = "Rewrites each group sorted by sort.columns (layout per hoodie.layout.optimize.strategy) into files near the target size."

    @hookimpl
    def execute_group(self, task):
        rows = task.read_arrow()
        columns = task.params.columns if task.params else []
        rows = sort_rows(rows, columns, task.settings.get(keys.LAYOUT_STRATEGY, "LINEAR"))
        return task.write(rows)
