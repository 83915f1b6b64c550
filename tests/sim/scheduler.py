"""A seeded scheduler: actors run one at a time, and every storage operation is a point where it picks who runs.

Each actor is a thread, but only one holds control: at a storage operation (``point``) the actor itself decides the
next step (the next actor, from a seeded random stream or from a recorded schedule, to replay, and maybe a fault to
inject at that point) and wakes that actor directly, each actor waiting on its own semaphore: one thread switch per
change of actor, none when the same actor goes on. What the scheduler decided is recorded as :class:`Step` s; the same steps replay
the same run, and a shorter list of steps is a shorter schedule (unrecorded choices fall back to "the first
runnable actor, no fault"), which is how a failure is shrunk (``tests/sim/shrink.py``).

A crash is :class:`Crash` (a BaseException, so no ``except Exception`` in the code under test catches it): the
actor's process is gone. Its thread then unwinds, but nothing it does afterwards reaches storage (every later
operation raises ``Crash`` again), and the locks it held are released as the kernel releases a dead process's
flock. The in-process timeline lock of the core (``ownership._HELD_GUARD``) is replaced by :class:`ActorLock`, so
that an actor waiting for it yields to the others instead of blocking the simulation.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field
from typing import Callable

from hudi_cluster_core.io.store import StoreError

from .clock import SimClock

STORAGE_FAULTS = ("crash-before", "crash-after", "fail-before", "fail-after", "timeout-before", "timeout-after")
# "freeze": the actor stops (GC pause, VM freeze) long enough for its heartbeat to expire; "beats-fail": it goes on,
# but for as long its heartbeat refreshes fail, time out, or write and report failure (a partition between its
# heartbeat thread and the store), so that another actor may take its instant over while it still works on it
ACTOR_FAULTS = ("freeze", "beats-fail")
OUTAGE_S = 30.0  # longer than any heartbeat's tolerance (interval x misses)
CLOCK_FAULTS = ("jump-ahead", "jump-back")
FAULTS = STORAGE_FAULTS + ACTOR_FAULTS + CLOCK_FAULTS


class Crash(BaseException):
    """The actor's process died at this point."""


class Deadlock(AssertionError):
    """Live actors remain, none of them can run, and waiting changes nothing."""


@dataclass(frozen=True)
class Step:
    actor: str
    fault: str = ""  # one of FAULTS, or "" for none

    def __str__(self) -> str:
        return f"{self.actor}{'!' + self.fault if self.fault else ''}"


@dataclass
class Actor:
    name: str
    body: Callable[[], None]
    go: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))
    thread: threading.Thread | None = None
    done: bool = False
    dead: bool = False  # crashed: its process is gone
    fault: str = ""  # decided for the operation it waits at
    waiting_for: "ActorLock | None" = None
    frozen_until: float = 0.0  # monotonic seconds
    beats_fail_until: float = 0.0  # its heartbeats' refreshes fail until then
    asleep_until: float = 0.0  # waiting on purpose (a service's interval), timers running
    point: tuple[str, str] = ("start", "")
    error: BaseException | None = None  # what its body ended with (Crash for a crash)
    label: object = None  # what the actor is doing now (a writer's batch), for the checks


_ACTIVE: list["Scheduler | None"] = [None]


def sleep(seconds: float) -> None:
    """Wait ``seconds`` of simulated time, in the schedule running now."""
    _ACTIVE[0].sleep(seconds)


def current_actor() -> Actor | None:
    """The actor whose thread calls this, in the schedule running now."""
    scheduler = _ACTIVE[0]
    return scheduler.current() if scheduler is not None else None


class Scheduler:
    """Runs actors one at a time; ``steps`` replays a recorded schedule instead of drawing from the seed."""

    def __init__(self, seed: int, clock: SimClock, *, fault_rate: float = 0.02, steps: list[Step] | None = None,
                 max_steps: int = 20000, step_seconds: float = 0.05, freeze_s: float = OUTAGE_S):  # fmt: skip
        self.rng = random.Random(seed)
        self.clock = clock
        self.fault_rate = fault_rate
        self.replay = list(steps) if steps is not None else None
        self.max_steps = max_steps
        self.step_seconds = step_seconds
        self.freeze_s = freeze_s  # how long a "freeze" lasts (past every heartbeat's tolerance)
        self.actors: list[Actor] = []
        self.steps: list[Step] = []
        self.back = threading.Semaphore(0)
        self.by_thread: dict[int, Actor] = {}
        self.faults = 0
        self.in_control: Actor | None = None  # the actor running now (None: the scheduler's thread)
        self.loop_thread: int | None = None
        self.scheduling = False  # deciding the next step (in whichever thread): the tickers' storage is no actor's
        self.tickers: Callable[[], None] = lambda: None
        self.over = False
        self.stuck: BaseException | None = None  # why the schedule ended early, raised by ``run``

    # ------------------------------------------------------------------ set-up
    def spawn(self, name: str, body: Callable[[], None]) -> None:
        self.actors.append(Actor(name, body))

    def current(self) -> Actor | None:
        """The actor this thread works for: its own thread's, or, for a helper thread (pyarrow's I/O pool reading
        a file for an actor), the actor in control; None for the scheduler's own thread (set-up, checks, timers)."""
        if self.scheduling:
            return None
        ident = threading.get_ident()
        actor = self.by_thread.get(ident)
        if actor is None and ident != self.loop_thread:
            return self.in_control
        return actor

    # ---------------------------------------------------------- from an actor's thread
    def point(self, op: str, path: str) -> str:
        """An actor is about to do ``op``: control goes back to the scheduler; returns the fault to inject."""
        actor = self.current()
        if actor is None:  # set-up, the checks, heartbeats: not scheduled; a heartbeat's refresh may fail
            fault = self.clock.refresh_fault
            if fault in ("fail-before", "timeout-before"):
                raise (TimeoutError if fault.startswith("timeout") else StoreError)(f"simulated {fault} of {op} {path}")
            return fault
        if actor.dead:
            raise Crash(f"{actor.name} is dead")
        actor.point = (op, path)
        self._yield(actor)
        if actor.dead:  # a schedule given up on (``simulation._release``): unwind without touching anything
            raise Crash(f"{actor.name} is dead")
        fault, actor.fault = actor.fault, ""
        if fault.startswith("crash-before"):
            self._die(actor)
        if fault in ("fail-before", "timeout-before"):
            raise (TimeoutError if fault.startswith("timeout") else StoreError)(f"simulated {fault} of {op} {path}")
        return fault

    def after(self, fault: str, op: str, path: str) -> None:
        """The operation was done; now the fault that comes after it, if any."""
        if fault == "crash-after" and self.current() is not None:
            self._die(self.current())
        if fault in ("fail-after", "timeout-after"):
            raise (TimeoutError if fault.startswith("timeout") else StoreError)(f"simulated {fault} of {op} {path}")

    def sleep(self, seconds: float) -> None:
        """The calling actor waits ``seconds`` of simulated time (a service's interval between runs)."""
        actor = self.current()
        actor.asleep_until = self.clock.mono + seconds
        actor.point = ("sleep", "")
        self._yield(actor)
        if actor.dead:
            raise Crash(f"{actor.name} is dead")

    def wait_for_lock(self, lock: "ActorLock") -> None:
        actor = self.current()
        actor.waiting_for = lock
        actor.point = ("lock", "")
        self._yield(actor)
        actor.waiting_for = None
        if actor.dead:
            raise Crash(f"{actor.name} is dead")

    def _die(self, actor: Actor | None) -> None:
        actor.dead = True
        raise Crash(f"{actor.name} crashed at {actor.point[0]} {actor.point[1]}")

    def _yield(self, actor: Actor) -> None:
        """Decide the next step in this thread and hand control straight to the actor chosen: no thread switch
        when it is this one again, one switch otherwise (never through the loop's thread)."""
        chosen = self._next()
        if chosen is actor or self.over:  # over: a stuck schedule's actor unwinds without waiting for a turn
            return
        self._hand_to(chosen)
        actor.go.acquire()
        self.in_control = actor

    # -------------------------------------------------------------------- the loop
    def run(self, tickers: Callable[[], None]) -> None:
        """Run every actor to its end; ``tickers`` fires the periodic work due (heartbeats) between steps."""
        _ACTIVE[0] = self
        self.loop_thread = threading.get_ident()
        self.tickers = tickers
        try:
            self._hand_to(self._next())
            self.back.acquire()  # released once no actor is left, or the schedule is stuck
            if self.stuck is not None:
                raise self.stuck
        finally:
            self.over = True  # a stuck schedule's threads unwind (``simulation._release``): no step more
            _ACTIVE[0] = None

    def _next(self) -> Actor | None:
        """The next step, drawn (or replayed) from whichever thread gave control back: the actor to run with its
        fault set, or None when the schedule is over (every actor done, or stuck: ``stuck``)."""
        if self.over:
            return None
        self.scheduling, self.in_control = True, None
        try:
            return self._decide()
        except BaseException as stuck:  # noqa: BLE001 - a deadlock, or a ticker's error: the loop's thread raises it
            self.stuck = stuck
            return None
        finally:
            self.scheduling = False

    def _decide(self) -> Actor | None:
        while True:
            live = [a for a in self.actors if not a.done]
            if not live:
                return None
            if len(self.steps) >= self.max_steps:
                raise Deadlock(f"no end after {self.max_steps} steps (a livelock?): {self._describe(live)}")
            self.clock.advance(self.step_seconds)  # the same in a replay: time is a function of the steps
            self.tickers()
            runnable = [a for a in live if self._can_run(a)]
            if not runnable:
                frozen = [t for a in live for t in (a.frozen_until, a.asleep_until) if t > self.clock.mono]
                if not frozen:
                    raise Deadlock(f"every live actor waits: {self._describe(live)}")
                self.clock.advance(min(frozen) - self.clock.mono)
                continue
            step = self._choose(runnable)
            self.steps.append(step)
            actor = next(a for a in runnable if a.name == step.actor)
            self._apply(step, actor)
            if step.fault in ACTOR_FAULTS or step.fault.startswith("jump"):
                continue
            actor.fault = step.fault
            self.in_control = actor
            return actor

    def _can_run(self, actor: Actor) -> bool:
        if actor.frozen_until > self.clock.mono or actor.asleep_until > self.clock.mono:
            return False
        lock = actor.waiting_for
        return lock is None or lock.owner is None or lock.owner is actor

    def _choose(self, runnable: list[Actor]) -> Step:
        if self.replay is not None:
            index = len(self.steps)
            wanted = self.replay[index] if index < len(self.replay) else None
            if wanted is not None and any(a.name == wanted.actor for a in runnable):
                return wanted
            return Step(runnable[0].name)
        actor = self.rng.choice(runnable)
        fault = ""
        if actor.thread is not None and self.rng.random() < self.fault_rate:
            fault = self.rng.choice(FAULTS if actor.waiting_for is None else ACTOR_FAULTS + CLOCK_FAULTS)
        return Step(actor.name, fault)

    def _apply(self, step: Step, actor: Actor) -> None:
        if step.fault:
            self.faults += 1
        if step.fault == "freeze":
            actor.frozen_until = self.clock.mono + self.freeze_s
        elif step.fault == "beats-fail":
            actor.beats_fail_until = self.clock.mono + OUTAGE_S
        elif step.fault == "jump-ahead":
            self.clock.jump(30.0)
        elif step.fault == "jump-back":
            self.clock.jump(-5.0)

    def _hand_to(self, actor: Actor | None) -> None:
        """Wake ``actor`` (starting its thread the first time), or the loop's thread when the schedule is over."""
        if actor is None:
            self.back.release()
        elif actor.thread is None:
            actor.thread = threading.Thread(target=self._body, args=(actor,), name=f"sim-{actor.name}", daemon=True)
            actor.thread.start()
        else:
            actor.go.release()

    def _body(self, actor: Actor) -> None:
        self.by_thread[threading.get_ident()] = actor
        try:
            actor.body()
        except BaseException as ended:  # noqa: BLE001 - kept for the checks; a crash is an expected end
            actor.error = ended
        finally:
            actor.done = True
            self._hand_to(self._next())

    def _describe(self, actors: list[Actor]) -> str:
        return "; ".join(f"{a.name} at {a.point[0]} {a.point[1]}" + (" (frozen)" if a.frozen_until > self.clock.mono else "")
                         for a in actors)  # fmt: skip


class ActorLock:
    """A re-entrant lock among actors, standing for the core's in-process timeline lock: every actor is a process
    of its own, and the lock excludes them all, as ``flock`` does on local disk (or a lock provider on an object
    store: Hudi's storage-based lock code itself is not simulated). An actor that finds it taken yields until it
    is free. Released by a crashed actor as its thread unwinds, as the kernel releases a dead process's flock."""

    def __init__(self, scheduler: Scheduler):
        self.scheduler = scheduler
        self.owner: Actor | None = None
        self.depth = 0
        self._outside = threading.RLock()  # for threads that are no actor (set-up, checks)

    def acquire(self) -> bool:
        actor = self.scheduler.current()
        if actor is None:
            return self._outside.acquire()
        while self.owner is not None and self.owner is not actor:
            self.scheduler.wait_for_lock(self)
        self.owner = actor
        self.depth += 1
        return True

    def release(self) -> None:
        actor = self.scheduler.current()
        if actor is None:
            self._outside.release()
            return
        self.depth -= 1
        if not self.depth:
            self.owner = None

    def __enter__(self) -> "ActorLock":
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
