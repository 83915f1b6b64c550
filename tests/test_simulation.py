"""The deterministic simulation of the commit protocol (issue 22, ``tests/sim``): many seeded schedules of two
clustering runs and a writer on the simulated store, with crashes, storage faults, clock jumps and frozen actors,
each checked against the invariants; a failure is shrunk to a minimal replay and reported with its seed.

``HUDI_SIM_SCHEDULES`` schedules from seed ``HUDI_SIM_FIRST_SEED`` (``make soak`` runs 100,000).
"""

from __future__ import annotations

import os
import time

from tests.sim.scheduler import Step
from tests.sim.shrink import decode, encode, report, shrink
from tests.sim.simulation import base_table, run_schedule

SCHEDULES = int(os.environ.get("HUDI_SIM_SCHEDULES", "400"))
FIRST_SEED = int(os.environ.get("HUDI_SIM_FIRST_SEED", "0"))
REPORTED = 3  # failures shrunk and reported before the run stops (each shrink is up to a hundred replays)


def test_seeded_schedules_keep_every_invariant():
    base_table()
    started, failures, faults = time.monotonic(), [], 0
    for seed in range(FIRST_SEED, FIRST_SEED + SCHEDULES):
        outcome = run_schedule(seed)
        faults += outcome.faults
        if outcome.failed:
            failures.append(outcome)
            if len(failures) == REPORTED:
                break
    took = time.monotonic() - started
    print(f"\n{SCHEDULES} schedules in {took:.1f} s ({SCHEDULES / took:.1f}/s), {faults / SCHEDULES:.2f} faults each")
    assert not failures, "\n".join(report(o, shrink(o, budget=100)) for o in failures)


def test_a_schedule_replays_exactly_from_its_steps():
    first = run_schedule(11)
    again = run_schedule(11, first.steps)
    assert again.steps == first.steps and again.problems == first.problems and again.faults == first.faults
    assert again.operations == first.operations and again.errors == first.errors


def test_a_seed_is_a_schedule_and_faults_are_drawn():
    outcomes = [run_schedule(seed) for seed in range(20, 30)]
    assert all(run_schedule(o.seed).steps == o.steps for o in outcomes[:2])
    assert sum(o.faults for o in outcomes) > 0
    assert {s.actor for o in outcomes for s in o.steps} >= {"c1", "c2", "w"}


def test_steps_print_and_parse_back():
    steps = [Step("c1"), Step("c1"), Step("w", "crash-after"), Step("c2"), Step("c2", "jump-ahead")]
    assert encode(steps) == "c1*2 w!crash-after c2 c2!jump-ahead"
    assert decode(encode(steps)) == steps


def test_the_schedules_that_found_bugs_pass():
    """The minimal replays of what the simulator found (``tests/test_sim_findings.py`` replays them for real)."""
    for seed, steps in ((0, "w*14 w!fail-after"), (57, "w*3 c1 w c1*3 w*3 c1 w c1!freeze w*7 w!crash-after"),
                        (2, "")):  # fmt: skip
        outcome = run_schedule(seed, decode(steps) if steps else None)
        assert not outcome.failed, (seed, outcome.problems)


def test_a_run_frozen_past_its_heartbeat_never_commits_over_a_rollback_that_began():
    """seed=47: c2 froze while executing; c1 claimed its instant, began the rollback (requested and inflight
    written), failed on a storage timeout and let go; c2 thawed, beat its heartbeat again and committed, leaving
    the rollback of a completed instant pending for ever. A commit now yields to a rollback plan of its instant."""
    steps = ("w*2 c2 c1 w c1 c2*2 w c1 w c1*2 c2*2 c1 c2 w c2 w c1 c2 w c2*2 w c1 w c2 w*2 c1 w c1 w*2 c2 c1 w*3 c2 w "
             "c2 w c2 c1 w c2 c1*2 c2 c1 c2 w*2 c2*2 w c2*2 w c2*2 w*2 c2 w c2 w*2 c2*2 w*2 c2 w*2 c2 w c2 w*2 c2*2 w*3 "
             "c2 w*18 w!freeze w*11 c2*2 w c2*2 w c2 c1*2 c2 c1 c2 c1*2 c2 c1*5 c2 c1*4 c2!freeze c1*118 c1!timeout-after")  # fmt: skip
    outcome = run_schedule(47, decode(steps))
    assert not outcome.failed, outcome.problems
