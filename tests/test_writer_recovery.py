"""A writer of ours that dies mid-write leaves a pending commit; our next write undoes it (issue 13: no pending
instant left behind to block ingestion or to keep its file groups out of clustering).

Our write instants carry a heartbeat, as Hudi's writers do under OCC; a pending ``commit`` whose heartbeat is ours
and expired (or whose process is gone, on this machine) is undone by the next write: its files, markers and
instant files. An instant without our heartbeat (an Apache Hudi writer's) is left to Hudi.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa

from hudi_cluster_core.table import load_table
from hudi_cluster_core.writer.append import append
from tests.support.apache_hudi import read_hudi_snapshot, small_file_rows
from tests.support.readers import assert_same_rows, read_hudi_rs

ARGS = {"table_name": "recovery", "record_key": "id", "partition_field": "region", "precombine_field": "ts"}


def _pending(base: str) -> list[str]:
    return sorted(i.time for i in load_table(base).timeline.pending())


def _killed_append(base: str, start: int) -> subprocess.CompletedProcess:
    script = textwrap.dedent(f"""
        from hudi_cluster_core.writer.append import append
        from tests.support.apache_hudi import small_file_rows
        append({base!r}, small_file_rows({start}, 30), **{ARGS!r})
    """)  # fmt: skip
    env = {**os.environ, "HUDI_CLUSTER_FAILPOINT": "write-after-files"}
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[1])  # fmt: skip


def test_a_killed_write_is_undone_by_the_next_one_and_hudis_pending_writes_are_left_alone(spark, tmp_path, caplog):
    base = str(tmp_path / "table")
    append(base, small_file_rows(0, 30), **ARGS)
    before = read_hudi_rs(base)

    killed = _killed_append(base, 100)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    (dead,) = _pending(base)
    heartbeat = Path(base, ".hoodie/.heartbeat", dead)
    written = [p for p in Path(base).rglob(f"*_{dead}.parquet")]
    assert heartbeat.exists() and written, "the killed write left its heartbeat and data files"
    assert_same_rows(before, read_hudi_rs(base), labels=("before", "after the kill"))

    # a pending write of Apache Hudi's (its heartbeat is an empty file, here a fresh one) is Hudi's to roll back
    hudis = "20200101000000000"
    timeline = Path(base, ".hoodie/timeline")
    (timeline / f"{hudis}.commit.requested").write_bytes(b"")
    (timeline / f"{hudis}.inflight").write_bytes(b"")
    Path(base, ".hoodie/.heartbeat", hudis).write_bytes(b"")

    append(base, small_file_rows(200, 30), **ARGS)  # the writer's process is gone: undone at once, not after 2 min
    assert _pending(base) == [hudis]
    assert not heartbeat.exists() and not any(p.exists() for p in written)
    assert not Path(base, ".hoodie/.temp", dead).exists()
    assert any(dead in r.getMessage() and "failed" in r.getMessage() for r in caplog.records)
    for name in (f"{hudis}.commit.requested", f"{hudis}.inflight"):
        (timeline / name).unlink()
    Path(base, ".hoodie/.heartbeat", hudis).unlink()

    expected = pa.concat_tables([small_file_rows(0, 30), small_file_rows(200, 30)])
    after_rs = read_hudi_rs(base)
    assert sorted(after_rs["id"].to_pylist()) == sorted(expected["id"].to_pylist())
    assert_same_rows(after_rs, read_hudi_snapshot(spark, base), labels=("hudi-rs", "Apache Hudi"))
