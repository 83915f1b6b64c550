"""Hook specifications: the three clustering strategy interfaces.

A plugin distribution exposes a module under the entry-point group ``hudi_cluster.strategies``. That module
implements :func:`hudi_cluster_strategies`, returning strategy objects; each strategy object implements hooks of
its kind (``plan``, ``execution`` or ``update``) as methods marked with :data:`hookimpl`.

Every strategy object carries these attributes (see :class:`hudi_cluster_core.plugins.StrategyInfo`):
``name`` (short name, e.g. ``"size-based"``), ``kind``, ``java_class_names`` (the Hudi class names users
already configure, e.g. ``org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy``),
``params_model`` (a :class:`hudi_cluster_core.config.StrategyParams` subclass, or ``None``) and ``summary``.
A strategy class that subclasses its kind's protocol (:mod:`hudi_cluster_core.protocols`: ``PlanStrategy``,
``ExecutionStrategy``, ``UpdateStrategy``) is checked by mypy against these specifications.

**Required and optional hooks.** A strategy implements only what it changes; the core supplies the rest:

======================  ===========  ============================================================================
hook                    required     default when the strategy does not implement it
======================  ===========  ============================================================================
plan_select_slices      no           Hudi's eligibility: :func:`hudi_cluster_core.plan.eligibility.select_eligible_slices`
plan_group_slices       **yes**      --
plan_finalize_groups    no           keep the first ``max.num.groups`` groups, in the order given
plan_execution_strategy no           the configured ``hoodie.clustering.execution.strategy.class`` (default Hudi's
                                     ``SparkSortAndSizeExecutionStrategy``) with ``sort.columns`` passed on if set
execute_group           **yes**      --
execution_splits_group  no           False: every group runs whole, in one Spark task
execution_before_commit no           nothing
bucket_file_ids         no           None: the strategy owns no bucket index (only a writer of a consistent-bucket
                                     table calls it, on the ``consistent-bucket`` strategy)
update_decide           **yes**      --
======================  ===========  ============================================================================

The defaults live in :mod:`hudi_cluster_core.plan.defaults` and are public (:mod:`hudi_cluster_core.sdk`), so an
override can do its part and hand the rest to the default (e.g. sort the groups, then
``finalize_groups(context, groups)``). They are a plugin too (``CoreDefaults``), registered with every hook
``trylast`` in the one plugin manager that holds every strategy.

**firstresult.** The core calls every hook through :func:`hudi_cluster_core.plugins.call_hook`, on exactly one
strategy, the configured one (pluggy's ``subset_hook_caller`` leaves the other strategies out): the strategy's own
implementation runs first and, with ``firstresult``, its answer is the result; the core default runs only when the
strategy has no implementation of the hook or its implementation returns None.

Set ``HUDI_CLUSTER_TRACE_HOOKS=1`` to print one short line per hook call and result to stderr.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

import pluggy

if TYPE_CHECKING:
    from .plan.avro_plan import StoredPlan
    from .plan.model import PlanContext, PlannedGroup, UpdateContext, UpdateDecision
    from .run.task import GroupTask
    from .table import FileSlice, HudiTable

PROJECT_NAME = "hudi_cluster"
WriteStat = dict[str, Any]  # one written file's HoodieWriteStat fields, as GroupTask.write returns them
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def hudi_cluster_strategies() -> list[Any]:
    """Return the list of strategy objects this plugin provides.

    Called once per process when plugins load. Names must be unique per kind across installed plugins; a clash
    is an error naming both distributions.
    """


# -- plan strategy ------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def plan_select_slices(context: PlanContext, slices: list[FileSlice]) -> list[FileSlice]:
    """Optional. Return the slices eligible for clustering, from the latest slices of every visible file group.

    Invariants: return a subset of ``slices``; never a slice whose file group is in
    ``context.pending_file_groups`` (pending clustering or compaction, or a write in flight); only slices of
    ``context.partitions`` (the partition filter's choice). Default: those, minus slices whose base file is at or above
    ``hoodie.clustering.plan.strategy.small.file.limit``.
    """


@hookspec(firstresult=True)
def plan_group_slices(context: PlanContext, slices: list[FileSlice]) -> list[PlannedGroup]:
    """Required. Group the eligible slices into :class:`~hudi_cluster_core.plan.model.PlannedGroup` objects.

    Invariants: every slice in at most one group; a group holds slices of one partition unless the strategy
    documents otherwise; no group of 2+ slices above ``max.bytes.per.group``; ``num_output_file_groups >= 1``;
    deterministic for equal input. :func:`hudi_cluster_core.sdk.pack_by_size` and
    :func:`hudi_cluster_core.sdk.cut_in_order` do the usual packing.
    """


@hookspec(firstresult=True)
def plan_finalize_groups(context: PlanContext, groups: list[PlannedGroup]) -> list[PlannedGroup]:
    """Optional. Order and filter the groups; return at most ``max.num.groups`` of them.

    Override to put the most valuable groups first or drop groups that would not change the layout. Default:
    the first ``hoodie.clustering.plan.strategy.max.num.groups`` groups in the order ``plan_group_slices`` made.
    """


@hookspec(firstresult=True)
def plan_execution_strategy(context: PlanContext) -> tuple[str, Mapping[str, str]]:
    """Optional. Return ``(execution_strategy_class_name, strategy_params)`` for the plan's ``strategy`` record.

    ``strategy_params`` (``dict[str, str]``) is stored in the plan; the execution strategy validates it with its
    own ``params_model``. Default: the configured ``hoodie.clustering.execution.strategy.class`` and
    ``{hoodie.clustering.plan.strategy.sort.columns: ...}`` when sort columns are configured.
    """


# -- execution strategy -------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def execute_group(task: GroupTask) -> Sequence[WriteStat]:
    """Required. Rewrite one clustering group; runs inside a Spark task. Return the written files' write stats.

    ``task.read_arrow()`` gives the group's rows (merged, meta columns included), ``task.read_slices()`` each
    slice's rows (every shape: base only, base plus logs merged by hudi-rs, log-only); ``task.write(rows,
    num_files)`` writes Hudi base files (names, meta columns, bloom filter and key-range footers, markers) and
    returns their write stats, and ``task.write(rows, file_ids=[...])`` one file per given new file id. Invariants: every input row is written exactly once; ``_hoodie_commit_time``,
    ``_hoodie_commit_seqno``, ``_hoodie_record_key`` and ``_hoodie_partition_path`` are kept; new files only in
    the group's partition; about ``task.num_output_file_groups`` files, each near ``task.target_file_max_bytes``.
    The first two are checked in the task before the commit (run/digest.py): rows must be read through the task
    (``read_slices``, ``read_arrow``, ``write_sorted``; rows read any other way go to ``task.note_input``) and
    written through it, unchanged, or the group fails.
    """


@hookspec(firstresult=True)
def execution_splits_group(task: GroupTask) -> bool:
    """Optional. True when ``execute_group`` writes this group with ``task.write_sorted(columns, layout)`` only.

    Runs on the driver before the tasks. The core may then split a large group by sort-key range across several
    Spark tasks (``task.unit`` of ``task.units``; each writes its own files, together in the group's order), up
    to ``hoodie.clustering.group.read.parallelism``. A strategy that reads rows itself (``read_arrow``,
    ``read_slices``) must answer False: those raise on a split group. Default: False.
    """


@hookspec(firstresult=True)
def execution_before_commit(table: HudiTable, plan: StoredPlan, write_stats: list[WriteStat]) -> None:
    """Optional. Runs on the driver once every group succeeded, before the completed instant is written.

    For table-level artefacts the new layout needs (e.g. consistent-hashing metadata naming the new buckets).
    ``write_stats`` holds every new file's stat. Must be idempotent: after a crash the same instant may run it
    again. Default: nothing. The return value is ignored.
    """


@hookspec(firstresult=True)
def bucket_file_ids(table: HudiTable, partition: str, record_keys: Sequence[str], settings: Mapping[str, str],
                    after_clustering: str | None) -> Sequence[str] | None:  # fmt: skip
    """Optional, for execution strategies that own a bucket index (consistent hashing): the file id of the bucket
    each of ``record_keys`` goes to in ``partition``, for a writer of the table (``settings``: its Hudi keys).

    With ``after_clustering`` (a pending clustering instant), the buckets as that clustering will leave them: where
    the duplicate update strategy writes the records' copies. Default: None (the table has no bucket index).
    """


# -- update strategy ----------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def update_decide(context: UpdateContext) -> UpdateDecision:
    """Required. Decide what a writer may do with records bound for file groups under pending clustering.

    ``context`` holds the incoming file groups and the pending clustering file groups with their instants.
    Return ``reject`` (raise before writing, naming the file groups), ``allow`` (write; Hudi then reconciles),
    or ``duplicate`` (write the records to the pending file group and to its clustering target, as consistent
    bucket tables do). Must be pure: it only decides, it writes nothing.
    """
