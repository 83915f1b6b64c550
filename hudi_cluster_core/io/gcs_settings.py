"""GCS settings: resolved once on the driver, from the job's keys (the Hadoop GCS connector's ``fs.gs.*``), the
emulator variable Google's client libraries read, and Application Default Credentials.

Every reader and writer of a table on ``gs://`` must reach the same endpoint with the same credentials: our driver
and Spark tasks (obstore) and hudi-rs inside the tasks. So the settings are resolved here into one explicit map,
shipped with the :class:`~hudi_cluster_core.io.storage.Storage` to the executors (marked resolved: nothing is looked
up there again) and translated for each client. A credential file is shipped by its contents: the executors'
machines need not have it.

Endpoint, highest first: ``fs.gs.storage.root.url`` (also as ``spark.hadoop.fs.gs.storage.root.url``), then
``STORAGE_EMULATOR_HOST``, then Google's own (``https://storage.googleapis.com``).

Credentials, highest first:

1. ``fs.gs.auth.type`` (job key): ``UNAUTHENTICATED``; ``SERVICE_ACCOUNT_JSON_KEYFILE`` with
   ``fs.gs.auth.service.account.json.keyfile`` (that key alone implies the type); ``USER_CREDENTIALS`` with
   ``fs.gs.auth.client.id``, ``fs.gs.auth.client.secret``, ``fs.gs.auth.refresh.token``; ``COMPUTE_ENGINE`` (the
   metadata server); ``APPLICATION_DEFAULT`` (step 3);
2. ``STORAGE_EMULATOR_HOST`` set, no ``fs.gs.auth.type``: unauthenticated, as Google's client libraries are
   against an emulator;
3. Application Default Credentials, as Google's libraries find them: the file ``GOOGLE_APPLICATION_CREDENTIALS``
   names, else gcloud's ``application_default_credentials.json`` (under ``CLOUDSDK_CONFIG``, else
   ``~/.config/gcloud``; a service account key or ``gcloud auth application-default login``'s user credentials),
   else the metadata server of the machine (GCE, GKE workload identity; ``GCE_METADATA_HOST``, else
   ``metadata.google.internal``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Mapping
from urllib.parse import urlparse

from ..errors import ConfigError
from .store import RESOLVED
from .store_settings import ResolvedSettings, job_keys, shipped, timeouts_and_retries

ROOT_URL = "fs.gs.storage.root.url"
AUTH_TYPE = "fs.gs.auth.type"
KEYFILE = "fs.gs.auth.service.account.json.keyfile"
LEGACY_KEYFILE = "google.cloud.auth.service.account.json.keyfile"  # the connector's 1.x/2.x name
CLIENT_ID, CLIENT_SECRET, REFRESH_TOKEN = "fs.gs.auth.client.id", "fs.gs.auth.client.secret", "fs.gs.auth.refresh.token"
CONNECT_TIMEOUT_MS = "fs.gs.http.connect-timeout"
READ_TIMEOUT_MS = "fs.gs.http.read-timeout"
MAX_RETRY = "fs.gs.http.max.retry"
# Ours, not the connector's (20 s each, 10 retries): a dead endpoint must fail within seconds, not minutes
DEFAULTS = {CONNECT_TIMEOUT_MS: "5000", READ_TIMEOUT_MS: "30000", MAX_RETRY: "2"}
GOOGLE = "https://storage.googleapis.com"
METADATA_DEFAULT = "metadata.google.internal"
# In the resolved map only: which credentials, their JSON (service account key or user credentials), where they
# were found (for messages), and the metadata server's address
CREDENTIAL = "hudi.cluster.gcs.credentials"  # none | service_account | authorized_user | metadata
CREDENTIAL_JSON = "hudi.cluster.gcs.credentials.json"
CREDENTIAL_SOURCE = "hudi.cluster.gcs.credentials.source"
METADATA_HOST = "hudi.cluster.gcs.metadata.host"
SETTING_KEYS = (ROOT_URL, CONNECT_TIMEOUT_MS, READ_TIMEOUT_MS, MAX_RETRY)
SHIPPED_KEYS = (*SETTING_KEYS, CREDENTIAL, CREDENTIAL_JSON, CREDENTIAL_SOURCE, METADATA_HOST, RESOLVED)
AUTH_TYPES = ("UNAUTHENTICATED", "SERVICE_ACCOUNT_JSON_KEYFILE", "USER_CREDENTIALS", "COMPUTE_ENGINE",
              "APPLICATION_DEFAULT")  # fmt: skip


def _url(key: str, value: str) -> str:
    """An endpoint as ``http(s)://host[:port]``; ``host:port`` (how STORAGE_EMULATOR_HOST is often given) is http."""
    text = value.strip().rstrip("/")
    parsed = urlparse(text if "://" in text else f"http://{text}")
    if parsed.scheme not in ("http", "https") or not parsed.hostname or parsed.path not in ("", "/"):
        raise ConfigError(f"{key}={value!r}: accepted: http(s)://host[:port] or host:port")
    return f"{parsed.scheme}://{parsed.netloc}"


def _credential_file(key: str, path: str) -> dict:
    """A credentials JSON file (a service account key or user credentials), read now: it is shipped by content."""
    try:
        found = json.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{key}={path}: cannot be read as a JSON credentials file ({' '.join(str(exc).split())[:200]})"
                          "; accepted: a service account key or gcloud's application default credentials") from None
    kind = found.get("type") if isinstance(found, dict) else None
    if kind == "service_account" and found.get("client_email") and found.get("private_key"):
        return found
    if kind == "authorized_user" and all(found.get(k) for k in ("client_id", "client_secret", "refresh_token")):
        return found
    raise ConfigError(f"{key}={path}: a credentials file of type {kind!r} (or missing its fields); accepted: "
                      "'service_account' (client_email, private_key) or 'authorized_user' (client_id, "
                      "client_secret, refresh_token)")  # fmt: skip


def _file_credentials(key: str, path: str) -> dict[str, str]:
    found = _credential_file(key, path)
    return {CREDENTIAL: found["type"], CREDENTIAL_JSON: json.dumps(found), CREDENTIAL_SOURCE: f"{key}={path}"}


def _metadata(env: Mapping[str, str], source: str) -> dict[str, str]:
    host = (env.get("GCE_METADATA_HOST") or METADATA_DEFAULT).strip()
    return {CREDENTIAL: "metadata", METADATA_HOST: host, CREDENTIAL_SOURCE: f"{source} (metadata server {host})"}


def _application_default(env: Mapping[str, str]) -> dict[str, str]:
    """Application Default Credentials, in Google's order."""
    named = (env.get("GOOGLE_APPLICATION_CREDENTIALS") or "").strip()
    if named:
        return _file_credentials("GOOGLE_APPLICATION_CREDENTIALS", named)
    config_dir = env.get("CLOUDSDK_CONFIG") or str(Path(env.get("HOME") or Path.home()) / ".config" / "gcloud")
    well_known = Path(config_dir) / "application_default_credentials.json"
    if well_known.is_file():
        return _file_credentials("gcloud application default credentials", str(well_known))
    return _metadata(env, "application default credentials")


def _credentials(given: Mapping[str, str], env: Mapping[str, str], from_emulator_variable: bool) -> dict[str, str]:
    auth = (given.get(AUTH_TYPE) or "").strip().upper()
    keyfile = given.get(KEYFILE) or given.get(LEGACY_KEYFILE)
    if not auth and keyfile:
        auth = "SERVICE_ACCOUNT_JSON_KEYFILE"
    if auth and auth not in AUTH_TYPES:
        raise ConfigError(f"{AUTH_TYPE}={given.get(AUTH_TYPE)!r}: accepted: {', '.join(AUTH_TYPES)}")
    if auth == "UNAUTHENTICATED" or (not auth and from_emulator_variable):
        source = f"{AUTH_TYPE}=UNAUTHENTICATED" if auth else "STORAGE_EMULATOR_HOST (unauthenticated)"
        return {CREDENTIAL: "none", CREDENTIAL_SOURCE: source}
    if auth == "SERVICE_ACCOUNT_JSON_KEYFILE":
        if not keyfile:
            raise ConfigError(f"{AUTH_TYPE}=SERVICE_ACCOUNT_JSON_KEYFILE: {KEYFILE} is missing; accepted: the path of a "
                              "service account JSON key")  # fmt: skip
        return _file_credentials(KEYFILE if given.get(KEYFILE) else LEGACY_KEYFILE, keyfile)
    if auth == "USER_CREDENTIALS":
        missing = [k for k in (CLIENT_ID, CLIENT_SECRET, REFRESH_TOKEN) if not given.get(k)]
        if missing:
            raise ConfigError(f"{AUTH_TYPE}=USER_CREDENTIALS: {', '.join(missing)} missing; accepted: all three keys")
        user = {"type": "authorized_user", "client_id": given[CLIENT_ID], "client_secret": given[CLIENT_SECRET],
                "refresh_token": given[REFRESH_TOKEN]}  # fmt: skip
        return {CREDENTIAL: "authorized_user", CREDENTIAL_JSON: json.dumps(user), CREDENTIAL_SOURCE: f"{AUTH_TYPE}={auth}"}
    if auth == "COMPUTE_ENGINE":
        return _metadata(env, f"{AUTH_TYPE}=COMPUTE_ENGINE")
    return _application_default(env)


def resolve(conf: Mapping[str, str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The explicit settings map for ``conf`` (the job's keys) on this machine; validated, defaults filled in."""
    given = job_keys(conf)
    if shipped(given):  # exactly these settings, nothing from here
        return {k: v for k, v in given.items() if k in SHIPPED_KEYS}
    env = os.environ if environ is None else environ
    out: dict[str, str] = {RESOLVED: "true"}
    emulator = (env.get("STORAGE_EMULATOR_HOST") or "").strip()
    if given.get(ROOT_URL):
        out[ROOT_URL] = _url(ROOT_URL, given[ROOT_URL])
    elif emulator:
        out[ROOT_URL] = _url("STORAGE_EMULATOR_HOST", emulator)
    out.update(timeouts_and_retries(given, DEFAULTS, MAX_RETRY))
    out.update(_credentials(given, env, from_emulator_variable=bool(emulator) and not given.get(ROOT_URL)))
    return out


class GCSSettings(ResolvedSettings):
    """A resolved map, translated for obstore, hudi-rs and Hadoop's GCS connector."""

    CONNECT_TIMEOUT_KEY, READ_TIMEOUT_KEY = CONNECT_TIMEOUT_MS, READ_TIMEOUT_MS
    RETRIES_KEY, CREDENTIAL_KEY = MAX_RETRY, CREDENTIAL

    @property
    def endpoint(self) -> str:
        return self.options.get(ROOT_URL) or GOOGLE

    def describe_endpoint(self) -> str:
        return self.options.get(ROOT_URL) or "Google Cloud Storage"

    def service_account_key(self) -> str | None:
        """The JSON object_store takes as ``service_account_key``: the key with the endpoint in it, or, without
        credentials, object_store's own form of "no OAuth" (``disable_oauth``; it then asks for no token)."""
        if self.credential == "none":
            return json.dumps({"gcs_base_url": self.endpoint, "disable_oauth": True, "client_email": "",
                               "private_key": "", "private_key_id": ""})  # fmt: skip
        if self.credential == "service_account":
            key = json.loads(self.options[CREDENTIAL_JSON])
            if ROOT_URL in self.options:
                key["gcs_base_url"] = self.endpoint
            return json.dumps(key)
        return None

    def hadoop_options(self) -> dict[str, str]:
        """The same settings for the Hadoop GCS connector (``spark.hadoop.`` + these keys)."""
        out = {k: self.options[k] for k in SETTING_KEYS if k in self.options}
        out[AUTH_TYPE] = {"none": "UNAUTHENTICATED", "metadata": "COMPUTE_ENGINE"}.get(self.credential, "APPLICATION_DEFAULT")
        return out
