"""What the simulator of the commit protocol (``tests/sim``) found, replayed for real: real files on local disk,
real processes, the storage failure injected into the process that meets it.

seed=0 (``python -m tests.sim replay 0 'w*14 w!fail-after'``): a writer whose instant's inflight file was written
but reported as failed (an NFS or object-store error after the write took effect) left its requested commit behind
with no heartbeat, since the heartbeat started only after ``begin_commit``. Our next write undoes only pending
commits with our heartbeat (one without is an Apache Hudi writer's), so the instant stayed pending for ever and
kept its file groups out of every clustering. Now the heartbeat starts before the first instant file, as Hudi's
writer starts it, and a failed begin is undone at once (or, if that fails too, by the next write).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa

from hudi_cluster_core.table import load_table
from hudi_cluster_core.write.append import append

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
        from hudi_cluster_core.write.append import append
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
