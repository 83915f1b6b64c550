"""Hook specifications: the three clustering strategy interfaces.

A plugin distribution exposes a module under the entry-point group ``hudi_cluster.strategies``. That module
implements :func:`hudi_cluster_strategies`, returning strategy objects; each strategy object implements the
hooks of its kind (``plan``, ``execution`` or ``update``) as methods marked with :data:`hookimpl`.

Every strategy object carries these attributes (see :class:`hudi_cluster_core.plugins.StrategyInfo`):
``name`` (short name, e.g. ``"size-based"``), ``kind``, ``java_class_names`` (the Hudi class names users
already configure, e.g. ``org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy``),
``params_model`` (a :class:`hudi_cluster_core.config.StrategyParams` subclass, or ``None``) and ``summary``.

The core calls a hook on exactly one strategy, the configured one; hooks are ``firstresult``.
Set ``HUDI_CLUSTER_TRACE_HOOKS=1`` to print every hook call and result to stderr.
"""

from __future__ import annotations

import pluggy

PROJECT_NAME = "hudi_cluster"
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def hudi_cluster_strategies():
    """Return the list of strategy objects this plugin provides.

    Called once per process when plugins load. Names must be unique across installed plugins; a clash is an
    error naming both distributions.
    """


# -- plan strategy ------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def plan_select_slices(context, slices):
    """Return the slices eligible for clustering, from the latest slices of every visible file group.

    ``context`` is a :class:`hudi_cluster_core.plan.model.PlanContext`. Invariants: return a subset of
    ``slices``; never a slice whose file group is in ``context.pending_file_groups`` (pending clustering or
    compaction); honour ``hoodie.clustering.plan.partition.filter.mode`` and its keys. The helpers in
    :mod:`hudi_cluster_core.plan.eligibility` do the standard selection.
    """


@hookspec(firstresult=True)
def plan_group_slices(context, slices):
    """Group eligible slices into a list of :class:`hudi_cluster_core.plan.model.PlannedGroup`.

    Invariants: every slice in at most one group; a group holds slices of one partition unless the strategy
    documents otherwise; no group above ``max.bytes.per.group`` unless it holds a single slice;
    ``num_output_file_groups >= 1``; deterministic for equal input.
    """


@hookspec(firstresult=True)
def plan_finalize_groups(context, groups):
    """Order and filter the groups; return at most ``hoodie.clustering.plan.strategy.max.num.groups`` of them.

    Groups that would not change the layout (e.g. one slice that is already one output file and no sort) may be
    dropped here.
    """


@hookspec(firstresult=True)
def plan_execution_strategy(context):
    """Return ``(execution_strategy_class_name, strategy_params)`` for the plan's ``strategy`` record.

    ``strategy_params`` is a ``dict[str, str]`` stored in the plan; the execution strategy validates it with its
    own ``params_model``.
    """


# -- execution strategy -------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def execute_group(task):
    """Rewrite one clustering group; runs inside a Spark task. Return the list of written-file stats.

    ``task`` is a :class:`hudi_cluster_core.run.task.GroupTask`: ``task.read_arrow()`` gives the group's rows
    (merged, meta columns included); ``task.write(table, num_files)`` writes Hudi base files (names, meta
    columns, bloom filter and key-range footers, markers) and returns their write stats. Invariants: every input
    row is written exactly once; ``_hoodie_commit_time``, ``_hoodie_commit_seqno``, ``_hoodie_record_key`` and
    ``_hoodie_partition_path`` are kept; new files only in the group's partition; about
    ``task.num_output_file_groups`` files, each near ``task.target_file_max_bytes``.
    """


@hookspec(firstresult=True)
def execution_before_commit(table, plan, write_stats):
    """Optional. Runs on the driver once every group succeeded, before the completed instant is written.

    For table-level artefacts the new layout needs (e.g. consistent-hashing metadata naming the new buckets).
    ``plan`` is the :class:`~hudi_cluster_core.plan.avro_plan.StoredPlan`, ``write_stats`` every new file's
    stat. Must be idempotent: after a crash the same instant may run it again. Return value is ignored.
    """


# -- update strategy ----------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def update_decide(context):
    """Decide what a writer may do with records bound for file groups under pending clustering.

    ``context`` is a :class:`hudi_cluster_core.plan.model.UpdateContext` (incoming file groups, pending
    clustering file groups with their instants). Return an :class:`~hudi_cluster_core.plan.model.UpdateDecision`:
    ``reject`` (raise before writing, naming the file groups), ``allow`` (write; Hudi then reconciles), or
    ``duplicate`` (write the records to the pending file group and to its clustering target, as consistent
    bucket tables do). Must be pure: it only decides, it writes nothing.
    """
