"""What ``cluster()`` returns, and the figures that fill it: a plan's effect as the output estimate predicts it
(``schedule``, a dry run), an execution's as its committed write stats measure it, and the instants of a
partial-progress run added up. ``api`` decides what runs (modes, claims, recovery, rolling a failed run back);
this module only says what a plan would do or what a run did.
"""

from __future__ import annotations

import json
import logging
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

from .plan.avro_plan import StoredPlan
from .process_phases import command_phases, since_process_start
from .run_metrics import FileSizes, durations, input_file_sizes, phase_seconds, result_dict, summary
from .table import HudiTable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PartitionEffect:
    partition: str
    files_before: int
    files_after: int
    bytes_to_rewrite: int  # the input files' bytes (read by the run)
    bytes_written: int | None = None  # what the run wrote (None on a dry run)


@dataclass(frozen=True)
class ClusterResult:
    """What a run did (or, on a dry run, would do). ``to_dict()`` is the ``--json`` contract (README: "Run
    metrics"), ``to_json()`` the same as a JSON string, ``summary()`` the text ``hudi-cluster run`` prints."""

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
    files_added: FileSizes = FileSizes()  # written (a dry run: the planned count, sizes None)
    files_removed: FileSizes = FileSizes()  # the base and log files of the replaced file groups
    partitions_clustered: int = 0
    files_considered: int = 0  # file groups in the table's latest view when the run read it
    files_skipped: int = 0  # of those, the ones the plan leaves alone
    rows_read: int | None = None  # by the run's tasks (None on a dry run)
    rows_written: int | None = None  # the committed write stats' numWrites
    bytes_read: int = 0  # the input files' bytes
    bytes_written: int | None = None  # the committed write stats' fileSizeInBytes
    duration_s: Mapping[str, float] = field(default_factory=durations)  # plan, spark, commit, total
    # per sort column, files a point / 1% range query opens in the partitions rewritten: [before, after]
    # (predicted for a plan, measured after a run; docs/layout-report.md)
    files_per_query: tuple[dict, ...] = ()
    # where the time went, start-up included: interpreter, imports, ..., first_task, tasks, commit (run_metrics)
    phases_s: Mapping[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return result_dict(self)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def summary(self) -> str:
        return summary(self)


def _predicted(groups: list[dict]) -> tuple[PartitionEffect, ...]:
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for group in groups:
        effect = per[group["partition"]]
        effect[0] += len(group["input_file_ids"])
        effect[1] += group["output_file_count"]
        effect[2] += group["input_bytes"]
    return tuple(PartitionEffect(p, *v) for p, v in sorted(per.items()))


def _plan_groups_json(plan: StoredPlan, table: HudiTable, estimates: list) -> list[dict]:
    storage = table.storage

    def base_bytes(path: str) -> int:  # the size the plan's listing had; a request to storage only without one
        if path in plan.file_sizes:
            return plan.file_sizes[path]
        return storage.size(path) if not plan.file_sizes and storage.exists(path) else 0

    return [
        {
            "partition": g.partition, "input_file_ids": list(g.file_ids),
            "input_bytes": sum(base_bytes(s.base_file) for s in g.slices if s.base_file),
            "output_file_count": g.num_output_file_groups,
            "input_log_files": e.log_files, "predicted_output_files": e.files, "predicted_output_bytes": e.bytes,
        }
        for g, e in zip(plan.groups, estimates)
    ]  # fmt: skip


def plan_result(table, plan: StoredPlan, mode, dry_run, rolled_back, message, started: float, config,
                 registry) -> ClusterResult:
    """A plan's effect, before anything is executed: what it replaces, and the output files and bytes the one
    estimate predicts (the estimate its numOutputFileGroups came from)."""
    from .run.execute import plan_estimates

    layout = config.layout_optimize_strategy
    estimates, in_effect = plan_estimates(table, plan, config, registry)
    groups = _plan_groups_json(plan, table, estimates)
    message = f"{message}; {in_effect}" if dry_run else message
    effects = _predicted(groups)
    removed = FileSizes.of(input_file_sizes(table, plan))
    considered = len(table.view().latest_file_slices())
    inputs = sum(len(g["input_file_ids"]) for g in groups)
    elapsed = time.monotonic() - started
    steps = _command_steps(started)
    return ClusterResult(
        plan.instant_time, mode, dry_run, inputs, sum(g["output_file_count"] for g in groups),
        sum(g["input_bytes"] for g in groups), tuple(groups), effects, tuple(rolled_back), None, message,
        files_added=FileSizes(sum(g["output_file_count"] for g in groups)), files_removed=removed,
        partitions_clustered=len(effects), files_considered=considered, files_skipped=max(0, considered - inputs),
        bytes_read=removed.total_bytes or 0, duration_s=durations(plan=elapsed, total=elapsed),
        files_per_query=tuple(q.to_json() for q in _figures(_predicted_files_per_query, table, plan, layout)),
        phases_s=phase_seconds(**steps, plan=elapsed, since_process_start=since_process_start(time.time()) if steps else None),
    )  # fmt: skip


def executed_result(table, plan, config, registry, spark, parallelism, heartbeat, rolled_back, mode,
                    timing) -> ClusterResult:  # fmt: skip
    """Runs ``plan`` (``run.execute``) and says what it did: the figures of written files and rows are the committed write stats'.
    ``timing``: when the run started and finished planning (``time.monotonic()``), and the session's start (s)."""
    from .run.execute import execute_plan
    from .run.spark import engine_of

    predicted = _figures(_predicted_files_per_query, table, plan, config.layout_optimize_strategy)
    removed = FileSizes.of(input_file_sizes(table, plan))  # before the commit marks them replaced
    considered = len(table.view().latest_file_slices())
    slots = parallelism or engine_of(spark).cores
    phases: dict[str, float] = {}
    name, outcomes = execute_plan(table, plan, config, registry, spark, parallelism=max(1, slots), heartbeat=heartbeat,
                                  phases=phases)  # fmt: skip
    groups = [o.to_json() for o in outcomes]
    effects = tuple(
        PartitionEffect(p, sum(len(o.input_file_ids) for o in outcomes if o.partition == p),
                        sum(len(o.output_files) for o in outcomes if o.partition == p),
                        sum(o.input_bytes for o in outcomes if o.partition == p),
                        sum(o.output_bytes for o in outcomes if o.partition == p))
        for p in sorted({o.partition for o in outcomes})
    )  # fmt: skip
    added = FileSizes.of(size for o in outcomes for size in o.output_file_bytes)
    inputs = sum(len(o.input_file_ids) for o in outcomes)
    took = durations(plan=timing["planned"] - timing["started"], spark=timing["session_wait"] + phases.get("spark", 0.0),
                     commit=phases.get("commit", 0.0), total=time.monotonic() - timing["started"])  # fmt: skip
    steps = _command_steps(timing["started"])
    phases_s = phase_seconds(
        **steps, plan=took["plan"], session_start=timing["session"], session_wait=timing["session_wait"],
        first_task=phases.get("first_task"), tasks=phases.get("spark"), commit=phases.get("commit"),
        metadata_table=phases.get("metadata_table"),
        since_process_start=since_process_start(time.time()) if steps else None,
    )  # fmt: skip
    return ClusterResult(
        plan.instant_time, mode, False, inputs, sum(len(o.output_files) for o in outcomes),
        sum(o.input_bytes for o in outcomes), tuple(groups), effects, tuple(rolled_back), name, "completed",
        files_added=added, files_removed=removed, partitions_clustered=len(effects), files_considered=considered,
        files_skipped=max(0, considered - inputs), rows_read=sum(o.rows_read for o in outcomes),
        rows_written=sum(o.rows for o in outcomes), bytes_read=removed.total_bytes or 0,
        bytes_written=added.total_bytes or 0, duration_s=took,
        files_per_query=tuple(q.to_json() for q in _measured_or_predicted(predicted, table, plan)), phases_s=phases_s,
    )  # fmt: skip


def _command_steps(started: float) -> dict[str, float]:
    """The command line's start-up phases before a run that began at ``started`` (``time.monotonic()``)."""
    return command_phases(time.time() - (time.monotonic() - started))


def _figures(compute, *args):
    """Files-per-query figures, or none when a footer can't be read: a figure never fails a plan or a run."""
    try:
        return compute(*args)
    except (OSError, ValueError, KeyError, TypeError) as exc:  # pyarrow's invalid-file errors are ValueErrors
        log.warning("files per query not computed (%s)", " ".join(str(exc).split())[:300])
        return []


def _predicted_files_per_query(table, plan, layout):
    """The dry run's files per query after the plan, the curve layouts simulated with the writer's own curve."""
    from .report.plan_effect import predicted_files_per_query
    from .run.curve_prediction import curve_order

    return predicted_files_per_query(table, plan, layout, curve_order(table, plan, layout))


def _measured_or_predicted(predicted, table, plan):
    """Files per query after the run, measured on the new files; the prediction if their footers can't be read (the
    run is committed)."""
    from .report.plan_effect import measured_files_per_query

    return _figures(measured_files_per_query, predicted, table, plan) or predicted


def combined_result(done: Sequence[ClusterResult], started: float) -> ClusterResult:
    """The instants of one partial-progress run (``done[0]`` the first) as one result: their figures added up."""
    first = done[0]
    if len(done) == 1:
        return first
    return replace(
        first, input_file_groups=sum(r.input_file_groups for r in done), output_files=sum(r.output_files for r in done),
        bytes_rewritten=sum(r.bytes_rewritten for r in done), groups=tuple(g for r in done for g in r.groups),
        partitions=tuple(p for r in done for p in r.partitions),
        message=f"completed {len(done)} instants (partial progress): {', '.join(str(r.instant_time) for r in done)}",
        files_added=FileSizes.combined(r.files_added for r in done),
        files_removed=FileSizes.combined(r.files_removed for r in done),
        partitions_clustered=len({p.partition for r in done for p in r.partitions}),
        files_skipped=max(0, first.files_considered - sum(r.input_file_groups for r in done)),
        rows_read=sum(r.rows_read or 0 for r in done), rows_written=sum(r.rows_written or 0 for r in done),
        bytes_read=sum(r.bytes_read for r in done), bytes_written=sum(r.bytes_written or 0 for r in done),
        duration_s={**first.duration_s, "total": time.monotonic() - started},
    )  # fmt: skip
