"""Planning time against file count (issue 20.6): local disk and moto's S3 server, listing storage or reading the
metadata table's ``files`` partition, in-process and as a whole process.

**Tables** (built once, cached under ``bench/out/tables/``): Apache Hudi 1.1.1 writes a COW v9 table of 10
partitions with its metadata table (``files`` only: column and partition stats off), one tiny insert commit; then
``--commits`` commits of ours (``writer.instant``, the MDT kept, as our writers commit) add small parquet files
(one written once, ~5 KiB, copied under each new file group's name) until the table holds N base files, N in
``--sizes`` (1,000 and 10,000; ``--quick``: 1,000). Hudi's view of the table is a real one: every file is a file
group of a completed commit, every commit is in the MDT. Two variants of each: ``mdt`` (as built) and ``listing``
(a copy with the metadata table dropped as Hudi drops it, so the view lists storage). On S3 the same files are
uploaded once to moto's server (``tests/support/s3_server.py``, loopback: no network latency, so the S3 figures are
a floor; a real region adds tens of ms per request, which is why the request counts are reported too).

**Contenders**, per store, variant and size, ``--reps`` repetitions in alternating order:

| name | what is timed |
|---|---|
| ``list`` (**baseline**) | one recursive listing of the table through ``Storage`` (what any planner that lists storage pays at least) |
| ``plan`` | ``cluster(base, "schedule", dry_run=True)`` in-process: the planning API as the CLI runs it (table, checks, view, size-based plan, the plan's effect), default size-based strategy, no sort columns |
| ``cli`` | the whole process: ``python -m hudi_cluster_core.cli run --mode schedule --dry-run --json`` (interpreter, imports, plugins, planning, printing) |
| ``key-range`` | as ``plan`` with the key-range strategy, which reads every eligible footer (``FOOTER_THREADS`` at once; the files-per-query prediction of its record-key sort reuses them) |
| ``key-range-serial`` | the same, footers one at a time (only on the ``listing`` variant) |

Store calls per contender (``hudi_cluster_core.io.storage.requests``: list, info (HEAD), read (GET), range (a
parquet footer, one ranged GET of the file's end), open (a parquet file opened: a HEAD, then its reads)) are
counted on the first repetition. Besides wall seconds, each contender's CPU seconds (this process's, plus the
``cli`` contender's own process): the machine is shared, and other tenants delay a contender without adding CPU
seconds to it.

    .venv/bin/python bench/bench_planning.py --quick
    .venv/bin/python bench/bench_planning.py --sizes 1000,10000 --reps 3
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import OUT_DIR, REPO_ROOT, alternating_orders, code_fingerprint, fmt_table, machine, make_rows, ratio, stats, write_json

PARTITIONS = [f"p{n:02d}" for n in range(10)]
TEMPLATE = OUT_DIR / "tables" / "planning_template_v1"
# no sort columns: planning alone (with sort columns a result also predicts files per query from every footer of
# the plan's partitions, which costs what ``key-range`` costs: the same footers, read the same way)
OPTIONS: dict[str, str] = {}
KEY_RANGE = {"hoodie.clustering.plan.strategy.class": "key-range"}
MDT_ONLY_FILES = {
    "hoodie.metadata.index.column.stats.enable": "false", "hoodie.metadata.index.partition.stats.enable": "false",
    "hoodie.metadata.record.index.enable": "false",
}  # fmt: skip


# ------------------------------------------------------------------------------------------------- tables
def build_template() -> Path:
    """Apache Hudi's table: 10 partitions, one insert commit, the metadata table with ``files`` only."""
    if (TEMPLATE / ".hoodie" / "hoodie.properties").is_file():
        return TEMPLATE
    from common import spark_session

    from tests.support.apache_hudi import write_hudi_table

    building = TEMPLATE.with_name(TEMPLATE.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    building.parent.mkdir(parents=True, exist_ok=True)
    spark = spark_session(2)
    try:
        write_hudi_table(spark, str(building), make_rows(0, 4 * len(PARTITIONS), regions=PARTITIONS),
                         partition_field="region", metadata_enable=True, extra_options=MDT_ONLY_FILES)  # fmt: skip
    finally:
        spark.stop()
    building.rename(TEMPLATE)
    return TEMPLATE


def _small_parquet(template: Path, partition: str) -> tuple[bytes, int]:
    """A small copy of the template's base file of ``partition`` (same rows and schema, no bloom filter): its bytes
    and row count. Its record-key range stays in the footer (the key-range strategy reads it)."""
    import pyarrow.parquet as pq

    source = next((template / partition).glob("*.parquet"))
    rows = pq.read_table(source)
    keys = sorted(rows.column("_hoodie_record_key").to_pylist())
    rows = rows.replace_schema_metadata({"hoodie_min_record_key": keys[0], "hoodie_max_record_key": keys[-1]})
    sink = io.BytesIO()
    pq.write_table(rows, sink, compression="snappy")
    return sink.getvalue(), rows.num_rows


def build_table(files: int, commits: int) -> dict[str, Path]:
    """The ``mdt`` and ``listing`` tables of ``files`` base files (cached)."""
    from hudi_cluster_core.io.storage import Storage
    from hudi_cluster_core.table import load_table
    from hudi_cluster_core.table.metadata_table import drop_metadata_table
    from hudi_cluster_core.write.base_file import write_stat
    from hudi_cluster_core.writer.instant import complete_commit, writing

    mdt = OUT_DIR / "tables" / f"planning_mdt_f{files}_c{commits}_v1"
    listing = mdt.with_name(mdt.name.replace("_mdt_", "_listing_"))
    if not (mdt / ".done").is_file():
        template = build_template()
        building = mdt.with_name(mdt.name + ".building")
        shutil.rmtree(building, ignore_errors=True)
        shutil.copytree(template, building)
        small = {p: _small_parquet(template, p) for p in PARTITIONS}
        table = load_table(str(building))
        schema = table.timeline.commit_metadata(table.timeline.completed()[-1])["extraMetadata"]["schema"]
        to_add = files - len(list(template.rglob("*.parquet")))
        for commit in range(commits):
            count = to_add // commits + (1 if commit < to_add % commits else 0)
            with writing(load_table(str(building)), "INSERT") as instant:
                stats: dict[str, list[dict]] = {p: [] for p in PARTITIONS}
                for n in range(count):
                    partition = PARTITIONS[n % len(PARTITIONS)]
                    data, rows = small[partition]
                    file_id = f"{uuid.uuid4()}-0"
                    name = f"{file_id}_{n}-0-{n}_{instant}.parquet"
                    (building / partition / name).write_bytes(data)
                    stats[partition].append(write_stat(file_id, f"{partition}/{name}", partition, rows, len(data), time.monotonic()))
                complete_commit(load_table(str(building)), instant, stats, operation="INSERT", schema=schema)
        shutil.rmtree(mdt, ignore_errors=True)
        building.rename(mdt)
        shutil.rmtree(listing, ignore_errors=True)
        shutil.copytree(mdt, listing)
        drop_metadata_table(Storage(str(listing)))
        (mdt / ".done").write_text("")
    found = len([p for p in mdt.rglob("*.parquet") if ".hoodie" not in p.parts])
    assert found == files, (mdt, found, files)
    return {"mdt": mdt, "listing": listing}


def upload(server, bucket: str, local: Path, prefix: str) -> int:
    """Every file of ``local`` to ``bucket/prefix/``, 16 at a time (the marker ``.done`` aside)."""
    client = server.client()
    paths = [p for p in sorted(local.rglob("*")) if p.is_file() and p.name != ".done"]
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda p: client.upload_file(str(p), bucket, f"{prefix}/{p.relative_to(local).as_posix()}"), paths))
    return len(paths)


# ------------------------------------------------------------------------------------------- a slower S3
class LatencyProxy:
    """moto's server behind ``delay_ms`` of latency per request (a real region's order of magnitude, which loopback
    lacks), counting the HTTP requests by kind (LIST, HEAD, GET, PUT, ...); a process of its own, so forwarding
    takes no CPU from the planner's interpreter."""

    def __init__(self, target: str, delay_ms: float):
        self.process = subprocess.Popen([sys.executable, __file__, "--proxy", target, str(delay_ms)],
                                        stdout=subprocess.PIPE, text=True)  # fmt: skip
        assert self.process.stdout is not None
        self.endpoint = self.process.stdout.readline().strip()
        if not self.endpoint.startswith("http://"):
            self.stop()
            raise RuntimeError(f"the latency proxy did not start (it said {self.endpoint!r})")

    def counts(self) -> dict[str, int]:
        import urllib.request

        with urllib.request.urlopen(f"{self.endpoint}/__requests", timeout=10) as answer:
            return json.loads(answer.read())

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


def _serve_proxy(target: str, delay_ms: float) -> None:
    import http.client
    import threading
    from collections import Counter
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import urlsplit

    upstream_at, local = urlsplit(target), threading.local()
    counts: Counter = Counter()
    guard = threading.Lock()

    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as S3 clients use it

        def log_message(self, *args) -> None:
            pass

        def _answer(self, status: int, headers: list[tuple[str, str]], data: bytes) -> None:
            self.send_response(status)
            length = str(len(data))
            for name, value in headers:
                if name.lower() == "content-length" and self.command == "HEAD":
                    length = value  # a HEAD's length is the object's
                elif name.lower() not in ("content-length", "transfer-encoding", "connection", "server", "date"):
                    self.send_header(name, value)
            self.send_header("Content-Length", length)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def _forward(self) -> None:
            if self.path.startswith("/__requests"):
                with guard:
                    body = json.dumps(dict(counts)).encode()
                return self._answer(200, [("Content-Type", "application/json")], body)
            kind = "LIST" if self.command == "GET" and ("list-type=" in self.path or "prefix=" in self.path) else self.command
            with guard:
                counts[kind] += 1
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            time.sleep(delay_ms / 1000)
            headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
            for attempt in range(2):  # a kept-alive upstream connection moto closed: once more on a new one
                if getattr(local, "connection", None) is None:
                    local.connection = http.client.HTTPConnection(upstream_at.hostname, upstream_at.port, timeout=60)
                try:
                    local.connection.request(self.command, self.path, body=body or None, headers=headers)
                    answer = local.connection.getresponse()
                    data = answer.read()
                    break
                except (http.client.HTTPException, OSError):
                    local.connection.close()
                    local.connection = None
                    if attempt:
                        raise
            self._answer(answer.status, answer.getheaders(), data)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

    server = ThreadingHTTPServer(("127.0.0.1", 0), Forward)
    server.daemon_threads = True
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


# ------------------------------------------------------------------------------------------------ contenders
def _list(uri: str, options: dict) -> int:
    from hudi_cluster_core.io.storage import open_storage

    storage = open_storage(uri, options)
    return len(storage.list(storage.base, recursive=True))


def _plan(uri: str, options: dict, extra: dict | None = None, threads: int | None = None) -> dict:
    from hudi_cluster_core.api import cluster
    from hudi_cluster_core.plan import footer_stats

    saved = getattr(footer_stats, "FOOTER_THREADS", None)  # None: code from before the thread pool
    footer_stats.FOOTER_THREADS = threads or saved
    try:
        result = cluster(uri, "schedule", {**options, **OPTIONS, **(extra or {})}, dry_run=True)
    finally:
        footer_stats.FOOTER_THREADS = saved
    return {"input_file_groups": result.input_file_groups, "groups": len(result.groups), "bytes": result.bytes_rewritten}


def _cli(uri: str, options: dict) -> dict:
    command = [sys.executable, "-m", "hudi_cluster_core.cli", "run", "--base-path", uri, "--mode", "schedule", "--dry-run", "--json"]
    for key, value in {**options, **OPTIONS}.items():
        command += ["--hoodie-conf", f"{key}={value}"]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:8])}... exited {done.returncode}: {done.stderr[-2000:]}")
    result = json.loads(done.stdout)
    return {"input_file_groups": result["input_file_groups"], "groups": len(result["groups"])}


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its reaped children (a ``cli`` contender's process; not moto's server,
    which runs on until the end): steadier than wall time on a shared machine, where other tenants delay us but add
    no CPU seconds to ours."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _counting():
    """Storage's call counters around a contender (nothing on code from before them: a "before" run)."""
    try:
        from hudi_cluster_core.io.storage import requests
    except ImportError:
        return contextlib.nullcontext({})
    return requests.counting()


def run_case(uri: str, options: dict, contenders: list[str], reps: int, proxy: LatencyProxy | None) -> dict:
    calls = {
        "list": lambda: _list(uri, options),
        "plan": lambda: _plan(uri, options),
        "cli": lambda: _cli(uri, options),
        "key-range": lambda: _plan(uri, options, KEY_RANGE),
        "key-range-serial": lambda: _plan(uri, options, KEY_RANGE, threads=1),
    }
    seconds: dict[str, list[float]] = {c: [] for c in contenders}
    cpu: dict[str, list[float]] = {c: [] for c in contenders}
    counts: dict[str, dict] = {}
    http: dict[str, dict] = {}
    results: dict[str, dict] = {}
    for rep, order in enumerate(alternating_orders(contenders, reps)):
        for name in order:
            before = proxy.counts() if proxy is not None and rep == 0 else {}
            with _counting() as counted:
                cpu_before = _cpu_seconds()
                started = time.perf_counter()
                results[name] = calls[name]() if name != "list" else {"entries": calls[name]()}
                seconds[name].append(time.perf_counter() - started)
                cpu[name].append(_cpu_seconds() - cpu_before)
            if rep == 0:
                counts[name] = dict(counted) if name != "cli" else {}  # the CLI's calls are another process's
                if proxy is not None:
                    http[name] = {k: v - before.get(k, 0) for k, v in proxy.counts().items() if v != before.get(k, 0)}
    shape = {c: (results[c]["input_file_groups"], results[c]["groups"]) for c in ("plan", "cli")}
    assert len(set(shape.values())) == 1, f"the CLI planned another plan: {shape}"
    return {"seconds": {c: stats(v) for c, v in seconds.items()}, "cpu_seconds": {c: stats(v) for c, v in cpu.items()},
            "store_calls": counts, "http_requests": http,
            "results": results, "ratios": {f"{c}/list": ratio(seconds[c], seconds["list"]) for c in contenders if c != "list"}}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--proxy"]:
        _serve_proxy(argv[1], float(argv[2]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1,000 files only")
    parser.add_argument("--sizes", help="base files per table, comma-separated (default 1000,10000; --quick 1000)")
    parser.add_argument("--commits", type=int, default=10, help="commits of ours that add the files (default 10)")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--stores", default="local,s3",
                        help="local, s3 (moto's server as it is), s3+<N>ms (behind N ms of latency per request)")
    parser.add_argument("--footer-files", type=int, help="run the key-range contenders on tables of at most this "
                                                         "many files (default: the smallest size)")
    parser.add_argument("--out", type=Path, default=OUT_DIR / "bench_planning.json")
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in (args.sizes or ("1000" if args.quick else "1000,10000")).split(","))
    stores = args.stores.split(",")
    footer_files = args.footer_files or sizes[0]
    started_at = time.time()
    code = code_fingerprint()
    load_before = os.getloadavg()

    tables = {n: build_table(n, args.commits) for n in sizes}
    from tests.support.s3_server import S3Server

    cases = []
    with tempfile.TemporaryDirectory(dir=OUT_DIR) as scratch:
        remote = [s for s in stores if s.startswith("s3")]
        server = S3Server().start(Path(scratch) / "moto.log") if remote else None
        proxies = {s: LatencyProxy(server.endpoint, float(s[3:].removesuffix("ms"))) for s in remote if s != "s3" and server}
        try:
            if server is not None:
                server.create_bucket("bench")
            for files in sizes:
                for variant, local in tables[files].items():
                    uploaded = upload(server, "bench", local, f"{variant}-{files}") if server is not None else 0
                    for store in stores:
                        proxy = proxies.get(store)
                        if store == "local":
                            uri, options = str(local), {}
                        else:
                            assert server is not None
                            uri, options = f"s3a://bench/{variant}-{files}", server.options()
                            if proxy is not None:
                                options = {**options, "fs.s3a.endpoint": proxy.endpoint}
                        contenders = ["list", "plan", "cli"]
                        if files <= footer_files:
                            contenders += ["key-range"] + (["key-range-serial"] if variant == "listing" else [])
                        _plan(uri, options)  # untimed warm-up: imports, the store's client, plugins
                        report = run_case(uri, options, contenders, args.reps, proxy)
                        report.update({"files": files, "variant": variant, "store": store, "uploaded": uploaded})
                        cases.append(report)
                        print(f"{store:9} {variant:7} {files:6} files: " + ", ".join(
                            f"{c} {report['seconds'][c]['median']:.3f}s ({report['cpu_seconds'][c]['median']:.3f} CPU s)"
                            for c in contenders), flush=True)  # fmt: skip
        finally:
            for proxy in proxies.values():
                proxy.stop()
            if server is not None:
                server.stop()

    rows = []
    for case in cases:
        calls = case["http_requests"].get("plan") or case["store_calls"]["plan"]
        rows.append([case["store"], case["variant"], case["files"]]
                    + [f"{case['seconds'][c]['median']:.3f} ({case['cpu_seconds'][c]['median']:.2f})" if c in case["seconds"]
                       else "-" for c in ("list", "plan", "cli", "key-range", "key-range-serial")]
                    + [f"{case['ratios']['plan/list']['of_medians']:.2f}",
                       " ".join(f"{k}={v}" for k, v in sorted(calls.items()))])  # fmt: skip
    print(fmt_table(["store", "variant", "files", "list s (CPU)", "plan s (CPU)", "cli s (CPU)", "key-range s (CPU)",
                     "serial s (CPU)", "plan/list",
                     "plan's requests (HTTP behind a proxy, else Storage calls)"], rows))  # fmt: skip
    write_json(args.out, {"machine": machine(), "code_sha256": code, "code_changed_during_run": code_fingerprint() != code,
                          "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
                          "seconds_total": round(time.time() - started_at, 1), "sizes": sizes, "stores": stores,
                          "reps": args.reps, "commits": args.commits, "cases": cases})  # fmt: skip
    print(f"load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f}; {time.time() - started_at:.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
