"""The object-store emulators the tests start themselves, on 127.0.0.1 (issue 20): fake-gcs-server (GCS), Azurite
(Azure Blob), moto (S3 and STS), and the AWS credential sources (instance metadata, container credentials, a web
identity token) on loopback. Each starts, a real client writes and reads an object, the conditional writes a
commit relies on behave as on the real service, each stops leaving no process or port behind, and hudi-rs reads
a table from the GCS and Azure emulators with the storage options the support modules give."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

from tests.support import azurite_server, gcs_server
from tests.support.imds_server import (MetadataServer, TlsProxy, allow_role, allow_unsigned_calls, assume_role,
                                       web_identity_environment)  # fmt: skip
from tests.support.s3_server import REGION, S3Server

pytestmark = pytest.mark.timeout(120)
BUCKET = "lake"


@pytest.fixture(scope="module")
def gcs(tmp_path_factory):
    with gcs_server.serving(tmp_path_factory.mktemp("gcs"), BUCKET) as server:
        yield server


@pytest.fixture(scope="module")
def azurite(tmp_path_factory):
    with azurite_server.serving(tmp_path_factory.mktemp("azurite"), BUCKET) as server:
        yield server


@pytest.fixture(scope="module")
def moto(tmp_path_factory):
    """moto checking signatures, so a credential source is proven by the server accepting its keys."""
    server = S3Server(auth=True).start(tmp_path_factory.mktemp("moto") / "moto.log")
    try:
        server.grant_user()
        server.create_bucket(BUCKET)
        server.role_arn = allow_role(server)
        yield server
    finally:
        server.stop()


@pytest.fixture
def aws_env(monkeypatch, tmp_path):
    """No AWS setting from the machine: no AWS_* variable, no profile files, instance metadata off."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_REGION", REGION)
    return monkeypatch


def _gone(process: subprocess.Popen, port: int) -> None:
    """The process has exited and been reaped, and nothing listens on its port any more."""
    assert process.poll() is not None
    with pytest.raises(ProcessLookupError):
        os.kill(process.pid, 0)
    with socket.socket() as probe, pytest.raises(ConnectionRefusedError):
        probe.connect(("127.0.0.1", port))


def test_gcs_create_only_and_generation_match(gcs):
    from google.api_core.exceptions import PreconditionFailed

    bucket = gcs.client().bucket(BUCKET)
    bucket.blob("t/.hoodie/1.commit").upload_from_string(b"first", if_generation_match=0)
    with pytest.raises(PreconditionFailed) as refused:  # a second create-only write of the same name
        bucket.blob("t/.hoodie/1.commit").upload_from_string(b"second", if_generation_match=0)
    assert refused.value.code == 412
    generation = bucket.get_blob("t/.hoodie/1.commit").generation
    bucket.blob("t/.hoodie/1.commit").upload_from_string(b"update", if_generation_match=generation)
    with pytest.raises(PreconditionFailed):  # an update from a stale read
        bucket.blob("t/.hoodie/1.commit").upload_from_string(b"lost", if_generation_match=generation)
    assert bucket.blob("t/.hoodie/1.commit").download_as_bytes() == b"update"


def test_azurite_if_none_match_and_etag(azurite):
    from azure.core import MatchConditions
    from azure.core.exceptions import ResourceExistsError, ResourceModifiedError

    blob = azurite.client().get_blob_client(BUCKET, "t/.hoodie/1.commit")
    etag = blob.upload_blob(b"first", overwrite=False)["etag"]  # overwrite=False sends If-None-Match: *
    for explicit in (False, True):
        with pytest.raises(ResourceExistsError) as refused:
            if explicit:
                blob.upload_blob(b"second", overwrite=True, if_none_match="*")
            else:
                blob.upload_blob(b"second", overwrite=False)
        assert (refused.value.status_code, refused.value.error_code) == (409, "BlobAlreadyExists")
    blob.upload_blob(b"update", overwrite=True, etag=etag, match_condition=MatchConditions.IfNotModified)
    with pytest.raises(ResourceModifiedError) as stale:
        blob.upload_blob(b"lost", overwrite=True, etag=etag, match_condition=MatchConditions.IfNotModified)
    assert stale.value.status_code == 412
    assert blob.download_blob().readall() == b"update"


def test_moto_if_none_match_and_if_match(moto):
    from botocore.exceptions import ClientError

    client = moto.client()
    etag = client.put_object(Bucket=BUCKET, Key="t/.hoodie/1.commit", Body=b"first", IfNoneMatch="*")["ETag"]
    with pytest.raises(ClientError) as refused:
        client.put_object(Bucket=BUCKET, Key="t/.hoodie/1.commit", Body=b"second", IfNoneMatch="*")
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    client.put_object(Bucket=BUCKET, Key="t/.hoodie/1.commit", Body=b"update", IfMatch=etag)
    with pytest.raises(ClientError) as stale:
        client.put_object(Bucket=BUCKET, Key="t/.hoodie/1.commit", Body=b"lost", IfMatch=etag)
    assert stale.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    assert client.get_object(Bucket=BUCKET, Key="t/.hoodie/1.commit")["Body"].read() == b"update"


def _write_read_with_default_chain(moto, key: str) -> str:
    """boto3's default chain, from the environment alone; returns which source botocore used."""
    import boto3

    session = boto3.Session()
    client = session.client("s3", endpoint_url=moto.endpoint)
    client.put_object(Bucket=BUCKET, Key=key, Body=key.encode())
    assert client.get_object(Bucket=BUCKET, Key=key)["Body"].read() == key.encode()
    return session.get_credentials().method


def test_instance_metadata_and_container_credentials(moto, aws_env):
    """Temporary credentials of a role, served by the metadata server, accepted by moto (which checks them)."""
    with MetadataServer(assume_role(moto, moto.role_arn)) as imds:
        for name, value in imds.environment().items():
            aws_env.setenv(name, value)
        assert _write_read_with_default_chain(moto, "imds") == "iam-role"
        assert ("PUT", "/latest/api/token") in imds.requests  # IMDSv2: a session token first
        aws_env.setenv("AWS_EC2_METADATA_DISABLED", "true")
        for name, value in imds.container_environment().items():
            aws_env.setenv(name, value)
        assert _write_read_with_default_chain(moto, "container") == "container-role"
        assert ("GET", "/container-credentials") in imds.requests


def test_metadata_server_refuses_imdsv1_and_stops():
    import urllib.error
    import urllib.request

    imds = MetadataServer().start()
    port = int(imds.endpoint.rsplit(":", 1)[1])
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(imds.endpoint + "/latest/meta-data/iam/security-credentials/", timeout=5)
        assert refused.value.code == 401
    finally:
        imds.stop()
    with socket.socket() as probe, pytest.raises(ConnectionRefusedError):
        probe.connect(("127.0.0.1", port))


def test_web_identity_token_through_moto_sts(moto, aws_env, tmp_path):
    for name, value in web_identity_environment(moto, moto.role_arn, tmp_path).items():
        aws_env.setenv(name, value)
    allow_unsigned_calls(moto, 1)  # the unsigned AssumeRoleWithWebIdentity; then the S3 calls are checked again
    try:
        assert _write_read_with_default_chain(moto, "irsa") == "assume-role-with-web-identity"
    finally:
        allow_unsigned_calls(moto, 0)


def test_obstore_web_identity_through_sts_over_tls(moto, aws_env, tmp_path):
    """object_store (obstore, hudi-rs) asks STS over https only: moto's STS behind the TLS proxy. Any instance
    metadata request goes to a decoy on loopback (object_store ignores AWS_EC2_METADATA_DISABLED)."""
    import obstore
    from obstore.store import S3Store

    with MetadataServer() as decoy, TlsProxy(moto.endpoint, tmp_path) as sts:
        for name, value in {**decoy.environment(), **web_identity_environment(moto, moto.role_arn, tmp_path),
                            "AWS_ENDPOINT_URL_STS": sts.endpoint}.items():  # fmt: skip
            aws_env.setenv(name, value)
        store = S3Store(BUCKET, endpoint=moto.endpoint, client_options={
            "allow_http": True, "root_certificate": sts.certificate.read_text()})  # fmt: skip
        allow_unsigned_calls(moto, 1)
        try:
            obstore.put(store, "irsa-obstore", b"x")
        finally:
            allow_unsigned_calls(moto, 0)
        assert bytes(obstore.get(store, "irsa-obstore").bytes()) == b"x"
        assert decoy.requests == []


def test_wrong_keys_are_refused_by_the_auth_server(moto, aws_env):
    """The control for the two tests above: moto would refuse credentials it did not issue."""
    from botocore.exceptions import ClientError

    aws_env.setenv("AWS_ACCESS_KEY_ID", "AKIANOTISSUED")
    aws_env.setenv("AWS_SECRET_ACCESS_KEY", "wrong")
    with pytest.raises(ClientError) as refused:
        _write_read_with_default_chain(moto, "wrong")
    assert refused.value.response["Error"]["Code"] == "InvalidAccessKeyId"


def test_each_emulator_stops_leaving_nothing(tmp_path):
    for server in (gcs_server.GCSServer(filesystem=True), azurite_server.AzuriteServer()):
        server.start(tmp_path / type(server).__name__)
        process, port = server.process, server.port
        server.stop()
        _gone(process, port)
    moto = S3Server().start(tmp_path / "moto.log")
    process, port = moto.process, moto.port
    moto.stop()
    _gone(process, port)


@pytest.fixture(scope="module")
def small_table(tmp_path_factory) -> Path:
    """A v9 COW table with the metadata table: two append commits of 200 rows, 2 partitions."""
    import pyarrow as pa

    from hudi_cluster_core.writer.append import append

    path = tmp_path_factory.mktemp("table") / "orders"
    for commit in range(2):
        ids = range(commit * 200, (commit + 1) * 200)
        rows = pa.table({"id": [f"k{i:05d}" for i in ids], "ts": list(ids), "amount": [i * 0.5 for i in ids],
                         "region": ["us" if i % 2 else "eu" for i in ids]})  # fmt: skip
        append(path, rows, table_name="orders", record_key="id", precombine_field="ts", partition_field="region")
    return path


def _hudi_rs_ids(uri: str, options: dict[str, str]) -> list[str]:
    import hudi
    import pyarrow as pa

    table = hudi.HudiTableBuilder.from_base_uri(uri).with_storage_options(options).build()
    return sorted(pa.Table.from_batches(table.read()).column("id").to_pylist())


def test_hudi_rs_reads_a_table_on_gcs_and_azurite(gcs, azurite, small_table):
    expected = [f"k{i:05d}" for i in range(400)]
    gcs.upload_dir(small_table, BUCKET, "t/orders")
    assert _hudi_rs_ids(f"gs://{BUCKET}/t/orders", gcs.hudi_rs_options()) == expected
    azurite.upload_dir(small_table, BUCKET, "t/orders")
    account = azurite_server.ACCOUNT
    for uri in (f"az://{BUCKET}/t/orders", f"abfs://{BUCKET}@{account}.dfs.core.windows.net/t/orders",
                f"abfss://{BUCKET}@{account}.dfs.core.windows.net/t/orders"):  # fmt: skip
        assert _hudi_rs_ids(uri, azurite.hudi_rs_options()) == expected, uri
