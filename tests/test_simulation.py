"""The deterministic simulation of the commit protocol (issue 22, ``tests/sim``): many seeded schedules of two
clustering runs and a writer on the simulated store, with crashes, storage faults, clock jumps and frozen actors,
each checked against the invariants; a failure is shrunk to a minimal replay and reported with its seed.

``HUDI_SIM_SCHEDULES`` schedules (2,000) from seed ``HUDI_SIM_FIRST_SEED``, in ``HUDI_SIM_PROCESSES`` processes
(one per core, up to 2; ``make soak`` runs 100,000 in one per core).
"""

from __future__ import annotations

import multiprocessing
import re
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from hudi_cluster_core.table import ownership
from tests.sim import pids
from tests.sim.actors import Plan
from tests.sim.clock import SimClock
from tests.sim.runtime import read_one_file
from tests.sim.scheduler import FAULTS, Scheduler, Step
from tests.sim.store import World
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
    """The seeds whose schedules found bugs (``tests/test_sim_findings.py`` and ``test_sim_findings_buckets.py``
    replay each for real). Their exact interleavings were recorded on the code of their day; since then actors were
    added, so each seed now draws another schedule, run here whole."""
    for seed in (0, 2, 47, 57, 310, 449, 1212, 3713, 5641, 7113, 10891, 10990, 11948, 13023, 15655, 15695):
        outcome = run_schedule(seed)
        assert not outcome.failed, (seed, outcome.problems)


def test_every_kind_of_fault_is_drawn():
    drawn = {s.fault for seed in range(12) for s in run_schedule(seed, fault_rate=0.05).steps}
    assert drawn >= set(FAULTS), set(FAULTS) - drawn


def test_an_actor_goes_on_while_its_heartbeat_refreshes_fail(monkeypatch):
    clocks = []
    started = SimClock.__init__
    monkeypatch.setattr(SimClock, "__init__", lambda self: (started(self), clocks.append(self))[0])
    steps = [Step("c1")] * 30 + [Step("c1", "beats-fail")]  # then the first runnable actor, no fault
    outcome = run_schedule(3, steps)
    assert clocks[-1].refreshes_failed >= 4, "every refresh of c1's heartbeat in 30 s fails"
    assert not outcome.failed, outcome.problems


def test_lock_provider_schedules_take_hudis_lock_and_flock_ones_do_not(monkeypatch):
    """Storage-lock schedules take Hudi's lease, file-system-lock ones its lock file (created, then deleted)."""
    operations = []
    done = World.do
    monkeypatch.setattr(World, "do", lambda self, op, path, action: (operations.append((op, path)), done(self, op, path, action))[1])
    by_mode = {}
    for seed in range(30):
        by_mode.setdefault(Plan.from_seed(seed).lock_mode, seed)
    for mode, seed in sorted(by_mode.items()):
        operations.clear()
        outcome = run_schedule(seed)
        assert not outcome.failed, (seed, outcome.problems)
        on_lease = {op for op, path in operations if path.endswith(".hoodie/.locks/table_lock.json")}
        assert on_lease == ({"read", "create", "put-if-match"} if mode == "storage" else set()), (mode, on_lease)
        on_lock_file = {op for op, path in operations if path.endswith(".hoodie/lock")}
        assert on_lock_file >= ({"create", "delete"} if mode == "filesystem" else set()), (mode, on_lock_file)
        assert mode == "filesystem" or not on_lock_file, (mode, on_lock_file)
    assert set(by_mode) == {"flock", "storage", "filesystem"}


def test_one_file_read_as_read_table_reads(tmp_path):
    rows = pa.table({"id": ["a", "b", "c"], "val": pa.array([1, 2, 3], pa.int64())})
    path = tmp_path / "f.parquet"
    pq.write_table(rows, path, compression="snappy")
    local = pafs.LocalFileSystem()
    assert read_one_file(str(path), filesystem=local).equals(pq.read_table(str(path), filesystem=local))
    assert read_one_file(pa.BufferReader(path.read_bytes()), columns=["val"]).equals(pq.read_table(path, columns=["val"]))
    with pytest.raises(FileNotFoundError):
        read_one_file(str(tmp_path / "missing.parquet"), filesystem=local)


def test_an_actor_is_a_process_alive_until_it_crashes_or_ends():
    scheduler = Scheduler(0, SimClock())
    for name in ("c1", "c2", "w"):
        scheduler.spawn(name, lambda: None)
    scheduler.actors[1].dead, scheduler.actors[2].done = True, True
    with pids.per_actor(scheduler):
        alive = ownership.pid_alive
        assert [alive(pids.FIRST_PID + n) for n in range(3)] == [True, False, False]
        assert alive(os.getpid()) and ownership.os.getpid() == os.getpid()  # the checks' own process


def test_a_schedule_given_up_leaves_no_actor_behind(monkeypatch):
    before = run_schedule(5)
    make = Scheduler.__init__
    monkeypatch.setattr(Scheduler, "__init__", lambda self, *a, **k: make(self, *a, **{**k, "max_steps": 40}))
    stuck = run_schedule(4)
    monkeypatch.setattr(Scheduler, "__init__", make)
    assert stuck.problems[0].startswith("schedule did not finish: no end after 40 steps")
    assert not [t for t in threading.enumerate() if t.name.startswith("sim-")]
    after = run_schedule(5)  # nothing of the given-up schedule reaches the next one's store
    assert (after.steps, after.operations, after.problems) == (before.steps, before.operations, before.problems)


def test_the_cleaner_retains_from_the_earliest_pending_instant(tmp_path):
    """Hudi's earliest commit to retain: the last completed commit (``RETAINED`` = 1), unless an instant of the
    commits timeline is still pending; then the last completed before it, and the slices it may read are kept."""
    from hudi_cluster_core.table import load_table
    from hudi_cluster_core.writer.append import append
    from hudi_cluster_core.writer.instant import begin_commit
    from tests.sim.cleaner import RETAINED, earliest_commit_to_retain
    from tests.sim.simulation import initial_rows

    assert RETAINED == 1
    base = str(tmp_path / "t")
    args = {"table_name": "sim", "record_key": "id", "partition_field": "region", "precombine_field": "ts"}
    append(base, initial_rows(0), **args)
    assert earliest_commit_to_retain(load_table(base).timeline) is None  # one completed commit: nothing to clean
    append(base, initial_rows(1), **args)
    first, second = (i.time for i in load_table(base).timeline.completed())
    assert earliest_commit_to_retain(load_table(base).timeline) == second
    pending = begin_commit(load_table(base), "UPSERT")  # a write in flight, read before the next one completes
    append(base, initial_rows(2), **args)
    timeline = load_table(base).timeline
    assert [i.time for i in timeline.pending()] == [pending] and len(timeline.completed()) == 3
    assert earliest_commit_to_retain(timeline) == second  # not the third: the pending write may read second's files


def test_a_share_of_the_seeds_are_consistent_bucket_schedules():
    """About a sixth of the seeds run on the MERGE_ON_READ consistent-bucket table: upserts only, the duplicate
    update strategy mostly; the kind is drawn from a stream of its own, so each copy-on-write seed's plan is the
    one it drew before the bucket table existed."""
    plans = [Plan.from_seed(seed) for seed in range(1000)]
    bucket = [p for p in plans if p.table == "bucket"]
    assert 0.15 <= len(bucket) / len(plans) <= 0.2
    assert all(w.kind == "upsert" for p in bucket for w in p.writes)
    assert {p.update_strategy for p in bucket} == {"consistent-bucket-duplicate", "allow", "reject"}
    assert sum(p.update_strategy == "consistent-bucket-duplicate" for p in bucket) > len(bucket) / 2
    assert {p.uri for p in plans} == {"sim://lake/t", "sim://lake/b"}


def test_the_checks_merge_a_merge_on_read_tables_log_files():
    """The bucket table as built: two upserts merged into base files by a resize (the simulation's merge of log
    slices), a third upsert's rows only in log files on top. The checks see every key once; without one of those
    log files its keys are gone; a copy named with an instant not on the timeline counts only if that instant is
    older than the timeline's start (archived), as Hudi's readers judge it."""
    from tests.sim import checks
    from tests.sim.actors import INITIAL_KEYS

    objects, _ = base_table("bucket")
    expected = {key: 0 for key in INITIAL_KEYS}
    assert checks.check_rows(World(objects=objects), "lake/b", expected) == []
    logs = {k: re.search(r"_(\d{17})\.log\.", k).group(1) for k in objects if k.startswith("lake/b/eu/.") and ".log." in k}
    last = sorted(k for k, instant in logs.items() if instant == max(logs.values()))
    assert last
    missing = checks.check_rows(World(objects={k: v for k, v in objects.items() if k != last[0]}), "lake/b", expected)
    assert missing and all("visible 0 times" in p for p in missing), missing
    directory, name = last[0].rsplit("/", 1)
    for instant, problems in (("20990101000000000", False), ("20000101000000000", True)):
        copy = f"{directory}/.{'0' * 8}-0000-0000-0000-{'0' * 12}-0_{instant}.log.1_0-0-0"
        found = checks.check_rows(World(objects={**objects, copy: objects[last[0]]}), "lake/b", expected)
        assert bool(found) == problems and all("visible 2 times" in p for p in found), (instant, found)


def test_the_bucket_writer_duplicates_into_resizes_that_complete_and_that_roll_back(monkeypatch):
    """Over the first bucket seeds, the writer duplicated records into a resize that then completed (the copies
    merged on top of its new base files) and into one that was rolled back (the copies deleted), and every
    schedule kept every invariant."""
    from hudi_cluster_core.run import rollback
    from tests.sim import checks, simulation

    seen = {"completed": 0, "rolled back": 0}
    deleted = rollback.duplicate_copies

    def copies_deleted(*args, **kwargs):
        found = deleted(*args, **kwargs)
        seen["rolled back"] += bool(found)
        return found

    checked = simulation.check_after

    def check_after(world, clock, plan):
        done = checks.completed_instants(checks.timeline_files(world, plan.path))
        resizes = {t for t, (action, _) in done.items() if action == "replacecommit"}
        seen["completed"] += any(re.search(r"/\.[^/]+_(\d{17})\.log\.", k) and re.search(r"_(\d{17})\.log\.", k).group(1)
                                 in resizes for k in world.objects if k.startswith(plan.path + "/"))  # fmt: skip
        return checked(world, clock, plan)

    monkeypatch.setattr(rollback, "duplicate_copies", copies_deleted)
    monkeypatch.setattr(simulation, "check_after", check_after)
    # enough seeds that several reach each case (~8 s): a change to how many storage operations a run makes moves
    # every schedule's interleaving, and with it which seeds reach a case (0-119 had one rolled-back resize)
    for seed in [s for s in range(360) if Plan.from_seed(s).table == "bucket"]:
        outcome = run_schedule(seed)
        assert not outcome.failed, (seed, outcome.problems)
    assert seen["completed"] and seen["rolled back"], seen
