"""Progress of a run: a rich bar on a terminal (run under a pty here), plain log lines without one; both fed by
the Spark job and both ending at 100% with every group and byte counted. (The plain lines of a local run:
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
    assert re.search(r"100% +3/3 group\(s\) +([\d.]+)/\1 [KM]iB +0 running +ETA", last), last
    assert "run.progress" not in text  # the bar replaces the log lines
    assert "scheduleAndExecute: completed" in text


def test_the_plain_line_and_its_eta():
    snap = Snapshot(groups_done=1, groups_total=4, bytes_done=3 * 2**20, bytes_total=12 * 2**20, tasks_running=2,
                    elapsed_s=10.0)  # fmt: skip
    assert snap.fraction == 0.25 and snap.eta_s == pytest.approx(30.0)
    assert describe("clustering T", snap) == (
        "clustering T: 1/4 group(s), 3.0 MiB/12.0 MiB rewritten (25%), 2 task(s) running, ETA 30 s"
    )
    assert Snapshot(0, 4, 0, 12, 0, 5.0).eta_s is None  # nothing done yet: no rate to go by
    assert Snapshot(4, 4, 12, 12, 0, 5.0).eta_s == 0.0
