"""The deterministic simulation of the commit protocol (issue 22, ``tests/sim``): many seeded schedules of two
clustering runs and a writer on the simulated store, with crashes, storage faults, clock jumps and frozen actors,
each checked against the invariants; a failure is shrunk to a minimal replay and reported with its seed.

``HUDI_SIM_SCHEDULES`` schedules (2,000) from seed ``HUDI_SIM_FIRST_SEED``, in ``HUDI_SIM_PROCESSES`` processes
(one per core, up to 2; ``make soak`` runs 100,000 in one per core).
"""

from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor

from tests.sim.scheduler import Step
from tests.sim.shrink import decode, encode, report, shrink
from tests.sim.simulation import Outcome, base_table, run_schedule

SCHEDULES = int(os.environ.get("HUDI_SIM_SCHEDULES", "2000"))
FIRST_SEED = int(os.environ.get("HUDI_SIM_FIRST_SEED", "0"))
PROCESSES = int(os.environ.get("HUDI_SIM_PROCESSES", str(min(2, os.cpu_count() or 1))))
REPORTED = 3  # failures shrunk and reported (each shrink is up to a hundred replays)


def _campaign(first: int, count: int) -> tuple[list[Outcome], int]:
    """Seeds ``first`` .. ``first + count - 1`` in this process: the failures (up to REPORTED) and the faults."""
    base_table()
    failures, faults = [], 0
    for seed in range(first, first + count):
        outcome = run_schedule(seed)
        faults += outcome.faults
        if outcome.failed:
            failures.append(outcome)
            if len(failures) == REPORTED:
                break
    return failures, faults


def test_seeded_schedules_keep_every_invariant():
    """The schedules in ``PROCESSES`` processes (one per core), on consecutive slices of the seeds."""
    started = time.monotonic()
    share = -(-SCHEDULES // PROCESSES)
    slices = [(FIRST_SEED + n * share, min(share, SCHEDULES - n * share)) for n in range(PROCESSES)]
    with ProcessPoolExecutor(len(slices), mp_context=multiprocessing.get_context("spawn")) as pool:
        results = list(pool.map(_campaign, *zip(*slices)))
    failures = [o for found, _ in results for o in found][:REPORTED]
    faults = sum(f for _, f in results)
    took = time.monotonic() - started
    print(f"\n{SCHEDULES} schedules in {took:.1f} s ({SCHEDULES / took:.1f}/s, {len(slices)} processes), "
          f"{faults / SCHEDULES:.2f} faults each")  # fmt: skip
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



def test_the_seeds_that_found_bugs_pass():
    """The seeds whose schedules found bugs (``tests/test_sim_findings.py`` replays each for real). Their exact
    interleavings were recorded on the code of their day; since then actors were added, so each seed now draws
    another schedule, run here whole."""
    for seed in (0, 2, 47, 57, 310, 449):
        outcome = run_schedule(seed)
        assert not outcome.failed, (seed, outcome.problems)
