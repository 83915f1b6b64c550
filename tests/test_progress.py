"""Progress of a run: a rich bar on a terminal (run under a pty here), plain log lines without one; both fed by
the Spark job and both ending at 100% with every group and byte counted; inside a group the running task's bytes
done (run/progress_channel.py), with the time elapsed and an ETA. (The plain lines of a local run:
tests/test_spark_settings.py, which shares its CLI run; of a standalone cluster run: tests/test_standalone_cluster.py.)"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time

import pytest

from hudi_cluster_core.run.progress import Snapshot, describe
from tests.support.runs import make_append_table
from tests.support.standalone import clean_env

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
SPARK_LOG_LINE = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d (WARN|INFO) ", re.M)  # Spark's console pattern


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> str:
    return make_append_table(str(tmp_path_factory.mktemp("progress") / "t"), batches=3, rows=20)


def copy_of(template: str, tmp_path) -> str:
    import shutil

    shutil.copytree(template, tmp_path / "t")
    return str(tmp_path / "t")


def command(base: str) -> list[str]:
    return [sys.executable, "-m", "hudi_cluster_core.cli", "run", "--base-path", base, "--mode", "scheduleAndExecute",
            "--spark-master", "local[1]", "--parallelism", "3"]  # fmt: skip


def run_in_pty(args: list[str], env: dict[str, str], timeout: float = 600) -> tuple[int, str]:
    """Runs ``args`` with a pseudo-terminal (160 columns) as stdin, stdout and stderr; returns its exit code and
    everything it wrote to the terminal."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    process = subprocess.Popen(args, stdin=follower, stdout=follower, stderr=follower, env=env, close_fds=True)
    os.close(follower)
    chunks, deadline = [], time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                try:
                    data = os.read(leader, 65536)
                except OSError:  # the terminal closed: the process is gone
                    break
                if not data:
                    break
                chunks.append(data)
            elif process.poll() is not None:
                break
        return process.wait(timeout=30), b"".join(chunks).decode("utf-8", "replace")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(leader)


def test_a_terminal_gets_a_rich_bar_that_reaches_100_percent(template, tmp_path):
    base = copy_of(template, tmp_path)
    code, screen = run_in_pty(command(base), clean_env(TERM="xterm-256color", COLUMNS="160"))
    text = ANSI.sub("", screen)
    assert code == 0, text[-3000:]
    assert "\x1b[" in screen and "━" in text, text[-3000:]  # drawn by rich: escape codes and its bar glyphs
    last = [line for line in text.replace("\r", "\n").splitlines() if "clustering " in line and "group(s)" in line][-1]
    assert re.search(r"100% +3/3 group\(s\) +([\d.]+)/\1 [KM]iB +0 running +\d+:\d\d:\d\d +ETA 0:00:00", last), last
    assert "run.progress" not in text  # the bar replaces the log lines
    assert "scheduleAndExecute: completed" in text
    assert not SPARK_LOG_LINE.search(text), text[-3000:]  # Spark's console log says nothing on a good run


def test_the_bar_moves_inside_a_group_with_an_eta_and_ends_at_100_percent(template, tmp_path):
    """One group (one partition selected), held 3 s after its output file is written: while its one task runs,
    the lines report the bytes done inside the group, with an ETA, before Spark says the task ended."""
    base = copy_of(template, tmp_path)
    done = subprocess.run(
        [*command(base), "--hoodie-conf", "hoodie.clustering.plan.partition.filter.mode=SELECTED_PARTITIONS",
         "--hoodie-conf", "hoodie.clustering.plan.strategy.partition.selected=us"],
        env=clean_env(HUDI_CLUSTER_PROGRESS="log", HUDI_CLUSTER_PROGRESS_INTERVAL_S="0",
                      HUDI_CLUSTER_PAUSE="task-after-first-file=3"),
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line.split("run.progress: ", 1)[1] for line in done.stderr.splitlines() if "run.progress: " in line]
    inside = [line for line in lines if re.search(r": 0/1 group\(s\), .* \(([1-9]\d?)%\), \d+ task\(s\) running", line)]
    # (Spark's status tracker may not count the task as running yet: the count is not what is checked here)
    assert inside, "\n".join(lines)  # e.g. "0/1 group(s), 1.2 MiB/1.2 MiB rewritten (99%), 1 task(s) running, elapsed 6 s, ETA 0 s"
    assert all(re.search(r"elapsed \d+ s, ETA \d+ s$", line) for line in inside), inside
    assert re.search(r"1/1 group\(s\), ([\d.]+ [KM]iB)/\1 rewritten \(100%\)", lines[-1]), lines
    percents = [int(re.search(r"\((\d+)%\)", line).group(1)) for line in lines]
    assert percents == sorted(percents), lines  # never backwards
    assert not SPARK_LOG_LINE.search(done.stderr), done.stderr[-3000:]


def test_the_plain_line_and_its_eta():
    snap = Snapshot(groups_done=1, groups_total=4, bytes_done=3 * 2**20, bytes_total=12 * 2**20, tasks_running=2,
                    elapsed_s=10.0)  # fmt: skip
    assert snap.fraction == 0.25 and snap.eta_s == pytest.approx(30.0)
    assert describe("clustering T", snap) == (
        "clustering T: 1/4 group(s), 3.0 MiB/12.0 MiB rewritten (25%), 2 task(s) running, elapsed 10 s, ETA 30 s"
    )
    assert Snapshot(0, 4, 0, 12, 0, 5.0).eta_s is None  # nothing done yet: no rate to go by
    assert Snapshot(4, 4, 12, 12, 0, 5.0).eta_s == 0.0


def test_the_channel_keeps_each_units_highest_bytes_and_ignores_strangers():
    """A task's reporter and the driver's listener over a real loopback connection: a task's bytes done arrive
    while it runs (read slices count half, written rows the other half, a running task at most 99%), a line
    without the listener's token is ignored, and units Spark reported finished are left to the accumulator."""
    import socket

    from hudi_cluster_core.run.progress_channel import ProgressListener, UnitReporter

    listener = ProgressListener("127.0.0.1", "127.0.0.1")
    try:
        reporter = UnitReporter(listener.address, listener.token, unit=7, unit_bytes=1000, slices=2)
        reporter.read(("us", "f1"), 10, 1.0, restart=True)  # one of two slices: a quarter of the unit
        _wait_for(lambda: listener.done.get(7) == 250, listener)
        reporter.read(("us", "f2"), 10, 1.0, restart=True)
        reporter.written(20)
        _wait_for(lambda: listener.done.get(7) == 990, listener)
        reporter.close()
        with socket.create_connection(listener.address) as stranger:
            stranger.sendall(b"not-the-token 8 500\n" + f"{listener.token} 7 100\n".encode())
        time.sleep(0.5)
        assert listener.done == {7: 990}  # the stranger's line ignored, a lower value never moves it back
        assert listener.bytes_done() == 990 and listener.bytes_done(frozenset({7})) == 0
        assert reporter.rows_read == 20
    finally:
        listener.close()


def _wait_for(condition, listener, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, listener.done
        time.sleep(0.05)
