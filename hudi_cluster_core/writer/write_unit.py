"""What every unit of work of our upsert writers shares (one file group's new file, written here or as a Spark
task): where it writes, which instant, and its number in the write, which names its rows' sequence numbers and its
file's write token as Hudi names them; and the two timing settings each write begins with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow as pa

from ..io.storage import Storage
from ..table.naming import make_write_token


def sequence_numbers(instant: str, file_index: int, rows: int) -> pa.Array:
    """``_hoodie_commit_seqno`` as Hudi numbers the rows of one file: ``<instant>_<file index>_<row>``."""
    return pa.array([f"{instant}_{file_index}_{i}" for i in range(rows)], pa.string())


@dataclass(frozen=True)
class WriteUnit:
    """The fields every unit starts with; a writer's unit adds what it writes and is called to write it."""

    base_uri: str
    storage_options: tuple[tuple[str, str], ...]
    instant: str
    index: int

    def storage(self) -> Storage:
        return Storage(self.base_uri, dict(self.storage_options))

    def sequence_numbers(self, rows: int) -> pa.Array:
        return sequence_numbers(self.instant, self.index, rows)

    def write_token(self, writing_instant: str | None = None) -> str:
        """The write token of the unit's file: the Spark task's stage and attempt when it runs as one.
        ``writing_instant`` takes the stage's place: a file named with another instant than the one writing it
        carries the writer's (``bucket_upsert``'s copies)."""
        try:
            from pyspark import TaskContext
        except ImportError:  # pragma: no cover - pyspark is a dependency; this keeps the unit usable without it
            TaskContext = None  # type: ignore[assignment,misc]
        context = TaskContext.get() if TaskContext is not None else None
        stage, attempt = (context.stageId(), context.taskAttemptId()) if context is not None else (0, self.index)
        return make_write_token(self.index, writing_instant or stage, attempt)


def lock_and_heartbeat(raw: Mapping[str, str]) -> tuple[int, tuple[int, int]]:
    """``hoodie.write.lock.wait_time_ms`` and the heartbeat's (interval ms, tolerable misses), as ``writing`` takes
    them; Hudi's defaults where a key is not given."""
    wait_ms = int(raw.get("hoodie.write.lock.wait_time_ms") or 60000)
    heartbeat_ms = (int(raw.get("hoodie.client.heartbeat.interval_in_ms") or 60000),
                    int(raw.get("hoodie.client.heartbeat.tolerable.misses") or 2))  # fmt: skip
    return wait_ms, heartbeat_ms
