"""Azure Blob Storage and ADLS Gen2 (``abfs://``, ``abfss://`` as ``container@account.dfs.core.windows.net``,
``wasbs://`` as ``container@account.blob.core.windows.net``: the same blobs) through obstore's ``AzureStore`` (Rust
``object_store``, what hudi-rs reads with), on the operations every obstore-backed store shares (:mod:`.bucket_store`).

Everything goes through the Blob API, which every account has, with or without a hierarchical namespace; nothing
here renames (an account without the namespace, such as Azurite, has no rename at all). An exclusive create is a
``Put Blob`` with ``If-None-Match: *`` (Azure refuses a second one with 409 ``BlobAlreadyExists``), an update of
Apache Hudi's lock object a ``Put Blob`` with ``If-Match: <ETag>`` (412 when it changed). A backend path is
``container/key``; the account comes from the table's URI (one backend, one account). Settings and credentials:
:mod:`.azure_settings`.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping
from urllib.parse import urlparse

from ..errors import StorageError
from .azure_settings import CREDENTIAL_SOURCE, AzureSettings, resolve
from .bucket_store import BucketBackend, client_options, retry_config
from .store import Capabilities

log = logging.getLogger(__name__)
_LOGGED: set[tuple[str, str]] = set()  # (account, credential source) logged once per process
DFS_SCHEMES = ("abfs", "abfss")  # the ADLS Gen2 driver's schemes (host account.dfs.<domain>); else WASB's (.blob.)
ACCEPTED = "abfss://container@account.dfs.core.windows.net/path or wasbs://container@account.blob.core.windows.net/path"


def authority(netloc: str, uri: str) -> tuple[str, str, str]:
    """``container@account.dfs.core.windows.net`` as (container, account, domain: ``core.windows.net``)."""
    container, at, host = netloc.rpartition("@")
    account, _, rest = host.partition(".")
    service, _, domain = rest.partition(".")
    if not at or not container or not account or service not in ("dfs", "blob") or "." not in domain:
        raise StorageError(f"{uri}: not an Azure storage URI; accepted: {ACCEPTED}")
    return container, account.lower(), domain.lower()


class AzureBackend(BucketBackend):
    # Hudi 1.1 ships no storage-lock client for Azure (abfs/wasbs): hudi_storage_lock stays False
    capabilities = Capabilities(exclusive_create=True, put_if_match=True)
    store_name = "Azure Blob"
    bucket_word = "container"

    def __init__(self, base_uri: str, options: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None):
        self.container, self.account, self.domain = authority(urlparse(base_uri).netloc, base_uri)
        self.settings = AzureSettings(resolve(options or {}, self.account, self.domain, environ))
        source = self.settings.options[CREDENTIAL_SOURCE]
        if (self.account, source) not in _LOGGED:
            _LOGGED.add((self.account, source))
            log.info("%s: Azure account %s at %s, credentials from %s", base_uri, self.account, self.endpoint, source)

    @property
    def endpoint(self) -> str:
        return self.settings.endpoint

    @property
    def options(self) -> dict[str, str]:
        return dict(self.settings.options)

    def where(self, base_uri: str) -> str:
        return self.endpoint

    # ----------------------------------------------------------------------------------------------- paths
    def path_of(self, uri: str) -> str:
        if "://" not in uri:
            return uri
        parsed = urlparse(uri)
        container, _, _ = authority(parsed.netloc, uri)
        return f"{container}{parsed.path}"

    def qualified(self, scheme: str, path: str) -> str:
        container, _, key = path.partition("/")
        service = "dfs" if scheme in DFS_SCHEMES else "blob"
        return f"{scheme}://{container}@{self.account}.{service}.{self.domain}/{key}"

    def same_authority(self, first: str, second: str) -> bool:
        try:  # the dfs and blob endpoints of one account name the same blobs
            return authority(first, first) == authority(second, second)
        except StorageError:
            return False

    def hudi_rs_uri(self, uri: str) -> str:
        """``az://container/path``: hudi-rs 0.5.0 takes no ``wasbs://``, and the account goes in its options."""
        return f"az://{self.path_of(uri)}"

    # ------------------------------------------------------------------------------------------------ client
    def client_identity(self) -> tuple:
        return tuple(sorted(self.settings.options.items()))

    def new_store(self, bucket: str) -> Any:
        from obstore.store import AzureStore

        connect_ms, request_ms = self.settings.timeouts_ms()
        return AzureStore(bucket, config=self.settings.obstore_config(),  # type: ignore[arg-type]
                          client_options=client_options(self.endpoint, connect_ms, request_ms),
                          retry_config=retry_config(self.settings.attempts(), connect_ms, request_ms))  # fmt: skip

    def missing_bucket(self, reason: str) -> bool:
        return "ContainerNotFound" in reason

    def hint(self, reason: str) -> str:
        if any(code in reason for code in ("401", "403", "AuthenticationFailed", "AuthorizationFailure", "token")):
            return (f" (check fs.azure.account.key.{self.account}.dfs.{self.domain}, AZURE_STORAGE_CONNECTION_STRING, "
                    "AZURE_STORAGE_ACCOUNT_KEY or the identity's role on the account)")  # fmt: skip
        if "error sending request" in reason or "timed out" in reason or "Connection refused" in reason:
            return " (check the BlobEndpoint of AZURE_STORAGE_CONNECTION_STRING, and that the server is up)"
        return ""

    # --------------------------------------------------------------------------------------------- data path
    def hudi_rs_options(self) -> dict[str, str]:
        return self.settings.hudi_rs_options()

    def hadoop_options(self) -> dict[str, str]:
        return self.settings.hadoop_options(self.domain)
