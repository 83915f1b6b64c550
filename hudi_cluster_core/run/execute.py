"""Executing a stored clustering plan on Spark (or a local run's pool of processes), then committing it."""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, replace

from ..byte_units import human_bytes
from ..config import catalogue, strategy_params
from ..config.sort_columns import parse_sort_columns
from ..errors import PlanError
from ..failpoints import failpoint
from ..write.base_file import ParquetOptions
from ..write.footer_size import column_chunk_bytes
from ..plan.avro_plan import StoredPlan, read_plan
from ..plan.estimate import OutputEstimate, bloom_sizing, estimate_plan_group
from ..plan.footer_stats import footer_stats_provider
from ..plan.stored_settings import layout_in_effect, settings_in_effect, split_stored
from ..plan.validate import validate_plan
from ..plugins import StrategyRegistry, call_hook
from ..table import HudiTable, State
from ..table.ownership import Heartbeat, timeline_lock
from ..table.keygen import key_generator
from ..table.schema import check_sort_columns_in_schema, read_schema
from ..mdt.partitions import disabled_by_config
from ..sort import out_of_core
from ..sort.curves import curve_sort_indices
from .commit import commit_clustering
from .rollback import pending_rollback_of, rollback_clustering
from .spark import engine_of
from .task import GroupTask

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GroupOutcome:
    partition: str
    input_file_ids: tuple[str, ...]
    input_bytes: int
    output_files: tuple[str, ...]
    output_bytes: int
    rows: int  # rows written (the write stats' numWrites)
    output_file_bytes: tuple[int, ...] = ()  # each output file's size, as committed
    rows_read: int = 0  # rows the group's tasks read (log files merged)

    def to_json(self) -> dict:
        return {
            "partition": self.partition, "input_file_ids": list(self.input_file_ids), "input_bytes": self.input_bytes,
            "output_files": list(self.output_files), "output_bytes": self.output_bytes, "rows": self.rows,
            "rows_read": self.rows_read,
        }  # fmt: skip


def load_stored_plan(table: HudiTable, instant_time: str) -> StoredPlan:
    instant = table.timeline.get(instant_time)
    if instant is None:
        raise PlanError(f"no instant {instant_time} on the timeline of {table.base_path}")
    if instant.is_completed:
        raise PlanError(f"clustering {instant_time} is already completed ({instant.file_name})")
    record = table.timeline.clustering_plan(instant_time)
    if record is None:
        raise PlanError(f"instant {instant_time} ({instant.file_name}) is not a pending clustering plan")
    requested = table.timeline.requested_file(instant_time)
    source = table.timeline.path_of(requested.file_name if requested else instant.file_name)
    plan = read_plan(table.storage, instant_time, record, source=source)
    sizes = validate_plan(table, plan, source)  # before anything is written: a plan's paths must stay inside the table
    return replace(plan, file_sizes=sizes)


def build_tasks(
    table: HudiTable, plan: StoredPlan, config, registry: StrategyRegistry, *, memory_budget: int | None = None
) -> list[GroupTask]:
    """One task per group (see :func:`split_groups` for the key-range units of large groups)."""
    execution = registry.resolve("execution", plan.execution_class, config_key="plan strategy.strategyClassName")
    own_params, stored = split_stored(plan.strategy_params)
    params = strategy_params(execution, own_params)
    check_sort_columns_in_schema(table, own_params.get(catalogue.SORT_COLUMNS))
    options = ParquetOptions.from_hoodie(dict(config.raw))
    # the plan's target and layout, as scheduled (Hudi executes with the plan's params): a different value given
    # to this run is one warning, never a silent change
    settings, overridden = settings_in_effect(stored, config.raw)
    for warning in overridden:
        log.warning("clustering %s: %s", plan.instant_time, warning)
    target = catalogue.read(settings, catalogue.TARGET_FILE_MAX_BYTES)
    budget = memory_budget or out_of_core.memory_budget(settings)
    spill_dir = config.task.spill_dir
    schema = read_schema(table)
    # virtual keys: made by the table's key generator (a bad key generator setting stops here, before any write)
    keys = None if table.config.populate_meta_fields else key_generator(table.config.props, settings)
    salt = uuid.uuid4().int % (1 << 30)  # this execution's write tokens (GroupTask.token_salt)
    return [
        GroupTask(
            table.storage.base_uri, plan.instant_time, group, execution, params, own_params,
            settings, options, target, plan.preserve_hoodie_metadata, memory_budget=budget, spill_dir=spill_dir,
            storage_options=table.storage.options, read_schema=schema, key_generator=keys, token_salt=salt,
        )  # fmt: skip
        for group in plan.groups
    ]


def _input_bytes(plan: StoredPlan, task: GroupTask) -> int:
    """The group's bytes as the plan's validation listed them (else a request per file, on an object store)."""
    known = plan.input_bytes(task.group)
    return task.input_bytes() if known is None else known


def plan_estimates(table: HudiTable, plan: StoredPlan, config, registry: StrategyRegistry) -> tuple[list[OutputEstimate], str]:
    """What executing ``plan`` would write, group by group (the estimate its numOutputFileGroups came from), and
    one line of the settings it would run with: execution strategy, sort columns, layout, target."""
    own_params, stored = split_stored(plan.strategy_params)
    settings, _ = settings_in_effect(stored, config.raw)
    target = catalogue.read(settings, catalogue.TARGET_FILE_MAX_BYTES)
    columns = own_params.get(catalogue.SORT_COLUMNS)
    names = list(parse_sort_columns(columns)) if columns else []
    codec = str(catalogue.read(settings, catalogue.PARQUET_COMPRESSION_CODEC))
    execution = registry.resolve("execution", plan.execution_class, config_key="plan strategy.strategyClassName")
    layout = layout_in_effect(execution, settings)
    footers = footer_stats_provider(table.storage)  # the schedule's, when it ran in this process: no footer read again
    # the sample is put in the writer's order (a curve compresses worse than a linear sort): what the schedule did
    estimates = [estimate_plan_group(footers, group, target, bloom_sizing(settings), names, codec, plan.file_sizes,
                                     layout, curve_sort_indices, column_chunk_bytes) for group in plan.groups]  # fmt: skip
    line = (f"execution {plan.execution_class}, sort columns {columns or 'none'}, layout {layout}, "
            f"target {human_bytes(target)}; predicted {sum(e.files for e in estimates)} file(s), "
            f"{human_bytes(sum(e.bytes for e in estimates))} from {human_bytes(sum(e.input_bytes for e in estimates))} "
            f"({sum(e.log_files for e in estimates)} log file(s))")  # fmt: skip
    return estimates, line


def split_groups(tasks: list[GroupTask], input_bytes: list[int], *, cores: int, read_parallelism: int) -> list[GroupTask]:
    """Every group as its units of work: a large group whose strategy writes with ``write_sorted`` is split by
    sort-key range into up to ``read_parallelism`` tasks, enough to give it the cores the other groups leave
    idle, but no more tasks than the plan's output files; any other group stays one task. Each unit gets
    ``cores`` / units Arrow threads (at least one). Only groups whose files could reach
    ``hudi.cluster.task.split.min.bytes`` per task in memory have their footers read here."""
    idle = max(1, cores // max(1, len(tasks)))
    min_unit = out_of_core.split_min_bytes(tasks[0].settings) if tasks else out_of_core.MIN_UNIT_BYTES
    units: list[GroupTask] = []
    for task, size_on_disk in zip(tasks, input_bytes):
        count = 1
        # a file's rows take a few times its size in memory: footers are read only where a split is possible
        if idle > 1 and read_parallelism > 1 and size_on_disk * 8 >= 2 * min_unit:
            if call_hook(task.strategy, "execution_splits_group", task=task):
                size = out_of_core.measure_group(task)
                count = out_of_core.units_for_group(
                    size, idle_cores=idle, read_parallelism=read_parallelism, min_unit_bytes=min_unit
                )
                # each task writes whole planned files (out_of_core.unit_files): never more tasks than files
                count = max(1, min(count, task.group.num_output_file_groups))
        units.extend(replace(task, unit=unit, units=count) for unit in range(count))
    # Spark starts Python workers with OMP_NUM_THREADS=1, which Arrow takes as the size of its CPU pool: a task
    # with cores to itself (fewer tasks than cores) decodes its input columns on them
    threads = max(1, cores // max(1, min(len(units), cores)))
    return [replace(unit, cpu_threads=threads) for unit in units]


def execute_plan(
    table: HudiTable, plan: StoredPlan, config, registry: StrategyRegistry, spark, *, parallelism: int,
    heartbeat: Heartbeat | None = None, phases: dict[str, float] | None = None,
) -> tuple[str, list[GroupOutcome]]:
    """Run every group of ``plan`` and commit; returns the completed file name and per-group outcomes. The
    groups' tasks run on ``spark``: a SparkSession, or a local run's :class:`~.local_pool.LocalPool` (``unit_work.Engine``).
    ``phases``, when given, gets the seconds the Spark job (``spark``), its first task's start (``first_task``), the
    commit (``commit``) and the metadata table's part of it (``metadata_table``) took.

    The caller owns the instant (``heartbeat``); a failure propagates and the caller rolls back."""
    engine = engine_of(spark)
    budget = out_of_core.memory_budget({k: str(v) for k, v in config.raw.items()}, engine.python_memory)
    tasks = build_tasks(table, plan, config, registry, memory_budget=budget)
    wait_ms = config.writer.lock_wait_time_ms
    with timeline_lock(table.storage, wait_ms):
        table = table.reload()
        instant = table.timeline.get(plan.instant_time)
        if instant is None or instant.is_completed:
            raise PlanError(f"clustering {plan.instant_time} is no longer pending; nothing executed")
        if heartbeat is not None and not heartbeat.still_owned():
            # this run was held up between its claim and here past its heartbeat's expiry, and another run claimed
            # the instant: the inflight files are that run's work in progress, not a dead run's leftovers
            raise PlanError(f"clustering {plan.instant_time} not executed: another run took it over after this "
                            "run's heartbeat expired; nothing was changed")  # fmt: skip
        if instant.state is State.INFLIGHT or pending_rollback_of(table, plan.instant_time):
            # a previous run died mid-way: clear its partial files, keep the plan (Hudi's retry path)
            rollback_clustering(table, plan.instant_time, keep_plan=True, wait_ms=wait_ms)
            table = table.reload()
        timeline = table.timeline
        inflight = timeline.clustering_file_name(plan.instant_time, State.INFLIGHT)
        table.storage.write_atomic(timeline.path_of(inflight), b"")
    failpoint("after-inflight")
    input_bytes = [_input_bytes(plan, task) for task in tasks]

    units = split_groups(tasks, input_bytes, cores=engine.cores, read_parallelism=config.group_read_parallelism)
    if len(units) > len(tasks):
        log.info("clustering %s: %d group(s) in %d task(s) (large groups split by sort-key range)",
                 plan.instant_time, len(tasks), len(units))  # fmt: skip
    group_bytes = {task.group.index: size for task, size in zip(tasks, input_bytes)}
    unit_bytes = [group_bytes[unit.group.index] // max(1, unit.units) for unit in units]
    unit_rows: list[int] = []
    task_starts: list[float] = []
    started, submitted = time.monotonic(), time.time()
    slots = min(parallelism, config.max_parallelism)
    unit_results = engine.run_units(units, slots, unit_bytes, unit_rows, task_starts=task_starts)
    spark_s = time.monotonic() - started
    rows_read = {task.group.index: 0 for task in tasks}
    for unit, rows in zip(units, unit_rows):
        rows_read[unit.group.index] += rows
    per_group: dict[int, list[dict]] = {task.group.index: [] for task in tasks}
    for unit, unit_stats in zip(units, unit_results):  # units in range order: the group's files in key order
        per_group[unit.group.index].extend(unit_stats)
    results = [per_group[task.group.index] for task in tasks]
    stats = [stat for group_stats in results for stat in group_stats]
    failpoint("after-tasks")
    started = time.monotonic()
    commit_phases: dict[str, float] = {}
    name = commit_clustering(
        table, plan, stats, tasks[0].strategy if tasks else None, heartbeat=heartbeat, wait_ms=wait_ms,
        metadata_enable=config.writer.metadata_enable, disabled_indexes=disabled_by_config(config.raw),
        phases=commit_phases,
    )
    if phases is not None:
        phases.update(spark=spark_s, commit=time.monotonic() - started, **commit_phases)
        if task_starts:  # the job's submission to its first task's first line: Python worker launch, imports
            phases["first_task"] = max(0.0, min(task_starts) - submitted)
    outcomes = [
        GroupOutcome(
            group.partition, group.file_ids, input_bytes[i], tuple(s["path"] for s in results[i]),
            sum(s["fileSizeInBytes"] for s in results[i]), sum(s["numWrites"] for s in results[i]),
            tuple(s["fileSizeInBytes"] for s in results[i]), rows_read[group.index],
        )  # fmt: skip
        for i, group in enumerate(plan.groups)
    ]
    return name, outcomes
