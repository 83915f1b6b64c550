"""``hudi-cluster run --continuous``: the async clustering service that runs beside ingestion.

Each cycle counts the writes (commits and deltacommits) completed since the newest clustering instant on the active
timeline; once there are ``hoodie.clustering.async.max.commits`` of them (Hudi's trigger for async clustering,
default 4), it runs one ``scheduleAndExecute`` (which first finishes or recovers pending plans, as a run always
does), prints one line, and waits ``--min-sync-interval-seconds`` before looking again. The Spark session is
made once and reused.

A write conflict (a writer reached a planned file group first: the writer wins, the clustering is rolled back) or a
failed run is one line and the service goes on. A timeline file gone between listing and reading (Hudi's writers
archive and roll back instants beside us) is looked at again in the next cycle. Bad input (config, plugins) stops
it with exit 2. SIGTERM lets the current clustering roll back (or, between clusterings, nothing is pending) and
exits 0.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError, HudiClusterError, Interrupted, PluginError, TimelineChanged
from .table import HudiTable, load_table
from .table.timeline import DATA_WRITE_ACTIONS

log = logging.getLogger(__name__)


def writes_since_last_clustering(table: HudiTable) -> int:
    """Completed commits and deltacommits newer than the newest clustering instant (pending or completed)."""
    timeline = table.timeline
    clusterings = [i.time for i in timeline.pending_clustering] + [i.time for i in timeline.completed_clustering]
    newest = max(clusterings, default="")
    return sum(1 for i in timeline.completed(DATA_WRITE_ACTIONS) if i.time > newest)


@dataclass
class ServiceStats:
    cycles: int = 0
    clusterings: int = 0
    conflicts: int = 0
    failures: int = 0


def run_continuous(
    base_path: str, *, run_once: Callable[[], Any], max_commits: int, min_sync_interval_s: float,
    stop: threading.Event | None = None, max_cycles: int | None = None, say: Callable[[str], None] = print,
    open_table: Callable[[], HudiTable] | None = None,
) -> ServiceStats:
    """The service loop. ``run_once()`` runs one ``scheduleAndExecute`` and returns its ``ClusterResult``;
    ``open_table()`` opens the table afresh (with the job's storage settings)."""
    open_table = open_table or (lambda: load_table(base_path))
    stop = stop or threading.Event()
    stats = ServiceStats()
    say(f"continuous: clustering {base_path} after every {max_commits} write(s) "
        f"(hoodie.clustering.async.max.commits), looking every {min_sync_interval_s:g} s")  # fmt: skip
    while not stop.is_set() and (max_cycles is None or stats.cycles < max_cycles):
        stats.cycles += 1
        started = time.monotonic()
        try:
            waiting = writes_since_last_clustering(open_table())
        except TimelineChanged as changed:  # Hudi archived or rolled back an instant between listing and reading it
            log.info("cycle %d: %s; looking again next cycle", stats.cycles, changed)
            waiting = 0
        if waiting >= max_commits:
            _cycle(run_once, stats, waiting, say)
        else:
            log.debug("cycle %d: %d new write(s), waiting for %d", stats.cycles, waiting, max_commits)
        stop.wait(max(0.0, min_sync_interval_s - (time.monotonic() - started)))
    return stats


def _cycle(run_once: Callable[[], Any], stats: ServiceStats, waiting: int, say: Callable[[str], None]) -> None:
    started = time.monotonic()
    try:
        result = run_once()
    except (ConfigError, PluginError, Interrupted):
        raise
    except HudiClusterError as exc:
        conflict = type(exc).__name__ == "WriteConflict"
        stats.conflicts += conflict
        stats.failures += not conflict
        say(f"cycle {stats.cycles}: {'conflict' if conflict else 'failed'} after {time.monotonic() - started:.1f} s: {exc}")
        return
    took = time.monotonic() - started
    if result.instant_time and result.completed_file:
        stats.clusterings += 1
        say(f"cycle {stats.cycles}: clustered {result.input_file_groups} file group(s) -> {result.output_files} "
            f"file(s), {result.bytes_rewritten} bytes, after {waiting} write(s), in {took:.1f} s "
            f"(instant {result.instant_time})")  # fmt: skip
    else:
        say(f"cycle {stats.cycles}: {result.message} after {waiting} write(s) ({took:.1f} s)")
