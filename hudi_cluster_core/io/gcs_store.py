"""Google Cloud Storage (``gs://bucket/path``) through obstore's ``GCSStore`` (Rust ``object_store``, what hudi-rs
reads with), on the operations every obstore-backed store shares (:mod:`.bucket_store`).

GCS versions an object by its *generation*: an exclusive create is a write with ``ifGenerationMatch=0`` (obstore's
``put(mode="create")``), which the service refuses with 412 when the name exists, and Apache Hudi's storage lock
replaces its object with ``ifGenerationMatch=<generation read>`` (so :meth:`GCSBackend.version_of` is the
generation, not the ETag). Writes are single requests (or a multipart upload completed at once for a large file):
an object appears whole. Settings and credentials: :mod:`.gcs_settings`, :mod:`.gcs_credentials`.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Mapping

from .bucket_store import BucketBackend, client_options, retry_config
from .gcs_credentials import MetadataToken, credentials_file
from .gcs_settings import CREDENTIAL_JSON, CREDENTIAL_SOURCE, METADATA_HOST, ROOT_URL, GCSSettings, resolve
from .store import Capabilities

log = logging.getLogger(__name__)
_LOGGED: set[str] = set()  # credential sources logged once per process
_METADATA: dict[str, MetadataToken] = {}  # metadata server -> its token, shared by every Storage of the process
_METADATA_GUARD = threading.Lock()


class GCSBackend(BucketBackend):
    capabilities = Capabilities(exclusive_create=True, put_if_match=True, hudi_storage_lock=True)
    store_name = "GCS"
    create_condition = "ifGenerationMatch=0"
    update_condition = "ifGenerationMatch"

    def __init__(self, base_uri: str, options: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None):
        self.settings = GCSSettings(resolve(options or {}, environ))
        self.what = base_uri
        self.token: MetadataToken | None = None
        if self.settings.credential == "metadata":
            host = self.settings.options[METADATA_HOST]
            with _METADATA_GUARD:
                self.token = _METADATA.setdefault(host, MetadataToken(host, base_uri))
        source = self.settings.options[CREDENTIAL_SOURCE]
        if source not in _LOGGED:
            _LOGGED.add(source)
            log.info("%s: GCS at %s, credentials from %s", base_uri, self.settings.describe_endpoint(), source)

    @property
    def options(self) -> dict[str, str]:
        return dict(self.settings.options)

    def where(self, base_uri: str) -> str:
        return self.settings.describe_endpoint()

    def client_identity(self) -> tuple:
        return tuple(sorted(self.settings.options.items()))

    def new_store(self, bucket: str) -> Any:
        from obstore.store import GCSStore

        config: dict[str, Any] = {}
        if ROOT_URL in self.settings.options:
            config["base_url"] = self.settings.endpoint
        key = self.settings.service_account_key()
        if key is not None:
            config["service_account_key"] = key
        elif self.settings.credential == "authorized_user":
            config["application_credentials"] = credentials_file(self.settings.options[CREDENTIAL_JSON])
        connect_ms, request_ms = self.settings.timeouts_ms()
        return GCSStore(bucket, config=config, credential_provider=self.token,  # type: ignore[arg-type]
                        client_options=client_options(self.settings.endpoint, connect_ms, request_ms),
                        retry_config=retry_config(self.settings.attempts(), connect_ms, request_ms))  # fmt: skip

    def version_of(self, meta: Mapping[str, Any]) -> str:
        return meta.get("version") or ""  # the generation: what ifGenerationMatch compares

    def update_mode(self, version: str) -> Any:
        return {"version": version}

    def missing_bucket(self, reason: str) -> bool:
        return "NoSuchBucket" in reason or "no bucket named" in reason  # GCS's code; fake-gcs-server's words

    def hint(self, reason: str) -> str:
        if any(code in reason for code in ("401", "403", "token")):
            return (" (check fs.gs.auth.type and fs.gs.auth.service.account.json.keyfile, "
                    "GOOGLE_APPLICATION_CREDENTIALS, or the machine's service account)")  # fmt: skip
        if "error sending request" in reason or "timed out" in reason or "Connection refused" in reason:
            return " (check fs.gs.storage.root.url or STORAGE_EMULATOR_HOST, and that the server is up)"
        return ""

    # --------------------------------------------------------------------------------------------- data path
    def check_reachable(self, base_uri: str, base: str) -> None:
        if self.token is not None:
            self.token.current()  # no token: one line naming the metadata server, before anything else
        super().check_reachable(base_uri, base)

    def hudi_rs_options(self) -> dict[str, str]:
        """object_store takes a GCS endpoint only inside a service account key (``gcs_base_url``): the same key
        obstore gets. User credentials go as a file; with the metadata server hudi-rs asks it itself."""
        connect_ms, request_ms = self.settings.timeouts_ms()
        out = {"connect_timeout": f"{connect_ms}ms", "timeout": f"{request_ms}ms",
               "allow_http": str(self.settings.endpoint.startswith("http://")).lower()}  # fmt: skip
        key = self.settings.service_account_key()
        if key is not None:
            out["google_service_account_key"] = key
        elif self.settings.credential == "authorized_user":
            out["google_application_credentials"] = credentials_file(self.settings.options[CREDENTIAL_JSON])
        return out

    def hadoop_options(self) -> dict[str, str]:
        return self.settings.hadoop_options()
