"""AWS credential sources on loopback, for the credential chains of S3 clients: an instance-metadata server (IMDSv2,
plus the container-credentials endpoint ECS and EKS Pod Identity use) and a web-identity token file (IRSA), both
yielding credentials that moto's server (tests/support/s3_server.py) accepts.

``MetadataServer(credentials).start()`` serves, in a thread of the test process, on a free 127.0.0.1 port:

- ``PUT /latest/api/token`` (with ``X-aws-ec2-metadata-token-ttl-seconds``): a session token;
- ``GET /latest/meta-data/iam/security-credentials/``: the role name, and ``.../<role>``: the credentials as EC2
  gives them (``AccessKeyId``, ``SecretAccessKey``, ``Token``, ``Expiration``, ...); both need the session token
  (``X-aws-ec2-metadata-token``), as on an instance that requires IMDSv2: an IMDSv1 GET gets 401;
- ``GET /container-credentials`` (with ``Authorization: <container token>``): the same credentials as ECS gives them.

Every request is recorded in ``requests`` (method, path), so a test can tell whether a client asked the server.
SDKs are pointed at it through their environment (:meth:`MetadataServer.environment`): botocore and the other
AWS SDKs read ``AWS_EC2_METADATA_SERVICE_ENDPOINT``; Rust object_store (obstore 0.12.1) reads
``AWS_METADATA_ENDPOINT`` (with both set to different servers, only that one was asked; whether it reads the SDK
variable alone was not tried: if it does not, it asks 169.254.169.254). Set both, always.

On a moto server without ``auth`` any key is accepted, so :data:`STATIC` credentials do; on an ``auth=True``
server, :func:`allow_role` makes an IAM role allowed everything and :func:`assume_role` real temporary
credentials for it, which moto then checks (key, secret and session token). :func:`web_identity_environment`
writes a token file and names it with the role to SDKs (``AWS_WEB_IDENTITY_TOKEN_FILE``, ``AWS_ROLE_ARN``) and
moto's STS as their STS endpoint; moto does not verify the token's signature, it exchanges any token for the role
(on an ``auth`` server, :func:`allow_unsigned_calls` first: see there). Rust object_store makes that exchange
over https only; :class:`TlsProxy` puts moto's STS behind https on loopback, with a CA the client is told to trust.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
import threading
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.support.s3_server import ACCESS_KEY, REGION, SECRET_KEY, relay

ROLE = "hudi-cluster-node"
CONTAINER_PATH = "/container-credentials"
CREDENTIALS_PATH = "/latest/meta-data/iam/security-credentials/"
STATIC = {"AccessKeyId": "ASIAHUDICLUSTERIMDS1", "SecretAccessKey": "imds-secret", "Token": "imds-session-token"}


def _expiration(hours: float = 6) -> str:
    when = dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=hours)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class MetadataServer:
    credentials: dict[str, str] = field(default_factory=lambda: dict(STATIC))  # AccessKeyId, SecretAccessKey, Token
    role: str = ROLE
    container_token: str = field(default_factory=lambda: secrets.token_hex(16))
    requests: list[tuple[str, str]] = field(default_factory=list)
    _tokens: set[str] = field(default_factory=set, repr=False)
    _server: ThreadingHTTPServer | None = field(default=None, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    @property
    def endpoint(self) -> str:
        assert self._server is not None, "not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> "MetadataServer":
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep the test output quiet
                pass

            def do_PUT(self) -> None:
                owner.requests.append(("PUT", self.path))
                if self.path != "/latest/api/token" or not self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
                    return self._send(400, "bad token request")
                token = secrets.token_urlsafe(24)
                owner._tokens.add(token)
                self._send(200, token)

            def do_GET(self) -> None:
                owner.requests.append(("GET", self.path))
                if self.path == CONTAINER_PATH:
                    if self.headers.get("Authorization") != owner.container_token:
                        return self._send(401, "bad container authorization")
                    return self._send(200, json.dumps({**owner.credentials, "Expiration": _expiration(),
                                                       "RoleArn": f"arn:aws:iam::123456789012:role/{owner.role}"}))  # fmt: skip
                if not self.path.startswith("/latest/"):
                    return self._send(404, "not found")
                if self.headers.get("X-aws-ec2-metadata-token") not in owner._tokens:
                    return self._send(401, "IMDSv2 session token required")
                if self.path == CREDENTIALS_PATH:
                    return self._send(200, owner.role)
                if self.path == CREDENTIALS_PATH + owner.role:
                    return self._send(200, json.dumps({"Code": "Success", "Type": "AWS-HMAC", **owner.credentials,
                                                       "LastUpdated": _expiration(0), "Expiration": _expiration()}))  # fmt: skip
                self._send(404, "not found")  # e.g. .../security-credentials-extended/, placement: SDKs fall back

            def _send(self, status: int, body: str) -> None:
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json" if body.startswith("{") else "text/plain")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="imds", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            assert self._thread is not None
            self._thread.join(timeout=10)
        self._server = self._thread = None

    def __enter__(self) -> "MetadataServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def environment(self) -> dict[str, str]:
        """Instance metadata on this server, for the AWS SDKs and for Rust object_store (see the docstring)."""
        return {"AWS_EC2_METADATA_SERVICE_ENDPOINT": self.endpoint, "AWS_METADATA_ENDPOINT": self.endpoint,
                "AWS_EC2_METADATA_DISABLED": "false"}  # fmt: skip

    def container_environment(self) -> dict[str, str]:
        """Container credentials (ECS / EKS Pod Identity) on this server; SDKs accept a full URI on loopback."""
        return {"AWS_CONTAINER_CREDENTIALS_FULL_URI": self.endpoint + CONTAINER_PATH,
                "AWS_CONTAINER_AUTHORIZATION_TOKEN": self.container_token}  # fmt: skip


def _client(s3_server, service: str):
    import boto3

    key, secret = s3_server.granted or (ACCESS_KEY, SECRET_KEY)
    return boto3.client(service, endpoint_url=s3_server.endpoint, region_name=REGION, aws_access_key_id=key,
                        aws_secret_access_key=secret)  # fmt: skip


def allow_role(s3_server, role: str = ROLE) -> str:
    """On a moto server, an IAM role anyone may assume, allowed everything; returns its ARN. On an ``auth`` server
    call it after ``grant_user`` (it signs with the granted key)."""
    iam = _client(s3_server, "iam")
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"},
                                                     "Action": ["sts:AssumeRole", "sts:AssumeRoleWithWebIdentity"]}]}  # fmt: skip
    arn = iam.create_role(RoleName=role, AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
    iam.put_role_policy(RoleName=role, PolicyName="all", PolicyDocument=json.dumps(policy))
    return arn


def assume_role(s3_server, role_arn: str) -> dict[str, str]:
    """Temporary credentials of ``role_arn`` from moto's STS, in the metadata server's shape."""
    creds = _client(s3_server, "sts").assume_role(RoleArn=role_arn, RoleSessionName="imds")["Credentials"]
    return {"AccessKeyId": creds["AccessKeyId"], "SecretAccessKey": creds["SecretAccessKey"],
            "Token": creds["SessionToken"]}  # fmt: skip


def allow_unsigned_calls(s3_server, count: int = 1) -> None:
    """On an ``auth`` moto server, let the next ``count`` requests through unauthenticated. SDKs send
    ``AssumeRoleWithWebIdentity`` unsigned (the token is the proof), which moto 5.2 cannot take with auth on: it
    answers 500 (it looks for an Authorization header). Call this just before the client's first request, which is
    then that exchange; the requests after it are checked again (with the role's temporary credentials).
    ``count=0`` withdraws an allowance left unused (a client that never asked STS), so it lets nothing else in."""
    # text/plain: with urllib's default form type, Flask would parse the body as a form and moto read nothing
    request = urllib.request.Request(f"{s3_server.endpoint}/moto-api/reset-auth", data=str(count).encode(),
                                     headers={"Content-Type": "text/plain"}, method="POST")  # fmt: skip
    urllib.request.urlopen(request, timeout=10).close()


class TlsProxy:
    """``https://127.0.0.1:<port>`` in front of an http server (moto), with a certificate for 127.0.0.1 signed
    by a CA made for the purpose (:attr:`certificate`, the CA's PEM file, is what clients trust): object_store (obstore, hudi-rs) makes its web-identity exchange with STS
    only over https, whatever ``allow_http`` says, so its IRSA chain can be tried against moto only through this.
    Requests and answers are passed through (one connection per request), one difference aside: see ``_forward``."""

    def __init__(self, target: str, directory: Path):
        self.target, self.directory = target, directory
        self._server: ThreadingHTTPServer | None = None

    @property
    def endpoint(self) -> str:
        assert self._server is not None, "not started"
        return f"https://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> "TlsProxy":
        import ssl
        from urllib.parse import urlsplit

        self.certificate, server_certificate, key = _loopback_certificates(self.directory)
        target = urlsplit(self.target)

        class Forward(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                path, headers = self.path, {k: v for k, v in self.headers.items() if k.lower() != "content-length"}
                if self.command == "POST" and not body and "Action=" in path:
                    # object_store sends the Query-protocol parameters in the URL of an empty POST, which STS
                    # takes; moto's one-port server picks the service from a form body's Action (else S3), so the
                    # same parameters go in the body
                    path, query = path.split("?", 1)
                    body, headers["Content-Type"] = query.encode(), "application/x-www-form-urlencoded"
                relay(self, target, path, body, headers)

            do_GET = do_POST = _forward

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Forward)
        self._server.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(server_certificate, key)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        threading.Thread(target=self._server.serve_forever, name="tls-proxy", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        self._server = None

    def __enter__(self) -> "TlsProxy":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _loopback_certificates(directory: Path) -> tuple[Path, Path, Path]:
    """A CA and a server certificate it signed for 127.0.0.1 (rustls refuses a CA as the server's own certificate),
    valid for a day; returns (CA certificate, server certificate, server key), PEM files in ``directory``."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.timezone.utc)

    def certificate(subject: str, key, issuer: str, signer, ca: bool) -> x509.Certificate:
        builder = (
            x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)])).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )  # fmt: skip
        if not ca:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        return builder.sign(signer, hashes.SHA256())

    ca_key, server_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = certificate("hudi-cluster test CA", ca_key, "hudi-cluster test CA", ca_key, ca=True)
    server = certificate("127.0.0.1", server_key, "hudi-cluster test CA", ca_key, ca=False)
    directory.mkdir(parents=True, exist_ok=True)
    paths = directory / "loopback-ca.pem", directory / "loopback-cert.pem", directory / "loopback-key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(server.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(server_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                  serialization.NoEncryption()))  # fmt: skip
    return paths


def web_identity_environment(s3_server, role_arn: str, token_dir: Path) -> dict[str, str]:
    """IRSA as EKS sets it up: a token file and the role, with moto's STS as the STS endpoint. botocore and
    obstore 0.12.1 both read ``AWS_ENDPOINT_URL_STS``; obstore's documented ``AWS_STS_ENDPOINT`` is not read from
    the environment (measured: with only it set, obstore asked the default regional STS). For object_store, which
    asks STS over https only, replace the endpoint with a :class:`TlsProxy`'s."""
    token_dir.mkdir(parents=True, exist_ok=True)
    token_file = token_dir / "web-identity-token"
    # a JWT's shape (header.payload.signature); moto does not check it
    token_file.write_text("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6aHVkaTpjbHVzdGVyIn0.c2ln")
    return {"AWS_WEB_IDENTITY_TOKEN_FILE": str(token_file), "AWS_ROLE_ARN": role_arn,
            "AWS_ROLE_SESSION_NAME": "hudi-cluster-irsa", "AWS_ENDPOINT_URL_STS": s3_server.endpoint}  # fmt: skip
