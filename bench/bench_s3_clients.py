"""Which S3 client for the storage seam of issue 20: obstore (Rust object_store, as hudi-rs uses) or boto3/botocore.

Everything runs against moto's S3 server on loopback (tests/support/s3_server.py), so the figures are client
overhead plus moto's own time per request (moto, in Python, is the slower side: a real region adds tens of ms of
latency per request, which both clients pay alike). boto3 is the **baseline**; obstore is reported as a ratio to
it, wall and CPU (the benchmark process's CPU seconds: Python, botocore's threads, obstore's Rust threads),
median of ``--reps`` repetitions whose order alternates, with the min-max of the per-repetition ratios.

1. **Operations** a commit and a planner make:
   - conditional create: ``--creates`` new objects, ``put(mode="create")`` / ``put_object(IfNoneMatch="*")``,
     one after another, then a second create of one of them, which must be refused;
   - conditional update: a chain of ``--updates`` writes of one object, each ``IfMatch`` the ETag the previous
     write returned (``mode={"e_tag": ...}`` in obstore), then a write with a stale ETag, which must be refused;
   - list ``--keys`` keys under a prefix (all pages);
   - parquet footers: the last 64 KiB (a suffix range GET) of ``--footers`` objects of 128 KiB, sequentially and
     with 16 requests in flight (boto3: 16 threads sharing one client with 16 pooled connections; obstore: asyncio,
     a semaphore of 16).
2. **Start-up**: a fresh interpreter imports the client, builds it, and makes its first request (a PUT); import and
   first-request seconds measured inside, the process's wall and CPU outside.
3. **Credential sources**, on a moto server that checks signatures (so a request succeeds only with credentials
   moto issued): static keys in code, ``AWS_*`` variables, a profile in a credentials file, a web identity token
   (IRSA) exchanged at moto's STS, instance metadata (IMDSv2) and container credentials from
   tests/support/imds_server.py, each in a fresh process with nothing else in its environment. Any request for
   instance metadata that a source does not supply goes to a decoy metadata server on loopback serving credentials
   moto refuses (never to 169.254.169.254), so "fell back to IMDS" is seen, not guessed. Contenders: boto3's
   default chain, obstore's own chain (object_store), and obstore given boto3's chain
   (``obstore.auth.boto3.Boto3CredentialProvider``).

    .venv/bin/python bench/bench_s3_clients.py --quick
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import OUT_DIR, alternating_orders, compare_clients, fmt_table, load, machine, ratio, stats, write_json

from tests.support.imds_server import (MetadataServer, TlsProxy, allow_role, allow_unsigned_calls, assume_role,
                                       web_identity_environment)  # fmt: skip
from tests.support.s3_server import ACCESS_KEY, REGION, SECRET_KEY, S3Server

BUCKET = "bench"
FOOTER = 64 << 10
OBJECT = 128 << 10
IN_FLIGHT = 16
CLIENTS = ("boto3", "obstore")  # boto3 first: the baseline


# ------------------------------------------------------------------------------------------------ the clients

class Boto3:
    def __init__(self, endpoint: str, key: str = ACCESS_KEY, secret: str = SECRET_KEY):
        import boto3
        from botocore.config import Config

        self.client = boto3.client("s3", endpoint_url=endpoint, region_name=REGION, aws_access_key_id=key,
                                   aws_secret_access_key=secret, config=Config(max_pool_connections=IN_FLIGHT))  # fmt: skip

    def create(self, key: str, body: bytes) -> str:
        return self.client.put_object(Bucket=BUCKET, Key=key, Body=body, IfNoneMatch="*")["ETag"]

    def update(self, key: str, body: bytes, etag: str) -> str:
        return self.client.put_object(Bucket=BUCKET, Key=key, Body=body, IfMatch=etag)["ETag"]

    def refused(self, call) -> bool:
        from botocore.exceptions import ClientError

        try:
            call()
        except ClientError as error:
            return error.response["ResponseMetadata"]["HTTPStatusCode"] == 412
        return False

    def list(self, prefix: str) -> int:
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
        return sum(len(page.get("Contents", [])) for page in pages)

    def footer(self, key: str) -> bytes:
        return self.client.get_object(Bucket=BUCKET, Key=key, Range=f"bytes=-{FOOTER}")["Body"].read()

    def footers(self, keys: list[str]) -> list[bytes]:
        with ThreadPoolExecutor(IN_FLIGHT) as pool:
            return list(pool.map(self.footer, keys))


class Obstore:
    def __init__(self, endpoint: str, key: str = ACCESS_KEY, secret: str = SECRET_KEY):
        from obstore.store import S3Store

        self.store = S3Store(BUCKET, endpoint=endpoint, region=REGION, access_key_id=key, secret_access_key=secret,
                             client_options={"allow_http": True})  # fmt: skip

    def create(self, key: str, body: bytes) -> str:
        import obstore

        return obstore.put(self.store, key, body, mode="create")["e_tag"]

    def update(self, key: str, body: bytes, etag: str) -> str:
        import obstore

        return obstore.put(self.store, key, body, mode={"e_tag": etag})["e_tag"]

    def refused(self, call) -> bool:
        from obstore.exceptions import AlreadyExistsError, PreconditionError

        try:
            call()
        except (AlreadyExistsError, PreconditionError):
            return True
        return False

    def list(self, prefix: str) -> int:
        import obstore

        return sum(len(batch) for batch in obstore.list(self.store, prefix, chunk_size=1000))

    def footer(self, key: str) -> bytes:
        import obstore

        return bytes(obstore.get(self.store, key, options={"range": {"suffix": FOOTER}}).bytes())

    def footers(self, keys: list[str]) -> list[bytes]:
        import obstore

        async def all_footers() -> list[bytes]:
            gate = asyncio.Semaphore(IN_FLIGHT)

            async def one(key: str) -> bytes:
                async with gate:
                    result = await obstore.get_async(self.store, key, options={"range": {"suffix": FOOTER}})
                    return bytes(await result.bytes_async())

            return await asyncio.gather(*(one(key) for key in keys))

        return asyncio.run(all_footers())


# ------------------------------------------------------------------------------------------------- operations

def seed(server: S3Server, keys: int, footers: int) -> bytes:
    """Untimed: ``keys`` small objects under list/ and ``footers`` 128 KiB objects under footers/ (boto3, 16
    threads); returns the footers' last 64 KiB (all footer objects have the same bytes)."""
    client = Boto3(server.endpoint).client
    body = os.urandom(OBJECT)

    def put(key: str) -> None:
        client.put_object(Bucket=BUCKET, Key=key, Body=body if key.startswith("footers/") else b"x")

    with ThreadPoolExecutor(IN_FLIGHT) as pool:
        list(pool.map(put, [f"list/{i:06d}.parquet" for i in range(keys)] + [f"footers/{i:05d}.parquet" for i in range(footers)]))
    return body[-FOOTER:]


def operations(server: S3Server, args, tail: bytes) -> dict:
    """Each operation returns whether it did what it should (the one refused write of create and update is timed
    with them: one request in a few hundred)."""
    clients = {"boto3": Boto3(server.endpoint), "obstore": Obstore(server.endpoint)}
    footer_keys = [f"footers/{i:05d}.parquet" for i in range(args.footers)]
    for client in clients.values():  # warm: connections, credentials, first-call imports
        client.list("list/00000"), client.footer(footer_keys[0])

    def op_create(client, rep: int, name: str) -> None:
        keys = [f"create/{name}/{rep}/{i:05d}.commit" for i in range(args.creates)]
        for key in keys:
            client.create(key, b"{}")
        return client.refused(lambda: client.create(keys[0], b"again"))

    def op_update(client, rep: int, name: str) -> None:
        key = f"update/{name}/{rep}/lock"
        first = etag = client.create(key, b"0")
        for i in range(args.updates):
            etag = client.update(key, str(i).encode(), etag)
        return client.refused(lambda: client.update(key, b"stale", first))

    def op_list(client, rep: int, name: str) -> None:
        return client.list("list/") == args.keys

    def op_footers_seq(client, rep: int, name: str) -> None:
        return all(client.footer(key) == tail for key in footer_keys)

    def op_footers_par(client, rep: int, name: str) -> None:
        got = client.footers(footer_keys)
        return len(got) == len(footer_keys) and all(g == tail for g in got)

    ops = {f"conditional create x{args.creates}": op_create, f"conditional update x{args.updates}": op_update,
           f"list {args.keys} keys": op_list, f"footers x{args.footers} sequential": op_footers_seq,
           f"footers x{args.footers}, {IN_FLIGHT} in flight": op_footers_par}  # fmt: skip
    return compare_clients(ops, clients, args.reps, server.process.pid, baseline="boto3")


# --------------------------------------------------------------------------------------------------- start-up

STARTUP = {
    "boto3": """
import time; t0 = time.perf_counter()
import boto3
t1 = time.perf_counter()
c = boto3.client("s3", endpoint_url=E, region_name="us-east-1", aws_access_key_id=K, aws_secret_access_key=S)
c.put_object(Bucket="bench", Key="startup/boto3", Body=b"x")
""",
    "obstore": """
import time; t0 = time.perf_counter()
import obstore
from obstore.store import S3Store
t1 = time.perf_counter()
s = S3Store("bench", endpoint=E, region="us-east-1", access_key_id=K, secret_access_key=S, client_options={"allow_http": True})
obstore.put(s, "startup/obstore", b"x")
""",
    "obstore+boto3 chain": """
import time; t0 = time.perf_counter()
import boto3, obstore
from obstore.auth.boto3 import Boto3CredentialProvider
from obstore.store import S3Store
t1 = time.perf_counter()
chain = Boto3CredentialProvider(boto3.Session(aws_access_key_id=K, aws_secret_access_key=S))
s = S3Store("bench", endpoint=E, region="us-east-1", client_options={"allow_http": True}, credential_provider=chain)
obstore.put(s, "startup/obstore-boto3", b"x")
""",
}


def startup(server: S3Server, reps: int) -> dict:
    wall: dict[str, list[float]] = {c: [] for c in STARTUP}
    cpu: dict[str, list[float]] = {c: [] for c in STARTUP}
    inside: dict[str, list[tuple[float, float]]] = {c: [] for c in STARTUP}
    for order in alternating_orders(list(STARTUP), reps):
        for name in order:
            code = (f"E, K, S = {server.endpoint!r}, {ACCESS_KEY!r}, {SECRET_KEY!r}\n" + STARTUP[name]
                    + "print(t1 - t0, time.perf_counter() - t1)\n")  # fmt: skip
            before = os.times()
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
            wall[name].append(time.perf_counter() - started)
            after = os.times()
            cpu[name].append((after.children_user - before.children_user) + (after.children_system - before.children_system))
            imported, first = (float(x) for x in done.stdout.split())
            inside[name].append((imported, first))
    return {c: {"process_wall": stats(wall[c]), "process_cpu": stats(cpu[c]),
                "import": stats([i for i, _ in inside[c]]), "first_request": stats([f for _, f in inside[c]]),
                "ratio_process_wall": ratio(wall[c], wall["boto3"]), "ratio_process_cpu": ratio(cpu[c], cpu["boto3"])}
            for c in STARTUP}  # fmt: skip


# ----------------------------------------------------------------------------------------- credential sources

CHAINS = {
    "boto3": """
import boto3
session = boto3.Session()
client = boto3.client("s3", endpoint_url=E, **STATIC) if STATIC else session.client("s3", endpoint_url=E)
client.put_object(Bucket="bench", Key="cred/boto3", Body=b"x")
print("ok", "static" if STATIC else session.get_credentials().method)
""",
    "obstore": """
import obstore
from obstore.store import S3Store
keys = {"access_key_id": STATIC["aws_access_key_id"], "secret_access_key": STATIC["aws_secret_access_key"]} if STATIC else {}
tls = {"root_certificate": open(CA).read()} if CA else {}
store = S3Store("bench", endpoint=E, client_options={"allow_http": True, **tls}, **keys)
obstore.put(store, "cred/obstore", b"x")
print("ok")
""",
    "obstore+boto3 chain": """
import boto3, obstore
from obstore.auth.boto3 import Boto3CredentialProvider
from obstore.store import S3Store
session = boto3.Session(**STATIC) if STATIC else boto3.Session()
store = S3Store("bench", endpoint=E, client_options={"allow_http": True}, credential_provider=Boto3CredentialProvider(session))
obstore.put(store, "cred/obstore-boto3", b"x")
print("ok")
""",
}


def _error_line(stderr: str) -> str:
    """The exception's line of a traceback (obstore's errors are followed by a multi-line debug dump)."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if not line.startswith(" ") and ("Error" in line or "Exception" in line)]
    return (errors or lines or ["(no output)"])[-1]


def credential_sources(work: Path) -> dict:
    """Each client x each source in a fresh process on an auth-checking moto; see the module docstring."""
    server = S3Server(auth=True).start(work / "moto-auth.log")
    try:
        key, secret = server.grant_user()
        server.create_bucket(BUCKET)
        role_arn = allow_role(server)
        profile_file = work / "credentials"
        profile_file.write_text(f"[hudi]\naws_access_key_id = {key}\naws_secret_access_key = {secret}\n")
        token_file = work / "container-token"
        with MetadataServer() as decoy, MetadataServer(assume_role(server, role_arn)) as imds, \
                TlsProxy(server.endpoint, work) as sts:  # fmt: skip
            token_file.write_text(imds.container_token)
            base = {"PATH": os.environ["PATH"], "HOME": str(work), "AWS_REGION": REGION,
                    "AWS_CONFIG_FILE": str(work / "no-config"), "AWS_SHARED_CREDENTIALS_FILE": str(work / "no-credentials"),
                    # STS on loopback under both names (obstore reads AWS_ENDPOINT_URL_STS, not its documented one)
                    "AWS_STS_ENDPOINT": server.endpoint, "AWS_ENDPOINT_URL_STS": server.endpoint,
                    **decoy.environment()}  # fmt: skip
            # object_store asks STS over https only: moto's STS through the TLS proxy, its CA trusted by each client
            irsa_tls = {"AWS_STS_ENDPOINT": sts.endpoint, "AWS_ENDPOINT_URL_STS": sts.endpoint,
                        "AWS_CA_BUNDLE": str(sts.certificate)}  # fmt: skip
            sources = {
                "static keys in code": ({}, {"aws_access_key_id": key, "aws_secret_access_key": secret}),
                "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY": ({"AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret}, None),
                "profile (AWS_PROFILE, credentials file)": ({"AWS_PROFILE": "hudi", "AWS_SHARED_CREDENTIALS_FILE": str(profile_file)}, None),
                "web identity token file (IRSA) via STS": ({**web_identity_environment(server, role_arn, work), **irsa_tls}, None),
                "instance metadata (IMDSv2)": (imds.environment(), None),
                "container credentials (token in env)": (imds.container_environment(), None),
                "container credentials (token file)": ({"AWS_CONTAINER_CREDENTIALS_FULL_URI": imds.container_environment()["AWS_CONTAINER_CREDENTIALS_FULL_URI"],
                                                        "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": str(token_file)}, None),
            }  # fmt: skip
            results: dict[str, dict] = {}
            for source, (env, static) in sources.items():
                for client, code in CHAINS.items():
                    decoy.requests.clear()
                    if "web identity" in source:
                        allow_unsigned_calls(server, 1)  # moto 5.2 cannot take the unsigned STS call with auth on
                    ca = str(sts.certificate) if "web identity" in source else None
                    program = f"E, STATIC, CA = {server.endpoint!r}, {static!r}, {ca!r}\n" + code
                    try:
                        done = subprocess.run([sys.executable, "-c", program], env={**base, **env}, capture_output=True,
                                              text=True, timeout=90)  # fmt: skip
                        ok, detail = done.returncode == 0, done.stdout.strip() or _error_line(done.stderr)
                    except subprocess.TimeoutExpired:
                        ok, detail = False, "timed out after 90 s"
                    finally:
                        allow_unsigned_calls(server, 0)  # an allowance left unused must not let the next check through
                    results.setdefault(source, {})[client] = {"ok": ok, "detail": detail[:300],
                                                             "asked_decoy_imds": bool(decoy.requests)}  # fmt: skip
        return results
    finally:
        server.stop()


# ------------------------------------------------------------------------------------------------------- main

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2,000 keys, 200 footers, 100 creates, 50 updates, 3 reps")
    parser.add_argument("--reps", type=int, help="repetitions (default 5; --quick 3)")
    parser.add_argument("--keys", type=int, help="keys listed (default 10,000)")
    parser.add_argument("--footers", type=int, help="objects whose footer is read (default 1,000)")
    parser.add_argument("--creates", type=int, help="conditional creates (default 500)")
    parser.add_argument("--updates", type=int, help="conditional updates (default 200)")
    parser.add_argument("--skip-credentials", action="store_true")
    args = parser.parse_args(argv)
    quick = args.quick
    args.reps = args.reps or (3 if quick else 5)
    args.keys = args.keys or (2_000 if quick else 10_000)
    args.footers = args.footers or (200 if quick else 1_000)
    args.creates = args.creates or (100 if quick else 500)
    args.updates = args.updates or (50 if quick else 200)
    import boto3
    import obstore

    versions = {"boto3": boto3.__version__, "obstore": obstore.__version__}
    load_before = load()
    print(f"load before: {load_before['uptime']}", flush=True)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=OUT_DIR) as scratch:
        work = Path(scratch)
        server = S3Server().start(work / "moto.log")
        try:
            server.create_bucket(BUCKET)
            started = time.perf_counter()
            tail = seed(server, args.keys, args.footers)
            print(f"seeded {args.keys + args.footers} objects in {time.perf_counter() - started:.1f} s", flush=True)
            ops = operations(server, args, tail)
            start = startup(server, args.reps)
        finally:
            server.stop()
        credentials = {} if args.skip_credentials else credential_sources(work)
    load_after = load()
    print(f"load after: {load_after['uptime']}")

    rows = []
    for label, r in ops.items():
        rows.append([label, f"{r['wall']['boto3']['median']:.3f}", f"{r['wall']['obstore']['median']:.3f}",
                     f"{r['ratio_wall']['of_medians']:.2f} ({r['ratio_wall']['paired_min']:.2f}-{r['ratio_wall']['paired_max']:.2f})",
                     f"{r['cpu']['boto3']['median']:.3f}", f"{r['cpu']['obstore']['median']:.3f}",
                     f"{r['ratio_cpu']['of_medians']:.2f}", f"{r['moto_cpu']['boto3']['median']:.2f}"])  # fmt: skip
    for contender, label in (("obstore", "start-up"), ("obstore+boto3 chain", "start-up, obstore with boto3's chain")):
        for what, key in ((f"{label}: process", "process_wall"), ("  of which import", "import"),
                          ("  of which client + first PUT", "first_request")):  # fmt: skip
            b, o = start["boto3"][key]["median"], start[contender][key]["median"]
            cpu = key == "process_wall"
            rows.append([what, f"{b:.3f}", f"{o:.3f}", f"{o / b:.2f}",
                         f"{start['boto3']['process_cpu']['median']:.3f}" if cpu else "",
                         f"{start[contender]['process_cpu']['median']:.3f}" if cpu else "",
                         f"{start[contender]['ratio_process_cpu']['of_medians']:.2f}" if cpu else "", ""])  # fmt: skip
    print(fmt_table(["operation", "boto3 wall s", "obstore wall s", "obstore/boto3 wall (per rep)", "boto3 CPU s",
                     "obstore CPU s", "CPU ratio", "moto CPU s"], rows))  # fmt: skip
    if credentials:
        print(fmt_table(["credential source", *CHAINS], [
            [source, *(("yes" if r[c]["ok"] else "NO") + (" (asked IMDS)" if r[c]["asked_decoy_imds"] else "")
                       for c in CHAINS)] for source, r in credentials.items()]))  # fmt: skip
        for source, r in credentials.items():
            for client, outcome in r.items():
                if not outcome["ok"]:
                    print(f"  {source} / {client}: {outcome['detail']}")
    write_json(OUT_DIR / "bench_s3_clients.json", {
        "machine": machine(), "versions": versions, "load_before": load_before, "load_after": load_after,
        "args": vars(args), "operations": ops, "startup": start, "credentials": credentials})  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
