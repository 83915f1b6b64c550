"""The Python API: ``cluster()``, a drop-in for Hudi's ``HoodieClusteringJob`` modes.

This module decides what runs: the mode, which pending plan is claimed, recovery first, a failed run's instant
rolled back. What a call returns, and the figures in it, is :mod:`.cluster_result`'s (its names are this
module's too: ``ClusterResult``, ``PartitionEffect``).
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, Mapping

from . import clock, interrupts
from .cluster_result import ClusterResult, PartitionEffect, combined_result, executed_result, plan_result
from .config import load_config
from .errors import ConfigError, HudiClusterError, Interrupted, PlanError, RunFailed, WriteConflict
from .plan.avro_plan import StoredPlan, planned_file_sizes, read_plan
from .plan.schedule import schedule
from .plugins import StrategyRegistry, default_registry
from .run.local_pool import LocalPool, local_cores
from .run.recovery import Ownership, claim, free_pending, recover
from .run.session_start import start_in_background
from .table import HudiTable, State, load_table
from .table.checks import check_clusterable
from .table.lock_provider import check_commit_safety, lock_file_for, use_lock_file
from .table.ownership import timeline_lock
from .table.timeline import retry_when_timeline_changes

log = logging.getLogger(__name__)
Mode = Literal["schedule", "execute", "scheduleAndExecute", "purge_pending_instant"]
MODES: tuple[Mode, ...] = ("schedule", "execute", "scheduleAndExecute", "purge_pending_instant")


def _age_ms(instant_time: str) -> float:
    started = dt.datetime.strptime(instant_time[:14], "%Y%m%d%H%M%S")
    return (clock.now() - started).total_seconds() * 1000


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
    spark_memory: str | None = None,
    spark_conf: tuple[str, ...] | list[str] = (),
    retry_last_failed_clustering_job: bool = False,
    job_max_processing_time_ms: int = 0,
    dry_run: bool = False,
    keep_failed_plan: bool = False,
    registry: StrategyRegistry | None = None,
    spark_in_background: bool = False,
    engine: str | None = None,
) -> ClusterResult:
    """Schedule and/or execute clustering on the Hudi table at ``base_path``.

    ``options`` are Hudi keys (``hoodie.clustering.*``...) and take precedence over ``hoodie_conf`` entries,
    which take precedence over ``props_file``, as in Hudi. Raises :class:`~hudi_cluster_core.errors.HudiClusterError`
    on bad input, before anything is written. A run that fails once it started rolls its instant back before it
    raises (``keep_failed_plan`` keeps the plan for a retry); instants other live runs own are never touched.

    ``spark_memory``, ``parallelism`` and ``spark_conf`` (``KEY=VALUE``) become Spark settings of the session this
    builds (``run.spark_settings``); one that cannot apply to a session already running is refused up front.

    A timeline file that vanishes between listing and reading (Hudi's archival, or a rollback by a writer beside
    us) makes a ``schedule`` or ``scheduleAndExecute`` start again from a fresh read of the table (up to
    ``TIMELINE_ATTEMPTS`` times); the failed attempt rolled its own instant back first.

    ``spark_in_background``: a run that may execute and has no session (``spark=None``, no SparkContext in the
    process) starts it in a thread while it plans (``run.session_start``; ``hudi-cluster run`` does); a run that
    ends without executing leaves it, once up, as the process's session, as an executed run does.

    ``engine``: where the groups' tasks run: ``spark``, ``local`` (a pool of this machine's processes, no JVM:
    ``run.local_pool``) or ``auto`` (the default, else ``HUDI_CLUSTER_ENGINE``): local where this call would
    build a local Spark session of its own and no Spark setting is asked for.
    """
    canonical = _canonical_mode(mode)
    may_execute = canonical in ("execute", "scheduleAndExecute") and not dry_run
    cores = local_cores(engine, spark_master, spark_memory, spark_conf, spark_given=spark is not None)
    pool = LocalPool(cores) if cores is not None else None
    if pool is not None and spark_in_background and may_execute:
        pool.begin()  # the fork server imports the tasks' modules while this process plans
    starting = start_in_background(spark_master, spark_memory, parallelism, spark_conf) if (
        spark is None and pool is None and spark_in_background and may_execute) else None  # fmt: skip

    def attempt() -> ClusterResult:
        return _cluster(
            base_path, canonical, options, spark, instant_time=instant_time, props_file=props_file,
            hoodie_conf=hoodie_conf, parallelism=parallelism, spark_master=spark_master, spark_memory=spark_memory,
            spark_conf=spark_conf, retry_last_failed_clustering_job=retry_last_failed_clustering_job,
            job_max_processing_time_ms=job_max_processing_time_ms, dry_run=dry_run, keep_failed_plan=keep_failed_plan,
            registry=registry, starting=starting, pool=pool,
        )  # fmt: skip

    try:
        if canonical in ("schedule", "scheduleAndExecute"):
            return retry_when_timeline_changes(attempt, "clustering")
        return attempt()
    finally:
        if starting is not None:
            starting.close()


def _cluster(
    base_path: str | Path,
    mode: Mode,
    options: Mapping[str, Any] | None,
    spark,
    *,
    instant_time: str | None,
    props_file: str | Path | None,
    hoodie_conf: tuple[str, ...] | list[str],
    parallelism: int | None,
    spark_master: str | None,
    spark_memory: str | None,
    spark_conf: tuple[str, ...] | list[str],
    retry_last_failed_clustering_job: bool,
    job_max_processing_time_ms: int,
    dry_run: bool,
    keep_failed_plan: bool,
    registry: StrategyRegistry | None,
    starting=None,
    pool: LocalPool | None = None,
) -> ClusterResult:
    from .run.spark_settings import check_parallelism, session_conf

    started = time.monotonic()
    # a Spark flag that cannot apply fails before anything is written (only a run that executes builds a session;
    # a local run builds none, and imports no Spark)
    check_parallelism(parallelism)
    settings = session_conf(spark_master, spark_memory, parallelism, spark_conf) if spark is None and pool is None else {}
    if spark is not None and (spark_memory or spark_conf or spark_master):
        raise ConfigError("spark_master, spark_memory and spark_conf apply to a session this call builds; "
                          "it was given one (spark=): set them where that session is built")  # fmt: skip
    registry = registry or default_registry()  # first: plugins' params models declare their own keys
    config = load_config(props_file, list(hoodie_conf), dict(options or {}))  # every key checked: nothing written yet
    table = load_table(base_path, config.raw)  # the store's settings are among the job's keys
    ownership = Ownership.from_config(config)
    # Hudi writers beside us (OCC) take the lock their provider names: every timeline transition of ours does too
    lock = lock_file_for(table.storage, config.raw)
    if not dry_run and mode != "purge_pending_instant":
        check_commit_safety(table.storage, lock)  # before anything is written: never "check, then write"
    use_lock_file(table.storage, lock)
    if mode == "purge_pending_instant":
        return _purge(table, instant_time, ownership, dry_run)
    check_clusterable(table, config.raw)  # a layout we would break (not parquet, a simple bucket index): refused
    rolled_back: list[str] = []
    if mode != "schedule" and not dry_run:
        rolled_back = recover(table, ownership, keep_plans=retry_last_failed_clustering_job)
        table = table.reload()
    target, heartbeat = None, None
    if mode == "execute":
        target = instant_time or next((i.time for i in free_pending(table, ownership)), None)
        if target is None:
            return ClusterResult(None, mode, dry_run, rolled_back=tuple(rolled_back),
                                 message="no pending clustering to execute")  # fmt: skip
        _load(table, target)  # validated before anything is written
        heartbeat = None if dry_run else claim(table, target, ownership)
    elif mode == "scheduleAndExecute":
        target, heartbeat = _claim_pending(
            table, ownership, dry_run, retry_last_failed_clustering_job, job_max_processing_time_ms
        )

    try:  # from here on this run may own an instant: whatever fails, it is rolled back before we return
        if target is None:
            from .sort.curves import curve_sort_indices  # the sort engine, only when a plan is made
            from .write.footer_size import column_chunk_bytes

            with timeline_lock(table.storage, ownership.wait_ms):  # plan and write it in one step: no overlap
                table = table.reload()
                # the writer's row order and bytes, handed down: the plan's file counts are estimated as it writes
                scheduled = schedule(table, config, registry, instant_time=instant_time, dry_run=dry_run,
                                     row_order=curve_sort_indices, row_bytes=column_chunk_bytes)  # fmt: skip
                if scheduled is not None and scheduled.written and mode == "scheduleAndExecute":
                    heartbeat = ownership.heartbeat(table, scheduled.instant_time).start()
            if scheduled is None:
                return ClusterResult(None, mode, dry_run, rolled_back=tuple(rolled_back), message="nothing to cluster")
            target = scheduled.instant_time
            if dry_run or mode == "schedule":  # the plan as made (from this run's listing), not read back
                source = "<dry-run plan>" if dry_run else f"the plan of {target}, as scheduled"
                plan = read_plan(table.storage, target, scheduled.record, source=source)
                plan = replace(plan, file_sizes=planned_file_sizes(table.storage, list(scheduled.groups)))
                parts = f" (partial progress: also {', '.join(scheduled.parts)})" if scheduled.parts else ""
                message = "dry run: nothing written" if dry_run else "scheduled" + parts
                return plan_result(table, plan, mode, dry_run, rolled_back, message, started, config, registry)
        # the plan's files were listed when it was checked (or planned, in this run): not listed again unless the
        # timeline moved since (instants of this run's own aside)
        table = table.reload(own_instants=(target,))
        plan = _load(table, target)
        if dry_run:
            return plan_result(table, plan, mode, True, rolled_back, "dry run: nothing written", started, config,
                                registry)
        planned = time.monotonic()
        if pool is not None:  # a local run: no JVM; the tasks' processes fork from a server begun early
            spark = pool.begin()
        spark = spark or _session(spark_master, settings, starting)
        session_wait = time.monotonic() - planned
        session = starting.seconds if starting is not None else session_wait
        timing = {"started": started, "planned": planned, "session": session, "session_wait": session_wait}
        result = executed_result(table, plan, config, registry, spark, parallelism, heartbeat, rolled_back, mode, timing)
        if mode != "scheduleAndExecute" or not config.partial_progress_max_groups:
            return result
    except BaseException as failure:
        if heartbeat is None:
            raise
        # a plan whose file groups a writer changed can never commit: it is dropped even with --keep-failed-plan
        keep = keep_failed_plan and not isinstance(failure, WriteConflict)
        _roll_back_failed(table, target, heartbeat, ownership, failure, keep_plan=keep)
        raise  # not reached: _roll_back_failed raises
    finally:
        if heartbeat is not None:
            heartbeat.stop()
    return _execute_parts(table, config, registry, spark, parallelism, ownership, result, keep_failed_plan, started)


def _execute_parts(table, config, registry, spark, parallelism, ownership, first: ClusterResult,
                   keep_failed_plan: bool, started: float) -> ClusterResult:  # fmt: skip
    """Partial progress (``hoodie.clustering.partial.progress.max.groups``): the plan's other instants, and any
    other plan scheduled and never started, executed one after another, each claimed and committed on its own: a
    crash loses at most the instant running. The result adds them up."""
    from .failpoints import failpoint

    done = [first]
    while True:
        failpoint("after-partial-instant")  # tests: a crash between two committed instants
        table = table.reload()
        waiting = [i.time for i in free_pending(table, ownership) if i.state is State.REQUESTED]
        if not waiting:
            break
        try:
            heartbeat = claim(table, waiting[0], ownership)
        except PlanError as busy:  # taken by another run since we looked: it does that one
            log.info("%s", busy)
            continue
        try:
            plan = _load(table, waiting[0])
            now = time.monotonic()
            timing = {"started": now, "planned": now, "session": 0.0, "session_wait": 0.0}
            done.append(executed_result(table, plan, config, registry, spark, parallelism, heartbeat, (), first.mode,
                                        timing))  # fmt: skip
        except BaseException as failure:
            keep = keep_failed_plan and not isinstance(failure, WriteConflict)
            _roll_back_failed(table, waiting[0], heartbeat, ownership, failure, keep_plan=keep)
            raise
        finally:
            heartbeat.stop()
    return combined_result(done, started)


def _claim_pending(table, ownership, dry_run: bool, retry: bool, max_processing_ms: int):
    """The pending plan a ``scheduleAndExecute`` runs before planning anew, claimed: with ``retry``, the oldest
    failed one older than ``max_processing_ms``; otherwise one scheduled earlier and never started (work to do,
    not a failure). Plans other live runs own are skipped."""
    free = free_pending(table, ownership)
    if retry:
        candidates = [i for i in free if _age_ms(i.time) >= max_processing_ms]
    else:
        candidates = [i for i in free if i.state is State.REQUESTED]
    for candidate in candidates:
        _load(table, candidate.time)  # validated before anything is written
        if dry_run:
            return candidate.time, None
        try:
            return candidate.time, claim(table, candidate.time, ownership)
        except PlanError as busy:  # taken or finished by another run since we looked
            log.info("%s", busy)
    return None, None


def _canonical_mode(mode: str) -> Mode:
    canonical: Mode | None = {m.lower(): m for m in MODES}.get(str(mode).lower())
    if canonical is None:
        raise ConfigError(f"--mode {mode!r}: accepted: {', '.join(MODES)} (any case)")
    return canonical


def _session(master: str | None, settings: dict[str, str], starting=None):
    """The run's session: the one started in the background (``starting``), else one started now."""
    from .run.spark import get_spark
    from .run.spark_settings import session_start_problem

    try:
        return starting.result() if starting is not None else get_spark(master, conf=settings)
    except HudiClusterError:
        raise
    except Exception as exc:  # Py4J's error with a Java stack: the cause in one line (a Spark setting is input)
        raise ConfigError(session_start_problem(exc)) from exc


def _roll_back_failed(table, instant_time, heartbeat, ownership, failure: BaseException, *, keep_plan: bool):
    """A run that fails with an error it can see rolls its own instant back before it exits, and says so."""
    from .run.rollback import TakenOver, rollback_clustering

    note = "kept for --retry-last-failed-clustering-job" if keep_plan else "its plan dropped"
    done = f"clustering {instant_time} rolled back ({note})"
    try:  # the heartbeat is checked under the rollback's lock: a run may claim the instant until that lock is ours
        rollback_clustering(table, instant_time, keep_plan=keep_plan, wait_ms=ownership.wait_ms, owner=heartbeat)
    except TakenOver:
        done = f"clustering {instant_time} left to the run that took it over"
    except PlanError as exc:  # completed after all (e.g. failed after the commit file): nothing to undo
        done = str(exc)
    except BaseException as exc:  # noqa: BLE001 - say so; the next run recovers it
        log.debug("rollback of %s failed", instant_time, exc_info=True)
        done = f"clustering {instant_time} not rolled back ({exc}); the next run will"
    if isinstance(failure, KeyboardInterrupt) or interrupts.requested():  # a JVM killed by the same signal too
        raise Interrupted(f"interrupted: {done}") from None
    if isinstance(failure, HudiClusterError):
        error = type(failure)(f"{failure}; {done}")
        error.exit_code = failure.exit_code
        raise error from None
    log.debug("clustering %s failed", instant_time, exc_info=failure)
    text = (str(failure).strip().splitlines() or [type(failure).__name__])[-1]
    raise RunFailed(f"clustering {instant_time} failed: {type(failure).__name__}: {text[:500]}; {done}") from None


def _purge(table: HudiTable, instant_time: str | None, ownership: Ownership, dry_run: bool) -> ClusterResult:
    """``--mode purge_pending_instant``: remove a pending clustering plan (and its partial files) on request."""
    from .run.rollback import rollback_clustering

    pending = [i.time for i in table.timeline.pending_clustering]
    if not instant_time:
        raise ConfigError(
            "--mode purge_pending_instant needs --instant-time; pending clustering: " + (", ".join(pending) or "none")
        )
    if dry_run:
        return ClusterResult(instant_time, "purge_pending_instant", True, message="dry run: nothing written")
    heartbeat = claim(table, instant_time, ownership)
    try:
        rollback = rollback_clustering(table, instant_time, keep_plan=False, wait_ms=ownership.wait_ms,
                                       owner=heartbeat)  # fmt: skip
    finally:
        heartbeat.stop()
    return ClusterResult(instant_time, "purge_pending_instant", False, rolled_back=(instant_time,),
                         message=f"purged (rollback {rollback})")  # fmt: skip


def _load(table: HudiTable, instant_time: str) -> StoredPlan:
    from .run.execute import load_stored_plan

    return load_stored_plan(table, instant_time)


__all__ = ["ClusterResult", "PartitionEffect", "cluster", "PlanError"]
