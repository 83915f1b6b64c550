"""The storage seam (issue 20): a store is one backend module plus one registry line, the core's commit and lock
paths run on any backend through its capabilities, and a store that cannot create a file exclusively makes a
commit stop before it writes anything, unless a lock provider excludes the other writers.

The backend here is the fake in-memory store of tests/support/memory_store.py (in this process only: plans,
commits, the storage lock; no Spark tasks). ``weak://`` is the same objects through a backend without exclusive
creates.
"""

from __future__ import annotations

import json

import pytest

from hudi_cluster_core.errors import StorageError
from hudi_cluster_core.io import registry
from hudi_cluster_core.io.storage import Storage
from hudi_cluster_core.table import load_table
from hudi_cluster_core.table.lock_provider import STORAGE_BASED
from hudi_cluster_core.table.storage_lock import LOCK_FILE, StorageLock
from hudi_cluster_core.write.append import append
from tests.support import memory_store
from tests.support.runs import small_file_rows

SORT = "hoodie.clustering.plan.strategy.sort.columns=id"
LOCK = {"hoodie.write.lock.provider": STORAGE_BASED, "hoodie.write.lock.storage.validity.timeout.secs": "10",
        "hoodie.write.lock.storage.renew.interval.secs": "1"}  # fmt: skip


@pytest.fixture
def memory(monkeypatch):
    monkeypatch.setitem(registry.BACKENDS, "memory", "tests.support.memory_store:MemoryBackend")  # the one line
    monkeypatch.setitem(registry.BACKENDS, "weak", "tests.support.memory_store:NoExclusiveCreate")
    registry.backend_class.cache_clear()
    memory_store.reset()
    yield
    memory_store.reset()
    registry.backend_class.cache_clear()


def _table(uri: str = "memory://lake/t", batches: int = 3) -> str:
    for batch in range(batches):
        append(uri, small_file_rows(batch * 20, 20, seed=5), table_name="seam", record_key="id",
               partition_field="region", precombine_field="ts")  # fmt: skip
    return uri


def _timeline(bucket: str = "lake", prefix: str = "t/.hoodie/timeline/") -> list[str]:
    return sorted(k[len(prefix):] for k in memory_store.objects(bucket) if k.startswith(prefix) and k.count("/") == 3)


def test_a_new_store_is_one_module_and_one_registry_line(memory):
    storage = Storage("memory://lake/t")
    assert storage.store_name == "memory store" and storage.capabilities.put_if_match
    assert storage.qualified(storage.join("p", "f.parquet")) == "memory://lake/t/p/f.parquet"
    assert storage.same_store("memory://lake/x") and not storage.same_store("memory://other/t")
    assert "memory://" in registry.supported() and "weak://" in registry.supported()
    with pytest.raises(StorageError, match=r"'nowhere://' is not supported; supported: local paths, file:, s3://, s3a://, gs://, abfs://, abfss://, wasbs://, memory://"):
        Storage("nowhere://lake/t")


def test_commits_plans_and_the_storage_lock_run_on_the_memory_store(memory):
    """Our writer's commits (exclusive creates of completed instants), a scheduled plan, the view over the store's
    listing and parquet footers through pyarrow: all on the fake backend."""
    from hudi_cluster_core.api import cluster

    uri = _table()
    table = load_table(uri)
    assert len(table.timeline.instants) == 3
    slices = table.view().latest_file_slices()
    assert len(slices) == 3 * len({s.partition for s in slices}) > 3  # a file group per partition per commit
    result = cluster(uri, "schedule", {"hoodie.clustering.plan.strategy.sort.columns": "id"})
    assert result.message == "scheduled" and result.input_file_groups == len(slices)
    requested = f"{result.instant_time}.clustering.requested"
    assert requested in _timeline()
    storage = load_table(uri).storage
    with pytest.raises(FileExistsError):  # a second writer of the same instant is refused by the store
        storage.write_new(storage.join(".hoodie", "timeline", requested), b"{}")

    first, second = StorageLock(storage, 10, 1), StorageLock(storage, 10, 1)
    assert first.try_acquire(storage, "a")
    assert not second.try_acquire(storage, "b") and "owner" in second.holder(storage)
    first.release(storage, "a")
    assert json.loads(memory_store.objects("lake")[f"t/{LOCK_FILE}"])["expired"] is True
    assert second.try_acquire(storage, "b")
    second.release(storage, "b")


def test_a_store_without_exclusive_create_refuses_to_commit_before_writing_anything(memory, capsys):
    from hudi_cluster_core.cli import main

    _table()  # written through memory://; weak:// is the same objects without exclusive creates
    before = memory_store.objects("lake")
    code = main(["run", "--base-path", "weak://lake/t", "--mode", "schedule", "--hoodie-conf", SORT])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("hudi-cluster: error:")]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert "memory store without exclusive create" in lines[0] and "cannot do exclusive create" in lines[0]
    assert f"hoodie.write.lock.provider={STORAGE_BASED}" in lines[0] and "nothing was written" in lines[0]
    assert memory_store.objects("lake") == before

    storage = Storage("weak://lake/t")
    with pytest.raises(StorageError, match="cannot do exclusive create"):  # never "check, then write" unlocked
        storage.create_exclusive(storage.join(".hoodie", "x"), b"x")


def test_with_a_lock_provider_a_store_without_exclusive_create_commits_under_the_lock(memory, capsys):
    from hudi_cluster_core.cli import main

    _table()
    flags = [arg for key, value in LOCK.items() for arg in ("--hoodie-conf", f"{key}={value}")]
    code = main(["run", "--base-path", "weak://lake/t", "--mode", "schedule", "--hoodie-conf", SORT, *flags])
    assert code == 0, capsys.readouterr().err
    assert [n for n in _timeline() if n.endswith(".clustering.requested")]
    assert json.loads(memory_store.objects("lake")[f"t/{LOCK_FILE}"])["expired"] is True  # taken, then released


def test_our_writer_refuses_a_first_commit_on_such_a_store_too(memory, capsys, tmp_path):
    import pyarrow.parquet as pq

    from hudi_cluster_core.cli import main

    rows = tmp_path / "rows.parquet"
    pq.write_table(small_file_rows(0, 10, seed=1), rows)
    args = ["--table-name", "seam", "--record-key", "id", "--partition-field", "region", "--precombine-field", "ts"]
    code = main(["append", "--base-path", "weak://lake/new", "--input", str(rows), *args])
    err = capsys.readouterr().err
    assert code == 2 and "cannot do exclusive create" in err and "Traceback" not in err, err
    assert memory_store.objects("lake") == {}
