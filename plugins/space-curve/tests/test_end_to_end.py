"""A real table of small files (append writer, several commits), z-order clustered by hudi-cluster on Spark:
hudi-rs reads the same rows, and a two-column range query opens fewer files by footer min/max."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from hudi import HudiTable
from hudi_cluster_core.api import cluster
from hudi_cluster_core.run.spark import get_spark
from hudi_cluster_core.writer.append import append

COMMITS, FILES_PER_COMMIT, ROWS_PER_COMMIT = 6, 2, 4000
QUERY_SIDE = 0.1  # each query selects ~1% of the unit square


def read_rows(base: str) -> pa.Table:
    table = pa.Table.from_batches(HudiTable(base).read()).drop_columns(["_hoodie_file_name"])
    return table.take(pc.sort_indices(table, sort_keys=[("_hoodie_record_key", "ascending")]))


def base_files(base: str) -> list[str]:
    return [str(Path(base) / s.base_file_relative_path()) for s in HudiTable(base).get_file_slices()]


def footer_box(path: str) -> tuple[float, float, float, float]:
    """(min x, max x, min y, max y) over the file's row groups, from the parquet footer only."""
    metadata = pq.read_metadata(path)
    names = [metadata.schema.column(i).name for i in range(metadata.num_columns)]
    low, high = {}, {}
    for rg in range(metadata.num_row_groups):
        for column in ("x", "y"):
            stats = metadata.row_group(rg).column(names.index(column)).statistics
            low[column] = min(low.get(column, np.inf), stats.min)
            high[column] = max(high.get(column, -np.inf), stats.max)
    return low["x"], high["x"], low["y"], high["y"]


def mean_files_opened(paths: list[str], queries: np.ndarray) -> float:
    boxes = np.array([footer_box(p) for p in paths])
    hits = [np.sum((boxes[:, 1] >= qx) & (boxes[:, 0] <= qx + QUERY_SIDE) & (boxes[:, 3] >= qy) & (boxes[:, 2] <= qy + QUERY_SIDE))
            for qx, qy in queries]  # fmt: skip
    return float(np.mean(hits))


def test_zorder_clustering_keeps_rows_and_prunes_files(tmp_path):
    base = str((tmp_path / "points").resolve())
    rng = np.random.default_rng(2024)
    for commit in range(COMMITS):
        rows = pa.table({
            "id": [f"c{commit}-{i:05d}" for i in range(ROWS_PER_COMMIT)],
            "x": rng.random(ROWS_PER_COMMIT), "y": rng.random(ROWS_PER_COMMIT),
            "payload": rng.integers(0, 1_000_000, ROWS_PER_COMMIT),
        })  # fmt: skip
        append(base, rows, record_key="id", files_per_partition=FILES_PER_COMMIT)
    before_rows, before_files = read_rows(base), base_files(base)
    assert len(before_files) == COMMITS * FILES_PER_COMMIT
    # the target is an eighth of the data's bytes plus room for a file's footer (whole files, footers included,
    # keep within it), with a small bloom filter: at Hudi's sizes its text alone (~431 KB) is larger than the rows
    metas = [pq.read_metadata(p) for p in before_files]
    input_bytes = sum(m.row_group(g).column(c).total_compressed_size
                      for m in metas for g in range(m.num_row_groups) for c in range(m.num_columns))  # fmt: skip

    result = cluster(base, "scheduleAndExecute", {
        "hoodie.clustering.plan.strategy.class": "space-curve",
        "hoodie.clustering.plan.strategy.sort.columns": "x,y",
        "hoodie.layout.optimize.strategy": "z-order",
        "hoodie.clustering.plan.strategy.target.file.max.bytes": str(input_bytes // 8 + 8 * 1024),
        "hoodie.index.bloom.num_entries": "100", "hoodie.bloom.index.filter.dynamic.max.entries": "200",
    }, spark=get_spark("local[2]"))  # fmt: skip
    assert result.completed_file, result.message

    after_files = base_files(base)
    assert 8 <= len(after_files) <= 10 and not set(after_files) & set(before_files)
    assert read_rows(base).equals(before_rows)

    queries = np.random.default_rng(7).random((200, 2)) * (1 - QUERY_SIDE)
    opened_before, opened_after = mean_files_opened(before_files, queries), mean_files_opened(after_files, queries)
    assert opened_before == len(before_files)  # uniformly random small files all span the whole square
    # DIRECT z-order on doubles in [0, 1) splits by exponent first, so files are not equal cells: still about
    # half the files are skipped, where the input layout skips none
    assert opened_after < 0.6 * len(after_files), (opened_before, opened_after, len(after_files))
