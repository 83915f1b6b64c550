"""The soak harness (issue 13, "Proof: a soak test"): writers loop on one table while the clustering service runs.

Every writer writes batches whose rows carry a value unique to the batch (``val = "<writer>-<batch>"``) and a
``ts`` (the precombine field) that only grows, and reports each batch as an :class:`Outcome`: committed (with its
instant) or failed (with the error's first line). The expected table is then known exactly: every key holds the
value of the last committed batch that wrote it. Writers never write each other's keys, so "last" is the order of
one writer's own batches.

* The Apache Hudi 1.1.1 writer runs in its own Spark process (``python -m tests.support.soak``): upserts of some
  keys it wrote before plus new keys, with optimistic concurrency control and the file-system lock provider.
* Our writers run in threads of the test process, each one function ``(base, batch, rows, strategy) -> instant``
  (:data:`OUR_WRITERS`): ``append`` (inserts as new file groups) and ``upsert`` (updates of its own earlier keys
  and inserts, with the soak's update strategy).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pyarrow as pa

FS_LOCK = "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
STRATEGIES = {
    "allow": "org.apache.hudi.client.clustering.update.strategy.SparkAllowUpdateStrategy",
    "reject": "org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy",
    # a MERGE_ON_READ consistent-hashing bucket table, resized by the clustering service (BUCKET_OPTIONS)
    "duplicate": "org.apache.hudi.client.clustering.update.strategy.SparkConsistentBucketDuplicateUpdateStrategy",
}
# The duplicate soak's table: every writer (Hudi's and ours) and the service pass these. Buckets of 4 KB split up
# to 8 per partition; every resize rewrites all buckets, so the service has work each cycle. Hudi's inline
# compaction is off (the soak is about clustering beside writers).
BUCKET_OPTIONS = {
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.index.type": "BUCKET",
    "hoodie.index.bucket.engine": "CONSISTENT_HASHING",
    "hoodie.bucket.index.num.buckets": "2",
    "hoodie.bucket.index.max.num.buckets": "8",
    "hoodie.bucket.index.min.num.buckets": "1",
    "hoodie.parquet.max.file.size": "4096",
    "hoodie.compact.inline": "false",
}
SCHEMA = pa.schema([("id", pa.string()), ("region", pa.string()), ("ts", pa.int64()), ("val", pa.string())])
REGIONS = ("eu", "us")
# Errors a writer meets by design when it races the clustering or another writer (the write did not commit; the
# test checks that none of its rows is visible). The last one: a Hudi writer reading the pending clustering plans
# while our run, having lost to a writer, rolls its clustering back and deletes the plan (Hudi reads the timeline
# outside its lock) - seen in a 10-minute soak, the write failed before committing; the duplicate update strategy
# meets the same race reading the pending plans ("Failed to check emptiness of instant": its plan file is gone).
# Ours: UpdateRejected (the update strategy said reject), WriteConflict (a clustering replaced a file group first),
# TimelineChanged (the timeline changed under the upsert on every one of its attempts).
CONFLICT_ERRORS = ("HoodieWriteConflictException", "HoodieClusteringUpdateException", "ConcurrentModificationException",
                   "LockTimeout", "HoodieLockException", "Error getting all file groups in pending clustering",
                   "Failed to check emptiness of instant",
                   "UpdateRejected", "WriteConflict", "TimelineChanged")  # fmt: skip


# Hudi copies datasource options starting with "_" (hoodie.datasource.write.commitmeta.key.prefix) into the commit's
# extra metadata: the test finds by it whether a write that raised had committed all the same
BATCH_TAG = "_soak_batch"
AFTER_COMMIT = "failed after its commit"


def table_options(strategy: str) -> dict[str, str]:
    """What the table needs from every writer: the bucket index for the duplicate soak, nothing otherwise."""
    return dict(BUCKET_OPTIONS) if strategy == "duplicate" else {}


# With OCC and the BUCKET index Hudi 1.1.1 picks BucketIndexConcurrentFileWritesConflictResolutionStrategy, which
# parses a file id's first 8 characters as a bucket number: on consistent-hashing file ids (UUIDs) every conflict
# check fails with NumberFormatException. The default strategy for other indexes works (a Hudi bug, worked around)
HUDI_BUCKET_OCC = {"hoodie.write.lock.conflict.resolution.strategy":
                   "org.apache.hudi.client.transaction.SimpleConcurrentFileWritesConflictResolutionStrategy"}  # fmt: skip


# hudi-rs 0.5.0 reads no archived timeline: the log files of an archived deltacommit have no completion time for
# it, so it takes them as uncommitted and drops their rows (Apache Hudi alone, 45 upserts into this log-only bucket
# table: hudi-rs reads 69 of 135 rows; docs/format.md#lsm-history). The duplicate soak's table is never compacted,
# so its Hudi writer keeps every instant active and hudi-rs stays a judge of it; the allow soak (COW) archives.
HUDI_KEEP_ACTIVE = {"hoodie.keep.min.commits": "100000", "hoodie.keep.max.commits": "100010"}


def hudi_options(strategy: str) -> dict[str, str]:
    """An Apache Hudi writer beside async clustering, as Hudi's docs configure it (OCC + a lock provider)."""
    return {
        **table_options(strategy),
        **({**HUDI_BUCKET_OCC, **HUDI_KEEP_ACTIVE} if strategy == "duplicate" else {}),
        "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
        "hoodie.write.lock.provider": FS_LOCK,
        "hoodie.clean.failed.writes.policy": "LAZY",
        "hoodie.clustering.updates.strategy": STRATEGIES[strategy],
        # failed writes expire after 2 x 3 s, then the final write's clean rolls them back; 1 s (the minimum) made Hudi
        # abort writes on a loaded 2-core machine ("missed generating heartbeat within allowable interval")
        "hoodie.client.heartbeat.interval_in_ms": "3000",
        "hoodie.write.lock.client.num_retries": "30",
        "hoodie.write.lock.client.wait_time_ms_between_retry": "1000",
        "hoodie.write.lock.wait_time_ms": "10000",
    }


@dataclass
class Outcome:
    writer: str
    batch: int
    status: str  # committed | conflict | error
    instant: str | None = None
    message: str = ""
    values: dict[str, str] = field(default_factory=dict)  # key -> val, for the keys this batch wrote
    ts: int = 0  # the batch's precombine value: of two committed values of a key, the higher ts wins

    @staticmethod
    def of_failure(writer: str, batch: int, exc: BaseException, values: dict[str, str], ts: int) -> "Outcome":
        text = f"{type(exc).__name__}: {exc}"
        conflict = any(name in text for name in CONFLICT_ERRORS)
        lines = text.splitlines()
        cause = next((ln for ln in lines[1:] if "Exception" in ln and not ln.lstrip().startswith("at ")), lines[0])
        line = next((ln for ln in lines if any(n in ln for n in CONFLICT_ERRORS)), cause)
        return Outcome(writer, batch, "conflict" if conflict else "error", None, line.strip(" :")[:500], values, ts)

    def error_name(self) -> str:
        found = (re.search(r"(\w+(?:Exception|Timeout))\b", self.message) or re.search(r"\b(WriteConflict|UpdateRejected|"
                 r"TimelineChanged)\b", self.message) or re.search(r"(\w+Error)\b", self.message))  # fmt: skip
        return found.group(1) if found else self.message[:80]


def batch_rows(writer: str, batch: int, keys: list[str], ts: int) -> pa.Table:
    return pa.table({"id": keys, "region": [key.split("-")[1] for key in keys], "ts": [ts] * len(keys), "val": [f"{writer}-{batch}"] * len(keys)},
                    schema=SCHEMA)  # fmt: skip


def new_keys(writer: str, batch: int, count: int) -> list[str]:
    """Keys no other batch writes; the region is part of the key, so an update lands in the key's partition."""
    return [f"r-{REGIONS[i % len(REGIONS)]}-{writer}-{batch:05d}-{i:03d}" for i in range(count)]


class Clock:
    """Precombine values that only grow within one writer."""

    def __init__(self):
        self.last = 0

    def next(self) -> int:
        self.last = max(self.last + 1, int(time.time() * 1000))
        return self.last


def expected_values(outcomes: list[Outcome]) -> dict[str, str]:
    """Every key's value after all committed batches: the value of the committed batch with the highest
    precombine value (``ts``) that wrote the key."""
    expected: dict[str, str] = {}
    for outcome in sorted(outcomes, key=lambda o: o.ts):
        if outcome.status == "committed":
            expected.update(outcome.values)
    return expected


# ------------------------------------------------------------------------------------------- our writers


def _append_writer(base: str, batch: int, rows: pa.Table) -> str:
    """``hudi_cluster_core.writer.append``. It takes no lock itself, so here it runs inside our timeline lock with
    Apache Hudi's file-system lock (what a writer beside OCC writers must hold while it commits)."""
    from hudi_cluster_core.io.storage import Storage
    from hudi_cluster_core.table.lock_provider import PROVIDER_KEY, lock_file_for, use_lock_file
    from hudi_cluster_core.table.ownership import timeline_lock
    from hudi_cluster_core.writer.append import append

    storage = Storage(base)
    use_lock_file(storage, lock_file_for(storage, {PROVIDER_KEY: FS_LOCK}))
    with timeline_lock(storage, wait_ms=60000):
        return str(append(base, rows)["instant_time"])


def _upsert_writer(base: str, batch: int, rows: pa.Table, strategy: str) -> str:
    """``hudi_cluster_core.upsert`` (updates and inserts, BLOOM index, on the test's Spark session), with the
    soak's update strategy and Apache Hudi's file-system lock, as Hudi's writers here are configured."""
    from pyspark.sql import SparkSession

    from hudi_cluster_core.writer.ingest import upsert
    from hudi_cluster_core.table.lock_provider import PROVIDER_KEY

    options = {PROVIDER_KEY: FS_LOCK, "hoodie.clustering.updates.strategy": STRATEGIES[strategy],
               "hoodie.write.lock.wait_time_ms": "60000", **table_options(strategy)}  # fmt: skip
    return str(upsert(base, rows, options, spark=SparkSession.builder.getOrCreate())["instant_time"])


# name -> (new keys per batch, updates of its own committed keys per batch, the write(base, batch, rows, strategy))
OUR_WRITERS: dict[str, tuple[int, int, Callable[[str, int, pa.Table, str], str]]] = {
    "append": (8, 0, lambda base, batch, rows, strategy: _append_writer(base, batch, rows)),
    "upsert": (4, 4, _upsert_writer),
}


def our_writers(strategy: str) -> list[str]:
    """A bucket table takes no appended file groups (each bucket is one file group): there, the upsert only."""
    return ["upsert"] if strategy == "duplicate" else list(OUR_WRITERS)


class OurWriterThread(threading.Thread):
    """Batches of one of :data:`OUR_WRITERS` every ``interval`` seconds until :meth:`stop`."""

    def __init__(self, name: str, base: str, interval: float, strategy: str = "allow"):
        super().__init__(name=f"soak-{name}", daemon=True)
        self.writer, self.base, self.interval, self.strategy = name, base, interval, strategy
        self.outcomes: list[Outcome] = []
        self._stop_event = threading.Event()
        self._clock = Clock()
        self._committed: list[str] = []  # keys this writer inserted and committed: what it updates next
        self._rng = random.Random(name)

    def run(self) -> None:
        inserts, updates, write = OUR_WRITERS[self.writer]
        batch = 0
        while not self._stop_event.wait(self.interval):
            batch += 1
            fresh = new_keys(self.writer, batch, inserts)
            keys = self._rng.sample(self._committed, min(updates, len(self._committed))) + fresh
            ts = self._clock.next()
            rows = batch_rows(self.writer, batch, keys, ts)
            values = dict.fromkeys(keys, f"{self.writer}-{batch}")
            try:
                instant = write(self.base, batch, rows, self.strategy)
                self._committed += fresh
                self.outcomes.append(Outcome(self.writer, batch, "committed", instant, "", values, ts))
            except Exception as exc:  # noqa: BLE001 - every failure is recorded, then judged by the test
                self.outcomes.append(Outcome.of_failure(self.writer, batch, exc, values, ts))

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=120)


# -------------------------------------------------------------------------------- the Apache Hudi writer


def hudi_write(spark, base: str, writer: str, batch: int, keys: list[str], clock: Clock, strategy: str) -> Outcome:
    from tests.support.apache_hudi import completed_instants, write_hudi_table

    ts = clock.next()
    rows = batch_rows(writer, batch, keys, ts)
    values = dict.fromkeys(keys, f"{writer}-{batch}")
    tag = f"{writer}-{batch}"
    before = {i.time for i in completed_instants(base)} if Path(base, ".hoodie").is_dir() else set()
    try:
        instant = write_hudi_table(spark, base, rows, operation="upsert", partition_field="region",
                                   extra_options={**hudi_options(strategy), BATCH_TAG: tag})  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - recorded and judged by the test
        failure = Outcome.of_failure(writer, batch, exc, values, ts)
        if failure.status == "error":  # the whole text, for the post-mortem (the outcome keeps one line)
            print(f"soak: {writer} batch {batch} failed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        committed = _instant_tagged(base, before, tag)
        if committed is None:
            return failure
        # Hudi raised after its commit had completed (its post-commit clean or archival met the timeline changing
        # under it): the write is committed, so its values must be visible; the error is kept for the figures
        return Outcome(writer, batch, "committed", committed, f"{AFTER_COMMIT}: {failure.message}", values, ts)
    return Outcome(writer, batch, "committed", instant, "", values, ts)


def _instant_tagged(base: str, before: set[str], tag: str) -> str | None:
    """The completed commit a Hudi write tagged with ``tag`` (its datasource option ``BATCH_TAG``, which Hudi copies
    into the commit's extra metadata), among those completed since ``before``."""
    from tests.support.apache_hudi import completed_instants, instant_metadata

    for instant in completed_instants(base, actions=("commit", "deltacommit")):
        if instant.time in before:
            continue
        try:
            extra = instant_metadata(base, instant).get("extraMetadata") or {}
        except FileNotFoundError:  # archived or rolled back meanwhile: not ours to judge here
            continue
        if extra.get(BATCH_TAG) == tag:
            return instant.time
    return None


def hudi_writer_loop(base: str, seconds: float, out: Path, strategy: str, inserts: int, updates: int) -> None:
    """Upsert batches until ``seconds`` have passed; one JSON line per batch in ``out`` (flushed at once)."""
    from tests.support.apache_hudi import hudi_spark_session

    spark = hudi_spark_session()
    # a failure's text then holds the JVM's cause chain: a conflict wrapped by a failed Spark task is named in it
    spark.conf.set("spark.sql.pyspark.jvmStacktrace.enabled", "true")
    rng, clock = random.Random(13), Clock()
    written: list[str] = json.loads(out.with_suffix(".keys.json").read_text())  # the keys the set-up wrote
    deadline = time.monotonic() + seconds
    batch = 0
    with out.open("a") as sink:
        while time.monotonic() < deadline:
            batch += 1
            keys = rng.sample(written, min(updates, len(written))) + new_keys("hudi", batch, inserts)
            outcome = hudi_write(spark, base, "hudi", batch, keys, clock, strategy)
            if outcome.status == "committed":
                written.extend(keys[len(keys) - inserts :])
            sink.write(json.dumps(asdict(outcome)) + "\n")
            sink.flush()
    spark.stop()


def read_outcomes(path: Path) -> list[Outcome]:
    if not path.exists():
        return []
    return [Outcome(**json.loads(line)) for line in path.read_text().splitlines() if line.strip()]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.soak")
    parser.add_argument("base")
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--strategy", choices=sorted(STRATEGIES), default="allow")
    parser.add_argument("--inserts", type=int, default=6)
    parser.add_argument("--updates", type=int, default=12)
    args = parser.parse_args(argv)
    hudi_writer_loop(args.base, args.seconds, args.out, args.strategy, args.inserts, args.updates)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
