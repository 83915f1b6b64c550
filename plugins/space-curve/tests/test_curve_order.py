"""A real z-order / Hilbert clustering (space-curve strategies, on Spark): the rows of every output file follow the
curve key, and the files are contiguous runs of it. The input is not in that order, so a run that did not sort
would fail here (the end-to-end test's row and pruning checks alone would not)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi import HudiTable
from hudi_cluster_core.api import cluster
from hudi_cluster_core.sort.curves import hilbert_keys, zorder_keys
from hudi_cluster_core.run.spark import get_spark
from hudi_cluster_core.writer.append import append

COLUMNS = ["x", "y"]


def curve_keys(table: pa.Table, layout: str) -> list[bytes]:
    return (zorder_keys if layout == "z-order" else hilbert_keys)(table, COLUMNS).to_pylist()


def base_files(base: str) -> list[str]:
    return [str(Path(base) / s.base_file_relative_path()) for s in HudiTable(base).get_file_slices()]


def is_ordered(keys: list[bytes]) -> bool:
    return all(a <= b for a, b in zip(keys, keys[1:]))


SMALL_FOOTER = 8 * 1024  # room for the footer of an output file (with the small bloom filter set below)


@pytest.mark.parametrize("layout", ["z-order", "hilbert"])
def test_output_files_follow_the_curve(tmp_path, layout):
    base = str((tmp_path / "points").resolve())
    rng = np.random.default_rng(11)
    for commit in range(3):
        n = 1500
        rows = pa.table({"id": [f"c{commit}-{i:05d}" for i in range(n)],
                         "x": rng.integers(-1000, 1000, n), "y": rng.normal(0, 50, n)})  # fmt: skip
        append(base, rows, record_key="id", files_per_partition=2)
    before = base_files(base)
    inputs = [pq.read_table(p) for p in before]
    assert not all(is_ordered(curve_keys(t, layout)) for t in inputs), "input already in curve order"
    input_rows = sum(t.num_rows for t in inputs)
    # files roll at the target by data written (as Hudi's do), so the target is a third of the data's bytes;
    # the input files are mostly footer (each carries a bloom filter sized for 60k keys)
    metas = [pq.read_metadata(p) for p in before]
    input_bytes = sum(m.row_group(g).column(c).total_compressed_size
                      for m in metas for g in range(m.num_row_groups) for c in range(m.num_columns))  # fmt: skip

    result = cluster(base, "scheduleAndExecute", {
        "hoodie.clustering.plan.strategy.class": "space-curve",
        "hoodie.clustering.plan.strategy.sort.columns": ",".join(COLUMNS),
        "hoodie.layout.optimize.strategy": layout,
        "hoodie.clustering.plan.strategy.target.file.max.bytes": str(input_bytes // 3 + SMALL_FOOTER),
        # a small bloom filter: at Hudi's sizes its text alone (~431 KB) is larger than a third of the data, and
        # a file keeps within the target footer included
        "hoodie.index.bloom.num_entries": "100", "hoodie.bloom.index.filter.dynamic.max.entries": "200",
    }, spark=get_spark("local[2]"))  # fmt: skip
    assert result.completed_file, result.message

    after = base_files(base)
    assert len(after) >= 3 and not set(after) & set(before)
    runs = []
    for path in after:
        keys = curve_keys(pq.read_table(path), layout)
        bad = next((i for i, (a, b) in enumerate(zip(keys, keys[1:])) if b < a), None)
        assert bad is None, f"{Path(path).name}: row {bad + 1} precedes row {bad} on the {layout} curve"
        runs.append((keys[0], keys[-1]))
    runs.sort()
    for (_, last), (first, _) in zip(runs, runs[1:]):
        assert last <= first, f"output files overlap on the {layout} curve"
    assert sum(pq.read_metadata(p).num_rows for p in after) == input_rows
