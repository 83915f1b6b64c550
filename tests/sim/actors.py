"""The actors of a schedule, as the seed sets them up, and the rows their committed writes must leave.

* two clustering runs, ``api.cluster`` as the CLI calls it: the first schedules and executes; the second, by seed,
  executes the oldest pending plan, schedules and executes with ``--retry-last-failed-clustering-job``, only
  schedules, or schedules and executes; each does one or two runs, one after the other, as a scheduler would;
* an archiver and a cleaner: Apache Hudi's timeline archival and cleaning (``tests/sim/archiver.py``,
  ``tests/sim/cleaner.py``), every two seconds, eight times each;
* a writer: our upsert (``ingest.upsert``, with the seed's update strategy: ``allow`` or ``reject``) and our
  append (``writer.append``), a few batches in a row. Every batch has its own ``val``, so the rows a reader sees
  tell which committed write they come from.

On the consistent-bucket table (``Plan.table == "bucket"``, ``tests/sim/bucket_table.py``) every run passes the
table's index settings: the clustering runs are the plugin's resizes (plan and execution in-process, as any other
strategy), the writer is our MOR bucket upsert (``writer.bucket_upsert``: log files, ``consistent-bucket-duplicate``
mostly, which copies the records of buckets under a pending resize into the resize's child buckets).

A run that fails with a message (a conflict, a busy instant, an injected storage failure) is part of the game:
the actor goes on with its next run. A crash ends the actor; any other error ends it and is reported.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

import pyarrow as pa

from hudi_cluster_core.errors import HudiClusterError

from . import checks
from .lock_modes import provider_options
from .scheduler import Crash, sleep
from .store import World

CLUSTERING_MODES = (("execute", False), ("scheduleAndExecute", True), ("schedule", False), ("scheduleAndExecute", False))
UPDATE_STRATEGIES = ("allow", "reject")
# the schedules on the consistent-bucket MOR table (``tests/sim/bucket_table.py``), drawn from a stream of their
# own (the seeds of the copy-on-write table before stay the same schedules); there the writer duplicates mostly
BUCKET_SHARE = 0.18
BUCKET_UPDATE_STRATEGIES = ("consistent-bucket-duplicate",) * 3 + ("allow", "reject")
TABLES = {"cow": ("sim://lake/t", "lake/t"), "bucket": ("sim://lake/b", "lake/b")}  # uri, path in the store
# schedules on an object store under Apache Hudi's storage-based lock, then under its file-system based lock; the
# rest as flock
STORAGE_LOCK_SHARE, FILE_SYSTEM_LOCK_SHARE = 0.3, 0.15
FAULT_RATES = (0.005, 0.01, 0.01, 0.02, 0.04)
SERVICE_RUNS, SERVICE_INTERVAL_S = 8, 2.0  # archival and cleaning run every 2 s of simulated time, 8 times
# the protocol is the same whatever the pages' codec: snappy is Arrow's own, where gzip is recompressed page by page
# in Python (``write/gzip_pages.py``, covered by its own tests), a fifth of a schedule's time
CODEC = "snappy"
INITIAL_KEYS = {f"k{batch}{i:02d}": ("us", "eu")[i % 2] for batch in range(3) for i in range(6)}


@dataclass(frozen=True)
class Write:
    kind: str  # "upsert" or "append"
    batch: int  # its rows' val (and ordering value)
    keys: tuple[tuple[str, str], ...]  # (id, region)

    def rows(self) -> pa.Table:
        return pa.table({"id": [k for k, _ in self.keys], "ts": pa.array([self.batch] * len(self.keys), pa.int64()),
                         "region": [r for _, r in self.keys], "val": pa.array([self.batch] * len(self.keys), pa.int64())})  # fmt: skip


@dataclass(frozen=True)
class Plan:
    runs: dict[str, tuple[tuple[str, bool], ...]]  # clustering actor -> its runs: (mode, retry last failed)
    writes: tuple[Write, ...]
    update_strategy: str
    fault_rate: float  # faults per scheduling point: from a few per schedule to a storm that ends most actors
    lock_mode: str = "flock"  # how the actors exclude each other (``tests/sim/lock_modes.py``)
    table: str = "cow"  # or "bucket": the consistent-bucket MOR table, written by upserts only

    @property
    def uri(self) -> str:
        return TABLES[self.table][0]

    @property
    def path(self) -> str:
        return TABLES[self.table][1]

    @classmethod
    def from_seed(cls, seed: int) -> "Plan":
        rng = random.Random(f"plan:{seed}")
        runs = {"c1": (("scheduleAndExecute", False),) * rng.randint(1, 2),
                "c2": tuple(rng.choice(CLUSTERING_MODES) for _ in range(rng.randint(1, 2)))}  # fmt: skip
        writes, known = [], list(INITIAL_KEYS.items())
        for batch in range(1, rng.randint(2, 4) + 1):
            kind = rng.choice(("upsert", "upsert", "append"))
            fresh = [(f"n{batch}{i}", rng.choice(("us", "eu"))) for i in range(rng.randint(1, 3))]
            keys = fresh + (rng.sample(known, 3) if kind == "upsert" else [])
            writes.append(Write(kind, batch, tuple(keys)))
            known += fresh
        draw = random.Random(f"lock:{seed}").random()  # the storage-lock seeds of before stay storage-lock seeds
        lock_mode = ("storage" if draw < STORAGE_LOCK_SHARE else
                     "filesystem" if draw < STORAGE_LOCK_SHARE + FILE_SYSTEM_LOCK_SHARE else "flock")  # fmt: skip
        strategy, fault_rate = rng.choice(UPDATE_STRATEGIES), rng.choice(FAULT_RATES)
        kind = random.Random(f"table:{seed}")
        if kind.random() >= BUCKET_SHARE:
            return cls(runs, tuple(writes), strategy, fault_rate, lock_mode)
        # a bucket is one file group: no appended file groups, every write an upsert (its fresh keys inserts)
        writes = [Write("upsert", w.batch, w.keys) for w in writes]
        return cls(runs, tuple(writes), kind.choice(BUCKET_UPDATE_STRATEGIES), fault_rate, lock_mode, "bucket")

    def expected(self, world: World, table: str) -> dict[str, int]:
        """Each key's val after the writes whose instant completed, in instant order."""
        rows = {key: 0 for key in INITIAL_KEYS}
        is_committed = checks.committed(world, table)  # completed, or archived after it completed
        by_batch = {w.batch: w for w in self.writes}
        for instant, batch in sorted(world.labels.items()):
            if instant in world.completions and is_committed(instant) and batch in by_batch:
                rows.update({key: batch for key, _ in by_batch[batch].keys})
        return rows


def actors_for(plan: Plan, uri: str, heartbeat: dict[str, str]) -> list[tuple[str, Callable[[], None]]]:
    from .bucket_table import OPTIONS as BUCKET_OPTIONS

    options = {**heartbeat, **provider_options(plan.lock_mode), "hoodie.clustering.plan.strategy.sort.columns": "id", "hoodie.parquet.compression.codec": CODEC,
               "hoodie.clustering.updates.strategy": plan.update_strategy}  # fmt: skip
    if plan.table == "bucket":  # every writer and clustering run of a bucket table passes its index settings
        options.update(BUCKET_OPTIONS)
    found = [(name, _clustering(uri, runs, options)) for name, runs in plan.runs.items()]
    found.append(("w", _writer(uri, plan.writes, options)))
    found.append(("a", _service(uri, "archive")))
    found.append(("k", _service(uri, "clean")))
    return found


def _service(uri: str, which: str) -> Callable[[], None]:
    """Archival or cleaning, run every ``SERVICE_INTERVAL_S`` of simulated time, ``SERVICE_RUNS`` times."""
    from .archiver import archive
    from .cleaner import clean

    service = {"archive": archive, "clean": clean}[which]

    def once() -> None:
        sleep(SERVICE_INTERVAL_S)
        service(uri)

    def body() -> None:
        _each([once] * SERVICE_RUNS)

    return body


_REGISTRY: list = []


def registry():
    """The installed strategies, found once per process (as each real process finds them once)."""
    if not _REGISTRY:
        from hudi_cluster_core.plugins import default_registry

        _REGISTRY.append(default_registry())
    return _REGISTRY[0]


def _each(attempts: list[Callable[[], object]]) -> None:
    for attempt in attempts:
        try:
            attempt()
        except (HudiClusterError, OSError):
            continue  # the run failed and said why: the operator runs the next one


def _clustering(uri: str, runs, options) -> Callable[[], None]:
    from hudi_cluster_core.api import cluster

    from .runtime import InProcessSpark

    def body() -> None:
        _each([lambda mode=mode, retry=retry: cluster(uri, mode, options, spark=InProcessSpark(), registry=registry(),
                                                      retry_last_failed_clustering_job=retry)
               for mode, retry in runs])  # fmt: skip

    return body


def _writer(uri: str, writes: tuple[Write, ...], options) -> Callable[[], None]:
    from hudi_cluster_core.writer import ingest
    from hudi_cluster_core.writer.append import append
    from hudi_cluster_core.write.base_file import ParquetOptions

    from .runtime import InProcessSpark

    def one(write: Write) -> Callable[[], object]:
        def attempt():
            from .scheduler import current_actor

            current_actor().label = write.batch
            if write.kind == "append":
                return append(uri, write.rows(), heartbeat_ms=(1000, 2), options=ParquetOptions(compression=CODEC))
            return ingest.upsert(uri, write.rows(), options, spark=InProcessSpark(), registry=registry())

        return attempt

    def body() -> None:
        _each([one(w) for w in writes])

    return body


__all__ = ["Crash", "Plan", "actors_for"]
