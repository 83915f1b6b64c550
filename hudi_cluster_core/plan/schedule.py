"""Scheduling: the configured plan strategy picks and groups slices; the plan goes to the timeline."""

from __future__ import annotations

import datetime as dt
import logging
import os
from dataclasses import dataclass, replace

from ..avro import encode_avro
from ..config import catalogue, strategy_params
from ..config.sort_columns import parse_sort_columns
from ..errors import ConfigError, PlanError, PluginError
from ..failpoints import failpoint
from ..io.storage import in_parallel
from ..plugins import StrategyRegistry, call_hook
from ..table import HudiTable, State
from ..table.schema import check_sort_columns_in_schema
from .avro_plan import build_requested_replace_metadata
from .eligibility import select_partitions
from .estimate import RowBytes, RowOrder, bloom_sizing, estimate_slices
from .footer_stats import footer_stats_provider
from .model import PlanContext, PlannedGroup
from .stored_settings import layout_in_effect, settings_to_store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ScheduledPlan:
    instant_time: str
    groups: tuple[PlannedGroup, ...]
    record: dict  # the HoodieRequestedReplaceMetadata written (or that would be written, on a dry run)
    written: bool
    # hoodie.clustering.partial.progress.max.groups: the later instants the plan was split into (this one first)
    parts: tuple[str, ...] = ()


def check_instant_time(table: HudiTable, instant_time: str) -> None:
    if not (instant_time.isdigit() and len(instant_time) in (14, 17)):
        raise ConfigError(f"--instant-time {instant_time!r}: accepted: 17 digits yyyyMMddHHmmssSSS")
    latest = table.timeline.max_timestamp()
    if instant_time.ljust(17, "0") <= latest.ljust(17, "0"):
        raise ConfigError(
            f"--instant-time {instant_time}: must be later than every instant on the timeline (latest: {latest})"
        )


def _check_groups(strategy, eligible: list, groups: list[PlannedGroup]) -> None:
    """The invariants every plan strategy promises, checked before anything reaches the timeline."""
    allowed = {s.group_id for s in eligible}
    seen = set()
    for group in groups:
        for file_slice in group.slices:
            if file_slice.group_id not in allowed:
                raise PluginError(f"plan strategy '{strategy.name}' grouped an ineligible slice {file_slice.group_id}")
            if file_slice.group_id in seen:
                raise PluginError(f"plan strategy '{strategy.name}' put {file_slice.group_id} in two groups")
            seen.add(file_slice.group_id)
        if not group.slices or group.num_output_file_groups < 1:
            raise PluginError(f"plan strategy '{strategy.name}' made an empty group or one with no output files")


def _estimated(table: HudiTable, config, groups: list[PlannedGroup], layout: str,
               order: RowOrder | None, row_bytes: RowBytes | None) -> list[PlannedGroup]:  # fmt: skip
    """Groups sized by the target's rule get the estimate's file count instead: what their rows become, written
    in files of at most the target, footers included (plan/estimate.py; the dry run predicts with it too), sorted
    in ``layout`` by the writer's ``order`` and measured by its ``row_bytes``."""
    bloom = bloom_sizing(config.raw)
    target = config.target_file_max_bytes
    columns = list(parse_sort_columns(config.sort_columns)) if config.sort_columns else []
    codec = config.writer.parquet_compression_codec
    footers = footer_stats_provider(table.storage)  # the strategy's: a footer it read for statistics is not read again

    def estimated(g: PlannedGroup) -> PlannedGroup:
        if not g.sized_by_target:
            return g
        files = estimate_slices(footers, g.slices, target, bloom, columns, codec, layout, order, row_bytes).files
        return replace(g, num_output_file_groups=files)

    # every footer first, as the store reads them best (local files one at a time: Storage.request_threads); then a
    # group's sample per core: read, sorted and compressed by Arrow and libdeflate, outside the GIL
    footers.read_all(s for g in groups if g.sized_by_target for s in g.slices)
    return in_parallel(estimated, groups, os.cpu_count() or 1)


def _layout_written(registry: StrategyRegistry, execution_class: str, raw) -> str:
    """The layout the execution strategy the plan names will write in: the job's setting, else that strategy's
    default (space-curve's ZORDER); a class no installed plugin runs gets the job's setting or Hudi's LINEAR."""
    try:
        named = registry.resolve("execution", execution_class)
    except PluginError:  # executed elsewhere (Apache Hudi): not this scheduler's concern to refuse
        named = None
    return layout_in_effect(named, raw)


def _one_ms_after(instant_time: str) -> str:
    padded = instant_time.ljust(17, "0")
    later = dt.datetime.strptime(padded[:14], "%Y%m%d%H%M%S") + dt.timedelta(milliseconds=int(padded[14:17]) + 1)
    return later.strftime("%Y%m%d%H%M%S%f")[:17]


def _write_requested(table: HudiTable, instant_time: str, data: bytes) -> None:
    """Create the requested plan only if no instant of that time exists: instant times stay unique even beside a
    writer that does not take our timeline lock (an Apache Hudi writer picking the same millisecond)."""
    timeline, storage = table.timeline, table.storage
    path = timeline.path_of(timeline.clustering_file_name(instant_time, State.REQUESTED))
    if not storage.create_exclusive(path, data):
        raise PlanError(f"instant {instant_time} already exists on the timeline ({path}); nothing scheduled")
    clash = [e.name for e in storage.list(timeline.directory) if e.name.startswith((instant_time + ".", instant_time + "_"))
             and e.path != path]  # fmt: skip
    if clash:
        storage.delete_file(path)
        raise PlanError(f"instant {instant_time} was taken by another writer ({clash[0]}); nothing scheduled")


def schedule(
    table: HudiTable, config, registry: StrategyRegistry, *, instant_time: str | None = None, dry_run: bool = False,
    row_order: RowOrder | None = None, row_bytes: RowBytes | None = None,
) -> ScheduledPlan | None:
    """Build a clustering plan and write it as a requested instant; None when nothing is worth clustering.

    ``row_order``: the writer's row order in a layout (the sort engine's, handed in by the driver: this layer
    does not import it); the estimate of a group's files compresses a sample of its rows in that order. Without
    it the sample is sorted linearly, which undercounts a z-order or Hilbert layout's bytes. ``row_bytes``: what
    the writer makes of rows in bytes (``write.footer_size.column_chunk_bytes``, handed in as well); without it no
    sample is taken and a group's rows are estimated at their inputs' bytes."""
    plan_strategy = registry.resolve("plan", config.plan_strategy_class, config_key=catalogue.PLAN_STRATEGY_CLASS)
    execution = registry.resolve("execution", config.execution_strategy_class, config_key=catalogue.EXECUTION_STRATEGY_CLASS)
    params = strategy_params(plan_strategy, config.raw)
    strategy_params(execution, config.raw)  # fail now, not mid-run, on bad execution params
    check_sort_columns_in_schema(table, config.sort_columns)
    if instant_time:
        check_instant_time(table, instant_time)
    instant_time = instant_time or table.timeline.new_instant_time()

    view = table.view()
    # file groups another table service or a live writer is working on are left alone (Hudi does the same)
    pending = {**view.pending_write_file_groups(), **view.pending_compaction_file_groups(),
               **view.pending_clustering_file_groups()}  # fmt: skip
    selection = select_partitions(view.partitions, config)
    stats = footer_stats_provider(table.storage)
    context = PlanContext(table, config, params, instant_time, pending, selection.partitions, stats)
    slices = view.latest_file_slices()
    # footers are read only if the strategy asks, then all it may ask about at once, concurrently (footer_stats)
    stats.expect(slices)
    eligible = call_hook(plan_strategy, "plan_select_slices", context=context, slices=slices) or []
    stats.expect(eligible)
    groups = call_hook(plan_strategy, "plan_group_slices", context=context, slices=eligible) or []
    groups = call_hook(plan_strategy, "plan_finalize_groups", context=context, groups=groups) or []
    _check_groups(plan_strategy, eligible, groups)
    if not groups:
        log.info("nothing to cluster: %d slice(s), %d eligible", len(slices), len(eligible))
        return None
    execution_class, params_map = call_hook(plan_strategy, "plan_execution_strategy", context=context)
    groups = _estimated(table, config, groups, _layout_written(registry, execution_class, config.raw), row_order,
                        row_bytes)
    params_map = {**settings_to_store(config.raw), **params_map}  # executed as scheduled (plan/stored_settings.py)
    # Hudi 1.x always plans with preserveHoodieMetadata=true: clustered rows keep their commit time.
    # partial progress: instants of at most N groups, each committed on its own (a dry run shows the whole plan)
    size = config.partial_progress_max_groups if not dry_run and config.partial_progress_max_groups else len(groups)
    chunks = [groups[i : i + size] for i in range(0, len(groups), size)]
    times = [instant_time]
    for _ in chunks[1:]:  # each later than the one before, even after a given --instant-time ahead of the clock
        times.append(max(table.timeline.new_instant_time(), _one_ms_after(times[-1])))
    records = [build_requested_replace_metadata(table.storage, chunk, execution_class, params_map, selection.missing)
               for chunk in chunks]  # fmt: skip
    if not dry_run:
        for time, chunk, record in zip(times, chunks, records):
            _write_requested(table, time, encode_avro(record, "HoodieRequestedReplaceMetadata"))
            failpoint("after-requested")
            log.info("scheduled clustering %s: %d group(s), %d file group(s)", time, len(chunk),
                     sum(len(g.slices) for g in chunk))  # fmt: skip
    return ScheduledPlan(instant_time, tuple(chunks[0]), records[0], not dry_run, tuple(times[1:]))
