"""Starting and stopping an emulator process on loopback, shared by gcs_server.py and azurite_server.py.

A server is started on a port that was free a moment ago; on a machine other test runs share, another process can
take the port in between, so a server that exits before it answers is started again on a new port (three tries).
"Answers" means any HTTP response, an error status included: the emulators refuse an unauthenticated GET of their
root, which is enough to know they listen. Every wait has a deadline; ``stop`` ends only the process we started.
"""

from __future__ import annotations

import os
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable

from tests.support.s3_server import free_port

REPO_ROOT = Path(__file__).resolve().parents[2]
TRIES = 3


class EmulatorMissing(RuntimeError):
    """The emulator's binary is not installed: scripts/setup.sh installs it."""


def installed(path: Path, what: str) -> Path:
    if not os.access(path, os.X_OK):
        raise EmulatorMissing(f"{what} not found at {path}: run `make setup` (scripts/setup.sh installs it)")
    return path


def answers(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=1).close()
        return True
    except urllib.error.HTTPError:
        return True  # an HTTP refusal is an answer
    except OSError:
        return False


def launch(
    command: Callable[[int], list[str]], ready_url: Callable[[int], str], log_path: Path, *,
    env: dict[str, str] | None = None, timeout: float = 60,
) -> tuple[subprocess.Popen, int]:  # fmt: skip
    """Start ``command(port)`` on a free loopback port, wait until ``ready_url(port)`` answers; (process, port)."""
    for _ in range(TRIES):
        port = free_port()
        with open(log_path, "ab") as log:
            process = subprocess.Popen(command(port), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       env={**os.environ, **(env or {})})  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and process.poll() is None:
            if answers(ready_url(port)):
                return process, port
            time.sleep(0.1)
        if process.poll() is None:  # still running but silent: not a port clash, give up
            stop(process)
            raise RuntimeError(f"{command(port)[0]} did not answer on port {port} within {timeout:.0f} s; see {log_path}")
    raise RuntimeError(f"{command(port)[0]} exited with {process.returncode} {TRIES} times; see {log_path}")


def stop(process: subprocess.Popen | None, timeout: float = 10) -> None:
    """SIGTERM, then SIGKILL after ``timeout`` s; always reaps the process."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)
