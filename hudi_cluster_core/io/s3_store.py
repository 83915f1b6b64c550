"""S3 and S3-compatible stores (``s3://``, ``s3a://``: the same objects) through obstore (Rust ``object_store``,
what hudi-rs uses; bench/README.md has the measurements behind the choice).

Every request is one obstore call (:mod:`.bucket_store`, shared with GCS and Azure): conditional creates
(``put(mode="create")``, i.e. ``If-None-Match: *``) for timeline files that must not exist yet, ``If-Match`` ETag
updates for Apache Hudi's storage lock, listing, reads, deletes; and, through :mod:`.obstore_fs`, the parquet files
the tasks read and write. Settings come from :mod:`.s3_settings`, credentials from :mod:`.s3_credentials`.

A server that ignores ``If-None-Match`` would let two writers both "create" a file;
:meth:`~.bucket_store.BucketBackend.verify_exclusive_create` tries it once per bucket and process on a probe object
(``table.lock_provider.check_commit_safety``).
"""

from __future__ import annotations

from typing import Any, Mapping

from .bucket_store import BucketBackend
from .s3_credentials import S3Credentials
from .s3_settings import RESOLVED, S3Settings, resolve
from .store import Capabilities


class S3Backend(BucketBackend):
    capabilities = Capabilities(exclusive_create=True, put_if_match=True, hudi_storage_lock=True)
    store_name = "S3"

    def __init__(self, base_uri: str, options: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None):
        self.settings = S3Settings(resolve(options or {}, environ))
        self.credentials = S3Credentials(self.settings.options, base_uri)

    @property
    def options(self) -> dict[str, str]:
        return {**self.settings.options, **self.credentials.shipped(), RESOLVED: "true"}

    def where(self, base_uri: str) -> str:
        return self.settings.describe_endpoint()

    def client_identity(self) -> tuple:
        return tuple(sorted(self.settings.options.items())), self.credentials.source

    def new_store(self, bucket: str) -> Any:
        from obstore.store import S3Store

        return S3Store(bucket, config=self.settings.obstore_config(bucket), client_options=self.settings.client_options(),
                       retry_config=self.settings.retry_config(), credential_provider=self.credentials)  # fmt: skip

    def missing_bucket(self, reason: str) -> bool:
        return "NoSuchBucket" in reason

    def hint(self, reason: str) -> str:
        if any(code in reason for code in ("403", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied")):
            return " (check fs.s3a.access.key/fs.s3a.secret.key, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or the role)"
        if "error sending request" in reason or "timed out" in reason or "Connection refused" in reason:
            return " (check fs.s3a.endpoint or AWS_ENDPOINT_URL, and that the server is up)"
        return ""

    # --------------------------------------------------------------------------------------------- data path
    def _with_credentials(self) -> S3Settings:
        return S3Settings({**self.settings.options, **self.credentials.shipped()})

    def hudi_rs_options(self) -> dict[str, str]:
        return self._with_credentials().hudi_rs_options()

    def hadoop_options(self) -> dict[str, str]:
        return self._with_credentials().hadoop_options()
