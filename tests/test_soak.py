"""The soak proof of issue 13: for ``HUDI_SOAK_SECONDS`` (60 s in ``make test``, 600 in ``make soak``) an Apache
Hudi 1.1.1 upsert writer (its own Spark process: OCC, FileSystemBasedLockProvider, SparkAllowUpdateStrategy, so
it writes into file groups under pending clustering) and our own writers (tests/support/soak.py ``OUR_WRITERS``)
write one table while ``hudi-cluster run --continuous`` clusters it. Then, the service stopped with SIGTERM:

* every batch either committed (and its values are visible) or failed with a conflict error, none otherwise; a
  Hudi write that raised after its commit had completed (its post-commit clean reading a clustering plan that a
  rollback removed) is committed: the test finds it by a tag Hudi copies into the commit's extra metadata;
* every key holds the value of its last committed batch, by hudi-rs and by Apache Hudi; no row lost or duplicated;
* no instant is left pending, no stray file (after one more Hudi write, whose clean rolls back Hudi's failed
  writes: Hudi's LAZY policy under OCC);
* the figures (writer commits, clusterings, conflicts, rows checked) are printed and written to ``soak.json``.

With ``duplicate`` the table is a MERGE_ON_READ consistent-hashing bucket table, every writer uses
``SparkConsistentBucketDuplicateUpdateStrategy`` and the service resizes its buckets (README, "The duplicate soak").
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from tests.support.apache_hudi import read_hudi_snapshot, timeline_files
from tests.support.readers import read_hudi_rs
from tests.support.runs import cli_env, table_problems, wait_for
from tests.support.soak import (AFTER_COMMIT, FS_LOCK, Clock, Outcome, OurWriterThread, expected_values, hudi_write, new_keys,
                                our_writers, read_outcomes, table_options)  # fmt: skip

SECONDS = float(os.environ.get("HUDI_SOAK_SECONDS", "60"))
# Hudi's update strategy for the writers: allow (writes into groups under pending clustering; the conflict is
# decided at commit) and duplicate (a consistent-bucket table resized by the service: records for buckets under
# resize are also written into the new buckets) in `make test`; `make soak` adds reject (Hudi's default: such
# upserts fail before writing)
STRATEGY_NAMES = os.environ.get("HUDI_SOAK_STRATEGIES", "allow,duplicate").split(",")
SERVICE_CONF = {
    "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
    "hoodie.write.lock.provider": FS_LOCK,
    "hoodie.clustering.async.max.commits": "2",
    "hoodie.clustering.plan.strategy.sort.columns": "id",
}


class Process:
    """A child process whose stdout and stderr are drained by threads (a stray JVM can hold the pipes)."""

    def __init__(self, command: list[str], env: dict[str, str], log: Path):
        self.process = subprocess.Popen(command, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.out: list[str] = []
        self.err: list[str] = []
        self.log = log.open("a")  # both streams, for the post-mortem of a failed soak
        self.readers = [threading.Thread(target=self._drain, args=(pipe, into), daemon=True)
                        for pipe, into in ((self.process.stdout, self.out), (self.process.stderr, self.err))]  # fmt: skip
        for reader in self.readers:
            reader.start()

    def _drain(self, pipe, into: list[str]) -> None:
        for line in pipe:
            into.append(line.rstrip("\n"))
            self.log.write(line)

    def finish(self, timeout: float, sig: int | None = None) -> int:
        if sig is not None and self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"{self.process.args[:4]} did not end within {timeout} s: {self.err[-20:]}") from None
        finally:
            for reader in self.readers:
                reader.join(timeout=30)
            self.log.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


# the duplicate soak: the service resizes the buckets (every resize rewrites them all: work every cycle)
BUCKET_SERVICE_CONF = {
    "hoodie.clustering.plan.strategy.class": "consistent-bucket",
    "hoodie.clustering.execution.strategy.class": "consistent-bucket",
}


def _service(base: str, log: Path, strategy: str) -> Process:
    conf = {**SERVICE_CONF, **table_options(strategy), **(BUCKET_SERVICE_CONF if strategy == "duplicate" else {})}
    if strategy == "duplicate":
        conf.pop("hoodie.clustering.plan.strategy.sort.columns")
    flags = [arg for key, value in conf.items() for arg in ("--hoodie-conf", f"{key}={value}")]
    command = [sys.executable, "-m", "hudi_cluster_core.cli", "run", "--base-path", base, "--continuous",
               "--min-sync-interval-seconds", "1", "--spark-master", "local[1]", *flags]  # fmt: skip
    return Process(command, cli_env(), log)


def _hudi_writer(base: str, out: Path, seconds: float, strategy: str, log: Path) -> Process:
    command = [sys.executable, "-m", "tests.support.soak", base, "--seconds", str(seconds), "--out", str(out),
               "--strategy", strategy]  # fmt: skip
    return Process(command, {**cli_env(), "PYTHONPATH": str(Path(__file__).resolve().parents[1])}, log)


def _rows_by_key(table: pa.Table) -> tuple[dict[str, str], list[str]]:
    keys, values = table.column("id").to_pylist(), table.column("val").to_pylist()
    duplicated = [k for k, n in Counter(keys).items() if n > 1]
    return dict(zip(keys, values)), duplicated


def _differences(label: str, found: dict[str, str], expected: dict[str, str]) -> list[str]:
    lost = sorted(set(expected) - set(found))
    extra = sorted(set(found) - set(expected))
    wrong = sorted(k for k in set(found) & set(expected) if found[k] != expected[k])
    problems = [f"{label}: {len(lost)} row(s) lost, e.g. {lost[:3]}"] if lost else []
    problems += [f"{label}: {len(extra)} unexpected row(s), e.g. {extra[:3]}"] if extra else []
    problems += [f"{label}: {len(wrong)} key(s) with a stale value, e.g. "
                 f"{[(k, found[k], expected[k]) for k in wrong[:3]]}"] if wrong else []  # fmt: skip
    return problems


@pytest.mark.parametrize("strategy", STRATEGY_NAMES)
def test_writers_and_the_clustering_service_lose_nothing(spark, tmp_path, strategy):
    base = str(tmp_path / "soak")
    outcomes_file = tmp_path / "hudi.jsonl"
    clock = Clock()
    first = "duplicate" if strategy == "duplicate" else "allow"  # the options that make the table: bucket index or not
    initial = hudi_write(spark, base, "init", 0, new_keys("init", 0, 40), clock, first)  # creates the table
    assert initial.status == "committed", initial.message
    outcomes_file.with_suffix(".keys.json").write_text(json.dumps(list(initial.values)))

    writer = _hudi_writer(base, outcomes_file, SECONDS, strategy, tmp_path / "hudi-writer.log")
    service = ours = None
    try:
        wait_for(lambda: bool(read_outcomes(outcomes_file)) or writer.process.poll() is not None, timeout=300,
                 what="the Hudi writer's first batch")  # fmt: skip
        service = _service(base, tmp_path / "service.log", strategy)
        ours = [OurWriterThread(name, base, interval=4.0, strategy=strategy) for name in our_writers(strategy)]
        for thread in ours:
            thread.start()
        writer_code = writer.finish(timeout=SECONDS + 600)
        assert writer_code == 0, "\n".join(writer.err[-30:])
    finally:
        for thread in ours or []:
            thread.stop()
        service_code = service.finish(timeout=180, sig=signal.SIGTERM) if service else None
        writer.stop()
    assert service_code == 0, "\n".join(service.err[-30:])

    # one more Hudi write once the failed writes' heartbeats have expired: its clean rolls them back (LAZY policy)
    time.sleep(7)
    final = hudi_write(spark, base, "hudi-final", 0, new_keys("final", 0, 4), clock, first)
    assert final.status == "committed", final.message

    outcomes = [initial, *read_outcomes(outcomes_file), *(o for t in ours for o in t.outcomes), final]
    failed = [o for o in outcomes if o.status != "committed"]
    assert not [o for o in failed if o.status == "error"], [(o.writer, o.batch, o.message) for o in failed][:5]
    active = timeline_files(base)
    completed = {f.time for f in active if f.state == "COMPLETED"}
    archived_before = min((f.time for f in active), default="")  # older completed instants went to the archive
    unseen = [o.instant for o in outcomes if o.status == "committed" and o.instant not in completed and o.instant >= archived_before]
    assert not unseen, f"writes reported committed with no completed instant: {unseen[:5]}"

    expected = expected_values(outcomes)
    found_rs, duplicated_rs = _rows_by_key(read_hudi_rs(base))
    found_hudi, duplicated_hudi = _rows_by_key(read_hudi_snapshot(spark, base))
    problems = _differences("hudi-rs", found_rs, expected) + _differences("Apache Hudi", found_hudi, expected)
    problems += [f"{label}: duplicated keys {d[:3]}" for label, d in (("hudi-rs", duplicated_rs), ("Apache Hudi", duplicated_hudi)) if d]
    # v9 keeps an instant's requested and inflight files beside its completed one: pending = never completed
    done = {f.time for f in timeline_files(base) if f.state == "COMPLETED"}
    pending = sorted({f"{f.time}.{f.action}" for f in timeline_files(base) if f.time not in done})
    problems += [f"pending instants: {pending}"] if pending else []
    # Hadoop's local file system leaves the checksum files of Hudi's deleted heartbeats behind: Hudi's, not ours
    problems += [p for p in table_problems(base) if not (p.startswith("heartbeat left: .") and p.endswith(".crc"))]

    clusterings = [f for f in timeline_files(base) if f.action == "replacecommit" and f.state == "COMPLETED"]
    service_lines = service.out if service else []
    figures = {
        "seconds": SECONDS,
        "hudi_update_strategy": strategy,
        "writer_commits": dict(Counter(o.writer for o in outcomes if o.status == "committed")),
        "writer_conflicts": dict(Counter(o.writer for o in failed)),
        "conflict_errors": dict(Counter(o.error_name() for o in failed)),
        "errors_after_commit": dict(Counter(o.error_name() for o in outcomes if o.message.startswith(AFTER_COMMIT))),
        "clusterings_completed": sum(": clustered " in line for line in service_lines),  # archival moves some out
        "clusterings_on_the_active_timeline": len(clusterings),
        "clustering_conflicts_rolled_back": sum(": conflict after" in line for line in service_lines),
        "clustering_failures": sum(": failed after" in line for line in service_lines),
        "rows_checked": len(expected),
        "rows_lost": len(set(expected) - set(found_rs)) + len(set(expected) - set(found_hudi)),
        "rows_duplicated": len(duplicated_rs) + len(duplicated_hudi),
        "problems": problems,
    }
    (tmp_path / "soak.json").write_text(json.dumps(figures, indent=2))
    print("soak figures:", json.dumps(figures))
    assert not problems, problems
    # the service acted: it clustered, or yielded to a writer that reached its file groups first
    assert figures["clusterings_completed"] + figures["clustering_conflicts_rolled_back"] >= 1, service_lines[-20:]
    assert figures["clustering_failures"] == 0, [line for line in service_lines if ": failed after" in line]
    assert sum(figures["writer_commits"].values()) >= 4
