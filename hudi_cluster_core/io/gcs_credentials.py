"""GCS credentials that obstore cannot take as a value: tokens from the metadata server, and user credentials
(``authorized_user``), which object_store reads only from a file.

A service account key needs nothing here: object_store signs its own tokens from the key (no token request at
all). The metadata server (GCE, GKE workload identity) is asked by :class:`MetadataToken`, obstore's
``credential_provider``, so that the address is the one resolved on the driver (``GCE_METADATA_HOST`` there, else
``metadata.google.internal``) and every process asks its own machine's server for the same service account:
a token is never shipped, each executor gets its own. User credentials travel in the shipped settings and are
written, once per process, to a file only this user can read, for object_store (and hudi-rs) to read.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from ..errors import StorageError

if TYPE_CHECKING:
    from obstore.store import GCSCredential

RENEW_BEFORE = 300  # seconds: a token closer than this to its expiry is renewed before use
TOKEN_PATH = "/computeMetadata/v1/instance/service-accounts/default/token"
_FILES: dict[str, str] = {}  # digest of a credentials JSON -> the private file holding it in this process
_FILES_GUARD = threading.Lock()


class MetadataToken:
    """An access token of the machine's service account, from its metadata server; callable as obstore's
    ``credential_provider``. Renewed when fewer than :data:`RENEW_BEFORE` seconds are left."""

    def __init__(self, host: str, what: str, timeout: float = 5.0):
        self.host, self.what, self.timeout = host, what, timeout
        self._guard = threading.Lock()
        self._token: tuple[str, float] | None = None  # (token, expiry in epoch seconds)

    def url(self) -> str:
        return f"http://{self.host}{TOKEN_PATH}"

    def current(self) -> tuple[str, float]:
        with self._guard:
            if self._token is None or time.time() > self._token[1] - RENEW_BEFORE:
                self._token = self._fetch()
            return self._token

    def __call__(self) -> "GCSCredential":
        token, expiry = self.current()
        return {"token": token, "expires_at": datetime.fromtimestamp(expiry, timezone.utc)}

    def _fetch(self) -> tuple[str, float]:
        request = urllib.request.Request(self.url(), headers={"Metadata-Flavor": "Google"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                body = json.loads(answer.read())
            return str(body["access_token"]), time.time() + float(body.get("expires_in", 3600))
        except (OSError, ValueError, KeyError) as exc:
            reason = " ".join(str(exc).split())[:200]
            raise StorageError(f"{self.what}: no GCS credentials: the metadata server at {self.host} gave no token "
                               f"({reason}); give fs.gs.auth.service.account.json.keyfile, "
                               "GOOGLE_APPLICATION_CREDENTIALS or gcloud's application default credentials, or run "
                               "on Google Cloud (fs.gs.auth.type=UNAUTHENTICATED for an emulator)") from None


def credentials_file(content: str) -> str:
    """A file holding ``content`` (a credentials JSON) readable by this user only, one per content and process."""
    digest = hashlib.sha256(content.encode()).hexdigest()[:24]
    with _FILES_GUARD:
        path = _FILES.get(digest)
        if path is None or not os.path.exists(path):
            handle, path = tempfile.mkstemp(prefix=f"hudi-cluster-gcs-{digest}-", suffix=".json")  # mode 0600
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(content)
            _FILES[digest] = path
        return path
