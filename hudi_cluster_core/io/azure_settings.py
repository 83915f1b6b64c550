"""Azure Blob settings: resolved once on the driver for the account a table's URI names, from the job's keys
(Hadoop ABFS's), the standard Azure variables, and the Azure identity chain.

Every reader and writer of a table on ``abfs[s]://container@account.dfs.core.windows.net`` or
``wasbs://container@account.blob.core.windows.net`` must reach the same account the same way: our driver and Spark
tasks (obstore) and hudi-rs inside the tasks. So the settings are resolved here into one explicit map, shipped with
the :class:`~hudi_cluster_core.io.storage.Storage` to the executors (marked resolved: nothing is looked up there
again, not even the account key obstore would read from ``AZURE_STORAGE_*``) and translated for each client.

Endpoint, highest first: the ``BlobEndpoint`` of ``AZURE_STORAGE_CONNECTION_STRING`` (or its protocol and
``EndpointSuffix``; ``UseDevelopmentStorage=true`` is Azurite's default address), when the string is for the URI's
account; else the account's own, ``https://<account>.blob.<domain of the URI>``.

Credentials, highest first:

1. the job's ABFS/WASB account key: ``fs.azure.account.key.<account>.dfs.core.windows.net`` (or ``.blob.``, the
   WASB form; Hadoop's unqualified ``fs.azure.account.key`` last);
2. ``AccountKey`` of ``AZURE_STORAGE_CONNECTION_STRING`` (for the URI's account);
3. ``AZURE_STORAGE_ACCOUNT_KEY`` (or ``AZURE_STORAGE_ACCESS_KEY``), unless ``AZURE_STORAGE_ACCOUNT_NAME`` names
   another account;
4. the Azure identity chain, in ``DefaultAzureCredential``'s order as far as object_store provides it: a service
   principal's secret (``AZURE_CLIENT_ID``, ``AZURE_CLIENT_SECRET``, ``AZURE_TENANT_ID``), workload identity
   (``AZURE_CLIENT_ID``, ``AZURE_TENANT_ID``, ``AZURE_FEDERATED_TOKEN_FILE``), the Azure CLI when
   ``AZURE_USE_AZURE_CLI=true``, else the machine's managed identity (IMDS, or ``AZURE_MSI_ENDPOINT``;
   ``AZURE_CLIENT_ID`` picks a user-assigned one); ``AZURE_AUTHORITY_HOST`` names the login endpoint.
"""

from __future__ import annotations

import os
from typing import Mapping

from ..errors import ConfigError
from .store import RESOLVED
from .store_settings import ResolvedSettings, job_keys, shipped, timeouts_and_retries

CONNECT_TIMEOUT_MS = "fs.azure.http.connection.timeout"
READ_TIMEOUT_MS = "fs.azure.http.read.timeout"
MAX_RETRIES = "fs.azure.io.retry.max.retries"
# Ours, not ABFS's (30 retries): a dead endpoint must fail within seconds, not minutes
DEFAULTS = {CONNECT_TIMEOUT_MS: "5000", READ_TIMEOUT_MS: "30000", MAX_RETRIES: "2"}
ACCOUNT = "hudi.cluster.azure.account"
ENDPOINT = "hudi.cluster.azure.endpoint"
CREDENTIAL = "hudi.cluster.azure.credential"  # access_key | client_secret | workload_identity | azure_cli | managed_identity
CREDENTIAL_SOURCE = "hudi.cluster.azure.credential.source"
ACCOUNT_KEY = "hudi.cluster.azure.account.key"
# the identity chain's settings, by obstore's (object_store's) names
IDENTITY = {"client_id": "hudi.cluster.azure.client.id", "client_secret": "hudi.cluster.azure.client.secret",
            "tenant_id": "hudi.cluster.azure.tenant.id", "authority_host": "hudi.cluster.azure.authority.host",
            "federated_token_file": "hudi.cluster.azure.federated.token.file",
            "msi_endpoint": "hudi.cluster.azure.msi.endpoint"}  # fmt: skip
SHIPPED_KEYS = (CONNECT_TIMEOUT_MS, READ_TIMEOUT_MS, MAX_RETRIES, ACCOUNT, ENDPOINT, CREDENTIAL, CREDENTIAL_SOURCE,
                ACCOUNT_KEY, *IDENTITY.values(), RESOLVED)  # fmt: skip
AZURITE = "http://127.0.0.1:10000/devstoreaccount1"  # UseDevelopmentStorage=true


def connection_string(text: str) -> dict[str, str]:
    """``Key=Value;...`` as a map (values, such as a base64 key, may hold '=')."""
    out = {}
    for part in text.split(";"):
        key, sep, value = part.strip().partition("=")
        if sep and key:
            out[key.strip().lower()] = value.strip()
    return out


def _from_connection_string(env: Mapping[str, str], account: str) -> tuple[str | None, str | None]:
    """(endpoint, key) from ``AZURE_STORAGE_CONNECTION_STRING`` when it is for ``account``."""
    text = (env.get("AZURE_STORAGE_CONNECTION_STRING") or "").strip()
    if not text:
        return None, None
    found = connection_string(text)
    if found.get("usedevelopmentstorage", "").lower() == "true":
        found.setdefault("accountname", "devstoreaccount1")
        found.setdefault("blobendpoint", AZURITE)
    if found.get("accountname", account) != account:
        return None, None  # a string for another account says nothing about this one
    endpoint = found.get("blobendpoint")
    if not endpoint and found.get("endpointsuffix"):
        endpoint = f"{found.get('defaultendpointsprotocol', 'https')}://{account}.blob.{found['endpointsuffix']}"
    if endpoint and not endpoint.startswith(("http://", "https://")):
        raise ConfigError(f"AZURE_STORAGE_CONNECTION_STRING: BlobEndpoint={endpoint!r}: accepted: an http(s):// URL")
    return (endpoint.rstrip("/") if endpoint else None), found.get("accountkey") or None


def _identity(env: Mapping[str, str]) -> dict[str, str]:
    """The identity chain's choice, from the environment, in DefaultAzureCredential's order."""
    def given(*names: str) -> str:
        return next((env[n].strip() for n in names if (env.get(n) or "").strip()), "")

    client, tenant = given("AZURE_CLIENT_ID"), given("AZURE_TENANT_ID")
    out = {IDENTITY["authority_host"]: given("AZURE_AUTHORITY_HOST")}
    if client and tenant and given("AZURE_CLIENT_SECRET"):
        out.update({CREDENTIAL: "client_secret", CREDENTIAL_SOURCE: "AZURE_CLIENT_SECRET (service principal)",
                    IDENTITY["client_id"]: client, IDENTITY["tenant_id"]: tenant,
                    IDENTITY["client_secret"]: given("AZURE_CLIENT_SECRET")})  # fmt: skip
    elif client and tenant and given("AZURE_FEDERATED_TOKEN_FILE"):
        out.update({CREDENTIAL: "workload_identity", CREDENTIAL_SOURCE: "AZURE_FEDERATED_TOKEN_FILE (workload identity)",
                    IDENTITY["client_id"]: client, IDENTITY["tenant_id"]: tenant,
                    IDENTITY["federated_token_file"]: given("AZURE_FEDERATED_TOKEN_FILE")})  # fmt: skip
    elif given("AZURE_USE_AZURE_CLI").lower() == "true":
        out.update({CREDENTIAL: "azure_cli", CREDENTIAL_SOURCE: "the Azure CLI (AZURE_USE_AZURE_CLI=true)"})
    else:
        msi = given("AZURE_MSI_ENDPOINT", "AZURE_IDENTITY_ENDPOINT")
        out.update({CREDENTIAL: "managed_identity", IDENTITY["msi_endpoint"]: msi, IDENTITY["client_id"]: client,
                    CREDENTIAL_SOURCE: f"managed identity ({msi or 'IMDS'})"})  # fmt: skip
    return {k: v for k, v in out.items() if v}


def resolve(conf: Mapping[str, str], account: str, domain: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The explicit settings map for ``account`` (of ``domain``, e.g. ``core.windows.net``), from the job's keys
    ``conf`` and this machine's environment; validated, defaults filled in."""
    given = job_keys(conf)
    if shipped(given):  # exactly these settings, nothing from here
        if given.get(ACCOUNT) != account:
            raise ConfigError(f"Azure settings for account {given.get(ACCOUNT)!r} given for account {account!r}")
        return {k: v for k, v in given.items() if k in SHIPPED_KEYS}
    env = os.environ if environ is None else environ
    out = {RESOLVED: "true", ACCOUNT: account, **timeouts_and_retries(given, DEFAULTS, MAX_RETRIES)}
    endpoint, string_key = _from_connection_string(env, account)
    out[ENDPOINT] = endpoint or f"https://{account}.blob.{domain}"
    account_key_names = (f"fs.azure.account.key.{account}.dfs.{domain}", f"fs.azure.account.key.{account}.blob.{domain}",
                "fs.azure.account.key")  # fmt: skip
    named = (env.get("AZURE_STORAGE_ACCOUNT_NAME") or "").strip()
    env_key = (env.get("AZURE_STORAGE_ACCOUNT_KEY") or env.get("AZURE_STORAGE_ACCESS_KEY") or "").strip()
    keys: list[tuple[str | None, str]] = [(given.get(k), k) for k in account_key_names] + [
        (string_key, "AZURE_STORAGE_CONNECTION_STRING"),
        (env_key if named in ("", account) else None, "AZURE_STORAGE_ACCOUNT_KEY")]  # fmt: skip
    found = next(((k, s) for k, s in keys if k), None)
    if found and found[0]:
        out.update({CREDENTIAL: "access_key", ACCOUNT_KEY: found[0], CREDENTIAL_SOURCE: found[1]})
    else:
        out.update(_identity(env))
    return out


class AzureSettings(ResolvedSettings):
    """A resolved map, translated for obstore and hudi-rs."""

    CONNECT_TIMEOUT_KEY, READ_TIMEOUT_KEY = CONNECT_TIMEOUT_MS, READ_TIMEOUT_MS
    RETRIES_KEY, CREDENTIAL_KEY = MAX_RETRIES, CREDENTIAL

    @property
    def endpoint(self) -> str:
        return self.options[ENDPOINT]

    def obstore_config(self) -> dict[str, object]:
        """``AzureStore`` settings, every one explicit (the credential type too): obstore would otherwise take the
        process's own ``AZURE_*`` variables, which on an executor may differ from the driver's."""
        out: dict[str, object] = {"account_name": self.options[ACCOUNT], "endpoint": self.endpoint, "use_emulator": False,
                                  "credential_type": self.credential}  # fmt: skip
        if self.credential == "access_key":
            out["account_key"] = self.options[ACCOUNT_KEY]
        if self.credential == "azure_cli":
            out["use_azure_cli"] = True
        for name, key in IDENTITY.items():
            if key in self.options:
                out[name] = self.options[key]
        return out

    def hudi_rs_options(self) -> dict[str, str]:
        """hudi-rs (object_store) storage options: the same account, endpoint (with the account's path on an
        emulator) and credentials; hudi-rs ignores a connection string."""
        connect_ms, request_ms = self.timeouts_ms()
        out = {"azure_storage_account_name": self.options[ACCOUNT], "azure_storage_endpoint": self.endpoint,
               "azure_allow_http": str(self.endpoint.startswith("http://")).lower(), "azure_storage_use_emulator": "false",
               "connect_timeout": f"{connect_ms}ms", "timeout": f"{request_ms}ms"}  # fmt: skip
        if self.credential == "access_key":
            out["azure_storage_account_key"] = self.options[ACCOUNT_KEY]
        if self.credential == "azure_cli":
            out["azure_use_azure_cli"] = "true"
        names = {"client_id": "azure_storage_client_id", "client_secret": "azure_storage_client_secret",
                 "tenant_id": "azure_storage_tenant_id", "authority_host": "azure_storage_authority_host",
                 "federated_token_file": "azure_federated_token_file", "msi_endpoint": "azure_msi_endpoint"}  # fmt: skip
        for name, key in IDENTITY.items():
            if key in self.options:
                out[names[name]] = self.options[key]
        return out

    def hadoop_options(self, domain: str) -> dict[str, str]:
        """The account key for Hadoop's ABFS and WASB (``spark.hadoop.`` + these keys), when that is the credential."""
        account = self.options[ACCOUNT]
        if self.credential != "access_key":
            return {}
        return {f"fs.azure.account.key.{account}.{kind}.{domain}": self.options[ACCOUNT_KEY] for kind in ("dfs", "blob")}
