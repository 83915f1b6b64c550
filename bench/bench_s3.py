"""Object stores: which S3 client, and what a table on S3 costs against the same table on local disk (issue 12.3).

Both parts run against moto's S3 server on loopback (``tests/support/s3_server.py``), so they measure client
overhead and request counts, not the latency of a real S3 region (tens of ms per request there: the figures
below are a floor, and the ratio to local disk grows with the latency).

1. **Client.** :class:`~hudi_cluster_core.io.storage.Storage`'s own calls (pyarrow's ``S3FileSystem`` when this
   was written; obstore since issue 20, still labelled "pyarrow" below) against
   boto3, the engine under fsspec's s3fs (via aiobotocore), for the calls a clustering run makes: listing a
   timeline of ``--objects`` small objects, HEAD, a small GET and PUT, and an 8 MiB GET and PUT. Ratio
   pyarrow / boto3, per call, median of ``--reps`` alternating repetitions.
2. **Run.** ``cluster(scheduleAndExecute)`` of one append-written table (``--rows`` rows in ``--batches``
   commits x 3 partitions), on ``s3a://`` against a local copy, in one Spark session, alternating order, a fresh
   copy each time (copy and upload not timed). Ratio S3 / local, wall and CPU seconds.

    .venv/bin/python bench/bench_s3.py --quick
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from common import OUT_DIR, alternating_orders, fmt_table, machine, measure, ratio, settle, spark_session, stats, write_json


def _time(fn, n: int = 1) -> float:
    started = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - started) / n


def client_calls(server, bucket: str, objects: int) -> dict[str, dict]:
    """Seconds per call for each client; each call shape alternates which client goes first."""
    from hudi_cluster_core.io.storage import Storage

    storage = Storage(f"s3a://{bucket}/client", server.options())
    fs, client = storage.fs, server.client()
    small, big = b"x" * 2048, b"y" * (8 << 20)
    for i in range(objects):
        client.put_object(Bucket=bucket, Key=f"client/timeline/{i:05d}.commit", Body=small)
    client.put_object(Bucket=bucket, Key="client/big.parquet", Body=big)

    def boto_list():
        pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="client/timeline/")
        return [o["Key"] for p in pages for o in p.get("Contents", [])]

    calls = {
        "list timeline": (lambda: storage.list(f"{bucket}/client/timeline"), boto_list),
        "HEAD": (lambda: fs.get_file_info(f"{bucket}/client/timeline/00000.commit"),
                 lambda: client.head_object(Bucket=bucket, Key="client/timeline/00000.commit")),
        "GET 2 KiB": (lambda: storage.read_bytes(f"{bucket}/client/timeline/00001.commit"),
                      lambda: client.get_object(Bucket=bucket, Key="client/timeline/00001.commit")["Body"].read()),
        "PUT 2 KiB": (lambda: storage.write_bytes(f"{bucket}/client/put-small", small),
                      lambda: client.put_object(Bucket=bucket, Key="client/put-small", Body=small)),
        "GET 8 MiB": (lambda: storage.read_bytes(f"{bucket}/client/big.parquet"),
                      lambda: client.get_object(Bucket=bucket, Key="client/big.parquet")["Body"].read()),
        "PUT 8 MiB": (lambda: storage.write_bytes(f"{bucket}/client/put-big", big),
                      lambda: client.put_object(Bucket=bucket, Key="client/put-big", Body=big)),
    }  # fmt: skip
    return calls


def run_client(server, bucket: str, objects: int, reps: int) -> list[dict]:
    calls = client_calls(server, bucket, objects)
    rows = []
    for name, (ours, boto) in calls.items():
        ours(), boto()  # warm: connections, credentials
        times: dict[str, list[float]] = {"pyarrow": [], "boto3": []}
        for order in alternating_orders(["pyarrow", "boto3"], reps):
            for who in order:
                times[who].append(_time(ours if who == "pyarrow" else boto, 5))
        rows.append({"call": name, "pyarrow": stats(times["pyarrow"]), "boto3": stats(times["boto3"]),
                     "ratio_pyarrow_over_boto3": ratio(times["pyarrow"], times["boto3"])})  # fmt: skip
    return rows


def run_cluster(server, bucket: str, rows: int, batches: int, reps: int, work: Path) -> dict:
    from hudi_cluster_core.api import cluster
    from tests.support.runs import make_append_table

    spark = spark_session(2)
    source = make_append_table(str(work / "source"), batches=batches, rows=max(1, rows // batches))
    options = {**server.options(), "hoodie.clustering.plan.strategy.sort.columns": "c_int"}
    warm = work / "warm"
    shutil.copytree(source, warm)
    cluster(str(warm), "scheduleAndExecute", options, spark)  # untimed: JVM, Python workers, imports
    server.upload_dir(source, bucket, "warm")
    cluster(f"s3a://{bucket}/warm", "scheduleAndExecute", options, spark)  # untimed: S3 clients in the workers
    samples: dict[str, list] = {"local": [], "s3": []}
    for rep, order in enumerate(alternating_orders(["local", "s3"], reps)):
        for where in order:
            if where == "local":
                target = str(work / f"local-{rep}")
                shutil.copytree(source, target)
            else:
                server.upload_dir(source, bucket, f"run-{rep}")
                target = f"s3a://{bucket}/run-{rep}"
            settle(spark)
            sample, result = measure(lambda: cluster(target, "scheduleAndExecute", options, spark), spark=spark)
            assert result.message == "completed", result.message
            samples[where].append(sample)
    wall = {w: [s.seconds for s in v] for w, v in samples.items()}
    cpu = {w: [s.cpu_seconds for s in v] for w, v in samples.items()}
    return {"wall": {w: stats(v) for w, v in wall.items()}, "cpu": {w: stats(v) for w, v in cpu.items()},
            "ratio_s3_over_local_wall": ratio(wall["s3"], wall["local"]),
            "ratio_s3_over_local_cpu": ratio(cpu["s3"], cpu["local"])}  # fmt: skip


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="60,000 rows, 200 timeline objects, 3 reps")
    parser.add_argument("--rows", type=int, help="rows of the clustered table (default 300,000; --quick 60,000)")
    parser.add_argument("--batches", type=int, default=10, help="append commits (3 partitions each)")
    parser.add_argument("--objects", type=int, help="objects in the listed timeline (default 1000; --quick 200)")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args(argv)
    rows = args.rows or (60_000 if args.quick else 300_000)
    objects = args.objects or (200 if args.quick else 1000)
    from tests.support.s3_server import S3Server

    OUT_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=OUT_DIR) as scratch:
        work = Path(scratch)
        server = S3Server().start(work / "moto.log")
        try:
            server.create_bucket("bench")
            client = run_client(server, "bench", objects, args.reps)
            run = run_cluster(server, "bench", rows, args.batches, args.reps, work)
        finally:
            server.stop()
    print(fmt_table(["call", "pyarrow s", "boto3 s", "pyarrow/boto3"], [
        (r["call"], f"{r['pyarrow']['median']:.4f}", f"{r['boto3']['median']:.4f}",
         f"{r['ratio_pyarrow_over_boto3']['paired_median']:.2f}") for r in client]))  # fmt: skip
    print(fmt_table(["run", "local s", "s3 s", "s3/local"], [
        ("wall", f"{run['wall']['local']['median']:.2f}", f"{run['wall']['s3']['median']:.2f}",
         f"{run['ratio_s3_over_local_wall']['paired_median']:.2f}"),
        ("cpu", f"{run['cpu']['local']['median']:.2f}", f"{run['cpu']['s3']['median']:.2f}",
         f"{run['ratio_s3_over_local_cpu']['paired_median']:.2f}")]))  # fmt: skip
    write_json(OUT_DIR / "bench_s3.json", {"machine": machine(), "rows": rows, "objects": objects, "reps": args.reps,
                                           "client": client, "run": run})  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
