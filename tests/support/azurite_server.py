"""A real Azure Blob server on loopback for the object-store tests: Azurite's blob service (npm), installed by set-up
into ``.cache/node/`` (scripts/setup.sh).

``AzuriteServer.start(work_dir)`` runs ``azurite-blob`` on a free 127.0.0.1 port with its data under
``work_dir`` and waits until it answers; ``stop()`` ends that process only. Azurite's telemetry is off
(``--disableTelemetry``: by default it posts usage to Application Insights, which must never leave this machine).
The account is Azurite's well-known development account, whose name and key Microsoft documents; requests are
signed with it (Shared Key), as against a real account. Containers are made with azure-storage-blob, which
:meth:`client` also returns. Azurite refuses a second ``Put Blob`` with ``If-None-Match: *`` (409
BlobAlreadyExists, as Azure does) and a stale ``If-Match`` ETag (412). It has no hierarchical namespace (the
``dfs`` endpoint and its rename do not exist): nothing may depend on a rename there.

How users name an account, and so what :meth:`environment` / :meth:`options` / :meth:`hudi_rs_options` give:
``AZURE_STORAGE_CONNECTION_STRING`` (with ``BlobEndpoint``), ``AZURE_STORAGE_ACCOUNT_NAME`` / ``_KEY``, Hadoop
ABFS's ``fs.azure.account.key.<account>.dfs.core.windows.net``; hudi-rs (Rust object_store) takes
``azure_storage_use_emulator=true`` plus the server's address in ``AZURITE_BLOB_STORAGE_URL`` (an environment
variable, read when a table is built; else ``http://127.0.0.1:10000``), or the account, key and
``azure_storage_endpoint`` with ``azure_allow_http``.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from tests.support.emulator_process import REPO_ROOT, installed, launch, stop

BINARY = REPO_ROOT / ".cache" / "node" / "node_modules" / ".bin" / "azurite-blob"
ACCOUNT = "devstoreaccount1"  # Azurite's development account and its documented key
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


@contextlib.contextmanager
def serving(work_dir: Path, container: str, *, debug: bool = False) -> Iterator["AzuriteServer"]:
    """A started server with ``container`` made, stopped on leaving (a module fixture's body)."""
    server = AzuriteServer(debug=debug).start(work_dir)
    try:
        server.create_container(container)
        yield server
    finally:
        server.stop()


@dataclass
class AzuriteServer:
    debug: bool = False  # log every request's operation (see :meth:`operations`)
    port: int = 0
    debug_log: Path | None = None
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def endpoint(self) -> str:
        """The account's blob endpoint (path style: Azurite takes the account from the first path segment)."""
        return f"http://127.0.0.1:{self.port}/{ACCOUNT}"

    @property
    def connection_string(self) -> str:
        return f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};BlobEndpoint={self.endpoint};"

    def start(self, work_dir: Path) -> "AzuriteServer":
        binary = installed(BINARY, "Azurite")
        data = work_dir / "azurite-data"
        data.mkdir(parents=True, exist_ok=True)
        self.debug_log = work_dir / "azurite-debug.log" if self.debug else None
        debug = ["--debug", str(self.debug_log)] if self.debug_log else []

        def command(port: int) -> list[str]:
            # --loose / --skipApiVersionCheck: newer SDKs send API versions and headers this Azurite predates
            return [str(binary), "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location", str(data),
                    "--silent", "--skipApiVersionCheck", "--loose", "--disableTelemetry", *debug]  # fmt: skip

        self.process, self.port = launch(command, lambda port: f"http://127.0.0.1:{port}/{ACCOUNT}?comp=list",
                                         work_dir / "azurite.log")  # fmt: skip
        return self

    def stop(self) -> None:
        stop(self.process)
        self.process = None

    def operations(self) -> Counter[str]:
        """How many requests of each Blob API operation the server has served (``Blob_StartCopyFromURL``, ...);
        only for a server started with ``debug=True``."""
        assert self.debug_log is not None, "start the server with debug=True"
        text = self.debug_log.read_text(errors="replace") if self.debug_log.exists() else ""
        return Counter(re.findall(r"DispatchMiddleware: Operation=(\w+)", text))

    def client(self):
        from azure.storage.blob import BlobServiceClient

        return BlobServiceClient.from_connection_string(self.connection_string)

    def create_container(self, container: str) -> None:
        self.client().create_container(container)

    def upload_dir(self, local: Path | str, container: str, prefix: str) -> int:
        """Copy every file under ``local`` to ``container/prefix/...``."""
        target, local, count = self.client().get_container_client(container), Path(local), 0
        for path in sorted(local.rglob("*")):
            if path.is_file():
                with open(path, "rb") as data:
                    target.upload_blob(f"{prefix}/{path.relative_to(local).as_posix()}", data, overwrite=True)
                count += 1
        return count

    def keys(self, container: str, prefix: str) -> list[str]:
        return sorted(blob.name for blob in self.client().get_container_client(container).list_blobs(name_starts_with=prefix))

    def download_dir(self, container: str, prefix: str, local: Path | str) -> Path:
        """Copy ``container/prefix/...`` to ``local``, so the local checks of tests/support/runs.py can inspect what
        a run left on the store."""
        source, local = self.client().get_container_client(container), Path(local)
        for key in self.keys(container, prefix + "/"):
            target = local / key[len(prefix) + 1 :]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.download_blob(key).readall())
        return local

    def environment(self) -> dict[str, str]:
        """The standard Azure variables for this server (the connection string carries the endpoint)."""
        return {"AZURE_STORAGE_CONNECTION_STRING": self.connection_string, "AZURE_STORAGE_ACCOUNT_NAME": ACCOUNT,
                "AZURE_STORAGE_ACCOUNT_KEY": KEY}  # fmt: skip

    def options(self) -> dict[str, str]:
        """Hadoop ABFS's account key, as a user passes it with --hoodie-conf (the endpoint has no ABFS key: a backend
        takes it from the environment's connection string)."""
        return {f"fs.azure.account.key.{ACCOUNT}.dfs.core.windows.net": KEY}

    def hudi_rs_options(self) -> dict[str, str]:
        """Storage options hudi-rs (object_store) reads this server with: account, key, endpoint, plain http."""
        return {"azure_storage_account_name": ACCOUNT, "azure_storage_account_key": KEY,
                "azure_storage_endpoint": self.endpoint, "azure_allow_http": "true"}  # fmt: skip
