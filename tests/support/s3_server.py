"""A real S3-compatible server on loopback for the object-store tests: moto in server mode.

``S3Server.start()`` runs ``moto.server`` in its own process on a free 127.0.0.1 port and waits until it answers;
``stop()`` ends that process (and only it). Buckets and objects are made with boto3 (a moto dependency), which
talks plain S3 HTTP to the server, independently of the code under test. ``auth=True`` starts a server that
checks credentials and signatures (moto's ``INITIAL_NO_AUTH_ACTION_COUNT``): its first three requests, made by
:meth:`S3Server.grant_user`, create an IAM user with an access key allowed everything; from then on only that
key, correctly signed, is accepted.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

ACCESS_KEY = "hudi-cluster-test"
SECRET_KEY = "hudi-cluster-test-secret"
REGION = "us-east-1"
GRANT_ACTIONS = ("CreateUser", "PutUserPolicy", "CreateAccessKey")  # the unauthenticated requests of grant_user


class SilentServer:
    """A TCP server on loopback that accepts connections and never answers: an endpoint that hangs."""

    def __init__(self):
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(64)  # connections complete in the kernel's backlog; nothing ever reads or replies
        self.endpoint = f"http://127.0.0.1:{self.socket.getsockname()[1]}"

    def close(self) -> None:
        self.socket.close()


@contextlib.contextmanager
def serving(log_dir: Path, bucket: str) -> Iterator["S3Server"]:
    """A started server with ``bucket`` made, stopped on leaving (a module fixture's body)."""
    server = S3Server().start(log_dir / "moto.log")
    try:
        server.create_bucket(bucket)
        yield server
    finally:
        server.stop()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class S3Server:
    auth: bool = False
    port: int = 0
    granted: tuple[str, str] | None = None  # the keys grant_user made (auth servers)
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, log_path: Path) -> "S3Server":
        self.port = free_port()
        env = {**os.environ, "MOTO_PORT": str(self.port)}
        if self.auth:
            env["INITIAL_NO_AUTH_ACTION_COUNT"] = str(len(GRANT_ACTIONS))
        with open(log_path, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                stdout=log, stderr=subprocess.STDOUT, env=env,
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"moto server exited with {self.process.returncode}; see {log_path}")
            try:
                urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=1).read()
                return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"moto server did not answer on {self.endpoint} within 60 s; see {log_path}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def client(self):
        import boto3

        key, secret = self.granted or (ACCESS_KEY, SECRET_KEY)
        return boto3.client("s3", endpoint_url=self.endpoint, region_name=REGION, aws_access_key_id=key,
                            aws_secret_access_key=secret)  # fmt: skip

    def grant_user(self) -> tuple[str, str]:
        """On an ``auth`` server, first thing: an IAM user allowed everything; returns its (key id, secret)."""
        import boto3

        iam = boto3.client("iam", endpoint_url=self.endpoint, region_name=REGION, aws_access_key_id=ACCESS_KEY,
                           aws_secret_access_key=SECRET_KEY)  # fmt: skip
        iam.create_user(UserName="clusterer")
        policy = '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}'
        iam.put_user_policy(UserName="clusterer", PolicyName="all", PolicyDocument=policy)
        key = iam.create_access_key(UserName="clusterer")["AccessKey"]
        self.granted = (key["AccessKeyId"], key["SecretAccessKey"])
        return self.granted

    def create_bucket(self, bucket: str) -> None:
        self.client().create_bucket(Bucket=bucket)

    def upload_dir(self, local: Path | str, bucket: str, prefix: str) -> int:
        """Copy every file under ``local`` to ``bucket/prefix/...`` (as a Hudi writer on S3 would have it)."""
        client, local = self.client(), Path(local)
        count = 0
        for path in sorted(local.rglob("*")):
            if path.is_file():
                client.upload_file(str(path), bucket, f"{prefix}/{path.relative_to(local).as_posix()}")
                count += 1
        return count

    def download_dir(self, bucket: str, prefix: str, local: Path | str) -> Path:
        """Copy ``bucket/prefix/...`` to ``local`` (directory-marker keys ending in ``/`` are skipped), so the
        local checks of tests/support/runs.py can inspect what a run left on the store."""
        client, local = self.client(), Path(local)
        for key in self.keys(bucket, prefix):
            if key.endswith("/"):
                continue
            target = local / key[len(prefix) :].lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            client.download_file(bucket, key, str(target))
        return local

    def put_text(self, bucket: str, key: str, text: str) -> None:
        self.client().put_object(Bucket=bucket, Key=key, Body=text.encode())

    def keys(self, bucket: str, prefix: str) -> list[str]:
        paginator = self.client().get_paginator("list_objects_v2")
        return [o["Key"] for page in paginator.paginate(Bucket=bucket, Prefix=prefix) for o in page.get("Contents", [])]

    def options(self) -> dict[str, str]:
        """The Hadoop keys for this server, as a user passes them with --hoodie-conf."""
        return {"fs.s3a.endpoint": self.endpoint, "fs.s3a.access.key": ACCESS_KEY, "fs.s3a.secret.key": SECRET_KEY,
                "fs.s3a.path.style.access": "true", "fs.s3a.endpoint.region": REGION}  # fmt: skip

    def environment(self) -> dict[str, str]:
        """The same settings as the standard AWS environment variables."""
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
                "AWS_REGION": REGION}  # fmt: skip


def relay(handler: Any, target: Any, path: str, body: bytes | None, headers: dict[str, str]) -> None:
    """Send ``handler``'s request (its method, with this ``path``, ``body`` and ``headers``) to ``target`` (a server's
    ``urlsplit``) and answer with what it answered: its status, its headers but those of the connection and length,
    and its body (none to a HEAD)."""
    import http.client

    upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
    try:
        upstream.request(handler.command, path, body=body, headers=headers)
        answer = upstream.getresponse()
        data = answer.read()
    finally:
        upstream.close()
    handler.send_response(answer.status)
    for name, value in answer.getheaders():
        if name.lower() not in ("content-length", "transfer-encoding", "connection", "server", "date"):
            handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(data)


class ConditionsIgnoringProxy:
    """An S3 endpoint on loopback that forwards every request to ``target`` (a moto server without ``auth``) minus
    its ``If-None-Match`` and ``If-Match`` headers: a server without conditional writes that does not say so, on
    which a second "create" of a name silently overwrites it."""

    DROPPED = ("if-none-match", "if-match")

    def __init__(self, target: str):
        from http.server import ThreadingHTTPServer

        self.target = target
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.dropped = 0

    def _handler(self):
        from http.server import BaseHTTPRequestHandler
        from urllib.parse import urlsplit

        owner, upstream_at = self, urlsplit(self.target)

        class Forward(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in owner.DROPPED}
                owner.dropped += len(self.headers) - len(headers)
                relay(self, upstream_at, self.path, body or None, headers)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

        return Forward

    def __enter__(self) -> "ConditionsIgnoringProxy":
        threading.Thread(target=self.server.serve_forever, name="ignoring-proxy", daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
