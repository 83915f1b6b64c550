"""One unit of a clustering's work, as a task runs it: a whole group, or one key range of a large one.

The same function runs in a Spark task's Python worker (run/spark.py) and in a local run's worker process
(run/local_pool.py): the write token, the progress sent to the driver, the strategy's ``execute_group`` and the
check of what was written against what was read.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from typing import Iterator, Protocol

from ..plugins import call_hook
from . import digest
from .progress_channel import UnitReporter
from .task import GroupTask


class Engine(Protocol):
    """What runs a clustering's units: a local run's pool (run/local_pool.py) or a Spark session
    (``run.spark.SparkEngine``). ``run_units`` returns each unit's write stats, in task order, and raises if any
    unit fails; ``rows_read`` and ``task_starts``, when given, get each unit's rows read and start time."""

    @property
    def cores(self) -> int: ...

    @property
    def python_memory(self) -> str | None:  # Spark's ``spark.executor.pyspark.memory``, where it applies
        ...

    def run_units(self, tasks: list[GroupTask], parallelism: int, group_bytes: list[int] | None = None,
                  rows_read: list[int] | None = None, task_starts: list[float] | None = None) -> list[list[dict]]: ...


def jobs_in_order(tasks: list[GroupTask], group_bytes: list[int] | None) -> tuple[list[list[int]], list[int]]:
    """The units of ``tasks`` as jobs, one per group (its units' indices, in range order), largest first (planned
    output files, then units), so the slots finish at about the same time; and each unit's input bytes, which
    weigh the progress report (``group_bytes`` when given, else measured: a group's bytes shared by its units)."""
    by_group: dict[int, list[int]] = {}
    for index, task in enumerate(tasks):
        by_group.setdefault(task.group.index, []).append(index)
    for indices in by_group.values():
        indices.sort(key=lambda i: tasks[i].unit)
    jobs = sorted(by_group.values(), key=lambda ix: (-tasks[ix[0]].group.num_output_file_groups, -len(ix)))
    sizes = group_bytes if group_bytes is not None else [task.input_bytes() // max(1, task.units) for task in tasks]
    return jobs, sizes


def run_unit(unit: GroupTask, index: int, unit_id: int, unit_bytes: int, channel, stage: int,
             attempt: int) -> tuple[list[dict], int, float]:  # fmt: skip
    """Runs ``unit`` (the ``index``-th unit of its group; ``unit_id`` in the run) and returns its write stats,
    the rows it read (counted by the group's first unit only: every unit reads all of the group's slices) and
    when it began (this worker's ``time.time()``). ``channel``: ``(address, token)`` progress goes to;
    ``stage`` and ``attempt`` name the task in its files' write token."""
    began = time.time()
    token = unit.write_token_for(index, stage, attempt)
    reporter = UnitReporter(channel[0], channel[1], unit_id, unit_bytes, len(unit.group.slices), unit.units)
    task = digest.armed(unit.with_write_token(token).with_progress(reporter))
    try:
        with task_threads(unit.cpu_threads):
            stats = list(call_hook(task.strategy, "execute_group", task=task) or [])
    finally:
        reporter.close()
    digest.check(task, stats)  # what it wrote against what it read: a mismatch fails the group
    return stats, reporter.rows_read if unit.unit == 0 else 0, began


@contextmanager
def task_threads(threads: int) -> Iterator[None]:
    """While the block runs: Arrow's CPU pool at ``threads`` (at most this machine's cores; 0: as it is) and the
    GZIP page compression on as many threads (at most 4, at least 1 beside the encoding); then both back, so a
    reused worker's next task sets its own. Reads decode a file's columns on the pool; the rows are the same."""
    import pyarrow as pa

    from ..write import gzip_pages

    if threads < 1:
        yield
        return
    arrow_before, compress_before = pa.cpu_count(), gzip_pages.COMPRESS_THREADS
    pa.set_cpu_count(max(1, min(threads, os.cpu_count() or 1)))
    gzip_pages.COMPRESS_THREADS = max(1, min(4, threads))
    try:
        yield
    finally:
        pa.set_cpu_count(arrow_before)
        gzip_pages.COMPRESS_THREADS = compress_before
