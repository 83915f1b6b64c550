"""The writer's Python API: ``upsert()``, the COW upsert on Spark, then inline clustering when configured.

The writer itself (``write.upsert``) neither plans nor runs clustering; this entry point gives it what only the
upper layers know:

* **the update strategy** (``hoodie.clustering.updates.strategy``, a short name or Hudi's Java class name,
  resolved by the plugin registry; Hudi's default, reject): consulted when the batch updates file groups under
  pending clustering. ``reject`` raises :class:`~hudi_cluster_core.errors.UpdateRejected` before anything is
  written, naming the file groups; ``allow`` writes, and the clustering finds the conflict at its commit (the
  writer wins, ``run.conflicts``); ``duplicate`` is for consistent-bucket writers: with
  ``hoodie.index.type=BUCKET`` and ``hoodie.index.bucket.engine=CONSISTENT_HASHING`` the upsert is the MOR log
  writer (``write.bucket_upsert``), routed by the consistent-bucket plugin, which writes such records to their
  bucket and to their bucket after the clustering; the BLOOM-index writer refuses it with one line, before
  anything is written;
* **Spark**: the confirm step of the bloom index and each file group's rewrite run as Spark tasks (one per unit,
  Arrow in the Python workers); the session starts only when there is work, so bad input fails fast;
* **inline clustering** after the commit, as Hudi's writer does it: ``hoodie.clustering.inline=true`` schedules
  and executes once ``hoodie.clustering.inline.max.commits`` commits completed since the last clustering;
  ``hoodie.clustering.schedule.inline=true`` only schedules (a separate job executes), once
  ``hoodie.clustering.async.max.commits`` did (Hudi's ``ClusteringPlanActionExecutor`` reads that key for it).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Callable

import pyarrow as pa
import pyarrow.parquet as pq

from .config import catalogue
from .api import Mode, cluster
from .errors import ConfigError, PlanError, TableError, UpdateRejected
from .mdt.partitions import disabled_by_config
from .plan.model import UpdateContext
from .plugins import StrategyRegistry, call_hook, default_registry
from .io.storage import open_storage
from .table import FileGroupId, HudiTable, load_table
from .table.lock_provider import check_commit_safety, lock_file_for, use_lock_file
from .table.timeline import retry_when_timeline_changes

log = logging.getLogger(__name__)


def _strategy_policy(base_path, registry: StrategyRegistry, config, *, bucket_index: bool = False
                     ) -> Callable[[frozenset[FileGroupId], Mapping[FileGroupId, str]], str]:  # fmt: skip
    """The writer's ``on_pending_clustering``: returns ``allow`` or ``duplicate`` (bucket-index writers only), or
    raises (reject)."""
    strategy = registry.resolve("update", config.updates_strategy, config_key=catalogue.UPDATES_STRATEGY)

    def consult(incoming: frozenset[FileGroupId], pending: Mapping[FileGroupId, str]) -> str:
        decision = call_hook(strategy, "update_decide", context=UpdateContext(incoming, dict(pending), config))
        if decision.action == "allow":
            if decision.file_groups and config.rollback_pending_on_conflict:
                _roll_back_clusterings(base_path, config, sorted({pending[g] for g in decision.file_groups if g in pending}))
            elif decision.file_groups:
                log.warning("updating %d file group(s) under pending clustering (%s allows it): the clustering will "
                            "yield to this write at its commit", len(decision.file_groups), config.updates_strategy)  # fmt: skip
            return "allow"
        named = ", ".join(f"{g.partition or '(none)'}/{g.file_id}" for g in sorted(decision.file_groups))
        if decision.action == "reject":
            raise UpdateRejected(decision.message or f"{catalogue.UPDATES_STRATEGY}={config.updates_strategy} rejects "
                                 f"updates to file groups under pending clustering: {named}")  # fmt: skip
        if decision.action == "duplicate" and bucket_index:
            log.info("duplicating the records of %d file group(s) under pending clustering into their new buckets",
                     len(decision.file_groups))  # fmt: skip
            return "duplicate"
        raise ConfigError(f"{catalogue.UPDATES_STRATEGY}={config.updates_strategy}: '{decision.action}' applies to "
                          f"consistent-bucket writers; this upsert uses the BLOOM index (file groups: {named}); "
                          "accepted here: reject, allow")  # fmt: skip

    return consult


def _consistent_bucket_index(raw: Mapping[str, str]) -> bool:
    """The writer's keys name Hudi's consistent-hashing bucket index (MOR tables), as Hudi's writer needs them."""
    return (raw.get("hoodie.index.type", "").strip().upper() == "BUCKET"
            and raw.get("hoodie.index.bucket.engine", "").strip().upper() == "CONSISTENT_HASHING")  # fmt: skip


def _bucket_upsert(base_path, rows: pa.Table, raw: dict[str, str], registry: StrategyRegistry, config, run_units) -> dict:
    """The MOR log writer, records routed by the consistent-bucket execution strategy's ``bucket_file_ids``."""
    from .write.bucket_upsert import upsert as write_bucket_upsert

    strategy = registry.resolve("execution", "consistent-bucket", config_key="hoodie.index.bucket.engine")

    def locate(table, partition, record_keys, after_clustering):
        found = call_hook(strategy, "bucket_file_ids", table=table, partition=partition, record_keys=record_keys,
                          settings=raw, after_clustering=after_clustering)  # fmt: skip
        if found is None or len(found) != len(record_keys):
            raise ConfigError(f"execution strategy {strategy.name} does not route records to buckets")
        return list(found)

    consult = _strategy_policy(base_path, registry, config, bucket_index=True)
    return retry_when_timeline_changes(
        lambda: write_bucket_upsert(base_path, rows, options=raw, locate=locate, on_pending_clustering=consult,
                                    storage_options=raw, run_units=run_units), "upsert")  # fmt: skip


def _roll_back_clusterings(base_path, config, instants: list[str]) -> None:
    """``hoodie.clustering.rollback.pending.replacecommit.on.conflict=true`` with an update strategy that allows the
    update: the writer rolls back the pending clusterings of the file groups it updates before it writes, as
    Hudi's writer does. One that completed meanwhile can't be rolled back; the writer then finds its file groups
    replaced at its commit and fails (``write.instant``)."""
    from .run.rollback import rollback_clustering

    for instant in instants:
        log.warning("rolling back pending clustering %s: this write updates its file groups and %s=true", instant,
                    catalogue.ROLLBACK_PENDING_ON_CONFLICT)  # fmt: skip
        try:
            rollback_clustering(load_table(base_path, config.raw), instant, keep_plan=False,
                                wait_ms=config.writer.lock_wait_time_ms)  # fmt: skip
        except PlanError as completed:
            log.warning("%s", completed)


def _take_hudi_lock_too(base_path, raw: dict[str, str]) -> None:
    """With a Hudi lock provider configured (OCC beside Hudi writers), every timeline transition of our writer
    (its instant time, its commit) also takes Hudi's lock, as the clustering's do (``api.cluster``)."""
    try:
        storage = load_table(base_path, raw).storage
    except TableError:  # a table append is about to create: no Hudi writer can be on it yet
        storage = open_storage(base_path, raw)
        check_commit_safety(storage, lock_file_for(storage, raw))  # its first commit must be safe all the same
        return
    lock = lock_file_for(storage, raw)
    check_commit_safety(storage, lock)  # before the writer writes anything
    use_lock_file(storage, lock)


def _spark_runner(spark_or_factory):
    """Units of work as Spark tasks, one per unit; the session is made on first use."""
    state: dict[str, Any] = {}

    def run(units: Sequence[Callable[[], object]]) -> list:
        if not units:
            return []
        if "spark" not in state:
            state["spark"] = spark_or_factory() if callable(spark_or_factory) else spark_or_factory
        context = state["spark"].sparkContext
        # one unit per Spark partition: each task is shipped its own unit only (its rows), in order
        return context.parallelize(list(units), len(units)).map(lambda unit: unit()).collect()

    return run


def commits_since_last_clustering(table: HudiTable) -> int:
    """Completed commits, deltacommits and replacecommits after the newest completed clustering (all, if none),
    as Hudi counts them for ``inline.max.commits``."""
    timeline = table.timeline
    done = {i.time for i in timeline.completed_clustering}
    last = max(done, default="0")
    return sum(1 for i in timeline.completed() if i.time > last and i.time not in done)


def upsert(
    base_path: str | Path, rows: pa.Table, options: Mapping[str, Any] | None = None, spark=None, *,
    props_file: str | Path | None = None, hoodie_conf: Sequence[str] = (), spark_master: str | None = None,
    registry: StrategyRegistry | None = None,
) -> dict:  # fmt: skip
    """Upsert ``rows`` (Arrow) into the COW table at ``base_path``: one ``commit`` (operation UPSERT), then inline
    clustering when configured. ``options`` are Hudi keys (writer, metadata and ``hoodie.clustering.*`` keys),
    over ``hoodie_conf``, over ``props_file``. Returns the writer's summary, with ``clustering`` (the inline
    clustering's result, or None). Bad input raises a HudiClusterError before anything is written."""
    from .config import load_config
    from .write.upsert import upsert as write_upsert

    registry = registry or default_registry()
    config = load_config(props_file, list(hoodie_conf), dict(options or {}))
    raw = {k: str(v) for k, v in config.raw.items()}
    _take_hudi_lock_too(base_path, raw)

    def session():
        from .api import _session

        return _session(spark_master, {})

    if _consistent_bucket_index(raw):
        summary = _bucket_upsert(base_path, rows, raw, registry, config, _spark_runner(spark or session))
        summary["clustering"] = _inline_clustering(base_path, config, raw, spark or session)
        return summary
    consult = _strategy_policy(base_path, registry, config)
    run_units = _spark_runner(spark or session)
    summary = retry_when_timeline_changes(  # Hudi's archival or a rollback beside us; a failed attempt undid itself
        lambda: write_upsert(base_path, rows, options=raw, run_units=run_units, on_pending_clustering=consult,
                             storage_options=raw), "upsert")  # fmt: skip
    summary["clustering"] = _inline_clustering(base_path, config, raw, spark or session)
    return summary


def _inline_clustering(base_path, config, raw: dict[str, str], spark_or_factory) -> dict | None:
    if not (config.inline or config.schedule_inline):
        return None
    table = load_table(base_path, raw)
    needed = config.inline_max_commits if config.inline else config.async_max_commits
    since = commits_since_last_clustering(table)
    if since < needed:
        log.info("inline clustering: %d commit(s) since the last clustering, waiting for %d", since, needed)
        return None
    mode: Mode = "scheduleAndExecute" if config.inline else "schedule"
    spark = None  # scheduling needs no Spark session
    if mode == "scheduleAndExecute":
        spark = spark_or_factory() if callable(spark_or_factory) else spark_or_factory
    result = cluster(base_path, mode, raw, spark=spark)
    log.info("inline clustering (%s): %s", mode, result.message or result.instant_time)
    return result.to_json()


def append_file(base_path, input_path, *, props_file=None, hoodie_conf: Sequence[str] = (), spark_master=None,
                **kwargs) -> dict:  # fmt: skip
    """``hudi-cluster append``: rows from a parquet file as new file groups (``write.append``), then inline
    clustering when the config asks for it, as after an upsert."""
    from .config import load_config
    from .write.append import append

    config = load_config(props_file, list(hoodie_conf), {})
    raw = {k: str(v) for k, v in config.raw.items()}
    _take_hudi_lock_too(base_path, raw)
    summary = append(base_path, pq.read_table(input_path), metadata_enable=config.writer.metadata_enable,
                     disabled_indexes=disabled_by_config(raw), lock_wait_ms=config.writer.lock_wait_time_ms,
                     heartbeat_ms=(config.writer.heartbeat_interval_ms, config.writer.heartbeat_tolerable_misses),
                     **kwargs)  # fmt: skip

    def session():
        from .api import _session

        return _session(spark_master, {})

    summary["clustering"] = _inline_clustering(base_path, config, raw, session)
    return summary


def upsert_file(base_path, input_path, **kwargs) -> dict:
    """``hudi-cluster upsert``: rows from a parquet file."""
    return upsert(base_path, pq.read_table(input_path), **kwargs)
