"""No committed write is lost to a clustering (issue 13, first steps): Apache Hudi 1.1.1 writers beside us.

* An Apache Hudi upsert with ``SparkAllowUpdateStrategy`` commits into file groups our pending plan will replace
  (COW: new base files; MOR: log files). Apache Hudi's own clustering loses such updates; ours sees them at commit,
  lets the writer win (one line, exit 1), rolls its instant back and drops its plan. Every update survives, by both
  readers, and the next clustering picks the groups up again with the new values.
* A Hudi writer that died before completing (its requested and inflight files, with Hudi's workload profile, and
  its data files stay on the timeline) keeps the file groups it touched out of our next plan.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.compute as pc
import pytest

from hudi_cluster_core.api import cluster
from hudi_cluster_core.table import load_table
from tests.support.apache_hudi import (
    hudi_upsert, make_small_file_table, make_updates, read_hudi_snapshot, timeline_dir,
)  # fmt: skip
from tests.support.readers import assert_same_rows, read_hudi_rs
from tests.support.runs import error_lines, run_cli, table_problems

OPTIONS = {"hoodie.clustering.plan.strategy.sort.columns": "c_int"}
ALLOW = {"hoodie.clustering.updates.strategy":
         "org.apache.hudi.client.clustering.update.strategy.SparkAllowUpdateStrategy"}  # fmt: skip


@pytest.fixture(scope="module")
def templates(spark, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("conflicts")
    built = {}
    for kind in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        base = root / kind
        rows = make_small_file_table(spark, str(base), batches=3, rows_per_batch=12, table_type=kind)
        built[kind] = (base, rows)
    return built


def _copy(templates, kind: str, tmp_path: Path):
    source, rows = templates[kind]
    base = tmp_path / "t"
    shutil.copytree(source, base)
    return str(base), rows


def _value_of(table, key) -> str:
    match = table.filter(pc.equal(table["id"], key))
    assert match.num_rows == 1, f"key {key}: {match.num_rows} rows"
    return match["c_string"][0].as_py()


@pytest.mark.parametrize("kind", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_writer_that_commits_into_planned_groups_wins(spark, templates, tmp_path, kind):
    base, rows = _copy(templates, kind, tmp_path)
    scheduled = cluster(base, "schedule", OPTIONS, spark=spark)
    instant = scheduled.instant_time
    assert instant and scheduled.input_file_groups >= 3

    updates = make_updates(rows.slice(0, 12), tag="writer")
    hudi_upsert(spark, base, updates, extra_options=ALLOW)  # Hudi lets it through the pending plan
    planned_keys = set(updates["id"].to_pylist())

    run = run_cli(base, mode="execute", timeout=600)
    assert run.returncode == 1, run.stderr[-2000:]
    lines = error_lines(run.stderr)
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr[-2000:]
    assert f"clustering {instant} not committed" in lines[0] and "writer wins" in lines[0], lines
    assert "rolled back" in lines[0], lines
    assert table_problems(base) == []
    assert load_table(base).timeline.get(instant) is None, "the conflicting plan must be dropped"

    after_rs, after_hudi = read_hudi_rs(base), read_hudi_snapshot(spark, base)
    assert_same_rows(after_rs, after_hudi, labels=("hudi-rs", "Apache Hudi"))
    assert after_rs.num_rows == rows.num_rows
    assert all(_value_of(after_rs, k) == f"writer-{k}" for k in planned_keys), "an update was lost"

    again = cluster(base, "scheduleAndExecute", OPTIONS, spark=spark)
    assert again.output_files >= 1
    final_rs, final_hudi = read_hudi_rs(base), read_hudi_snapshot(spark, base)
    assert_same_rows(final_rs, final_hudi, labels=("hudi-rs", "Apache Hudi"))
    assert_same_rows(final_rs, after_rs, labels=("after clustering", "before clustering"))
    assert table_problems(base) == []


def test_groups_of_a_write_still_in_flight_are_not_planned(spark, templates, tmp_path):
    base, rows = _copy(templates, "COPY_ON_WRITE", tmp_path)
    updates = make_updates(rows.slice(0, 4), tag="died")
    write = hudi_upsert(spark, base, updates)
    # the writer dies before completing: its completed file never appears; requested, inflight (Hudi's workload
    # profile) and its data files stay, as Hudi leaves them for a later rollback
    completed = [p for p in timeline_dir(base).iterdir() if p.name.startswith(write.instant + "_") and p.name.endswith(".commit")]
    assert len(completed) == 1, sorted(p.name for p in timeline_dir(base).iterdir())
    completed[0].unlink()
    table = load_table(base)
    touched = table.view().pending_write_file_groups()
    assert touched and set(touched.values()) == {write.instant}, touched

    scheduled = cluster(base, "schedule", OPTIONS, spark=spark)
    assert scheduled.instant_time
    plan = load_table(base).timeline.clustering_plan(scheduled.instant_time)
    planned = {(s.get("partitionPath") or "", s["fileId"])
               for g in plan["clusteringPlan"]["inputGroups"] for s in g["slices"]}  # fmt: skip
    assert planned, "nothing planned"
    assert not planned & {(g.partition, g.file_id) for g in touched}, "a group of the write in flight was planned"
