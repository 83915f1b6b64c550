"""Executing a stored clustering plan on Spark, then committing it."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ..config import strategy_params
from ..errors import PlanError
from ..failpoints import failpoint
from ..write.base_file import ParquetOptions
from ..plan.avro_plan import StoredPlan, read_plan
from ..plan.validate import validate_plan
from ..plugins import StrategyRegistry
from ..table import HudiTable, State
from ..table.ownership import Heartbeat, timeline_lock
from ..table.schema import SORT_COLUMNS_KEY, check_sort_columns
from ..mdt.partitions import disabled_by_config
from .commit import commit_clustering
from .rollback import pending_rollback_of, rollback_clustering
from .spark import run_group_tasks
from .task import GroupTask

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GroupOutcome:
    partition: str
    input_file_ids: tuple[str, ...]
    input_bytes: int
    output_files: tuple[str, ...]
    output_bytes: int
    rows: int

    def to_json(self) -> dict:
        return {
            "partition": self.partition, "input_file_ids": list(self.input_file_ids), "input_bytes": self.input_bytes,
            "output_files": list(self.output_files), "output_bytes": self.output_bytes, "rows": self.rows,
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
    validate_plan(table, plan, source)  # before anything is written: a plan's paths must stay inside the table
    return plan


def build_tasks(table: HudiTable, plan: StoredPlan, config, registry: StrategyRegistry) -> list[GroupTask]:
    execution = registry.resolve("execution", plan.execution_class, config_key="plan strategy.strategyClassName")
    params = strategy_params(execution, dict(plan.strategy_params))
    check_sort_columns(table, plan.strategy_params.get(SORT_COLUMNS_KEY))
    options = ParquetOptions.from_hoodie(dict(config.raw))
    target = config.target_file_max_bytes
    return [
        GroupTask(
            table.storage.base_uri, plan.instant_time, group, execution, params, dict(plan.strategy_params),
            {k: str(v) for k, v in config.raw.items()}, options, target, plan.preserve_hoodie_metadata,
            storage_options=table.storage.options,
        )  # fmt: skip
        for group in plan.groups
    ]


def execute_plan(
    table: HudiTable, plan: StoredPlan, config, registry: StrategyRegistry, spark, *, parallelism: int,
    heartbeat: Heartbeat | None = None,
) -> tuple[str, list[GroupOutcome]]:
    """Run every group of ``plan`` and commit; returns the completed file name and per-group outcomes.

    The caller owns the instant (``heartbeat``); a failure propagates and the caller rolls back."""
    tasks = build_tasks(table, plan, config, registry)
    wait_ms = config.writer.lock_wait_time_ms
    with timeline_lock(table.storage, wait_ms):
        table = table.reload()
        instant = table.timeline.get(plan.instant_time)
        if instant is None or instant.is_completed:
            raise PlanError(f"clustering {plan.instant_time} is no longer pending; nothing executed")
        if instant.state is State.INFLIGHT or pending_rollback_of(table, plan.instant_time):
            # a previous run died mid-way: clear its partial files, keep the plan (Hudi's retry path)
            rollback_clustering(table, plan.instant_time, keep_plan=True, wait_ms=wait_ms)
            table = table.reload()
        timeline = table.timeline
        inflight = timeline.clustering_file_name(plan.instant_time, State.INFLIGHT)
        table.storage.write_atomic(timeline.path_of(inflight), b"")
    failpoint("after-inflight")
    input_bytes = [task.input_bytes() for task in tasks]
    results = run_group_tasks(spark, tasks, parallelism, input_bytes)
    stats = [stat for group_stats in results for stat in group_stats]
    failpoint("after-tasks")
    name = commit_clustering(
        table, plan, stats, tasks[0].strategy if tasks else None, heartbeat=heartbeat, wait_ms=wait_ms,
        metadata_enable=config.writer.metadata_enable, disabled_indexes=disabled_by_config(config.raw),
    )
    outcomes = [
        GroupOutcome(
            group.partition, group.file_ids, input_bytes[i], tuple(s["path"] for s in results[i]),
            sum(s["fileSizeInBytes"] for s in results[i]), sum(s["numWrites"] for s in results[i]),
        )  # fmt: skip
        for i, group in enumerate(plan.groups)
    ]
    return name, outcomes
