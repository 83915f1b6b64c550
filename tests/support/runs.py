"""Running ``hudi-cluster`` as separate processes, the way operators and schedulers do, and checking what a set of
runs left on a table: the invariants every race and crash test asserts."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from hudi_cluster_core.failpoints import ENV, PAUSE_ENV
from hudi_cluster_core.table import load_table
from hudi_cluster_core.table.naming import parse_base_file
from hudi_cluster_core.writer.append import append
from tests.support.apache_hudi import small_file_rows

SORT = "hoodie.clustering.plan.strategy.sort.columns=c_int"


def make_append_table(base: str, version: int = 9, batches: int = 4, rows: int = 25) -> str:
    for batch in range(batches):
        append(base, small_file_rows(batch * rows, rows, seed=3), table_name="race", record_key="id",
               partition_field="region", precombine_field="ts", table_version=version)  # fmt: skip
    return base


def orders_table(base: Path, commits: int = 3, files_per_partition: int = 2) -> str:
    """A version-9 table our writer made: ``commits`` appends of 30 rows, each ``files_per_partition`` files in each
    of its two partitions."""
    for batch in range(commits):
        append(str(base), small_file_rows(batch * 30, 30), table_name="orders", record_key="id", partition_field="region",
               precombine_field="ts", table_version=9, files_per_partition=files_per_partition)  # fmt: skip
    return str(base)


def cli_command(base: str, *extra: str, mode: str = "scheduleAndExecute") -> list[str]:
    return [sys.executable, "-m", "hudi_cluster_core.cli", "run", "--base-path", base, "--mode", mode,
            "--spark-master", "local[1]", "--hoodie-conf", SORT, *extra]  # fmt: skip


def cli_env(failpoint: str | None = None, pause: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HUDI_CLUSTER_")}
    if failpoint:
        env[ENV] = failpoint
    if pause:
        env[PAUSE_ENV] = pause
    return env


def start_cli(base: str, *extra: str, mode: str = "scheduleAndExecute", failpoint=None, pause=None) -> subprocess.Popen:
    return subprocess.Popen(cli_command(base, *extra, mode=mode), env=cli_env(failpoint, pause), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip


def run_cli(base: str, *extra: str, mode: str = "scheduleAndExecute", failpoint=None, pause=None, timeout=600):
    return subprocess.run(cli_command(base, *extra, mode=mode), env=cli_env(failpoint, pause), text=True,
                          capture_output=True, timeout=timeout)  # fmt: skip


def finish(process: subprocess.Popen, timeout: float = 600) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out, err


def wait_for(predicate, timeout: float = 120, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def inflight_clustering(base: str) -> list[str]:
    timeline = load_table(base).timeline
    return [i.time for i in timeline.pending_clustering if i.state.name == "INFLIGHT"]


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("hudi-cluster: error:")]


def table_problems(base: str) -> list[str]:
    """What a finished set of runs must never leave behind (empty list: the table is clean)."""
    table = load_table(base)
    timeline = table.timeline
    problems = []
    completed_per_time = Counter(f.time for f in timeline.files if f.is_completed)
    problems += [f"instant {t} completed {n} times" for t, n in completed_per_time.items() if n > 1]
    problems += [f"pending clustering {i.time} ({i.state.name})" for i in timeline.pending_clustering]
    problems += [f"pending rollback {i.time}" for i in timeline.pending_rollbacks()]
    view = table.view(from_storage=True)  # storage's files: uncommitted ones are in no metadata table
    for partition in view.partitions:
        for entry in view.listing.files(partition):
            base_file = parse_base_file(entry.name)
            if base_file and not view.is_committed(base_file.instant):
                problems.append(f"file of uncommitted instant {base_file.instant}: {partition}/{entry.name}")
    temp = Path(base) / ".hoodie" / ".temp"
    if temp.is_dir():
        problems += [f"marker folder left: {d.name}" for d in temp.iterdir() if d.is_dir()]
    problems += metadata_table_problems(table)
    heartbeats = Path(base) / ".hoodie" / ".heartbeat"
    if heartbeats.is_dir():
        problems += [f"heartbeat left: {h.name}" for h in heartbeats.iterdir()]
    return problems


def metadata_table_problems(table) -> list[str]:
    """An MDT deltacommit must belong to a completed data instant: one of a pending or rolled-back clustering
    (ours) must not survive its rollback. Hudi's own (init instants, rollbacks, cleans) are completed data
    instants or the reserved all-zero init times."""
    from hudi_cluster_core.mdt import deltacommit

    if not (Path(table.base_path) / ".hoodie" / "metadata" / ".hoodie").is_dir():
        return []
    mdt = deltacommit.metadata_timeline(table.storage)
    data = {i.time: i for i in table.timeline.instants}
    problems = []
    for instant in mdt.instants:
        if instant.action != "deltacommit" or instant.time.startswith("00000000000000000"):
            continue
        owner = data.get(instant.time)
        if owner is not None and not owner.is_completed:
            problems.append(f"MDT deltacommit {instant.file_name} of pending data instant {owner.file_name}")
        if owner is None and table.view().is_committed(instant.time) is False and instant.time > min(data, default="0"):
            problems.append(f"MDT deltacommit {instant.file_name} of no data instant (rolled back?)")
    return problems
