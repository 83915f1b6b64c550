"""Conditional S3 requests: create an object only if its key is free (``If-None-Match: *``), replace it only if it
is still the version read (``If-Match: <ETag>``), and read it with its ETag, each in one request.

pyarrow's S3 filesystem has no conditional write, and object stores have no rename, so a file that must not
exist yet (a requested plan, a completed instant) is created with a plain HTTP PUT signed with AWS Signature
Version 4 (the documented algorithm: canonical request, string to sign, HMAC-SHA256 key chain). S3 answers 412
when the key exists. A server without conditional writes that answers 501 makes the caller fall back to "look,
then PUT" (what Hadoop's S3A does for a non-overwriting create); one that silently ignores the header overwrites,
which only the cross-process lock of issue 13 can prevent. ``If-Match`` and the ETag serve Apache Hudi's
storage-based lock (``table.storage_lock``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import http.client
from dataclasses import dataclass
from urllib.parse import quote, urlparse

from .object_store import ACCESS_KEY, CONNECT_TIMEOUT_MS, PATH_STYLE, REQUEST_TIMEOUT_MS, SECRET_KEY, SESSION_TOKEN, S3Settings


class ConditionalPutUnsupported(Exception):
    """This server or these credentials cannot do a conditional PUT here; fall back."""


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def _target(settings: S3Settings, bucket: str, key: str) -> tuple[str, str, str]:
    """(http scheme, host[:port], path) for the object: path-style on a given endpoint unless
    ``fs.s3a.path.style.access=false``, virtual-hosted on AWS's own."""
    url = settings.endpoint_url
    encoded_key = quote(key, safe="/-_.~")
    if url is None:
        return "https", f"{bucket}.s3.{settings.region}.amazonaws.com", f"/{encoded_key}"
    parsed = urlparse(url)
    if settings.options.get(PATH_STYLE) == "false":
        return parsed.scheme, f"{bucket}.{parsed.netloc}", f"/{encoded_key}"
    return parsed.scheme, parsed.netloc, f"/{quote(bucket, safe='')}/{encoded_key}"


@dataclass(frozen=True)
class Response:
    status: int
    reason: str
    etag: str | None
    body: bytes

    def brief(self) -> str:
        return f"HTTP {self.status} {self.reason}: {' '.join(self.body[:2000].decode('utf-8', 'replace').split())[:300]}"


def signed_request(settings: S3Settings, method: str, bucket: str, key: str, data: bytes = b"",
                   conditions: dict[str, str] | None = None) -> Response:  # fmt: skip
    """One S3 request signed with AWS Signature Version 4, ``conditions`` as extra (signed) headers.

    Raises :class:`ConditionalPutUnsupported` without static credentials, OSError when the server is unreachable."""
    options = settings.options
    if ACCESS_KEY not in options or SECRET_KEY not in options:
        raise ConditionalPutUnsupported("no static credentials to sign with")
    scheme, host, path = _target(settings, bucket, key)
    now = dt.datetime.now(dt.timezone.utc)
    amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    payload_hash = hashlib.sha256(data).hexdigest()
    headers = {"host": host, "x-amz-content-sha256": payload_hash, "x-amz-date": amz_date,
               **{name.lower(): value for name, value in (conditions or {}).items()}}  # fmt: skip
    if SESSION_TOKEN in options:
        headers["x-amz-security-token"] = options[SESSION_TOKEN]
    signed = ";".join(sorted(headers))
    canonical = "\n".join([method, path, "", *(f"{k}:{headers[k]}" for k in sorted(headers)), "", signed, payload_hash])
    scope = f"{day}/{settings.region}/s3/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    signing_key = _hmac(_hmac(_hmac(_hmac(f"AWS4{options[SECRET_KEY]}".encode(), day), settings.region), "s3"),
                        "aws4_request")  # fmt: skip
    signature = hmac.new(signing_key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = (f"AWS4-HMAC-SHA256 Credential={options[ACCESS_KEY]}/{scope}, "
                                f"SignedHeaders={signed}, Signature={signature}")  # fmt: skip
    if method == "PUT":
        headers["content-length"] = str(len(data))
    connection_class = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
    # one timeout for connecting and for each read: the longer of the two configured ones
    timeout = max(int(options[CONNECT_TIMEOUT_MS]), int(options[REQUEST_TIMEOUT_MS])) / 1000
    connection = connection_class(host, timeout=timeout)
    try:
        connection.request(method, path, body=data if method == "PUT" else None, headers=headers)
        response = connection.getresponse()
        return Response(response.status, response.reason, response.getheader("ETag"), response.read())
    finally:
        connection.close()


def _refuses_conditions(response: Response) -> bool:
    return response.status == 501 or b"NotImplemented" in response.body


def put_if_absent(settings: S3Settings, bucket: str, key: str, data: bytes) -> bool:
    """PUT ``data`` at ``bucket/key`` unless an object is there; True if created, False if it already existed.

    Raises :class:`ConditionalPutUnsupported` without static credentials or when the server refuses the
    condition itself, and OSError for any other failure (with the server's answer)."""
    return put_conditional(settings, bucket, key, data, if_match=None) is not None


def put_conditional(settings: S3Settings, bucket: str, key: str, data: bytes, *, if_match: str | None) -> str | None:
    """PUT ``data`` if the object is still the version ``if_match`` names (an ETag), or, with None, if there is no
    object yet. Returns the new object's ETag, or None when the condition failed (another writer came first)."""
    conditions = {"If-None-Match": "*"} if if_match is None else {"If-Match": if_match}
    response = signed_request(settings, "PUT", bucket, key, data, conditions)
    if response.status in (200, 201):
        return response.etag or ""
    # 412: the condition failed; 409 ConditionalRequestConflict: a concurrent conditional write won; 404: an If-Match
    # object that no longer exists
    if response.status == 412 or (response.status == 409 and b"ConditionalRequestConflict" in response.body):
        return None
    if if_match is not None and response.status == 404:
        return None
    if _refuses_conditions(response):
        raise ConditionalPutUnsupported(f"HTTP {response.status}")
    raise OSError(f"PUT s3://{bucket}/{key}: {response.brief()}")


def get_with_etag(settings: S3Settings, bucket: str, key: str) -> tuple[bytes, str] | None:
    """The object's bytes and ETag, or None when there is no such object."""
    response = signed_request(settings, "GET", bucket, key)
    if response.status == 200:
        return response.body, response.etag or ""
    if response.status == 404:
        return None
    raise OSError(f"GET s3://{bucket}/{key}: {response.brief()}")
