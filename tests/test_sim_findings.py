"""What the simulator of the commit protocol (``tests/sim``) found, replayed for real: real files on local disk,
real processes, the storage failure injected into the process that meets it. (Each replay was recorded on the
code of its day, two clustering runs and a writer: ``python -m tests.sim replay SEED 'STEPS'`` at that commit.)

seed=0 (``python -m tests.sim replay 0 'w*14 w!fail-after'``): a writer whose instant's inflight file was written
but reported as failed (an NFS or object-store error after the write took effect) left its requested commit behind
with no heartbeat, since the heartbeat started only after ``begin_commit``. Our next write undoes only pending
commits with our heartbeat (one without is an Apache Hudi writer's), so the instant stayed pending for ever and
kept its file groups out of every clustering. Now the heartbeat starts before the first instant file, as Hudi's
writer starts it, and a failed begin is undone at once (or, if that fails too, by the next write).

seed=57 (``replay 57 'w*3 c1 w c1*3 w*3 c1 w c1!freeze w*7 w!crash-after'``): a clustering run's recovery took the
heartbeat of a writer's new instant for a leftover (its instant was not on the timeline the run had loaded before
the writer began) and deleted it; the writer then died, and its commit stayed pending for ever, as above. Recovery
now reads the timeline after listing the heartbeats. Seeds 10362, 11001 and 11322 of a later campaign again left a
writer's commit pending without its heartbeat (they did not replay in a fresh process: a footer cache outlived
its schedule, fixed since); one way that happens, shown for real below, is a recovery judging the heartbeats while
a writer is between its heartbeat and its instant's files (slowed, or the clock jumped). Recovery now judges them
under the timeline lock, under which a writer begins its instant.

seed=47 (``replay 47``, 264 steps ending ``c2!freeze c1*118 c1!timeout-after``): a clustering run frozen while executing (a GC pause, a stopped VM) past
its heartbeat's expiry; another run claimed the instant, began its rollback (requested and inflight written),
failed on a storage error and let go; the frozen run thawed, wrote its heartbeat again, and committed over the
rollback that had begun, leaving the rollback of a completed instant pending for ever (Apache Hudi's next writer
would execute it). A commit now yields to a rollback plan of its instant. Replayed below with SIGSTOP and SIGCONT.

seed=2 (``replay 2``): a storage timeout while a writer looked at the metadata table's ``hoodie.properties``
made it delete the whole metadata table, as if the table were unreadable. A failed storage request now fails the
commit (and it is retried); only a metadata table that is missing or malformed is dropped.

seeds 10891, 1212, 10990, 3713, 11948, 13023 (schedules on an object store under Apache Hudi's storage-based lock;
``replay 10891 'c1 a*2 c1 a*2 c1*3 k*2 c1*4 k*3 c1*2 k*2 c1 k c1*3 k c1*2 k*3 c1 c1!fail-after c1*7 a c1*5
c1!freeze a'`` on the code of their day): a run stopped inside its timeline lock past its lease's validity; another
run took the lock over, rolled back or committed what the stopped one was doing; the stopped run, continued,
wrote on as if it still held the lock: a second completion of one rollback, or a replacecommit over files the
other's rollback had deleted (every row of the replaced file groups gone). A run under that lock now stops before
its next timeline write (its metadata table's included) once its lease has less than one renewal interval left.

seed=15695 (flock schedule; ``replay 15695`` on the code of its day): a run's heartbeat refresh, after another run
had taken its instant over, rewrote the heartbeat as its own; both runs then passed the owner check at commit,
and the first committed files the other's rollback had deleted. A refresh now stops once the heartbeat names
another owner.

seed=7113 (``replay 7113``, 668 steps on the code of its day; the archiver crashed but archived nothing): an
upsert read the timeline while a clustering was inflight, then stalled; the clustering completed, a second one
and a clean followed, the clean deleting the file groups the first replaced. The writer then read the file
listing: the replaced groups gone, the clusterings' files on no instant of the timeline it had read, so it saw no
file group at all, took the keys it updated for new ones and wrote them again beside the clustering's copy. Apache
Hudi's writer requests its instant before it reads the table, and its cleaner retains from the earliest pending
instant; ours reads first, so it now begins its instant only if no clean began since its read (else it reads the
table again).

seed=5641 (storage-lock schedule; ``replay 5641`` at the code of its day, shrunk to 258 steps with ``beats-fail``
and ``freeze`` faults, no clock jump): a run claimed a planned clustering, then its heartbeat refreshes failed;
another run took the instant over, went inflight and wrote its files; the first went on into its execution, found
the instant inflight, took it for a dead run's leftovers and rolled it back, then executed it again; the other
committed, its heartbeat intact, naming the files that rollback had deleted. The heartbeat fix of seed 15695 did
not cover it (execution rolled back an inflight instant without looking at the heartbeat). A run now executes only
while its heartbeat names it, and a commit refuses once a marker of its files is gone: a rollback deletes the
files and then the marker folder under the timeline lock the commit holds, so no heartbeat race (a refresh's stale
write landing after a takeover) can make a commit name files a rollback deleted.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa

from hudi_cluster_core.io.storage import Storage
from hudi_cluster_core.table import load_table
from hudi_cluster_core.table.ownership import Heartbeat
from hudi_cluster_core.table.storage_lock import CLOCK_DRIFT_MS, StorageLock, now_ms
from hudi_cluster_core.writer.append import append
from tests.support.readers import assert_same_rows, read_hudi_rs
from tests.support.runs import error_lines, finish, make_append_table, wait_for
from tests.test_storage_lock import BUCKET, _finish, _held_for_a_while, _lock_json, _run, s3  # noqa: F401 (s3: fixture)

ARGS = {"table_name": "finding", "record_key": "id", "partition_field": "region", "precombine_field": "ts",
        "heartbeat_ms": (1000, 2)}  # fmt: skip


def _rows(start: int) -> pa.Table:
    ids = [f"k{n:03d}" for n in range(start, start + 4)]
    return pa.table({"id": ids, "ts": pa.array([start] * 4, pa.int64()), "region": ["us", "eu"] * 2})


def _append_with_failing_store(base: str, start: int, failing: str) -> subprocess.CompletedProcess:
    """An append in its own process, on a store where writes of files named ``*{failing}`` take effect and then
    report an I/O error (and every delete fails, with ``failing`` = ".inflight+delete")."""
    suffix, _, deletes = failing.partition("+")
    script = textwrap.dedent(f"""
        import pyarrow as pa
        from hudi_cluster_core.io.local_store import LocalBackend
        from hudi_cluster_core.writer.append import append
        write, delete = LocalBackend.write, LocalBackend.delete

        def failing_write(self, path, data):
            write(self, path, data)
            if path.endswith({suffix!r}):
                raise OSError(5, "Input/output error (reported after the write took effect)", path)

        def failing_delete(self, path):
            raise OSError(5, "Input/output error", path)

        LocalBackend.write = failing_write
        if {deletes!r}:
            LocalBackend.delete = failing_delete
        ids = [f"k{{n:03d}}" for n in range({start}, {start} + 4)]
        rows = pa.table({{"id": ids, "ts": pa.array([{start}] * 4, pa.int64()), "region": ["us", "eu"] * 2}})
        append({base!r}, rows, **{ARGS!r})
    """)  # fmt: skip
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[1])  # fmt: skip


def _pending_metadata_check(base: str) -> subprocess.CompletedProcess:
    """An append in its own process whose first look at the metadata table's properties times out."""
    script = textwrap.dedent(f"""
        import pyarrow as pa
        from hudi_cluster_core.io.local_store import LocalBackend
        from hudi_cluster_core.writer.append import append
        info, failed = LocalBackend.info, []

        def slow_info(self, path):
            if path.endswith("metadata/.hoodie/hoodie.properties") and not failed:
                failed.append(path)
                raise TimeoutError(110, "Connection timed out", path)
            return info(self, path)

        LocalBackend.info = slow_info
        rows = pa.table({{"id": ["k900"], "ts": pa.array([900], pa.int64()), "region": ["us"]}})
        append({base!r}, rows, **{ARGS!r})
    """)  # fmt: skip
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[1])  # fmt: skip


def _pending(base: str) -> list[str]:
    return [i.file_name for i in load_table(base).timeline.pending()]


def test_a_begin_whose_inflight_write_reports_failure_leaves_no_pending_commit(tmp_path):
    base = str(tmp_path / "t")
    append(base, _rows(0), **ARGS)
    failed = _append_with_failing_store(base, 100, ".inflight")
    assert failed.returncode != 0 and "Input/output error" in failed.stderr, failed.stderr[-2000:]
    assert _pending(base) == []  # undone by the write that failed


def test_a_begin_that_cannot_be_undone_is_undone_by_the_next_write(tmp_path):
    base = str(tmp_path / "t")
    append(base, _rows(0), **ARGS)
    failed = _append_with_failing_store(base, 100, ".inflight+delete")
    assert failed.returncode != 0, failed.stderr[-2000:]
    assert _pending(base), "the failing store kept the instant"
    time.sleep(2.5)  # its heartbeat (1 s x 2 misses) expires: that writer is gone
    append(base, _rows(200), **ARGS)
    assert _pending(base) == []
    assert len(load_table(base).timeline.completed()) == 2  # the first write and the last, nothing of the failed one


def test_a_storage_timeout_on_the_metadata_table_never_deletes_it(tmp_path):
    from hudi_cluster_core.io.storage import Storage
    from hudi_cluster_core.table.metadata_table import has_metadata_table, metadata_partitions
    from hudi_cluster_core.writer.append import create_table
    from tests.sim.metadata_setup import add_metadata_table

    base = str(tmp_path / "t")
    storage = Storage(base)
    create_table(storage, _rows(0).schema, table_name="finding", record_key="id", partition_field="region",
                 precombine_field="ts", table_version=9)  # fmt: skip
    add_metadata_table(storage, "finding")
    append(base, _rows(0), **ARGS)
    failed = _pending_metadata_check(base)
    assert failed.returncode != 0 and "timed out" in failed.stderr, failed.stderr[-2000:]
    assert has_metadata_table(storage) and metadata_partitions(storage) == ["files"]
    assert _pending(base) == []  # the failed write undid itself
    append(base, _rows(300), **ARGS)  # and the next one keeps the metadata table
    assert has_metadata_table(storage) and len(load_table(base).timeline.completed()) == 2


HEARTBEAT_CONF = ("--hoodie-conf", "hoodie.client.heartbeat.interval_in_ms=1000",
                  "--hoodie-conf", "hoodie.client.heartbeat.tolerable.misses=2")  # fmt: skip


def _recover_with_failing_delete(base: str) -> subprocess.CompletedProcess:
    """The next run's recovery, in its own process, on a store whose deletes of data files fail."""
    script = textwrap.dedent(f"""
        from hudi_cluster_core.io.local_store import LocalBackend
        from hudi_cluster_core.run.recovery import Ownership, recover
        from hudi_cluster_core.table import load_table

        def failing_delete(self, path):
            if path.endswith(".parquet"):
                raise OSError(5, "Input/output error", path)
            return delete(self, path)

        delete, LocalBackend.delete = LocalBackend.delete, failing_delete
        recover(load_table({base!r}), Ownership(1000, 2, 60000), keep_plans=False)
    """)  # fmt: skip
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[1])  # fmt: skip


def test_a_frozen_run_never_commits_over_a_rollback_another_run_began(tmp_path):
    import os
    import signal

    from tests.support.runs import finish, inflight_clustering, make_append_table, start_cli, table_problems, wait_for

    base = make_append_table(str(tmp_path / "t"))
    rows_before = sorted(r["id"] for r in _all_rows(base))
    run = start_cli(base, *HEARTBEAT_CONF, pause="after-tasks=6")
    try:
        wait_for(lambda: inflight_clustering(base) and _new_files(base, inflight_clustering(base)[0]), 300,
                 "the run's tasks to finish")  # fmt: skip
        os.kill(run.pid, signal.SIGSTOP)  # frozen, heartbeat thread and all
        time.sleep(3)  # past its heartbeat's tolerance (1 s x 2)
        instant = inflight_clustering(base)[0]
        failed = _recover_with_failing_delete(base)
        assert failed.returncode != 0 and "Input/output error" in failed.stderr, failed.stderr[-2000:]
        timeline = load_table(base).timeline
        assert [r.time for r in timeline.pending_rollbacks()], "the other run began a rollback and let go"
    finally:
        os.kill(run.pid, signal.SIGCONT)
    code, _, err = finish(run)
    assert code != 0 and "began rolling it back" in err, err[-2000:]
    timeline = load_table(base).timeline
    assert timeline.get(instant) is None or not timeline.get(instant).is_completed
    assert table_problems(base) == []
    assert sorted(r["id"] for r in _all_rows(base)) == rows_before


def _new_files(base: str, instant: str) -> bool:
    return any(p.name.endswith(f"_{instant}.parquet") for p in Path(base).rglob("*.parquet"))


def _all_rows(base: str) -> list[dict]:
    from tests.support.readers import read_hudi_rs

    return read_hudi_rs(base).to_pylist()


def test_recovery_with_an_old_view_of_the_table_keeps_a_new_writers_heartbeat(tmp_path):
    """seed=57 on real files: a writer's heartbeat and requested commit appear after a clustering run loaded the
    table; the writer dies. The run's recovery must not take the heartbeat for a leftover, or nothing of ours ever
    undoes that commit."""
    import os

    from hudi_cluster_core.run.recovery import Ownership, remove_leftovers
    from hudi_cluster_core.table.ownership import Heartbeat, heartbeat_path
    from hudi_cluster_core.writer.instant import begin_commit, undo_failed_writes

    base = str(tmp_path / "t")
    append(base, _rows(0), **ARGS)
    loaded_before = load_table(base)
    table = load_table(base)
    instant = begin_commit(table, "UPSERT", before_files=lambda t: Heartbeat(table.storage, t, 1000, 2).beat())
    beat = heartbeat_path(table.storage, instant)
    os.utime(beat, (time.time() - 10, time.time() - 10))  # the writer died 10 s ago: its heartbeat expired
    remove_leftovers(loaded_before, Ownership(1000, 2, 60000))
    assert os.path.exists(beat)
    assert undo_failed_writes(load_table(base), 1000, 2) == [instant]
    assert _pending(base) == []


def test_recovery_waits_for_a_writer_between_its_heartbeat_and_its_instant(tmp_path):
    """A writer begins its instant under the timeline lock, heartbeat first; if it is slowed there past the
    heartbeat's tolerance (or the clock jumps), another process's recovery must not take the heartbeat for a
    leftover: it waits for the lock, then finds the instant on the timeline."""
    import os

    from hudi_cluster_core.table.ownership import Heartbeat, heartbeat_path, timeline_lock

    base = str(tmp_path / "t")
    append(base, _rows(0), **ARGS)
    table = load_table(base)
    script = textwrap.dedent(f"""
        from hudi_cluster_core.run.recovery import Ownership, remove_leftovers
        from hudi_cluster_core.table import load_table
        remove_leftovers(load_table({base!r}), Ownership(1000, 2, 60000))
    """)  # fmt: skip
    instant = table.timeline.new_instant_time()
    with timeline_lock(table.storage):  # the writer, inside begin_commit
        Heartbeat(table.storage, instant, 1000, 2).beat()
        beat = heartbeat_path(table.storage, instant)
        os.utime(beat, (time.time() - 10, time.time() - 10))  # slowed past its heartbeat's tolerance
        recovery = subprocess.Popen([sys.executable, "-c", script], cwd=Path(__file__).resolve().parents[1],
                                    stderr=subprocess.PIPE, text=True)  # fmt: skip
        time.sleep(3)  # the recovery runs meanwhile (and waits for the lock)
        timeline = table.reload().timeline
        table.storage.write_atomic(timeline.path_of(f"{instant}.commit.requested"), b"")
    assert recovery.wait(timeout=120) == 0, recovery.stderr.read()[-2000:]
    assert os.path.exists(beat)


def test_a_run_whose_lease_ran_out_while_it_was_stopped_commits_nothing(s3, tmp_path):
    """Seeds 10891, 1212 and 10990 (storage-lock schedules): a run stopped inside its commit past its lease's
    validity; another owner took the lock over; the stopped run, once continued, wrote its timeline as if it still
    held it. Replayed with SIGSTOP and SIGCONT on an S3 server: it now stops at its next timeline write."""
    local = make_append_table(str(tmp_path / "table"), batches=4, rows=20)
    before = read_hudi_rs(local)
    s3.upload_dir(local, BUCKET, "fence")
    holder = _run(f"s3a://{BUCKET}/fence", s3, pause="before-commit-file=6", log_dir=tmp_path, name="holder")
    try:
        wait_for(lambda: _held_for_a_while(s3, "fence"), timeout=300, what="the run to hold the lock in its commit")
        os.kill(holder[0].pid, signal.SIGSTOP)  # a pause (GC, a stopped VM): its lease's renewal stops too
        held = _lock_json(s3, "fence")
        time.sleep(max(0.0, (held["validUntil"] + CLOCK_DRIFT_MS - now_ms()) / 1000) + 0.5)
        storage = Storage(f"s3a://{BUCKET}/fence", s3.options())
        taker = StorageLock(storage, validity_secs=10, renew_secs=1)  # another writer, once the lease ran out
        assert taker.try_acquire(storage, "taker"), _lock_json(s3, "fence")
        os.kill(holder[0].pid, signal.SIGCONT)
        time.sleep(1.0)
        taker.release(storage, "taker")
    finally:
        os.kill(holder[0].pid, signal.SIGCONT)
        code, _, err = _finish(holder, timeout=300)
    lines = error_lines(err)
    assert code != 0 and len(lines) == 1 and "lease" in lines[0], err[-3000:]
    copy = s3.download_dir(BUCKET, "fence", tmp_path / "copy")
    timeline = sorted(p.name for p in (copy / ".hoodie" / "timeline").iterdir() if p.is_file())
    assert not [n for n in timeline if n.endswith(".replacecommit")], timeline
    assert_same_rows(before, read_hudi_rs(str(copy)), labels=("before", "after"))


def test_a_run_that_lost_its_instant_never_takes_its_heartbeat_back(tmp_path):
    """Seed 15695 (``replay 15695`` on the code of its day, flock schedule): a clustering run went on executing
    while its heartbeat refreshes failed; another run took the instant over (rolled it back, claimed it again,
    wrote its own heartbeat); the first run's next refresh rewrote the heartbeat as its own, so the owner check at
    commit passed for it, and it committed files the other's rollback had deleted. Replayed with two processes:
    the first stopped (SIGSTOP) past its heartbeat's expiry while another takes the instant's heartbeat over."""
    base = tmp_path / "t"
    (base / ".hoodie").mkdir(parents=True)
    instant = "20260101000000000"
    script = textwrap.dedent(f"""
        import time
        from hudi_cluster_core.io.storage import Storage
        from hudi_cluster_core.table.ownership import Heartbeat
        Heartbeat(Storage({str(base)!r}), {instant!r}, 500, 2).start()
        print("beating", flush=True)
        time.sleep(60)
    """)  # fmt: skip
    first = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             cwd=Path(__file__).resolve().parents[1])  # fmt: skip
    try:
        assert first.stdout.readline().strip() == "beating"
        os.kill(first.pid, signal.SIGSTOP)  # paused (or cut off from the store) past 2 x 500 ms
        time.sleep(1.5)
        storage = Storage(str(base))
        taker = Heartbeat(storage, instant, 500, 2)
        assert not taker.state().live
        taker.start()  # another run takes the instant over
        os.kill(first.pid, signal.SIGCONT)
        time.sleep(2.0)  # several of the first run's refresh intervals
        assert taker.still_owned(), taker.state()
        taker.stop()
    finally:
        first.kill()
        first.wait()


def test_an_upsert_that_read_the_table_before_a_clustering_and_a_clean_writes_no_key_twice(tmp_path, monkeypatch):
    """Seed 7113 on real files: between the upsert's read of the timeline and its file listing, a clustering
    (its own process) replaces the file groups, a commit follows, and a clean deletes the replaced groups. The
    upsert must not take the keys it updates for new ones: it reads the table again and updates them."""
    from hudi_cluster_core.table.timeline import retry_when_timeline_changes
    from hudi_cluster_core.writer import upsert as writer_upsert
    from tests.sim.cleaner import clean
    from tests.support.runs import run_cli, table_problems

    base = str(tmp_path / "t")
    for start in (0, 4, 8):
        append(base, _rows(start), **ARGS)
    reads = []

    def read_then_others_go_on(*args, **kwargs):
        table = load_table(*args, **kwargs)
        reads.append(table)
        if len(reads) == 1:  # the writer stalls right after its read of the timeline
            clustering = run_cli(base, "--hoodie-conf", "hoodie.clustering.plan.strategy.sort.columns=id")
            assert clustering.returncode == 0, clustering.stderr[-2000:]
            append(base, _rows(100), **ARGS)  # the replacecommit is no longer the commit the cleaner retains
            assert clean(base) is not None  # the file groups the clustering replaced are deleted
        return table

    monkeypatch.setattr(writer_upsert, "load_table", read_then_others_go_on)
    rows = pa.table({"id": ["k000", "k001", "k002", "k003"], "ts": pa.array([50] * 4, pa.int64()),
                     "region": ["us", "eu"] * 2})  # fmt: skip
    summary = retry_when_timeline_changes(lambda: writer_upsert.upsert(base, rows), "upsert")
    assert len(reads) == 2 and (summary["updates"], summary["inserts"]) == (4, 0), summary
    expected = {f"k{n:03d}": 50 if n < 4 else n // 4 * 4 for n in range(12)} | {f"k{n}": 100 for n in range(100, 104)}
    assert sorted((r["id"], r["ts"]) for r in _all_rows(base)) == sorted(expected.items())
    assert table_problems(base) == []


def _stalled_claimer(base: str, instant: str) -> subprocess.Popen:
    """A clustering run in its own process that claims ``instant``, prints its heartbeat's body, and is held up
    (reading its stdin) before it executes, its heartbeat no longer refreshed (cut off from the store, or paused:
    a SIGSTOP could land between a refresh's read and its write, which then takes the heartbeat back at SIGCONT);
    told to go on, it executes as ``execute_plan`` does and is killed right after the instant is inflight (the
    failpoint: what it would do next does not matter here)."""
    script = textwrap.dedent(f"""
        import sys
        from hudi_cluster_core.config.load import load_config
        from hudi_cluster_core.plugins import default_registry
        from hudi_cluster_core.run.execute import execute_plan, load_stored_plan
        from hudi_cluster_core.run.recovery import Ownership, claim
        from hudi_cluster_core.table import load_table
        table = load_table({base!r})
        heartbeat = claim(table, {instant!r}, Ownership(1000, 2, 60000))
        heartbeat.stop(delete=False)
        print(table.storage.read_bytes(heartbeat.path).decode(), flush=True)
        sys.stdin.readline()
        table = table.reload()
        config = load_config(None, [], {{"hoodie.clustering.plan.strategy.sort.columns": "c_int"}})
        execute_plan(table, load_stored_plan(table, {instant!r}), config, default_registry(), None, parallelism=1,
                     heartbeat=heartbeat)
    """)  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("HUDI_CLUSTER_")}
    env["HUDI_CLUSTER_FAILPOINT"] = "after-inflight"
    return subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env,
                            cwd=Path(__file__).resolve().parents[1])  # fmt: skip


def test_a_run_held_up_after_its_claim_never_undoes_the_run_that_took_over(tmp_path):
    """Seed 5641 (storage-lock schedule, ``replay 5641`` on the code of its day, 258 steps): run c1 claimed a
    planned clustering and was held up before executing it, past its heartbeat's expiry; c2 claimed it, went
    inflight and wrote its files; c1 went on, found the instant inflight, took that for a dead run's leftovers and
    rolled it back (c2's files deleted), then executed it again; c2 committed, naming the deleted files: the
    replaced file groups' rows gone. A run now executes only while its heartbeat is still its own, and a commit
    refuses once a marker of its files is gone (a rollback deleted them). The second guard is reached by a second
    held-up run whose heartbeat refresh raced the takeover: its stale write made the heartbeat name it while it
    rolled back, and the new owner's own delayed write named that owner again by its commit."""
    from hudi_cluster_core.api import cluster
    from tests.support.runs import inflight_clustering, start_cli, table_problems

    base = make_append_table(str(tmp_path / "t"))
    rows_before = sorted((r["id"], r["ts"]) for r in _all_rows(base))
    cluster(base, "schedule", {"hoodie.clustering.plan.strategy.sort.columns": "c_int"})
    instant = load_table(base).timeline.pending_clustering[0].time
    heartbeat = Path(base) / ".hoodie" / ".heartbeat" / instant
    first = second = taker = None
    try:
        held = []
        for _ in range(2):  # each claims in turn, once the one before is held up past its heartbeat's expiry
            held.append(_stalled_claimer(base, instant))
            held[-1].stdout.readline()
            own_beat = heartbeat.read_bytes()
            time.sleep(2.5)  # past 1 s x 2 misses
        first, second = held
        taker = start_cli(base, *HEARTBEAT_CONF, "--instant-time", instant, mode="execute", pause="after-tasks=6")
        wait_for(lambda: inflight_clustering(base) and _new_files(base, instant), 300, "the taker's files")
        os.kill(taker.pid, signal.SIGSTOP)  # inside its pause: between its tasks and its commit
        time.sleep(1.0)  # its tasks' writes land (they run in Spark's workers)
        taker_beat = heartbeat.read_bytes()

        _, err = first.communicate("go\n", timeout=120)
        assert first.returncode == 1 and "another run took it over" in err, (first.returncode, err[-2000:])
        assert _new_files(base, instant), "the first run deleted nothing"

        heartbeat.write_bytes(own_beat)  # a stale refresh of the second run lands after the takeover
        second.communicate("go\n", timeout=120)
        assert second.returncode == -signal.SIGKILL, "it rolled the taker's files back and went inflight again"
        heartbeat.write_bytes(taker_beat)  # and the taker's own delayed refresh lands after that
    finally:
        if taker is not None:
            os.kill(taker.pid, signal.SIGCONT)
        for process in (p for p in (first, second) if p is not None and p.poll() is None):
            process.kill()
    code, _, err = finish(taker)
    lines = error_lines(err)
    assert code != 0 and len(lines) == 1 and "rolled it back while this run worked" in lines[0], err[-3000:]
    timeline = load_table(base).timeline
    assert not [i for i in timeline.completed() if i.time == instant]
    assert sorted((r["id"], r["ts"]) for r in _all_rows(base)) == rows_before
    assert table_problems(base) == []

