"""What a clustering run measured: file size figures, per-phase durations, and the text summary of a result.

Figures of files written and rows written come from the write stats the run committed (each output file's
``fileSizeInBytes`` and ``numWrites``), never from the plan's estimates; a dry run, which writes nothing, gives
``None`` for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Protocol, Sequence

from .byte_units import human_bytes

if TYPE_CHECKING:
    from .plan.avro_plan import StoredPlan
    from .table import HudiTable

PHASES = ("plan", "spark", "commit", "total")
# --json's phases_s, in the order they happen (README: "Run metrics"); each present only where it was measured
START_PHASES = ("interpreter", "imports", "checks", "plan", "session_start", "session_wait", "first_task", "tasks",
                "commit", "metadata_table", "since_process_start")  # fmt: skip


class PartitionFigures(Protocol):
    @property
    def partition(self) -> str: ...
    @property
    def files_before(self) -> int: ...
    @property
    def files_after(self) -> int: ...
    @property
    def bytes_to_rewrite(self) -> int: ...
    @property
    def bytes_written(self) -> int | None: ...


class ResultFigures(Protocol):
    """What the summary reads of ``cluster_result.ClusterResult`` (named here: that module imports this one)."""

    @property
    def instant_time(self) -> str | None: ...
    @property
    def mode(self) -> str: ...
    @property
    def dry_run(self) -> bool: ...
    @property
    def message(self) -> str: ...
    @property
    def completed_file(self) -> str | None: ...
    @property
    def input_file_groups(self) -> int: ...
    @property
    def output_files(self) -> int: ...
    @property
    def bytes_rewritten(self) -> int: ...
    @property
    def groups(self) -> tuple[dict, ...]: ...
    @property
    def partitions(self) -> Sequence[PartitionFigures]: ...
    @property
    def rolled_back(self) -> tuple[str, ...]: ...
    @property
    def files_added(self) -> FileSizes: ...
    @property
    def files_removed(self) -> FileSizes: ...
    @property
    def partitions_clustered(self) -> int: ...
    @property
    def files_considered(self) -> int: ...
    @property
    def files_skipped(self) -> int: ...
    @property
    def rows_read(self) -> int | None: ...
    @property
    def rows_written(self) -> int | None: ...
    @property
    def bytes_read(self) -> int: ...
    @property
    def bytes_written(self) -> int | None: ...
    @property
    def duration_s(self) -> Mapping[str, float]: ...
    @property
    def files_per_query(self) -> tuple[dict, ...]: ...
    @property
    def phases_s(self) -> Mapping[str, float]: ...


@dataclass(frozen=True)
class FileSizes:
    """A set of files: how many, and their smallest, mean, largest and total sizes in bytes (None: not known,
    e.g. the files a dry run would write)."""

    count: int = 0
    min_bytes: int | None = None
    avg_bytes: int | None = None
    max_bytes: int | None = None
    total_bytes: int | None = None

    @classmethod
    def of(cls, sizes: Iterable[int]) -> FileSizes:
        known = list(sizes)
        if not known:
            return cls(0, None, None, None, 0)
        return cls(len(known), min(known), round(sum(known) / len(known)), max(known), sum(known))

    @classmethod
    def combined(cls, parts: Iterable[FileSizes]) -> FileSizes:
        """The files of several sets together (sizes None when any set's are unknown)."""
        parts = [p for p in parts if p.count]
        count = sum(p.count for p in parts)
        if not parts or any(p.total_bytes is None for p in parts):
            return cls(count)
        total = sum(p.total_bytes or 0 for p in parts)
        return cls(count, min(p.min_bytes or 0 for p in parts), round(total / count), max(p.max_bytes or 0 for p in parts),
                   total)  # fmt: skip

    def to_dict(self) -> dict[str, int | None]:
        return {"count": self.count, "min_bytes": self.min_bytes, "avg_bytes": self.avg_bytes,
                "max_bytes": self.max_bytes, "total_bytes": self.total_bytes}  # fmt: skip


def input_file_sizes(table: HudiTable, plan: StoredPlan) -> list[int]:
    """The size of every file the plan's groups replace (base and log files), as they are now: from the listing the
    plan was made or checked with when it has them (no request per file), else asked of storage."""
    storage = table.storage
    paths = [p for g in plan.groups for s in g.slices for p in (s.base_file, *s.log_files) if p]
    if all(p in plan.file_sizes for p in paths):
        return [plan.file_sizes[p] for p in paths]
    return [storage.size(p) for p in paths if storage.exists(p)]


def durations(**phases: float) -> dict[str, float]:
    """Seconds per phase, rounded to the millisecond, every phase of ``PHASES`` present (0 when it did not run)."""
    return {phase: round(phases.get(phase, 0.0), 3) for phase in PHASES}


def phase_seconds(**phases: float | None) -> dict[str, float]:
    """``phases_s``: the phases of ``START_PHASES`` that were measured, in their order, rounded to the millisecond."""
    measured = {phase: phases.get(phase) for phase in START_PHASES}
    return {phase: round(seconds, 3) for phase, seconds in measured.items() if seconds is not None}


def summary(result: ResultFigures) -> str:
    """The text ``hudi-cluster run`` prints: the outcome, a line per partition, and one line of the totals."""
    head = f"{result.mode}: {result.message}" + (f" (instant {result.instant_time})" if result.instant_time else "")
    lines = [head]
    for effect in result.partitions:
        written = "" if effect.bytes_written is None else f", {human_bytes(effect.bytes_written)} written"
        read = "to read" if result.dry_run else "read"
        lines.append(f"  {effect.partition or '(none)':<30} files {effect.files_before} -> {effect.files_after}, "
                     f"{human_bytes(effect.bytes_to_rewrite)} {read}{written}")  # fmt: skip
    if result.groups:
        lines.append(totals_line(result))
    return "\n".join(lines)


def totals_line(result: ResultFigures) -> str:
    """``total: 40 file(s) (17.0 MiB) -> 1 file(s) (16.1 MiB) in 2 partition(s), 100000 row(s) read, 100000
    written, 38 of 40 file group(s) considered clustered; 12.3 s (plan 0.4 s, Spark 10.1 s, commit 1.8 s)``."""
    removed, added = result.files_removed, result.files_added
    after = f"{added.count} file(s)" + ("" if added.total_bytes is None else f" ({human_bytes(added.total_bytes)})")
    verb = "would become" if result.dry_run else "->"
    rows = "" if result.rows_written is None else (
        f", {result.rows_read} row(s) read, {result.rows_written} written"
    )  # fmt: skip
    considered = result.files_considered
    clustered = considered - result.files_skipped
    took = result.duration_s
    phases = "" if result.dry_run else (
        f" (plan {took['plan']:.1f} s, Spark {took['spark']:.1f} s, commit {took['commit']:.1f} s)"
    )  # fmt: skip
    return (f"  total: {removed.count} file(s) ({human_bytes(removed.total_bytes or 0)}) {verb} {after} in "
            f"{result.partitions_clustered} partition(s){rows}; {clustered} of {considered} file group(s) clustered; "
            f"{took['total']:.1f} s{phases}")  # fmt: skip


def result_dict(result: ResultFigures) -> dict[str, Any]:
    """The ``--json`` contract (README: "Run metrics"): keys are only ever added."""
    return {
        "instant_time": result.instant_time, "mode": result.mode, "dry_run": result.dry_run,
        "message": result.message, "completed_file": result.completed_file,
        "input_file_groups": result.input_file_groups, "output_files": result.output_files,
        "bytes_rewritten": result.bytes_rewritten,
        "files_added": result.files_added.to_dict(), "files_removed": result.files_removed.to_dict(),
        "partitions_clustered": result.partitions_clustered,
        "files_considered": result.files_considered, "files_skipped": result.files_skipped,
        "rows_read": result.rows_read, "rows_written": result.rows_written,
        "bytes_read": result.bytes_read, "bytes_written": result.bytes_written,
        "duration_s": dict(result.duration_s), "phases_s": dict(result.phases_s),
        "groups": list(result.groups), "partitions": [p.__dict__ for p in result.partitions],
        "rolled_back": list(result.rolled_back), "files_per_query": list(result.files_per_query),
    }  # fmt: skip
