"""S3 credentials: the static keys the settings name, else botocore's credential chain; the same ones on the driver
and in every Spark task.

Static keys (``fs.s3a.access.key``/``secret.key``/``session.token``, Hudi's ``hoodie.aws.*``, ``AWS_*``
variables, a profile's keys: :func:`~.s3_settings.resolve`) are used as they are. Without them, botocore's chain
finds what an AWS SDK would: a web identity token file (IRSA), SSO, ``credential_process``, an assume-role
profile, container credentials (ECS, EKS Pod Identity, the token in a variable or a file) or instance metadata.
(obstore's own chain misses profiles and a container token given in a variable: bench/README.md.)

The driver resolves them once; a Spark task gets them frozen in its shipped settings, with where they came from
(botocore's name for the source) and when they expire, so every executor signs with the driver's credentials.
Temporary credentials are renewed when fewer than :data:`RENEW_BEFORE` seconds are left: the driver through
botocore (which refreshes them itself), a task through its own process's chain, which must give the same source
(else the task stops with one line: executors must not silently sign as someone else).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Mapping

from ..errors import StorageError
from .s3_settings import ACCESS_KEY, CREDENTIAL_EXPIRY, CREDENTIAL_SOURCE, SECRET_KEY, SESSION_TOKEN

if TYPE_CHECKING:
    from obstore.store import S3Credential

log = logging.getLogger(__name__)
RENEW_BEFORE = 300  # seconds: credentials closer than this to their expiry are renewed before use
STATIC = "static keys"
ADVICE = ("give fs.s3a.access.key and fs.s3a.secret.key (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a "
          "profile), or run where a web identity token file, container or instance credentials are provided")  # fmt: skip


@dataclass(frozen=True)
class Frozen:
    access_key: str
    secret_key: str
    token: str | None
    expiry: float | None  # epoch seconds; None: they do not expire


class S3Credentials:
    """Credentials for one resolved settings map; callable as obstore's ``credential_provider``."""

    def __init__(self, options: Mapping[str, str], what: str):
        self.what = what  # the table or file they are for, in messages
        self._guard = threading.Lock()
        self._chain: Any = None  # botocore's credentials object, in the process that asked the chain
        if ACCESS_KEY in options and CREDENTIAL_SOURCE not in options:
            self.source = STATIC
            self._frozen = Frozen(options[ACCESS_KEY], options[SECRET_KEY], options.get(SESSION_TOKEN), None)
        elif CREDENTIAL_SOURCE in options:  # shipped by the driver
            self.source = options[CREDENTIAL_SOURCE]
            expiry = options.get(CREDENTIAL_EXPIRY)
            self._frozen = Frozen(options[ACCESS_KEY], options[SECRET_KEY], options.get(SESSION_TOKEN),
                                  float(expiry) if expiry else None)  # fmt: skip
        else:
            self.source = ""  # the chain's, once asked
            self._frozen = self._from_chain()

    def current(self) -> Frozen:
        with self._guard:
            expiry = self._frozen.expiry
            if self.source != STATIC and (self._chain is not None or (expiry is not None and time.time() > expiry - RENEW_BEFORE)):
                self._frozen = self._from_chain()
            return self._frozen

    def __call__(self) -> "S3Credential":
        frozen = self.current()
        expires = datetime.fromtimestamp(frozen.expiry, timezone.utc) if frozen.expiry is not None else None
        return {"access_key_id": frozen.access_key, "secret_access_key": frozen.secret_key, "token": frozen.token,
                "expires_at": expires}  # fmt: skip

    def shipped(self) -> dict[str, str]:
        """The settings keys that give a Spark task these credentials."""
        frozen = self.current()
        out = {ACCESS_KEY: frozen.access_key, SECRET_KEY: frozen.secret_key}
        if frozen.token:
            out[SESSION_TOKEN] = frozen.token
        if self.source != STATIC:
            out[CREDENTIAL_SOURCE] = self.source
            if frozen.expiry is not None:
                out[CREDENTIAL_EXPIRY] = f"{frozen.expiry:.3f}"
        return out

    def _from_chain(self) -> Frozen:
        """Ask botocore's chain in this process (once; its credentials object renews itself afterwards)."""
        if self._chain is None:
            try:
                found = _process_chain()
            except LookupError as missing:
                raise StorageError(f"{self.what}: {missing}") from None
            if self.source and found.method != self.source:
                raise StorageError(f"{self.what}: the driver's AWS credentials came from {self.source}, this "
                                   f"process's from {found.method}: executors must sign as the driver; give them "
                                   f"the same credential source, or static keys")  # fmt: skip
            self._chain, self.source = found, str(found.method)
            log.info("%s: AWS credentials from %s (botocore's chain: no static keys were given)", self.what, self.source)
        try:
            frozen = self._chain.get_frozen_credentials()
        except Exception as exc:  # botocore raises its own and the HTTP client's errors while renewing
            raise StorageError(f"{self.what}: AWS credentials from {self._chain.method} could not be renewed: "
                               f"{_one_line(exc)}") from None  # fmt: skip
        expiry = getattr(self._chain, "_expiry_time", None)  # RefreshableCredentials only; static ones never expire
        return Frozen(frozen.access_key, frozen.secret_key, frozen.token, expiry.timestamp() if expiry else None)


@lru_cache(maxsize=1)
def _process_chain() -> Any:
    """botocore's credentials for this process, asked once (every later ``Storage`` shares them; botocore renews
    temporary ones itself). LookupError, with the reason, when there are none."""
    import botocore.exceptions
    import botocore.session

    try:
        found = botocore.session.Session().get_credentials()
    except botocore.exceptions.BotoCoreError as exc:
        raise LookupError(f"AWS credentials could not be had: {_one_line(exc)}") from None
    if found is None:
        raise LookupError(f"no AWS credentials found; {ADVICE}")
    return found


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]
