"""The ``space-curve`` execution strategy: a group's rows ordered along a z-order or Hilbert curve, then cut
into the plan's number of files, so each output file covers a compact region of the sort columns' space and
footer min/max statistics skip files for range predicates on any of those columns."""

from __future__ import annotations

import zlib

import pyarrow as pa
from hudi_cluster_core.sdk import ExecutionStrategy, PlanError, check_sort_columns, hookimpl, sort_rows

from .params import SpaceCurveParams, params_for_task
from .sample import SampleCurveKey, sample_sort_indices


def group_seed(file_ids) -> int:
    """A stable per-group sample seed: the same group samples the same rows on every attempt."""
    return zlib.crc32(",".join(sorted(file_ids)).encode())


def order_rows(table: pa.Table, params: SpaceCurveParams, *, seed: int = 0) -> pa.Table:
    """``table`` in the layout ``params`` asks for, as Hudi's layout optimisation orders a clustering group.

    LINEAR, or a single sort column, is a plain ascending sort (Hudi: ``repartitionByRange``). DIRECT builds
    the curve on the values' bytes with the core's exact reproduction of Hudi's keys; SAMPLE on range ranks.
    """
    columns = params.columns
    if table.num_rows < 2:
        return table
    check_sort_columns(columns, table.column_names, error=PlanError)
    if params.curve == "linear" or len(columns) == 1:
        return sort_rows(table, columns, "linear")
    if params.build_method == "DIRECT":
        return sort_rows(table, columns, params.curve)
    return table.take(sample_sort_indices(table, columns, params.curve, sample_size=params.sample_size, seed=seed))


class SpaceCurveExecutionStrategy(ExecutionStrategy):
    """Rewrites a group sorted along a space-filling curve into ``num_output_file_groups`` files.

    No Java class name: Apache Hudi has no execution strategy of its own for curves; it expresses them as
    ``SparkSortAndSizeExecutionStrategy`` plus ``hoodie.layout.optimize.strategy`` (our ``sort-and-size``
    honours that too, with the DIRECT method). This strategy adds the SAMPLE method and is what the
    ``space-curve`` plan strategy names in its plans, so such plans execute only with hudi-cluster.

    Params: ``hoodie.clustering.plan.strategy.sort.columns`` from the plan; ``hoodie.layout.optimize.strategy``
    (default ZORDER here, LINEAR in Hudi's sort-and-size), ``...curve.build.method`` (DIRECT | SAMPLE) and
    ``...build.curve.sample.size`` from the executing job's settings, because Hudi does not store them in plans.
    """

    name = "space-curve"
    kind = "execution"
    params_model = SpaceCurveParams
    summary = "Sorts each group along a z-order or Hilbert curve (DIRECT or SAMPLE build) into the planned files."

    @hookimpl
    def execute_group(self, task):
        params = params_for_task(task)
        if _splits(params):  # linear or DIRECT: keys per row, so bounded memory and key ranges across tasks
            return task.write_sorted(params.columns, "linear" if len(params.columns) == 1 else params.curve)
        # SAMPLE ranks every row against a sample of the whole group: in memory when the group fits the task's
        # budget, else out of core against boundaries from a sample spread over the group (never split: the
        # sample is the group's own)
        key = SampleCurveKey(params.columns, params.curve, params.sample_size, group_seed(task.group.file_ids))
        return task.write_sorted(params.columns, params.curve, key=key)

    @hookimpl
    def execution_splits_group(self, task):
        return _splits(params_for_task(task))


def _splits(params: SpaceCurveParams) -> bool:
    return bool(params.columns) and (params.curve == "linear" or len(params.columns) == 1 or params.build_method == "DIRECT")
