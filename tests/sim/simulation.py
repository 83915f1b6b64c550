"""One schedule: a small table, the actors of the seed, the scheduler's run, the next run's recovery, the checks.

The table (``sim://lake/t``, version 9 with its metadata table, two partitions, three append commits) is built
once per process on the simulated store and copied into each schedule. The seed chooses the schedule's setting
(each clustering run's mode, the writer's operations and update strategy) and drives the scheduler; a recorded
list of steps replays it (:func:`run_schedule` with ``steps``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import pyarrow as pa

from hudi_cluster_core.errors import HudiClusterError
from hudi_cluster_core.table import load_table

from . import checks, lock_modes, pids
from .actors import Plan, actors_for
from .clock import SimClock
from .runtime import simulated
from .scheduler import ActorLock, Crash, Scheduler, Step
from .store import Obj, World

URI, TABLE = "sim://lake/t", "lake/t"
HEARTBEAT = {"hoodie.client.heartbeat.interval_in_ms": "1000", "hoodie.client.heartbeat.tolerable.misses": "2"}
EXPECTED_ERRORS = (HudiClusterError, OSError, Crash)  # a failed run says why; anything else is a finding


def initial_rows(batch: int) -> pa.Table:
    ids = [f"k{batch}{i:02d}" for i in range(6)]
    return pa.table({"id": ids, "ts": pa.array([0] * 6, pa.int64()), "region": ["us", "eu"] * 3,
                     "val": pa.array([0] * 6, pa.int64())})  # fmt: skip


_BASE: dict[str, tuple[dict[str, Obj], float]] = {}


def base_table(kind: str = "cow") -> tuple[dict[str, Obj], float]:
    """The objects of the initial table of ``kind`` (``cow``, or ``bucket``: ``tests/sim/bucket_table.py``) and
    the clock's time when it was done (each built once per process)."""
    if kind not in _BASE:
        from hudi_cluster_core.io.storage import Storage

        from .actors import registry

        registry()  # the installed strategies load here: a broken plugin is an error, not a schedule's failed runs
        from hudi_cluster_core.writer.append import append, create_table

        from . import bucket_table
        from .metadata_setup import add_metadata_table

        world, clock = World(), SimClock()
        world.clock = clock
        with simulated(world, clock, _NoActors()):
            if kind == "bucket":
                bucket_table.build(clock, initial_rows, HEARTBEAT)
            else:
                storage = Storage(URI)
                create_table(storage, initial_rows(0).schema, table_name="sim", record_key="id", partition_field="region",
                             precombine_field="ts", table_version=9)  # fmt: skip
                add_metadata_table(storage, "sim")
                for batch in range(3):
                    clock.advance(1.0)
                    append(URI, initial_rows(batch), table_name="sim", record_key="id", partition_field="region",
                           precombine_field="ts", table_version=9, heartbeat_ms=(1000, 2))  # fmt: skip
        _BASE[kind] = world.snapshot(), clock.mono
    objects, mono = _BASE[kind]
    return dict(objects), float(mono)


class _NoActors:
    """The timeline lock outside any schedule (the table's set-up): one thread, nothing to exclude."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


@dataclass
class Outcome:
    seed: int
    steps: list[Step]
    problems: list[str]
    faults: int
    operations: int
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return bool(self.problems)


def run_schedule(seed: int, steps: list[Step] | None = None, *, fault_rate: float | None = None) -> Outcome:
    """The schedule of ``seed`` (its fault rate drawn from it unless given), or the replay of ``steps``."""
    plan = Plan.from_seed(seed)
    objects, mono = base_table(plan.table)
    clock = SimClock()
    clock.mono = mono
    scheduler = Scheduler(seed, clock, fault_rate=plan.fault_rate if fault_rate is None else fault_rate, steps=steps,
                          freeze_s=lock_modes.FREEZE_S[plan.lock_mode])  # fmt: skip
    clock.owner_of_thread = scheduler.current
    world = World(scheduler, clock, objects)
    for name, body in actors_for(plan, plan.uri, HEARTBEAT):
        scheduler.spawn(name, body)
    problems: list[str] = []
    logging.disable(logging.CRITICAL)  # thousands of schedules: the runs' warnings are expected, not news
    try:
        with simulated(world, clock, ActorLock(scheduler), seed), lock_modes.installed(plan.lock_mode, scheduler, plan.uri), \
                pids.per_actor(scheduler):
            try:
                scheduler.run(clock.fire_due)
            except AssertionError as stuck:
                problems.append(f"schedule did not finish: {stuck}")
                _release(scheduler)
            errors = {a.name: f"{type(a.error).__name__}: {a.error}" for a in scheduler.actors if a.error is not None}
            problems += [f"{a.name} ended with an unexpected {type(a.error).__name__}: {a.error}"
                         for a in scheduler.actors if a.error is not None and not isinstance(a.error, EXPECTED_ERRORS)]  # fmt: skip
            if not problems:
                problems += check_after(world, clock, plan)
    finally:
        logging.disable(logging.NOTSET)
    return Outcome(seed, scheduler.steps, problems, scheduler.faults, world.operations, errors)


def check_after(world: World, clock: SimClock, plan: Plan) -> list[str]:
    """The invariants, around what the next run does first (undo failed writes, recover failed clusterings)."""
    from hudi_cluster_core.run.recovery import Ownership, recover
    from hudi_cluster_core.writer.instant import undo_failed_writes

    from .cleaner import clean

    # from here on only this thread runs (no actor: no scheduling point, no fault)
    uri, path = plan.uri, plan.path
    problems = checks.check_timeline(world, path)
    problems += checks.check_rows(world, path, plan.expected(world, path))
    clock.advance(60.0)  # every heartbeat of the schedule has expired: its actors are gone
    table = load_table(uri)
    undo_failed_writes(table, 1000, 2)
    recover(table.reload(), Ownership(1000, 2, 1000), keep_plans=False)
    clean(uri)  # the next clean finishes a clean a dead cleaner left pending
    after = checks.check_timeline(world, path) + checks.check_nothing_orphaned(world, path)
    after += checks.check_rows(world, path, plan.expected(world, path))
    after += checks.check_metadata_table(world, uri, path)
    return problems + [f"after recovery: {p}" for p in after if p not in problems]


def _release(scheduler: Scheduler) -> None:
    """A schedule that did not finish: its threads are told they are dead, so they unwind and end."""
    for actor in scheduler.actors:
        if not actor.done and actor.thread is not None:
            actor.dead = True
            actor.go.release()
    for actor in scheduler.actors:  # all at once: each raises Crash at its next storage operation
        if actor.thread is not None:
            actor.thread.join(timeout=10)  # gone before the checks (and the next schedule) use the store


def describe(outcome: Outcome) -> str:
    return (f"seed={outcome.seed}: {len(outcome.steps)} steps, {outcome.faults} fault(s)\n  "
            + "\n  ".join(outcome.problems))  # fmt: skip


__all__ = ["Outcome", "describe", "run_schedule"]
