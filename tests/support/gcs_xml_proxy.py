"""GCS's XML API writes in front of fake-gcs-server, which serves only its JSON API for uploads.

Rust ``object_store`` (obstore, hudi-rs) speaks GCS's XML API: reads (``GET /bucket/key``), listings
(``GET /bucket?list-type=2``) and deletes, which fake-gcs-server 1.56.1 serves, and writes (``PUT /bucket/key`` with
``x-goog-if-generation-match``; copies with ``x-goog-copy-source``; multipart uploads), which it answers with
``400 invalid uploadType``. This proxy on loopback forwards every request unchanged, except those writes, which
it makes as the JSON API's equivalents on the server: a ``PUT`` becomes a media upload with the same
``ifGenerationMatch`` (so the precondition is still the server's, 412 when it fails), a copy a ``copyTo``, and a
multipart upload is gathered here and uploaded once when completed. Answers carry what GCS's XML API answers
with (``ETag``, ``x-goog-generation``, the multipart XML bodies), which object_store reads.

``GCSXmlProxy(upstream, drop_conditions=True)`` is a server that ignores ``x-goog-if-generation-match`` without
saying so: a second "create" of one name overwrites it (what fail-closed must catch).
"""

from __future__ import annotations

import http.client
import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote, urlsplit

PASSED_ON = ("content-length", "transfer-encoding", "connection", "server", "date")


class GCSXmlProxy:
    def __init__(self, upstream: str, *, drop_conditions: bool = False):
        self.upstream = urlsplit(upstream)
        self.drop_conditions = drop_conditions
        self.dropped = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.uploads: dict[str, dict[int, bytes]] = {}  # multipart upload id -> part number -> bytes
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request, for tests
        self.authorizations: set[str] = set()  # the Authorization headers seen ("Bearer <token>"), for tests
        self._guard = threading.Lock()

    def __enter__(self) -> "GCSXmlProxy":
        threading.Thread(target=self.server.serve_forever, name="gcs-xml-proxy", daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def upstream_call(self, method: str, path: str, body: bytes | None, headers: dict[str, str]):
        connection = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=30)
        try:
            connection.request(method, path, body=body, headers={**headers, "Host": self.upstream.netloc})
            answer = connection.getresponse()
            return answer.status, answer.getheaders(), answer.read()
        finally:
            connection.close()

    def upload(self, bucket: str, key: str, data: bytes, generation_match: str | None, content_type: str):
        """The JSON API's media upload; (status, headers, body) as the XML API's PUT answers."""
        query = f"uploadType=media&name={quote(key, safe='')}"
        if generation_match is not None:
            query += f"&ifGenerationMatch={generation_match}"
        status, _, body = self.upstream_call("POST", f"/upload/storage/v1/b/{quote(bucket)}/o?{query}", data,
                                             {"Content-Type": content_type or "application/octet-stream"})  # fmt: skip
        if status != 200:
            return status, [], body
        found = json.loads(body)
        return 200, [("ETag", f'"{found.get("etag") or found.get("md5Hash") or ""}"'),
                     ("x-goog-generation", str(found["generation"]))], b""  # fmt: skip

    def _handler(self):
        owner = self

        class Translate(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _answer(self, status: int, headers, body: bytes) -> None:
                self.send_response(status)
                length = str(len(body))
                for name, value in headers:
                    if name.lower() == "content-length" and self.command == "HEAD":
                        length = value  # a HEAD answers the object's size, with no body
                    elif name.lower() not in PASSED_ON:
                        self.send_header(name, value)
                self.send_header("Content-Length", length)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _object(self) -> tuple[str, str, dict[str, list[str]]]:
                parts = urlsplit(self.path)
                bucket, _, key = parts.path.lstrip("/").partition("/")
                return unquote(bucket), unquote(key), parse_qs(parts.query, keep_blank_values=True)

            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.requests.append((self.command, self.path))
                if self.headers.get("Authorization"):
                    owner.authorizations.add(self.headers["Authorization"])
                bucket, key, query = self._object()
                if key and self.command in ("PUT", "POST") and not self.path.startswith(("/upload/", "/storage/")):
                    return self._answer(*self._write(bucket, key, query, body))
                if key and self.command == "DELETE" and "uploadId" in query:  # a multipart upload abandoned
                    with owner._guard:
                        owner.uploads.pop(query["uploadId"][0], None)
                    return self._answer(204, [], b"")
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
                self._answer(*owner.upstream_call(self.command, self.path, body or None, headers))

            def _write(self, bucket: str, key: str, query: dict[str, list[str]], body: bytes):
                match = self.headers.get("x-goog-if-generation-match")
                if match is not None and owner.drop_conditions:
                    owner.dropped += 1
                    match = None
                if self.command == "POST" and "uploads" in query:
                    upload = uuid.uuid4().hex
                    with owner._guard:
                        owner.uploads[upload] = {}
                    xml = f"<InitiateMultipartUploadResult><Bucket>{bucket}</Bucket><Key>{key}</Key><UploadId>{upload}" \
                          "</UploadId></InitiateMultipartUploadResult>"  # fmt: skip
                    return 200, [("Content-Type", "application/xml")], xml.encode()
                if self.command == "PUT" and "uploadId" in query:
                    number = int(query["partNumber"][0])
                    with owner._guard:
                        owner.uploads[query["uploadId"][0]][number] = body
                    return 200, [("ETag", f'"part-{number}"')], b""
                if self.command == "POST" and "uploadId" in query:
                    with owner._guard:
                        parts = owner.uploads.pop(query["uploadId"][0])
                    status, headers, answer = owner.upload(bucket, key, b"".join(parts[n] for n in sorted(parts)), match,
                                                           "application/octet-stream")  # fmt: skip
                    if status != 200:
                        return status, headers, answer
                    etag = dict(headers)["ETag"]
                    xml = f"<CompleteMultipartUploadResult><Bucket>{bucket}</Bucket><Key>{key}</Key><ETag>{etag}</ETag>" \
                          "</CompleteMultipartUploadResult>"  # fmt: skip
                    return 200, [h for h in headers if h[0] != "ETag"], xml.encode()
                source = self.headers.get("x-goog-copy-source")
                if source:
                    source_bucket, _, source_key = unquote(source.lstrip("/")).partition("/")
                    path = (f"/storage/v1/b/{quote(source_bucket)}/o/{quote(source_key, safe='')}/copyTo/b/"
                            f"{quote(bucket)}/o/{quote(key, safe='')}")  # fmt: skip
                    if match is not None:
                        path += f"?ifGenerationMatch={match}"
                    status, _, answer = owner.upstream_call("POST", path, b"", {"Content-Type": "application/json"})
                    return status, [], answer if status != 200 else b""
                return owner.upload(bucket, key, body, match, self.headers.get("Content-Type") or "")

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

        return Translate
