"""Crash campaign: a run is SIGKILLed at a random point, then the run that recovers it is SIGKILLed at a random point
too (inside its rollback, or mid-execution), then a third run recovers. After every kill both readers (hudi-rs and
Apache Hudi, which must still open the table) read the last committed snapshot; at the end the rows are exactly
those before and nothing is left pending.

``HUDI_CRASH_RUNS`` (default 5 in ``make test``, one per table kind; ``make soak`` runs 50) cases, drawn from ``HUDI_CRASH_SEED``.
"""

from __future__ import annotations

import os
import random
import signal

import pytest

from hudi_cluster_core.api import cluster
from hudi_cluster_core.failpoints import MDT_POINTS, POINTS, ROLLBACK_POINTS
from tests.support.apache_hudi import (
    SMALL_FILE_SCHEMA, assert_upsert_found_keys, hudi_upsert, make_updates, read_hudi_snapshot,
)  # fmt: skip
from tests.support.archived_tables import RECORD_INDEX_OPTIONS
from tests.support.readers import assert_same_rows, read_hudi_rs
from tests.support.runs import run_cli, table_problems
from tests.test_mdt_commit import _assert_listing_equals_storage

RUNS = int(os.environ.get("HUDI_CRASH_RUNS", "5"))
SEED = int(os.environ.get("HUDI_CRASH_SEED", "20261123"))
# points that leave an inflight instant, so the next run has something to roll back
LEAVES_INFLIGHT = ("after-inflight", "task-after-first-file", "after-tasks", "before-commit-file")


# tables Apache Hudi wrote, history archived and cleaned (tests/support/archived_tables.py); the last two have a
# metadata table (files, column and partition stats; the last one the record index too), which the clustering
# commit keeps and its rollback cleans
KINDS = ("cow_v9", "cow_v6", "mor_v9_late_upserts", "cow_v9_mdt", "cow_v9_rli")
# points reached only on a table with a metadata table
MDT_FIRST = tuple(p for p in MDT_POINTS if not p.startswith("rollback"))
MDT_SECOND = tuple(p for p in MDT_POINTS if p.startswith("rollback"))


def draw_cases() -> list[tuple[str, str, str, bool]]:
    """The first cases cover every (first, second) point pair in turn, the rest are drawn at random."""
    rng = random.Random(SEED)
    cases = []
    for number in range(RUNS):
        kind = KINDS[number % len(KINDS)]
        mdt = kind.endswith(("_mdt", "_rli"))
        first = LEAVES_INFLIGHT[number % len(LEAVES_INFLIGHT)] if number < 8 else rng.choice(POINTS + MDT_FIRST * mdt)
        if mdt and number < 8:  # the metadata table's own points first
            first = MDT_FIRST[number // len(KINDS) % len(MDT_FIRST)]
        pool = ROLLBACK_POINTS + POINTS + MDT_SECOND * mdt
        second = ROLLBACK_POINTS[number % len(ROLLBACK_POINTS)] if number < 10 else rng.choice(pool)
        cases.append((kind, first, second, rng.random() < 0.3))
    return cases


CASES = draw_cases()


@pytest.mark.parametrize("kind, first, second, retry", CASES,
                         ids=[f"{n}-{k}-{a}-then-{b}{'-retry' if r else ''}" for n, (k, a, b, r) in enumerate(CASES)])  # fmt: skip
def test_kill_twice_then_recover(spark, hudi_tables, kind, first, second, retry, request):
    base = hudi_tables.copy(kind, request.node.name[:40])
    before_rs, before_hudi = read_hudi_rs(base), read_hudi_snapshot(spark, base)

    def readers_see_last_snapshot(when: str) -> None:
        assert_same_rows(before_rs, read_hudi_rs(base), labels=("before", f"{when} (hudi-rs)"))
        assert_same_rows(before_hudi, read_hudi_snapshot(spark, base), labels=("before", f"{when} (Apache Hudi)"))

    crashed = run_cli(base, failpoint=first)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr[-2000:]
    readers_see_last_snapshot(f"after a kill at {first}")

    retry_flag = ("--retry-last-failed-clustering-job",) if retry else ()
    recovering = run_cli(base, *retry_flag, failpoint=second)
    # the second point is reached only if that run gets there (e.g. no rollback when nothing was inflight)
    assert recovering.returncode in (0, -signal.SIGKILL), recovering.stderr[-2000:]
    readers_see_last_snapshot(f"after a kill at {second} while recovering")

    result = cluster(base, "scheduleAndExecute", {"hoodie.clustering.plan.strategy.sort.columns": "c_int"},
                     spark=spark, retry_last_failed_clustering_job=retry)  # fmt: skip
    assert result.message in ("completed", "nothing to cluster")
    readers_see_last_snapshot("after recovery")
    assert table_problems(base) == []
    if kind.endswith(("_mdt", "_rli")):  # Apache Hudi's own metadata-table listing still equals storage
        _assert_listing_equals_storage(spark, base)
    if kind.endswith("_rli"):  # and its record index still finds every key where it is now
        after = read_hudi_snapshot(spark, base)
        updates = make_updates(before_rs.select(SMALL_FILE_SCHEMA.names).cast(SMALL_FILE_SCHEMA).slice(0, 8), tag="after-crash")
        stats = hudi_upsert(spark, base, updates, index_type="RECORD_INDEX", extra_options=RECORD_INDEX_OPTIONS)
        assert_upsert_found_keys(spark, base, updates, stats, rows_before=after.num_rows)
