"""A real GCS-compatible server on loopback for the object-store tests: fake-gcs-server (Go), built by set-up into
``.cache/bin/`` (scripts/setup.sh).

``GCSServer.start(work_dir)`` runs it on a free 127.0.0.1 port over plain http (in memory, or ``filesystem=True``
for objects under ``work_dir``), waits until it answers; ``stop()`` ends that process only. Buckets are made with
the JSON API over urllib, independently of any client under test; :meth:`client` is google-cloud-storage pointed
at the server with anonymous credentials (the emulator checks none). fake-gcs-server honours the preconditions
the real service has: ``ifGenerationMatch=0`` is a create that fails with 412 when the object exists, and
``ifGenerationMatch=<generation>`` an update that fails with 412 when someone wrote in between.

How users name an endpoint, and so what :meth:`environment` / :meth:`options` / :meth:`hudi_rs_options` give:
``STORAGE_EMULATOR_HOST`` (Google's client libraries), the Hadoop GCS connector's ``fs.gs.storage.root.url``, and
for hudi-rs (Rust object_store) a service-account "key" whose ``gcs_base_url`` is the server and ``disable_oauth``
is true, the only way object_store takes a GCS endpoint.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from tests.support.emulator_process import REPO_ROOT, installed, launch, stop

BINARY = REPO_ROOT / ".cache" / "bin" / "fake-gcs-server"
PROJECT = "hudi-cluster-test"


@contextlib.contextmanager
def serving(work_dir: Path, bucket: str, *, filesystem: bool = False) -> Iterator["GCSServer"]:
    """A started server with ``bucket`` made, stopped on leaving (a module fixture's body)."""
    server = GCSServer(filesystem=filesystem).start(work_dir)
    try:
        server.create_bucket(bucket)
        yield server
    finally:
        server.stop()


@dataclass
class GCSServer:
    filesystem: bool = False
    port: int = 0
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, work_dir: Path) -> "GCSServer":
        binary = installed(BINARY, "fake-gcs-server")
        work_dir.mkdir(parents=True, exist_ok=True)
        backend = ["-backend", "filesystem", "-filesystem-root", str(work_dir / "gcs-data")] if self.filesystem \
            else ["-backend", "memory"]  # fmt: skip

        def command(port: int) -> list[str]:
            # -external-url: resumable uploads answer with a Location on this address (else 0.0.0.0 / https);
            # -public-host: XML-API paths (/bucket/object, what Rust object_store GETs) are served for requests to
            # this host only (default storage.googleapis.com); without it hudi-rs gets 404 for every object
            return [str(binary), "-scheme", "http", "-host", "127.0.0.1", "-port", str(port), *backend,
                    "-external-url", f"http://127.0.0.1:{port}", "-public-host", f"127.0.0.1:{port}",
                    "-log-level", "warn"]  # fmt: skip

        self.process, self.port = launch(command, lambda port: f"http://127.0.0.1:{port}/storage/v1/b",
                                         work_dir / "fake-gcs-server.log")  # fmt: skip
        return self

    def stop(self) -> None:
        stop(self.process)
        self.process = None

    def create_bucket(self, bucket: str) -> None:
        request = urllib.request.Request(
            f"{self.endpoint}/storage/v1/b?project={PROJECT}", data=json.dumps({"name": bucket}).encode(),
            headers={"Content-Type": "application/json"}, method="POST",
        )  # fmt: skip
        urllib.request.urlopen(request, timeout=10).close()

    def client(self):
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import storage

        return storage.Client(project=PROJECT, credentials=AnonymousCredentials(),
                              client_options={"api_endpoint": self.endpoint})  # fmt: skip

    def upload_dir(self, local: Path | str, bucket: str, prefix: str) -> int:
        """Copy every file under ``local`` to ``gs://bucket/prefix/...``."""
        target, local, count = self.client().bucket(bucket), Path(local), 0
        for path in sorted(local.rglob("*")):
            if path.is_file():
                target.blob(f"{prefix}/{path.relative_to(local).as_posix()}").upload_from_filename(str(path))
                count += 1
        return count

    def keys(self, bucket: str, prefix: str) -> list[str]:
        return sorted(blob.name for blob in self.client().list_blobs(bucket, prefix=prefix))

    def download_dir(self, bucket: str, prefix: str, local: Path | str) -> Path:
        """Copy ``gs://bucket/prefix/...`` to ``local``, so the local checks of tests/support/runs.py can inspect
        what a run left on the store."""
        source, local = self.client().bucket(bucket), Path(local)
        for key in self.keys(bucket, prefix + "/"):
            target = local / key[len(prefix) + 1 :]
            target.parent.mkdir(parents=True, exist_ok=True)
            source.blob(key).download_to_filename(str(target))
        return local

    def environment(self) -> dict[str, str]:
        """What Google's client libraries read: the emulator's address (they then skip authentication)."""
        return {"STORAGE_EMULATOR_HOST": self.endpoint}

    def options(self) -> dict[str, str]:
        """The Hadoop GCS connector's keys for this server, as a user passes them with --hoodie-conf."""
        return {"fs.gs.storage.root.url": self.endpoint, "fs.gs.auth.type": "UNAUTHENTICATED",
                "fs.gs.project.id": PROJECT}  # fmt: skip

    def hudi_rs_options(self) -> dict[str, str]:
        """Storage options hudi-rs (object_store) reads this server with: see the module docstring."""
        key = {"gcs_base_url": self.endpoint, "disable_oauth": True, "client_email": "", "private_key": "",
               "private_key_id": ""}  # fmt: skip
        return {"google_service_account_key": json.dumps(key)}
