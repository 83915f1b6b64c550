"""S3 settings: resolved once on the driver, from the job's keys, the AWS environment and the AWS profile files.

Every reader and writer of a table on ``s3://``/``s3a://`` must use the same endpoint, region and credentials:
our driver and Spark tasks (obstore), hudi-rs inside the tasks (MOR slices) and Apache Hudi itself (Hadoop's
S3A). So the settings are resolved here into one explicit map of Hadoop ``fs.s3a.*`` keys, which travels with
the :class:`~hudi_cluster_core.io.storage.Storage` to the executors (environment variables and profile files
there may differ from the driver's), marked :data:`RESOLVED` so that nothing is looked up again there, and is
translated for each client. Credentials without static keys come from botocore's chain (:mod:`.s3_credentials`).

Precedence, highest first, as Hadoop's S3A and the AWS SDKs have it: the job's keys (``fs.s3a.*``, also given
as ``spark.hadoop.fs.s3a.*``, and Hudi's ``hoodie.aws.*`` credentials), then ``AWS_*`` environment variables,
then the profile (``AWS_PROFILE`` or ``default``) in ``~/.aws/credentials`` and ``~/.aws/config``.
"""

from __future__ import annotations

import configparser
import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from ..errors import ConfigError
from .store import RESOLVED
from .store_settings import job_keys, shipped

if TYPE_CHECKING:
    from obstore.store import ClientConfig, RetryConfig, S3Config

ENDPOINT = "fs.s3a.endpoint"
REGION = "fs.s3a.endpoint.region"
ACCESS_KEY = "fs.s3a.access.key"
SECRET_KEY = "fs.s3a.secret.key"
SESSION_TOKEN = "fs.s3a.session.token"
PATH_STYLE = "fs.s3a.path.style.access"
SSL = "fs.s3a.connection.ssl.enabled"
CONNECT_TIMEOUT_MS = "fs.s3a.connection.establish.timeout"
REQUEST_TIMEOUT_MS = "fs.s3a.connection.timeout"
ATTEMPTS = "fs.s3a.attempts.maximum"
STORAGE_KEYS = (ENDPOINT, REGION, ACCESS_KEY, SECRET_KEY, SESSION_TOKEN, PATH_STYLE, SSL, CONNECT_TIMEOUT_MS,
                REQUEST_TIMEOUT_MS, ATTEMPTS)  # fmt: skip
# Hudi's own AWS credential keys (HoodieAWSConfig): used where the fs.s3a ones are not given
HOODIE_ALIASES = {ACCESS_KEY: "hoodie.aws.access.key", SECRET_KEY: "hoodie.aws.secret.key",
                  SESSION_TOKEN: "hoodie.aws.session.token"}  # fmt: skip
# Ours, not Hadoop's: Hadoop's 200 s request timeout would leave a dead endpoint hanging for minutes
DEFAULTS = {CONNECT_TIMEOUT_MS: "5000", REQUEST_TIMEOUT_MS: "30000", ATTEMPTS: "3", SSL: "true"}
# Ours, in a shipped map only (with store.RESOLVED: it was resolved on the driver, nothing is looked up again): where
# the credentials came from when no static keys were given (botocore's name for the source) and when they expire
CREDENTIAL_SOURCE = "hudi.cluster.s3.credentials.source"
CREDENTIAL_EXPIRY = "hudi.cluster.s3.credentials.expiry"  # epoch seconds
SHIPPED_ONLY = (RESOLVED, CREDENTIAL_SOURCE, CREDENTIAL_EXPIRY)


def _bool(key: str, value: str) -> bool:
    lowered = value.strip().lower()
    if lowered not in ("true", "false"):
        raise ConfigError(f"{key}={value!r}: accepted: true or false")
    return lowered == "true"


def _positive_int(key: str, value: str) -> int:
    try:
        number = int(value.strip())
    except ValueError:
        number = 0
    if number <= 0:
        raise ConfigError(f"{key}={value!r}: accepted: a whole number above 0")
    return number


def _profile(environ: Mapping[str, str]) -> dict[str, str]:
    """The AWS profile's settings (credentials file over config file), as the AWS CLI reads them."""
    name = environ.get("AWS_PROFILE") or environ.get("AWS_DEFAULT_PROFILE") or "default"
    home = Path(environ.get("HOME") or Path.home())
    found: dict[str, str] = {}
    config_file = Path(environ.get("AWS_CONFIG_FILE") or home / ".aws" / "config")
    credentials_file = Path(environ.get("AWS_SHARED_CREDENTIALS_FILE") or home / ".aws" / "credentials")
    for path, section in ((config_file, name if name == "default" else f"profile {name}"), (credentials_file, name)):
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding="utf-8")
        except (configparser.Error, OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"AWS profile file {path}: cannot be read: {exc}") from None
        if parser.has_section(section):
            found.update({k: v.strip() for k, v in parser.items(section)})
    return found


def resolve(conf: Mapping[str, str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The explicit ``fs.s3a.*`` map for ``conf`` (job keys) on this machine; validated, defaults filled in."""
    given = job_keys(conf)
    if shipped(given):  # exactly these settings, nothing from here
        return {k: v for k, v in given.items() if k in STORAGE_KEYS or k in SHIPPED_ONLY}
    env = os.environ if environ is None else environ
    profile = _profile(env)
    sources: dict[str, tuple[str | None, ...]] = {
        ENDPOINT: (env.get("AWS_ENDPOINT_URL_S3"), env.get("AWS_ENDPOINT_URL"), profile.get("endpoint_url")),
        REGION: (env.get("AWS_REGION"), env.get("AWS_DEFAULT_REGION"), profile.get("region")),
        ACCESS_KEY: (env.get("AWS_ACCESS_KEY_ID"), profile.get("aws_access_key_id")),
        SECRET_KEY: (env.get("AWS_SECRET_ACCESS_KEY"), profile.get("aws_secret_access_key")),
        SESSION_TOKEN: (env.get("AWS_SESSION_TOKEN"), profile.get("aws_session_token")),
    }
    out: dict[str, str] = {}
    for key in STORAGE_KEYS:
        candidates = (given.get(key), given.get(HOODIE_ALIASES.get(key, "")), *sources.get(key, ()), DEFAULTS.get(key))
        value = next((c for c in candidates if c), None)
        if value:
            out[key] = value
    for key in (PATH_STYLE, SSL):
        if key in out:
            out[key] = str(_bool(key, out[key])).lower()
    for key in (CONNECT_TIMEOUT_MS, REQUEST_TIMEOUT_MS, ATTEMPTS):
        _positive_int(key, out[key])
    if (ACCESS_KEY in out) != (SECRET_KEY in out):
        missing = SECRET_KEY if ACCESS_KEY in out else ACCESS_KEY
        raise ConfigError(f"S3 credentials: {missing} (or its AWS_* variable) is missing; give both keys or neither")
    return out


@dataclass(frozen=True)
class S3Settings:
    """A resolved ``fs.s3a.*`` map, translated for pyarrow, hudi-rs and Hadoop."""

    options: Mapping[str, str]

    @property
    def endpoint_url(self) -> str | None:
        """The endpoint as a URL (``http://host:port``), or None for AWS's own."""
        endpoint = self.options.get(ENDPOINT)
        if not endpoint:
            return None
        if "://" in endpoint:
            return endpoint.rstrip("/")
        scheme = "https" if self.options.get(SSL, "true") == "true" else "http"
        return f"{scheme}://{endpoint.rstrip('/')}"

    @property
    def region(self) -> str:
        return self.options.get(REGION) or "us-east-1"

    def describe_endpoint(self) -> str:
        return self.endpoint_url or f"AWS S3 ({self.region})"

    def obstore_config(self, bucket: str) -> "S3Config":
        """``S3Store`` settings for ``bucket``, every one explicit: obstore would otherwise take the process's own
        ``AWS_*`` variables, which on an executor may differ from the driver's. On AWS's own endpoint requests are
        virtual-hosted, as its SDKs make them (object_store then wants the bucket in the endpoint), except for a
        bucket with dots, which AWS's wildcard certificate does not cover."""
        url = self.endpoint_url
        if url is None and "." in bucket:
            return {"region": self.region, "endpoint": f"https://s3.{self.region}.amazonaws.com",
                    "virtual_hosted_style_request": False}  # fmt: skip
        if url is None:
            return {"region": self.region, "endpoint": f"https://{bucket}.s3.{self.region}.amazonaws.com",
                    "virtual_hosted_style_request": True}  # fmt: skip
        virtual = self.options.get(PATH_STYLE) == "false"
        if virtual:
            scheme, _, host = url.partition("://")
            url = f"{scheme}://{bucket}.{host}"
        return {"region": self.region, "endpoint": url, "virtual_hosted_style_request": virtual}

    def client_options(self) -> "ClientConfig":
        url = self.endpoint_url or ""
        return {"allow_http": url.startswith("http://"), "connect_timeout": f"{self.options[CONNECT_TIMEOUT_MS]}ms",
                "timeout": f"{self.options[REQUEST_TIMEOUT_MS]}ms"}  # fmt: skip

    def retry_config(self) -> "RetryConfig":
        """``fs.s3a.attempts.maximum`` attempts, within that many request timeouts plus back-off: a silent endpoint
        fails in bounded time (object_store's own default keeps retrying for 3 minutes)."""
        attempts = int(self.options[ATTEMPTS])
        budget_ms = attempts * (int(self.options[REQUEST_TIMEOUT_MS]) + int(self.options[CONNECT_TIMEOUT_MS])) + 2000
        return {"max_retries": attempts - 1, "retry_timeout": dt.timedelta(milliseconds=budget_ms)}

    def hudi_rs_options(self) -> dict[str, str]:
        """hudi-rs (object_store) storage options; explicit, so its own environment lookup cannot disagree."""
        out = {"aws_region": self.region,
               "connect_timeout": f"{self.options[CONNECT_TIMEOUT_MS]}ms",
               "timeout": f"{self.options[REQUEST_TIMEOUT_MS]}ms"}  # fmt: skip
        url = self.endpoint_url
        if url:
            out["aws_endpoint_url"] = url
            out["aws_allow_http"] = str(url.startswith("http://")).lower()
            out["aws_virtual_hosted_style_request"] = str(self.options.get(PATH_STYLE) == "false").lower()
        for key, name in ((ACCESS_KEY, "aws_access_key_id"), (SECRET_KEY, "aws_secret_access_key"),
                          (SESSION_TOKEN, "aws_session_token")):  # fmt: skip
            if key in self.options:
                out[name] = self.options[key]
        return out

    def hadoop_options(self) -> dict[str, str]:
        """The same settings for Hadoop's S3A (Apache Hudi, Spark): ``spark.hadoop.`` + these keys."""
        out = {k: v for k, v in self.options.items() if k not in SHIPPED_ONLY}
        out[REGION] = self.region
        if self.endpoint_url:
            out[ENDPOINT] = self.endpoint_url
            out.setdefault(PATH_STYLE, "true")
        if ACCESS_KEY in out:
            provider = "TemporaryAWSCredentialsProvider" if SESSION_TOKEN in out else "SimpleAWSCredentialsProvider"
            out["fs.s3a.aws.credentials.provider"] = f"org.apache.hadoop.fs.s3a.{provider}"
        return out
