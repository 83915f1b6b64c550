"""What the simulation replaces, and nothing else: Spark (by an in-process executor), the store (by
``tests/sim/store.py``), the clock (``tests/sim/clock.py``) and the process boundary of the timeline lock (by the
scheduler's :class:`~tests.sim.scheduler.ActorLock`). :func:`simulated` installs them for one schedule and puts
the real ones back afterwards.
"""

from __future__ import annotations

import contextlib
import random
import uuid
import functools
import sys
from typing import Iterator

import pyarrow.fs as pafs
import pyarrow.parquet as pq

from hudi_cluster_core import clock as core_clock
from hudi_cluster_core import javaprops
from hudi_cluster_core.hashing import bloom_filter
from hudi_cluster_core.io import registry
from hudi_cluster_core.io import storage as core_storage
from hudi_cluster_core.mdt import column_stats
from hudi_cluster_core.plugins import call_hook
from hudi_cluster_core.run import digest
from hudi_cluster_core.run import spark as core_spark
from hudi_cluster_core.run.slice_reader import SliceReader
from hudi_cluster_core.table import lock_provider, ownership, timeline

from . import store
from .log_merge import slice_reader_on


def run_group_tasks_in_process(spark, tasks, parallelism, group_bytes=None, rows_read=None,
                               task_starts=None) -> list[list[dict]]:
    """The Spark job of a clustering, in this thread: what each Spark task runs (``run.spark._run_units``; patched in for ``run.spark.run_group_tasks``), one
    unit after the other, with the same write tokens, the same rewrite check and the same failures."""
    results = []
    for index, unit in enumerate(tasks):
        task = digest.armed(unit.with_write_token(unit.write_token_for(index, 0, 0)))
        stats = list(call_hook(task.strategy, "execute_group", task=task) or [])
        digest.check(task, stats)
        results.append(stats)
    if rows_read is not None:  # not counted in process: the simulation checks the commit protocol, not metrics
        rows_read.extend(0 for _ in tasks)
    if task_starts is not None:  # nor timed: the run's phases_s leaves first_task out
        task_starts.clear()
    return results


class _Conf:
    def get(self, key, default=None):
        return default


class _Units:
    def __init__(self, items):
        self.items = list(items)

    def map(self, function):
        return _Units(function(item) for item in self.items)

    def collect(self):
        return list(self.items)


class _Context:
    defaultParallelism = 1

    def getConf(self):
        return _Conf()

    def parallelize(self, items, slices=None):
        return _Units(items)


class InProcessSpark:
    """The few things of a SparkSession the core asks for: its parallelism, its conf, and (the writers' units of
    work) ``parallelize(...).map(f).collect()``, run here in order."""

    sparkContext = _Context()


class _NoLock:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


@functools.lru_cache(maxsize=1)
def _cached_properties() -> tuple[functools.cached_property, ...]:
    """Every ``functools.cached_property`` of the core's classes. Before Python 3.12 each holds one lock for all
    instances while it computes: an actor that yields inside one (a listing is storage operations) would block
    every other actor reaching it, in a real lock the scheduler cannot see. One actor runs at a time here anyway."""
    found = []
    for name, module in list(sys.modules.items()):
        if not name.startswith("hudi_cluster_core") or module is None:
            continue
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == name:
                found += [v for v in vars(value).values() if isinstance(v, functools.cached_property)]
    return tuple(found)


_PARSE = javaprops.parse


@functools.lru_cache(maxsize=512)
def _properties(text: str) -> tuple[tuple[str, str], ...]:
    return tuple(_PARSE(text).items())


def parse_properties(text: str) -> dict[str, str]:
    """``javaprops.parse``, remembered by text: every table opened (dozens per schedule, thousands of schedules)
    parses one of a few ``hoodie.properties``; a pure function, so the same dict, each caller its own copy."""
    return dict(_properties(text))


_READ_TABLE = pq.read_table


def read_one_file(source, *, columns=None, filesystem=None, **more):
    """``pq.read_table`` of one parquet file as ``ParquetFile(...).read``: the same table, without the dataset
    discovery around it (0.7 ms a call, a tenth of a schedule). A path first asks for its info, as the discovery
    does, so the same storage operations happen; any other use is the real ``read_table``."""
    if more or (isinstance(source, str) and filesystem is None):
        return _READ_TABLE(source, columns=columns, filesystem=filesystem, **more)
    if isinstance(source, str):
        if filesystem.get_file_info(source).type == pafs.FileType.NotFound:
            raise FileNotFoundError(source)
    return pq.ParquetFile(source, filesystem=filesystem).read(columns=columns)


_MACHINE = lock_provider.machine


@functools.lru_cache(maxsize=1)
def this_machine() -> str:
    """The host, boot and pid namespace (``lock_provider.machine``) read once: every actor is on this machine,
    and every heartbeat's refresh (one per simulated second per running instant) reads two files of ``/proc``."""
    return _MACHINE()


@contextlib.contextmanager
def simulated(world: store.World, clock, lock, seed: object = "base") -> Iterator[None]:
    """Install the simulated parts for one schedule. ``uuid.uuid4`` (new file ids, heartbeat tokens) draws from
    the seed as well, so that a replay in another process names (and so orders) every file the same way."""
    saved_backend = registry.BACKENDS.get(store.SCHEME)
    registry.register(store.SCHEME, "tests.sim.store:SimBackend")
    saved_clock = core_clock.use(clock)
    saved_guard, ownership._HELD_GUARD = ownership._HELD_GUARD, lock
    saved_runner, core_spark.run_group_tasks = core_spark.run_group_tasks, run_group_tasks_in_process
    # hudi-rs merges a MOR slice reading the store itself: here a Python merge reads the simulated store
    saved_merge, SliceReader._reader = SliceReader._reader, slice_reader_on(lambda reader: reader.storage)
    # one storage operation at a time: the core's parallel reads (footers, MDT files) run in the actor's thread
    saved_parallel, core_storage.PARALLEL_REQUESTS = core_storage.PARALLEL_REQUESTS, 1
    saved_parse, javaprops.parse = javaprops.parse, parse_properties
    pq.read_table, lock_provider.machine, ownership.machine = read_one_file, this_machine, this_machine
    saved_threads, bloom_filter._HASH_THREADS = bloom_filter._HASH_THREADS, 1  # a pool per tiny filter: all cost
    store.CURRENT[0] = world
    unlocked = [(p, p.__dict__.get("lock")) for p in _cached_properties() if "lock" in p.__dict__]
    for prop, _ in unlocked:
        prop.lock = _NoLock()
    ids = random.Random(f"uuid:{seed}")
    saved_uuid4, uuid.uuid4 = uuid.uuid4, lambda: uuid.UUID(int=ids.getrandbits(128), version=4)
    timeline._LAST_ISSUED.clear()  # "this process issued before": every schedule starts as a fresh process
    column_stats._footer.cache_clear()  # footers read in an earlier schedule: a hit would skip a storage operation
    ownership._HELD.clear()
    try:
        yield
    finally:
        store.CURRENT[0] = store.World()
        uuid.uuid4 = saved_uuid4
        for prop, lock in unlocked:
            prop.lock = lock
        core_spark.run_group_tasks = saved_runner
        SliceReader._reader = saved_merge
        core_storage.PARALLEL_REQUESTS = saved_parallel
        javaprops.parse = saved_parse
        pq.read_table, lock_provider.machine, ownership.machine = _READ_TABLE, _MACHINE, _MACHINE
        bloom_filter._HASH_THREADS = saved_threads
        ownership._HELD_GUARD = saved_guard
        ownership._HELD.clear()
        core_clock.use(saved_clock)
        if saved_backend is None:
            registry.BACKENDS.pop(store.SCHEME, None)
            registry.backend_class.cache_clear()
        else:
            registry.register(store.SCHEME, saved_backend)
