"""The Python API: ``cluster()``, a drop-in for Hudi's ``HoodieClusteringJob`` modes."""

from __future__ import annotations

import datetime as dt
import logging
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping

from .errors import ConfigError, PlanError
from .plan.avro_plan import StoredPlan
from .plan.schedule import schedule
from .plugins import StrategyRegistry, default_registry
from .table import HudiTable, State, load_table

log = logging.getLogger(__name__)
Mode = Literal["schedule", "execute", "scheduleAndExecute"]
MODES = ("schedule", "execute", "scheduleAndExecute")


@dataclass(frozen=True)
class PartitionEffect:
    partition: str
    files_before: int
    files_after: int
    bytes_to_rewrite: int


@dataclass(frozen=True)
class ClusterResult:
    """What a run did (or, on a dry run, would do)."""

    instant_time: str | None
    mode: str
    dry_run: bool
    input_file_groups: int = 0
    output_files: int = 0
    bytes_rewritten: int = 0
    groups: tuple[dict, ...] = ()
    partitions: tuple[PartitionEffect, ...] = ()
    rolled_back: tuple[str, ...] = ()
    completed_file: str | None = None
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "instant_time": self.instant_time, "mode": self.mode, "dry_run": self.dry_run,
            "input_file_groups": self.input_file_groups, "output_files": self.output_files,
            "bytes_rewritten": self.bytes_rewritten, "groups": list(self.groups),
            "partitions": [p.__dict__ for p in self.partitions], "rolled_back": list(self.rolled_back),
            "message": self.message,
        }  # fmt: skip


def _predicted(groups: list[dict]) -> tuple[PartitionEffect, ...]:
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for group in groups:
        effect = per[group["partition"]]
        effect[0] += len(group["input_file_ids"])
        effect[1] += group["output_file_count"]
        effect[2] += group["input_bytes"]
    return tuple(PartitionEffect(p, *v) for p, v in sorted(per.items()))


def _plan_groups_json(plan: StoredPlan, table: HudiTable) -> list[dict]:
    storage = table.storage
    return [
        {
            "partition": g.partition, "input_file_ids": list(g.file_ids),
            "input_bytes": sum(storage.info(s.base_file).size for s in g.slices if s.base_file and storage.exists(s.base_file)),
            "output_file_count": g.num_output_file_groups,
        }
        for g in plan.groups
    ]  # fmt: skip


def _pending_clustering(table: HudiTable) -> list:
    return list(table.timeline.pending_clustering)


def _age_ms(instant_time: str) -> float:
    started = dt.datetime.strptime(instant_time[:14], "%Y%m%d%H%M%S")
    return (dt.datetime.now() - started).total_seconds() * 1000


def cluster(
    base_path: str | Path,
    mode: Mode = "scheduleAndExecute",
    options: Mapping[str, Any] | None = None,
    spark=None,
    *,
    instant_time: str | None = None,
    props_file: str | Path | None = None,
    hoodie_conf: tuple[str, ...] | list[str] = (),
    parallelism: int | None = None,
    spark_master: str | None = None,
    retry_last_failed_clustering_job: bool = False,
    job_max_processing_time_ms: int = 0,
    dry_run: bool = False,
    registry: StrategyRegistry | None = None,
) -> ClusterResult:
    """Schedule and/or execute clustering on the Hudi table at ``base_path``.

    ``options`` are Hudi keys (``hoodie.clustering.*``...) and take precedence over ``hoodie_conf`` entries,
    which take precedence over ``props_file``, as in Hudi. Raises :class:`~hudi_cluster_core.errors.HudiClusterError`
    on bad input, before anything is written.
    """
    from .config import load_config

    if mode not in MODES:
        raise ConfigError(f"--mode {mode!r}: accepted: {', '.join(MODES)}")
    registry = registry or default_registry()  # first: plugins' params models declare their own keys
    config = load_config(props_file, list(hoodie_conf), dict(options or {}))
    table = load_table(base_path)
    rolled_back: list[str] = []
    target: str | None = None

    if mode in ("execute", "scheduleAndExecute"):
        pending = _pending_clustering(table)
        if mode == "execute":
            target = instant_time or (pending[0].time if pending else None)
            if target is None:
                return ClusterResult(None, mode, dry_run, message="no pending clustering to execute")
        elif retry_last_failed_clustering_job:
            stale = [i for i in pending if _age_ms(i.time) >= job_max_processing_time_ms]
            target = stale[0].time if stale else None
        elif not dry_run:
            for instant in pending:
                if instant.state is State.INFLIGHT:
                    from .run.rollback import rollback_clustering

                    log.info("rolling back failed clustering %s (use --retry-last-failed-clustering-job to re-run it)", instant.time)
                    rollback_clustering(table, instant.time, keep_plan=False)
                    rolled_back.append(instant.time)
            table = table.reload()
        if target is None and mode == "scheduleAndExecute":
            # a plan scheduled earlier and never started is work to do, not a failure: run it before planning anew
            requested = [i for i in _pending_clustering(table) if i.state is State.REQUESTED]
            target = requested[0].time if requested else None

    if target is None and mode in ("schedule", "scheduleAndExecute"):
        scheduled = schedule(table, config, registry, instant_time=instant_time, dry_run=dry_run or False)
        if scheduled is None:
            return ClusterResult(None, mode, dry_run, rolled_back=tuple(rolled_back), message="nothing to cluster")
        target = scheduled.instant_time
        if dry_run:
            from .plan.avro_plan import read_plan

            plan = read_plan(table.storage, target, scheduled.record, source="<dry-run plan>")
            return _plan_result(table, plan, mode, True, rolled_back, "dry run: nothing written")
        table = table.reload()
        if mode == "schedule":
            return _plan_result(table, _load(table, target), mode, False, rolled_back, "scheduled")

    plan = _load(table, target)
    if dry_run:
        return _plan_result(table, plan, mode, True, rolled_back, "dry run: nothing written")
    from .run.execute import execute_plan
    from .run.spark import get_spark

    spark = spark or get_spark(spark_master)
    slots = parallelism or int(spark.sparkContext.defaultParallelism)
    name, outcomes = execute_plan(table, plan, config, registry, spark, parallelism=max(1, slots))
    groups = [o.to_json() for o in outcomes]
    effects = tuple(
        PartitionEffect(p, sum(len(o.input_file_ids) for o in outcomes if o.partition == p),
                        sum(len(o.output_files) for o in outcomes if o.partition == p),
                        sum(o.input_bytes for o in outcomes if o.partition == p))
        for p in sorted({o.partition for o in outcomes})
    )  # fmt: skip
    return ClusterResult(
        target, mode, False, sum(len(o.input_file_ids) for o in outcomes), sum(len(o.output_files) for o in outcomes),
        sum(o.input_bytes for o in outcomes), tuple(groups), effects, tuple(rolled_back), name, "completed",
    )  # fmt: skip


def _load(table: HudiTable, instant_time: str) -> StoredPlan:
    from .run.execute import load_stored_plan

    return load_stored_plan(table, instant_time)


def _plan_result(table, plan: StoredPlan, mode, dry_run, rolled_back, message) -> ClusterResult:
    groups = _plan_groups_json(plan, table)
    return ClusterResult(
        plan.instant_time, mode, dry_run, sum(len(g["input_file_ids"]) for g in groups),
        sum(g["output_file_count"] for g in groups), sum(g["input_bytes"] for g in groups), tuple(groups),
        _predicted(groups), tuple(rolled_back), None, message,
    )  # fmt: skip


__all__ = ["ClusterResult", "PartitionEffect", "cluster", "PlanError"]
