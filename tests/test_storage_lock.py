"""Apache Hudi's ``StorageBasedLockProvider`` lock, taken by our runs on an S3-compatible server (moto on loopback).

moto 5 honours both conditions on PutObject: ``If-None-Match: *`` (412 when the key exists) and ``If-Match``
(412 on another ETag, 404 when the key is gone), so every rule below is checked against a server's answers:

* the lock object is Hudi's (``.hoodie/.locks/table_lock.json``, fields ``expired``, ``validUntil``, ``owner``);
  a lease Hudi wrote keeps us out until it expires; an expired one is taken over by exactly one of two takers;
* the holder renews the lease with ``If-Match``; a holder whose lease was taken over does not overwrite the new
  owner's lock when it releases;
* two of our CLI runs exclude each other; a run that crashes leaves a lease that expires, and the next run takes it
  over, recovers and clusters; after a run the lock is released (``expired: true``);
* the storage-based provider on a local table is refused with one line, as Apache Hudi refuses it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from hudi_cluster_core.failpoints import PAUSE_ENV
from hudi_cluster_core.io.storage import Storage
from hudi_cluster_core.table.lock_provider import STORAGE_BASED
from hudi_cluster_core.table.storage_lock import LOCK_FILE, StorageLock, now_ms
from tests.support.readers import assert_same_rows, read_hudi_rs
from tests.support.runs import cli_env, error_lines, make_append_table, table_problems, wait_for
from tests.support.s3_server import S3Server, serving

BUCKET = "locks"
SORT = "hoodie.clustering.plan.strategy.sort.columns=id"


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("moto"), BUCKET) as server:
        yield server


def _lock_json(s3: S3Server, prefix: str) -> dict:
    return json.loads(s3.client().get_object(Bucket=BUCKET, Key=f"{prefix}/{LOCK_FILE}")["Body"].read())


def _hudi_lease(s3: S3Server, prefix: str, *, valid_for_ms: int, expired: bool = False) -> str:
    """Write the lock object as Apache Hudi's provider writes it; returns its owner."""
    owner = str(uuid.uuid4())
    body = {"expired": expired, "validUntil": now_ms() + valid_for_ms, "owner": owner}
    s3.client().put_object(Bucket=BUCKET, Key=f"{prefix}/{LOCK_FILE}", Body=json.dumps(body).encode())
    return owner


def test_the_lock_object_is_hudis_and_keeps_a_second_owner_out(s3):
    storage = Storage(f"s3a://{BUCKET}/one", s3.options())
    first, second = StorageLock(storage), StorageLock(storage)
    assert first.try_acquire(storage, "a")
    try:
        body = _lock_json(s3, "one")
        assert set(body) == {"expired", "validUntil", "owner"} and body["expired"] is False
        assert str(uuid.UUID(body["owner"])) == body["owner"]
        assert 299_000 <= body["validUntil"] - now_ms() <= 300_000  # Hudi's default validity, 300 s
        assert not second.try_acquire(storage, "b")
        assert body["owner"] in second.holder(storage)
    finally:
        first.release(storage, "a")
    released = _lock_json(s3, "one")
    assert released["expired"] is True and released["owner"] == body["owner"]
    assert second.try_acquire(storage, "b")
    second.release(storage, "b")


def test_a_hudi_lease_keeps_us_out_and_an_expired_one_is_taken_over_by_one_taker(s3):
    storage = Storage(f"s3a://{BUCKET}/two", s3.options())
    ours = StorageLock(storage)
    hudi_owner = _hudi_lease(s3, "two", valid_for_ms=60_000)
    assert not ours.try_acquire(storage, "t")
    assert hudi_owner in ours.holder(storage)

    _hudi_lease(s3, "two", valid_for_ms=-1_000)  # a dead writer's lease, past validUntil + Hudi's 500 ms drift
    stale = storage.read_versioned(storage.join(LOCK_FILE))
    assert stale is not None
    assert ours.try_acquire(storage, "t")
    try:
        assert _lock_json(s3, "two")["owner"] != hudi_owner
        # a second taker that read the same stale version loses: the server checks If-Match on the ETag
        assert storage.put_if_match(storage.join(LOCK_FILE), b"{}", stale.version) is None
        assert storage.put_if_match(storage.join(LOCK_FILE), b"{}", None) is None
    finally:
        ours.release(storage, "t")
    assert _lock_json(s3, "two")["expired"] is True


def test_the_lease_is_renewed_and_a_lost_lease_is_not_overwritten(s3):
    storage = Storage(f"s3a://{BUCKET}/three", s3.options())
    lock = StorageLock(storage, validity_secs=10, renew_secs=1)
    assert lock.try_acquire(storage, "r")
    first = _lock_json(s3, "three")
    wait_for(lambda: _lock_json(s3, "three")["validUntil"] > first["validUntil"] + 1000, timeout=10, what="a renewal")
    assert _lock_json(s3, "three")["owner"] == first["owner"]

    usurper = _hudi_lease(s3, "three", valid_for_ms=60_000)  # another owner (wrongly) took it: our ETag is stale
    time.sleep(2.5)  # the next renewal fails its If-Match and stops
    lock.release(storage, "r")
    after = _lock_json(s3, "three")
    assert after["owner"] == usurper and after["expired"] is False, after


def _run(uri: str, s3: S3Server, *extra: str, pause: str | None = None, log_dir=None, name: str = "run"):
    conf = {**s3.options(), "hoodie.write.lock.provider": STORAGE_BASED, "hoodie.write.lock.storage.validity.timeout.secs": "10",
            "hoodie.write.lock.storage.renew.interval.secs": "1", "hoodie.client.heartbeat.interval_in_ms": "1000"}  # fmt: skip
    flags = [arg for key, value in conf.items() for arg in ("--hoodie-conf", f"{key}={value}")]
    command = [sys.executable, "-m", "hudi_cluster_core.cli", "run", "--base-path", uri, "--mode", "scheduleAndExecute",
               "--spark-master", "local[1]", "--hoodie-conf", SORT, *flags, *extra]  # fmt: skip
    env = {k: v for k, v in cli_env().items() if not k.startswith("AWS_")}
    if pause:
        env[PAUSE_ENV] = pause
    # output to files, not pipes: a killed run's JVM can never block on a full pipe
    out, err = open(log_dir / f"{name}.out", "w+"), open(log_dir / f"{name}.err", "w+")
    return subprocess.Popen(command, env=env, text=True, stdout=out, stderr=err), out, err


def _finish(started, timeout: float = 600) -> tuple[int, str, str]:
    process, out, err = started
    try:
        code = process.wait(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    out.seek(0), err.seek(0)
    texts = out.read(), err.read()
    out.close(), err.close()
    return code, *texts


def _held_for_a_while(s3: S3Server, prefix: str) -> bool:
    """The same owner holds the lock now and 2.5 s later, renewed meanwhile: not one of the short sections around a
    transition, but the held one (the first run pauses inside its commit)."""
    if f"{prefix}/{LOCK_FILE}" not in s3.keys(BUCKET, f"{prefix}/.hoodie/.locks/"):
        return False
    first = _lock_json(s3, prefix)
    time.sleep(2.5)
    then = _lock_json(s3, prefix)
    return not then["expired"] and then["owner"] == first["owner"] and then["validUntil"] > first["validUntil"]


def test_two_runs_exclude_each_other_and_a_crashed_runs_lease_expires(s3, tmp_path):
    local = make_append_table(str(tmp_path / "table"), batches=4, rows=20)
    before = read_hudi_rs(local)
    s3.upload_dir(local, BUCKET, "runs")
    uri = f"s3a://{BUCKET}/runs"
    holder = _run(uri, s3, pause="before-commit-file=120", log_dir=tmp_path, name="holder")
    try:
        wait_for(lambda: _held_for_a_while(s3, "runs"), timeout=300, what="the first run to hold the lock in its commit")
        held = _lock_json(s3, "runs")
        code, _, err = _finish(_run(uri, s3, "--hoodie-conf", "hoodie.write.lock.wait_time_ms=1500", log_dir=tmp_path,
                                    name="refused"))  # fmt: skip
        lines = error_lines(err)
        assert code == 2 and len(lines) == 1 and LOCK_FILE in lines[0] and held["owner"] in lines[0], err[-2000:]
        os.kill(holder[0].pid, signal.SIGKILL)  # a crash while holding the lock: nobody releases it
    finally:
        _finish(holder, timeout=60)
    left = _lock_json(s3, "runs")
    assert left["owner"] == held["owner"] and left["expired"] is False  # the lease stays until it runs out

    code, out, err = _finish(_run(uri, s3, log_dir=tmp_path, name="next"))
    assert code == 0 and "Traceback" not in err, err[-3000:]
    released = _lock_json(s3, "runs")
    assert released["expired"] is True and released["owner"] != held["owner"], released
    assert "cross-process exclusion on object stores needs a lock provider" not in err
    copy = s3.download_dir(BUCKET, "runs", tmp_path / "copy")
    assert table_problems(str(copy)) == []
    timeline = sorted(p.name for p in (copy / ".hoodie" / "timeline").iterdir() if p.is_file())
    assert [n for n in timeline if n.endswith(".replacecommit")], timeline
    assert_same_rows(before, read_hudi_rs(str(copy)), labels=("before", "after"))


def test_the_storage_based_provider_on_a_local_table_is_one_line(tmp_path):
    local = make_append_table(str(tmp_path / "table"), batches=2, rows=5)
    before = sorted(os.listdir(os.path.join(local, ".hoodie", "timeline")))
    run = subprocess.run([sys.executable, "-m", "hudi_cluster_core.cli", "run", "--base-path", local, "--hoodie-conf",
                          f"hoodie.write.lock.provider={STORAGE_BASED}"], env=cli_env(), text=True,
                         capture_output=True, timeout=300)  # fmt: skip
    lines = error_lines(run.stderr)
    assert run.returncode == 2 and len(lines) == 1 and "Traceback" not in run.stderr, run.stderr[-2000:]
    assert STORAGE_BASED in lines[0] and "s3a://" in lines[0] and "FileSystemBasedLockProvider" in lines[0], lines
    assert sorted(os.listdir(os.path.join(local, ".hoodie", "timeline"))) == before
