"""End to end: a real append-mode table where "us" is written most recently and most often.

With ``top.n=1`` only the hot partition is clustered: its five small files become one; the cold partitions keep
their files. hudi-rs reads the table before and after: same rows (every column but ``_hoodie_file_name``).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow as pa

from hudi_cluster_core.api import cluster
from hudi_cluster_core.run.spark import get_spark
from hudi_cluster_core.writer.append import append
from hudi_cluster_hot_partitions import LOOKBACK_COMMITS_KEY, TOP_N_KEY


def batch(commit: int, regions: tuple[str, ...]) -> pa.Table:
    ids = [f"c{commit}-{region}-{i}" for region in regions for i in range(3)]
    return pa.table({
        "id": ids,
        "region": [region for region in regions for _ in range(3)],
        "ts": [commit * 100 + i for i in range(len(ids))],
        "amount": [float(commit) + i / 10 for i in range(len(ids))],
    })  # fmt: skip


def rows_and_files(base_path: str) -> tuple[Counter, Counter]:
    """hudi-rs' view: the multiset of rows (without _hoodie_file_name) and the file slices per partition."""
    from hudi import HudiTable

    table = HudiTable(base_path)
    rows = pa.Table.from_batches(table.read()).drop_columns(["_hoodie_file_name"])
    columns = sorted(rows.column_names)
    multiset = Counter(zip(*(rows.column(c).to_pylist() for c in columns)))
    return multiset, Counter(s.partition_path for s in table.get_file_slices())


def test_hot_partition_is_clustered_and_rows_are_unchanged(tmp_path: Path):
    base_path = str((tmp_path / "orders").resolve())
    commits = [("us", "eu", "apac"), ("us", "eu", "apac"), ("us",), ("us",), ("us",)]
    for commit, regions in enumerate(commits):
        append(base_path, batch(commit, regions), table_name="orders", record_key="id", partition_field="region",
               precombine_field="ts", table_version=9)  # fmt: skip
    rows_before, files_before = rows_and_files(base_path)
    assert files_before == {"us": 5, "eu": 2, "apac": 2}

    result = cluster(base_path, "scheduleAndExecute", options={
        "hoodie.clustering.plan.strategy.class": "hot-partitions",
        LOOKBACK_COMMITS_KEY: 3,
        TOP_N_KEY: 1,
    }, spark=get_spark("local[2]"))  # fmt: skip

    assert result.message == "completed", result
    assert [(p.partition, p.files_before, p.files_after) for p in result.partitions] == [("us", 5, 1)]
    rows_after, files_after = rows_and_files(base_path)
    assert rows_after == rows_before
    assert files_after == {"us": 1, "eu": 2, "apac": 2}
