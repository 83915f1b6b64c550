"""The data path on S3 (issue 20): parquet footers, row groups and base-file writes inside Spark tasks, through
pyarrow's own ``S3FileSystem`` (the AWS C++ SDK) or through obstore (Rust ``object_store``) behind a
``pyarrow.fs.PyFileSystem`` (every read a Python call into obstore's ``ReadableFile``).

The commit path (conditional creates, ETag updates, listing) goes through obstore whatever this says
(bench_s3_clients.py); this decides only what ``Storage.fs`` hands pyarrow. Both read the same objects on moto's
loopback server; pyarrow is the **baseline**, obstore the ratio to it, median of ``--reps`` alternating
repetitions (min-max of the per-repetition ratios), wall and CPU of this process (Python, the C++ SDK's and
obstore's threads), plus moto's CPU (the server is the larger part of every wall figure on loopback).

1. footers: ``pq.read_metadata`` of ``--footers`` small files (6,000 rows; what planning and ``measure_group`` do);
2. whole files: ``pq.read_table`` of ``--files`` files of 90,000 rows in 3 row groups (a group read into memory);
3. row groups: ``ParquetFile.iter_batches`` over the same files (the out-of-core path);
4. writes: ``pq.write_table`` of ``--writes`` such files, gzip (a task's base files).

The obstore contender is exactly what tasks use: ``Storage.fs`` of an ``s3a://`` table
(``hudi_cluster_core/io/obstore_fs.py``).

    .venv/bin/python bench/bench_s3_data_path.py --quick
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from common import OUT_DIR, compare_clients, fmt_table, load, machine, make_rows, write_json

from tests.support.s3_server import ACCESS_KEY, REGION, SECRET_KEY, S3Server

BUCKET = "bench"
CLIENTS = ("pyarrow", "obstore")  # pyarrow first: the baseline


def pyarrow_fs(endpoint: str) -> pafs.FileSystem:
    return pafs.S3FileSystem(access_key=ACCESS_KEY, secret_key=SECRET_KEY, region=REGION, scheme="http",
                             endpoint_override=endpoint.split("://", 1)[1])  # fmt: skip


def obstore_fs(endpoint: str) -> pafs.FileSystem:
    """What the tasks use: ``Storage.fs`` of an ``s3a://`` table, a ``PyFileSystem`` over obstore
    (``hudi_cluster_core/io/obstore_fs.py``)."""
    from hudi_cluster_core.io.storage import Storage

    options = {"fs.s3a.endpoint": endpoint, "fs.s3a.access.key": ACCESS_KEY, "fs.s3a.secret.key": SECRET_KEY,
               "fs.s3a.endpoint.region": REGION, "fs.s3a.path.style.access": "true"}  # fmt: skip
    return Storage(f"s3a://{BUCKET}", options).fs


def seed(server: S3Server, args) -> tuple[int, int, dict]:
    """Untimed: footer files (6,000 rows, 1 row group) and group files (90,000 rows in 30,000-row groups), gzip,
    written by pyarrow; returns the row counts and the files' sizes."""
    fs = pyarrow_fs(server.endpoint)
    small, big = make_rows(0, 6_000, seed=1), make_rows(0, 90_000, seed=2)
    for i in range(args.footers):
        pq.write_table(small, f"{BUCKET}/footers/{i:04d}.parquet", filesystem=fs, compression="gzip")
    for i in range(args.files):
        pq.write_table(big, f"{BUCKET}/files/{i:04d}.parquet", filesystem=fs, compression="gzip", row_group_size=30_000)
    sizes = {"footer_file_bytes": fs.get_file_info(f"{BUCKET}/footers/0000.parquet").size,
             "group_file_bytes": fs.get_file_info(f"{BUCKET}/files/0000.parquet").size}  # fmt: skip
    print(f"seeded: footer files {sizes['footer_file_bytes'] / 2**20:.2f} MiB, group files "
          f"{sizes['group_file_bytes'] / 2**20:.2f} MiB", flush=True)  # fmt: skip
    return small.num_rows, big.num_rows, sizes


def operations(server: S3Server, args, small_rows: int, big_rows: int) -> dict:
    systems = {"pyarrow": pyarrow_fs(server.endpoint), "obstore": obstore_fs(server.endpoint)}
    footers = [f"{BUCKET}/footers/{i:04d}.parquet" for i in range(args.footers)]
    files = [f"{BUCKET}/files/{i:04d}.parquet" for i in range(args.files)]
    to_write = pq.read_table(files[0], filesystem=systems["pyarrow"])
    for fs in systems.values():  # warm: connections, credentials
        pq.read_metadata(footers[0], filesystem=fs)

    def op_footers(fs, rep, name):
        return all(pq.read_metadata(p, filesystem=fs).num_rows == small_rows for p in footers)

    def op_tables(fs, rep, name):
        return all(pq.read_table(p, filesystem=fs).num_rows == big_rows for p in files)

    def op_row_groups(fs, rep, name):
        rows = 0
        for p in files:
            with fs.open_input_file(p) as handle:
                rows += sum(b.num_rows for b in pq.ParquetFile(handle).iter_batches(batch_size=30_000))
        return rows == big_rows * len(files)

    def op_writes(fs, rep, name):
        for i in range(args.writes):
            with fs.open_output_stream(f"{BUCKET}/written/{name}/{rep}/{i}.parquet") as sink:
                pq.write_table(to_write, sink, compression="gzip", row_group_size=30_000)
        written = pq.read_metadata(f"{BUCKET}/written/{name}/{rep}/0.parquet", filesystem=systems["pyarrow"])
        return written.num_rows == to_write.num_rows

    ops = {f"footers x{args.footers}": op_footers, f"read_table x{args.files}": op_tables,
           f"iter_batches x{args.files}": op_row_groups, f"write x{args.writes}": op_writes}  # fmt: skip
    return compare_clients(ops, systems, args.reps, server.process.pid, baseline="pyarrow")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="40 footers, 3 files, 2 writes, 3 reps")
    parser.add_argument("--reps", type=int)
    parser.add_argument("--footers", type=int)
    parser.add_argument("--files", type=int)
    parser.add_argument("--writes", type=int)
    args = parser.parse_args(argv)
    args.reps = args.reps or (3 if args.quick else 5)
    args.footers = args.footers or (40 if args.quick else 200)
    args.files = args.files or (3 if args.quick else 8)
    args.writes = args.writes or (2 if args.quick else 4)
    load_before = load()
    print(f"load before: {load_before['uptime']}", flush=True)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=OUT_DIR) as scratch:
        server = S3Server().start(Path(scratch) / "moto.log")
        try:
            server.create_bucket(BUCKET)
            small_rows, big_rows, sizes = seed(server, args)
            ops = operations(server, args, small_rows, big_rows)
        finally:
            server.stop()
    load_after = load()
    print(f"load after: {load_after['uptime']}")
    rows = [[label, f"{r['wall']['pyarrow']['median']:.3f}", f"{r['wall']['obstore']['median']:.3f}",
             f"{r['ratio_wall']['of_medians']:.2f} ({r['ratio_wall']['paired_min']:.2f}-{r['ratio_wall']['paired_max']:.2f})",
             f"{r['cpu']['pyarrow']['median']:.3f}", f"{r['cpu']['obstore']['median']:.3f}",
             f"{r['ratio_cpu']['of_medians']:.2f}", f"{r['moto_cpu']['pyarrow']['median']:.2f}",
             f"{r['moto_cpu']['obstore']['median']:.2f}"] for label, r in ops.items()]  # fmt: skip
    print(fmt_table(["operation", "pyarrow wall s", "obstore wall s", "obstore/pyarrow wall (per rep)", "pyarrow CPU s",
                     "obstore CPU s", "CPU ratio", "moto CPU s (pyarrow)", "moto CPU s (obstore)"], rows))  # fmt: skip
    import obstore

    write_json(OUT_DIR / "bench_s3_data_path.json", {
        "machine": machine(), "versions": {"pyarrow": pa.__version__, "obstore": obstore.__version__},
        "load_before": load_before, "load_after": load_after, "args": vars(args), "sizes": sizes, "operations": ops})  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
