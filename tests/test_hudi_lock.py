"""Apache Hudi's table lock (``FileSystemBasedLockProvider``) taken by our runs when the config names it.

* An Apache Hudi 1.1.1 writer with optimistic concurrency control and the file-system lock provider can't start a
  commit while our run holds the lock (it is held inside our commit), and writes normally once we are done.
* Our run waits for the lock Hudi holds (the file Hudi creates), and gives up after
  ``hoodie.write.lock.wait_time_ms`` with one line naming the lock file, changing nothing.
* A lock provider we can't run is refused with one line naming the supported ones (exit 2).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from hudi_cluster_core.table import load_table
from tests.support.apache_hudi import (make_small_file_table, read_hudi_snapshot, small_file_rows, timeline_dir,
                                       write_hudi_table)  # fmt: skip
from tests.support.readers import assert_same_rows, read_hudi_rs
from tests.support.runs import error_lines, finish, run_cli, start_cli, table_problems, wait_for

FS_LOCK = "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
OURS = ("--hoodie-conf", f"hoodie.write.lock.provider={FS_LOCK}")
HUDI_OCC = {
    "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
    "hoodie.write.lock.provider": FS_LOCK,
    "hoodie.clean.failed.writes.policy": "LAZY",
    "hoodie.write.lock.wait_time_ms": "500",
    "hoodie.write.lock.num_retries": "1",
    "hoodie.write.lock.client.num_retries": "1",
    "hoodie.write.lock.client.wait_time_ms_between_retry": "500",
    "hoodie.write.lock.wait_time_ms_between_retry": "500",
}


@pytest.fixture(scope="module")
def template(spark, tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("hudi_lock") / "template"
    make_small_file_table(spark, str(base), batches=3, rows_per_batch=12)
    return base


@pytest.fixture
def base(template, tmp_path) -> str:
    target = tmp_path / "t"
    shutil.copytree(template, target)
    return str(target)


def _timeline(base: str) -> list[str]:
    return sorted(p.name for p in (Path(base) / ".hoodie" / "timeline").iterdir() if p.is_file())


def test_an_unsupported_lock_provider_is_one_line(base):
    before = _timeline(base)
    provider = "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider"
    run = run_cli(base, "--hoodie-conf", f"hoodie.write.lock.provider={provider}")
    assert run.returncode == 2, run.stderr[-2000:]
    lines = error_lines(run.stderr)
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr[-2000:]
    assert provider in lines[0] and FS_LOCK in lines[0], lines
    assert _timeline(base) == before


def test_our_run_waits_for_hudis_lock_then_gives_up(base):
    before = _timeline(base)
    lock = Path(base) / ".hoodie" / "lock"
    lock.write_bytes(b"")  # what Hudi's FileSystemBasedLockProvider leaves on local disk while it holds the lock
    started = time.monotonic()
    run = run_cli(base, *OURS, "--hoodie-conf", "hoodie.write.lock.wait_time_ms=1500")
    assert run.returncode == 2, run.stderr[-2000:]
    lines = error_lines(run.stderr)
    assert len(lines) == 1 and str(lock) in lines[0] and "hoodie.write.lock.wait_time_ms" in lines[0], lines
    assert time.monotonic() - started < 120
    assert _timeline(base) == before and lock.exists(), "a run that did not get the lock changed the table"

    lock.unlink()
    done = run_cli(base, *OURS)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not lock.exists(), "our run left Hudi's lock file behind"
    assert table_problems(base) == []


def test_a_hudi_occ_writer_waits_for_our_lock(spark, base):
    before_rows = read_hudi_rs(base).num_rows
    lock = Path(base) / ".hoodie" / "lock"
    ours = start_cli(base, *OURS, pause="before-commit-file=30")  # holds the lock inside its commit
    try:
        # the lock of the commit, not the short one of scheduling (seen once in `make test`: Hudi wrote between the two)
        executing = lambda: any(timeline_dir(base).glob("*.clustering.inflight"))  # noqa: E731
        wait_for(lambda: executing() and lock.exists(), timeout=300, what="our run to take Hudi's lock to commit")
        new_rows = small_file_rows(5000, 6)
        with pytest.raises(Exception) as refused:
            write_hudi_table(spark, base, new_rows, operation="insert", extra_options=HUDI_OCC)
        assert "lock" in str(refused.value).lower(), str(refused.value)[-2000:]
    finally:
        code, _, err = finish(ours, timeout=600)
    assert code == 0, err[-2000:]
    assert not lock.exists()
    # Hudi's failed attempt left a pending commit behind that its next write rolls back (LAZY policy: by clean)
    write_hudi_table(spark, base, small_file_rows(6000, 6), operation="insert", extra_options=HUDI_OCC)
    after_rs, after_hudi = read_hudi_rs(base), read_hudi_snapshot(spark, base)
    assert_same_rows(after_rs, after_hudi, labels=("hudi-rs", "Apache Hudi"))
    assert after_rs.num_rows == before_rows + 6
    assert load_table(base).timeline.completed_clustering, "our clustering did not commit"
