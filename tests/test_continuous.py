"""``hudi-cluster run --continuous``: the async service beside an Apache Hudi 1.1.1 ingestion writer.

The service clusters once ``hoodie.clustering.async.max.commits`` writes have landed since the last clustering,
prints one line per clustering, clusters again after more Hudi writes, and exits 0 on SIGTERM, between cycles or
mid-clustering (then its instant is rolled back). Rows are checked by both readers; nothing is left pending.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.support.apache_hudi import make_small_file_table, read_hudi_snapshot, small_file_rows, write_hudi_table
from tests.support.readers import assert_same_rows, read_hudi_rs
from tests.support.runs import cli_command, cli_env, table_problems, wait_for

SERVICE = ("--continuous", "--min-sync-interval-seconds", "1", "--hoodie-conf", "hoodie.clustering.async.max.commits=2")


@pytest.fixture(scope="module")
def template(spark, tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("continuous") / "template"
    make_small_file_table(spark, str(base), batches=3, rows_per_batch=12)
    return base


class Service:
    def __init__(self, base: str, pause: str | None = None):
        self.process = subprocess.Popen(cli_command(base, *SERVICE), env=cli_env(pause=pause), text=True,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        self.lines: list[str] = []
        self.errors: list[str] = []
        # both pipes are drained by threads: a stray child holding a pipe open must not hang the test
        self.readers = [threading.Thread(target=self._read, args=(pipe, into), daemon=True)
                        for pipe, into in ((self.process.stdout, self.lines), (self.process.stderr, self.errors))]  # fmt: skip
        for reader in self.readers:
            reader.start()

    @staticmethod
    def _read(pipe, into: list[str]) -> None:
        for line in pipe:
            into.append(line.rstrip("\n"))

    def clustered(self) -> list[str]:
        return [line for line in self.lines if ": clustered " in line]

    def stop(self, timeout: float = 120) -> tuple[int, str]:
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"the service did not stop on SIGTERM within {timeout} s: {self.lines[-20:]}") from None
        for reader in self.readers:
            reader.join(timeout=30)
        assert not any(r.is_alive() for r in self.readers), "a process left behind (a JVM?) still holds the pipes"
        return code, "\n".join(self.errors)


def test_the_service_clusters_after_every_n_writes_and_stops_on_sigterm(spark, template, tmp_path):
    base = str(tmp_path / "t")
    shutil.copytree(template, base)
    service = Service(base)
    try:
        wait_for(lambda: len(service.clustered()) == 1, timeout=300, what="the first clustering")
        for batch in (100, 101):  # two more Hudi writes: the trigger again
            write_hudi_table(spark, base, small_file_rows(batch * 12, 12), operation="insert")
        wait_for(lambda: len(service.clustered()) == 2, timeout=300, what="the second clustering")
        time.sleep(2)  # a few idle cycles: no clustering without new writes
        assert len(service.clustered()) == 2, service.lines
    finally:
        code, err = service.stop()
    assert code == 0, err[-2000:]
    assert any("stopped by SIGTERM" in line for line in service.lines), service.lines
    assert "Traceback" not in err, err[-2000:]
    assert table_problems(base) == []
    rs, hudi = read_hudi_rs(base), read_hudi_snapshot(spark, base)
    assert_same_rows(rs, hudi, labels=("hudi-rs", "Apache Hudi"))
    assert rs.num_rows == 5 * 12


def test_sigterm_mid_clustering_rolls_back_and_exits_0(spark, template, tmp_path):
    base = str(tmp_path / "t")
    shutil.copytree(template, base)
    before = read_hudi_rs(base)
    service = Service(base, pause="after-tasks=60")
    try:
        # markers exist once the tasks ran: the run is paused after them, mid-clustering
        wait_for(lambda: list(Path(base, ".hoodie", ".temp").glob("*/*")), timeout=300, what="the tasks to write")
        time.sleep(1)
    finally:
        code, err = service.stop()
    assert code == 0, err[-2000:]
    assert any("stopped by SIGTERM" in line and "rolled back" in line for line in service.lines), service.lines
    assert table_problems(base) == []
    assert_same_rows(read_hudi_rs(base), before, labels=("after", "before"))


def test_sigterm_right_after_the_plan_is_written_leaves_nothing_behind(template, tmp_path):
    base = str(tmp_path / "t")
    shutil.copytree(template, base)
    before = read_hudi_rs(base)
    service = Service(base)
    try:  # the heartbeat appears when the plan is written, before the Spark session exists (or while it starts)
        wait_for(lambda: list(Path(base, ".hoodie", ".heartbeat").glob("*")), timeout=300, what="a clustering to start")
    finally:
        code, err = service.stop()
    assert code == 0, f"exit {code}; stdout: {service.lines[-20:]}; stderr: {err[-2000:]}"
    assert any("stopped by SIGTERM" in line for line in service.lines), service.lines
    assert table_problems(base) == []
    after = read_hudi_rs(base)
    assert_same_rows(after, before, labels=("after", "before"))


def test_an_instant_archived_between_listing_and_reading_is_looked_at_again(spark, template, tmp_path):
    """Hudi's archival (or a rollback) beside the service removes a timeline file the service has listed but not
    read yet: the cycle reads the table again next time instead of stopping the service (met in the soak)."""
    from hudi_cluster_core.api import cluster
    from hudi_cluster_core.service import run_continuous
    from hudi_cluster_core.table import load_table

    base = str(tmp_path / "t")
    shutil.copytree(template, base)
    done = cluster(base, "scheduleAndExecute", spark=spark)
    completed = Path(base, ".hoodie", "timeline", Path(done.completed_file).name)
    away = tmp_path / completed.name
    opened: list[int] = []

    def open_table():
        table = load_table(base)  # the listing holds the completed clustering...
        if not opened:
            completed.rename(away)  # ...which goes before it is read, as Hudi's archival moves it out
        elif away.exists():
            away.rename(completed)
        opened.append(1)
        return table

    lines: list[str] = []
    stats = run_continuous(base, run_once=lambda: pytest.fail("no new writes: nothing to cluster"), max_commits=1,
                           min_sync_interval_s=0, max_cycles=3, open_table=open_table, say=lines.append)  # fmt: skip
    assert (stats.cycles, stats.failures, len(opened)) == (3, 0, 3), lines
    assert completed.exists() and table_problems(base) == []


def test_a_clustering_whose_timeline_file_vanishes_reads_the_table_again(spark, template, tmp_path, monkeypatch, caplog):
    """The same race inside one run: the completed clustering it reads goes (as Hudi's archival moves it) between
    the listing and the read; the attempt fails with nothing left behind and the run starts again from a fresh read."""
    from hudi_cluster_core.api import cluster
    from hudi_cluster_core.table.timeline import Timeline

    base = str(tmp_path / "t")
    shutil.copytree(template, base)
    first = cluster(base, "scheduleAndExecute", spark=spark)
    for batch in (200, 201):
        write_hudi_table(spark, base, small_file_rows(batch * 12, 12), operation="insert")
    completed = Path(base, ".hoodie", "timeline", Path(first.completed_file).name)
    away = tmp_path / completed.name
    real_read, moved = Timeline.read, []

    def read(self, instant, *, missing_ok=False):
        if instant.file_name == completed.name and not moved:
            moved.append(completed.rename(away))  # gone after the listing, before this read (once)
        elif away.exists():
            away.rename(completed)  # back for the next attempt (an archived instant would be in the archive)
        return real_read(self, instant, missing_ok=missing_ok)

    monkeypatch.setattr(Timeline, "read", read)
    with caplog.at_level("INFO", logger="hudi_cluster_core.table.timeline"):
        second = cluster(base, "scheduleAndExecute", spark=spark)
    assert any("reading the table again (attempt 2 of 3)" in r.getMessage() for r in caplog.records), caplog.text
    assert second.completed_file and completed.exists()
    assert table_problems(base) == []
    assert read_hudi_rs(base).num_rows == 5 * 12
