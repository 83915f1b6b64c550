"""What the simulator of the commit protocol (``tests/sim``) found on its consistent-bucket MOR schedules, replayed
for real: real files on local disk, a killed process where a run dies (``tests/test_sim_findings.py`` has the
others; ``python -m tests.sim replay SEED 'STEPS'`` at the code of the day replays each).

seed=15655 (consistent-bucket schedule): a resize run held up past its heartbeat's expiry went on after another
run had completed its instant, wrote the same files (the resize names each file after its child bucket) and, on
giving up, deleted them: the committed files. A run giving up now keeps the files the completed commit names.

seeds 41424, 39671, 51436 (consistent-bucket schedules, the ``duplicate`` writer's copies): a write committed
copies for a resize whose rollback had begun (it now leaves them out); an interrupted rollback abandoning a
resize was finished keeping its plan by a run retrying it (it now drops the plan); a retried write reused its
failed attempt's copy name and undoing that attempt deleted the committed copy (a copy's write token now names
its write: covered by the simulation only).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from hudi_cluster_core.io.storage import Storage
from hudi_cluster_core.table import load_table
from tests.support.readers import read_hudi_rs


def _bucket_table(spark, base: str, options: dict, *, metadata_table: bool = False) -> str:
    """The simulation's consistent-bucket MOR table on local disk: two upserts of six keys into log files."""
    from hudi_cluster_core import javaprops
    from hudi_cluster_core.writer.append import create_table
    from hudi_cluster_core.writer.ingest import upsert
    from tests.sim.metadata_setup import add_metadata_table
    from tests.sim.simulation import initial_rows

    storage = Storage(base)
    create_table(storage, initial_rows(0).schema, table_name="b", record_key="id", partition_field="region",
                 precombine_field="ts")  # fmt: skip
    path = storage.join(".hoodie", "hoodie.properties")
    props = javaprops.parse(storage.read_bytes(path).decode("utf-8"))
    storage.write_atomic(path, javaprops.dump({**props, "hoodie.table.type": "MERGE_ON_READ"}).encode())
    if metadata_table:
        add_metadata_table(storage, "b")
    for batch in range(2):
        upsert(base, initial_rows(batch), options, spark=spark)
    return base


def test_a_resize_completed_by_another_run_keeps_its_files_when_the_first_run_gives_up(spark, tmp_path):
    """Seed 15655 (consistent-bucket schedule; ``replay 15655 'k c2*2 c1 k c1 k*3 c1*2 k*3 c1*2 k*6 c1*4 k c1 k
    c1 k c1*3 k c1 k!jump-back k*4 a k a c1 k!fail-before c1*12 w c1*5 c2 w c2 c1 a c2*2 c1!freeze'``): run c1
    claimed a bucket resize and was held up past its heartbeat's expiry; c2 took the instant over, rolled it back,
    executed it again and committed. c1 went on: its tasks wrote the same files (the resize names each file after
    its child bucket, and a second Spark application gives its tasks the same write tokens), then its commit found
    the instant completed by another run and deleted "the files this run wrote": the committed resize's files,
    every row of the table gone. A run giving up now keeps the files the completed commit names. Here the held-up
    run's commit is given what its tasks wrote: the committed commit's own paths."""
    import pytest

    from hudi_cluster_core.api import cluster
    from hudi_cluster_core.errors import PlanError
    from hudi_cluster_core.plan.avro_plan import read_plan
    from hudi_cluster_core.run.commit import commit_clustering
    from tests.sim.bucket_table import SETUP_OPTIONS

    base = _bucket_table(spark, str(tmp_path / "b"), SETUP_OPTIONS)
    result = cluster(base, "scheduleAndExecute", SETUP_OPTIONS, spark=spark)
    assert result.message == "completed"
    table = load_table(base)
    instant = table.timeline.get(result.instant_time)
    written = [s for part in table.timeline.commit_metadata(instant)["partitionToWriteStats"].values() for s in part]
    record = table.timeline.clustering_plan(result.instant_time)
    plan = read_plan(table.storage, result.instant_time, record, source="the resize")
    with pytest.raises(PlanError, match="completed by another run"):
        commit_clustering(table, plan, written)
    assert all(Path(base, s["path"]).exists() for s in written)
    assert sorted(read_hudi_rs(base).column("id").to_pylist()) == sorted(f"k{b}{i:02d}" for b in range(2) for i in range(6))


def test_an_interrupted_rollback_that_abandons_a_resize_is_never_finished_keeping_its_plan(spark, tmp_path):
    """Seed 39671: a failed resize run's rollback (abandoning the plan: it deletes the copies a writer's duplicate
    update strategy wrote for the resize) was interrupted; the next run, retrying the last failed clustering,
    finished it keeping the plan, executed the plan again and committed it. A write that duplicated into a resize
    is no conflict for it, but the copies were gone: the write's values lost. Here the rollback dies mid-delete
    (its process killed), and the retry's rollback now drops the plan; every row keeps the write's value."""
    from hudi_cluster_core.api import cluster
    from hudi_cluster_core.run.rollback import rollback_clustering
    from hudi_cluster_core.writer.ingest import upsert
    from tests.sim.actors import Write
    from tests.sim.bucket_table import OPTIONS

    options = {**OPTIONS, "hoodie.clustering.updates.strategy": "consistent-bucket-duplicate"}
    base = _bucket_table(spark, str(tmp_path / "b"), options)
    instant = cluster(base, "schedule", options).instant_time
    keys = tuple((f"k{b}{i:02d}", ("us", "eu")[i % 2]) for b in range(2) for i in range(6))
    assert upsert(base, Write("upsert", 7, keys).rows(), options, spark=spark)["duplicated"] == len(keys)
    script = ("from hudi_cluster_core.table import load_table\n"
              "from hudi_cluster_core.run.rollback import rollback_clustering\n"
              f"rollback_clustering(load_table({base!r}), {instant!r}, keep_plan=False)\n")  # fmt: skip
    killed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "HUDI_CLUSTER_FAILPOINT": "rollback-mid-delete"},
                            cwd=Path(__file__).resolve().parents[1])  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert [i.action for i in load_table(base).timeline.pending_rollbacks()] == ["rollback"]
    rollback_clustering(load_table(base), instant, keep_plan=True)  # what the retrying run does first
    assert load_table(base).timeline.clustering_plan(instant) is None, "the plan of an abandoning rollback is gone"
    cluster(base, "scheduleAndExecute", options, spark=spark)  # a resize of its own, from the write's files
    rows = read_hudi_rs(base)
    assert sorted(zip(rows.column("id").to_pylist(), rows.column("val").to_pylist())) == sorted((k, 7) for k, _ in keys)


def _killed_rollback(base: str, instant: str, failpoint: str) -> None:
    """``rollback_clustering`` of ``instant`` (abandoning its plan) in its own process, killed at ``failpoint``."""
    script = ("from hudi_cluster_core.table import load_table\n"
              "from hudi_cluster_core.run.rollback import rollback_clustering\n"
              f"rollback_clustering(load_table({base!r}), {instant!r}, keep_plan=False)\n")  # fmt: skip
    killed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "HUDI_CLUSTER_FAILPOINT": failpoint},
                            cwd=Path(__file__).resolve().parents[1])  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]


def test_a_write_never_commits_copies_for_a_resize_whose_rollback_began(spark, tmp_path):
    """Seed 41424: a writer duplicated into a resize whose (abandoning) rollback had begun, and committed the
    copies; the rollback, finishing, deleted them and marked them deleted in the metadata table under its own
    instant, older than the write's: the metadata table listed them again after it, files no longer in storage
    (a reader listing through it fails on them). The write now leaves out its copies for a resize whose rollback
    began. Here the rollback's process is killed once inflight, the write runs and leaves its copies out, then the
    rollback is finished; the listing and the rows are checked. (The listing went wrong in the simulation because
    the rollback's first attempt had completed its metadata-table deltacommit before the write; this replay
    checks the write's side, which closes it.)"""
    from hudi_cluster_core.api import cluster
    from hudi_cluster_core.mdt.partition_reader import read_partition
    from hudi_cluster_core.run.rollback import rollback_clustering
    from hudi_cluster_core.writer.ingest import upsert
    from tests.sim.actors import Write
    from tests.sim.bucket_table import OPTIONS

    options = {**OPTIONS, "hoodie.clustering.updates.strategy": "consistent-bucket-duplicate"}
    base = _bucket_table(spark, str(tmp_path / "b"), options, metadata_table=True)
    instant = cluster(base, "schedule", options).instant_time
    _killed_rollback(base, instant, "rollback-after-inflight")
    keys = tuple((f"k{b}{i:02d}", ("us", "eu")[i % 2]) for b in range(2) for i in range(6))
    written = upsert(base, Write("upsert", 7, keys).rows(), options, spark=spark)
    assert not [p for p in Path(base).glob(f"*/.*_{instant}.log.*")], "no copy for the resize being rolled back"
    rollback_clustering(load_table(base), instant, keep_plan=False)
    listed = set()
    for partition, versions in read_partition(Storage(base), "files", lambda key: True).items():
        for record in versions if partition != "__all_partitions__" else ():
            for name, info in (record.get("filesystemMetadata") or {}).items():
                (listed.discard if info.get("isDeleted") else listed.add)(f"{partition}/{name}")
    assert listed and not [f for f in listed if not Path(base, f).exists()], "the metadata table lists gone files"
    assert written["instant_time"] in {i.time for i in load_table(base).timeline.completed()}
    # the rows by Hudi's rules, merged from the files (the simulation's checks; hudi-rs reads only the last log
    # file of a metadata table without a base file, as this one is)
    from tests.sim import checks
    from tests.sim.store import Obj, World

    objects = {f"t/{f.relative_to(base)}": Obj(f.read_bytes(), 0, None, "") for f in Path(base).rglob("*") if f.is_file()}
    assert checks.check_rows(World(objects=objects), "t", {k: 7 for k, _ in keys}) == []
