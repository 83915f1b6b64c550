"""Taking ownership of a clustering instant, and cleaning up after runs that died.

Every run that changes a pending clustering instant first *claims* it: under the timeline lock it checks that the
instant is still pending and that no live run holds its heartbeat, then starts its own heartbeat. So any number
of runs, started in any order, never execute one instant twice or roll back an instant another live run owns.
:func:`recover` is what a run does first: finish interrupted rollbacks, roll back clusterings whose run died,
and remove marker folders of completed instants (a kill right after the commit leaves them).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import PlanError
from ..write.base_file import TEMP_DIR
from ..table import HudiTable, Instant, State
from ..table.ownership import (
    HEARTBEAT_DIR, Heartbeat, HeartbeatState, age_seconds, heartbeat_state, is_fresh, timeline_lock,
)  # fmt: skip
from .rollback import clustering_rollback_targets, rollback_clustering

if TYPE_CHECKING:
    from ..config import ClusteringConfig

log = logging.getLogger(__name__)


class InstantBusy(PlanError):
    """Another live run owns the instant (its heartbeat is fresh)."""


@dataclass(frozen=True)
class Ownership:
    """Heartbeat and lock settings, from Hudi's keys."""

    interval_ms: int = 60000
    misses: int = 2
    wait_ms: int = 60000

    @classmethod
    def from_config(cls, config: ClusteringConfig) -> Ownership:
        writer = config.writer
        return cls(writer.heartbeat_interval_ms, writer.heartbeat_tolerable_misses, writer.lock_wait_time_ms)

    def heartbeat(self, table: HudiTable, instant_time: str) -> Heartbeat:
        return Heartbeat(table.storage, instant_time, self.interval_ms, self.misses)

    def state(self, table: HudiTable, instant_time: str) -> HeartbeatState:
        """Its heartbeat; with none, an inflight file younger than the heartbeat timeout counts as live too: Apache
        Hudi writes no heartbeat for its own clustering, and one that has just started must not be rolled back."""
        state = heartbeat_state(table.storage, instant_time, self.interval_ms, self.misses)
        instant = table.timeline.get(instant_time)
        if state.exists or instant is None or instant.state is not State.INFLIGHT:
            return state
        age = age_seconds(table.storage, table.timeline.path_of(instant.file_name))
        if age is None:
            return state
        return HeartbeatState(instant_time, False, age, live=is_fresh(age, self.interval_ms, self.misses))

    def is_live(self, table: HudiTable, instant_time: str) -> bool:
        return self.state(table, instant_time).live


def claim(table: HudiTable, instant_time: str, ownership: Ownership) -> Heartbeat:
    """Own pending clustering ``instant_time`` (or the leftovers of its interrupted rollback) from now on."""
    with timeline_lock(table.storage, ownership.wait_ms):
        table = table.reload()
        instant = table.timeline.get(instant_time)
        if instant is not None and instant.is_completed:
            raise PlanError(f"clustering {instant_time} has already completed ({instant.file_name}); nothing to do")
        if instant is None and instant_time not in clustering_rollback_targets(table):
            raise PlanError(f"no pending clustering {instant_time} on the timeline of {table.base_path}")
        state = ownership.state(table, instant_time)
        if state.live:
            raise InstantBusy(f"clustering {instant_time} is owned by a live run ({state.describe()}); not touched")
        return ownership.heartbeat(table, instant_time).start()


def remove_leftovers(table: HudiTable, ownership: Ownership) -> None:
    """Marker folders and heartbeats of completed instants are left only by a kill between the commit and its
    clean-up; a dead heartbeat of an instant no longer on the timeline, by a kill inside a rollback's end."""
    storage = table.storage
    # Under the timeline lock, heartbeats first, then the timeline: a writer begins its instant under the lock,
    # heartbeat first, then the instant's files, so no instant is half begun here and one whose heartbeat is
    # listed is on the timeline read after it. (Without the lock, a writer slowed or a clock jumping between its
    # heartbeat and its files would have its heartbeat taken for a leftover; a table loaded before the heartbeat
    # would too: its instant would look gone.)
    with timeline_lock(storage, ownership.wait_ms):
        heartbeats = storage.list(storage.join(HEARTBEAT_DIR))
        table = table.reload()
        on_timeline = {i.time: i for i in table.timeline.instants}
        for entry in heartbeats:
            instant = on_timeline.get(entry.name)
            gone = instant is None and not ownership.is_live(table, entry.name)
            if gone or (instant is not None and instant.is_completed):
                storage.delete_file(entry.path)
    for entry in storage.list(storage.join(TEMP_DIR)):
        if entry.is_dir and entry.name in on_timeline and on_timeline[entry.name].is_completed:
            storage.delete_dir(entry.path)


def recover(table: HudiTable, ownership: Ownership, *, keep_plans: bool) -> list[str]:
    """Finish what dead runs left; returns the instants rolled back. Instants of live runs are left alone.

    ``keep_plans`` (``--retry-last-failed-clustering-job``): failed instants keep their plan for re-execution;
    otherwise an inflight clustering whose run died is rolled back and its plan dropped, so it blocks no writer.
    """
    remove_leftovers(table, ownership)
    rolled_back = []
    candidates: list[tuple[str, bool]] = [(t, keep_plans) for t in sorted(clustering_rollback_targets(table))]
    if not keep_plans:
        candidates += [(i.time, False) for i in table.timeline.pending_clustering if i.state is State.INFLIGHT]
    done: set[str] = set()
    for instant_time, keep in candidates:
        if instant_time in done:
            continue
        done.add(instant_time)
        try:
            heartbeat = claim(table, instant_time, ownership)
        except InstantBusy as busy:
            log.info("%s", busy)
            continue
        except PlanError:  # completed or gone meanwhile: another run handled it
            continue
        try:
            log.info("rolling back failed clustering %s%s", instant_time,
                     "" if keep else " (use --retry-last-failed-clustering-job to re-run it)")  # fmt: skip
            rollback_clustering(table, instant_time, keep_plan=keep, wait_ms=ownership.wait_ms, owner=heartbeat)
            rolled_back.append(instant_time)
        except PlanError as skipped:  # TakenOver (held up past the heartbeat's expiry: another run owns it now) or
            log.info("%s", skipped)  # completed by the run that took it over: either way, not ours to undo
        finally:
            heartbeat.stop()
    return rolled_back


def free_pending(table: HudiTable, ownership: Ownership) -> list[Instant]:
    """Pending clustering instants no live run owns, oldest first."""
    return [i for i in table.timeline.pending_clustering if not ownership.is_live(table, i.time)]
