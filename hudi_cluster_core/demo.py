"""``hudi-cluster demo``: fast ingestion leaves many small files; clustering stitches and sorts them.

Runs locally end to end: append-mode commits (new file groups each time) into a fresh Hudi table, its layout,
one clustering run on local Spark, the layout after, and a check with hudi-rs that the rows are the same.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from .api import cluster
from .show import table_summary
from .table import load_table
from .writer.append import append

REGIONS = ("us", "eu", "apac")


def demo_batch(batch: int, rows: int, seed: int = 7) -> pa.Table:
    rng = np.random.default_rng(seed + batch)
    start = batch * rows
    ids = [f"order-{i:09d}" for i in range(start, start + rows)]
    return pa.table({
        "order_id": pa.array(ids, pa.string()),
        "ts": pa.array(1_700_000_000_000 + np.arange(start, start + rows) * 1000, pa.int64()),
        "region": pa.array([REGIONS[i % 3] for i in range(start, start + rows)], pa.string()),
        "customer_id": pa.array(rng.integers(0, 50_000, rows), pa.int64()),
        "amount": pa.array(np.round(rng.gamma(2.0, 40.0, rows), 2), pa.float64()),
        "status": pa.array(rng.choice(["new", "paid", "shipped", "returned"], rows), pa.string()),
    })  # fmt: skip


def _fingerprint(base: str) -> tuple[int, str]:
    """Row count and a digest of every row (all columns but _hoodie_file_name), read by hudi-rs."""
    from hudi import HudiTable

    batches = HudiTable(base).read()
    table = pa.Table.from_batches(batches).drop_columns(["_hoodie_file_name"])
    rows = sorted(map(repr, zip(*(table.column(c).to_pylist() for c in sorted(table.column_names)))))
    return table.num_rows, hashlib.sha256("\n".join(rows).encode()).hexdigest()


def run_demo(base_path: str, *, table_version: int = 9, batches: int = 40, rows_per_batch: int = 2500) -> int:
    base = str(Path(base_path).resolve())
    shutil.rmtree(base, ignore_errors=True)
    print(f"== writing {batches} append-mode commits of {rows_per_batch} rows into {base} (table version {table_version})")
    started = time.monotonic()
    for batch in range(batches):
        append(base, demo_batch(batch, rows_per_batch), table_name="demo_orders", record_key="order_id",
               partition_field="region", precombine_field="ts", table_version=table_version)  # fmt: skip
    print(f"   done in {time.monotonic() - started:.1f}s\n\n== layout before\n{table_summary(load_table(base))}\n")
    before = _fingerprint(base)

    print("== clustering (size-based plan, sort by customer_id,ts) on local Spark")
    started = time.monotonic()
    result = cluster(base, "scheduleAndExecute", {"hoodie.clustering.plan.strategy.sort.columns": "customer_id,ts"})
    print(f"   instant {result.instant_time}: {result.input_file_groups} file groups -> {result.output_files} files "
          f"in {time.monotonic() - started:.1f}s\n{result.summary().splitlines()[-1]}\n")  # fmt: skip
    print(f"== layout after\n{table_summary(load_table(base))}\n")
    after = _fingerprint(base)
    if before != after:
        print(f"ROWS DIFFER: before {before}, after {after}")
        return 1
    print(f"== rows checked equal with hudi-rs: {after[0]} rows, digest {after[1][:16]}")
    return 0
