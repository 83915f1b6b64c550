"""Tables on Google Cloud Storage (``gs://``), on fake-gcs-server started on loopback by these tests
(tests/support/gcs_server.py): a Hudi-written table crashed mid-commit then recovered, two racing runs under
Apache Hudi's storage lock (a lease kept with ``ifGenerationMatch``), ``show``; hudi-rs reads the rows back from the
server. Endpoints and credentials come as users give them: the Hadoop connector's ``fs.gs.*`` keys,
``STORAGE_EMULATOR_HOST``, Application Default Credentials.

fake-gcs-server takes writes only through GCS's JSON API; obstore (our client, and hudi-rs's) writes through the
XML API, so the endpoint our runs are given is :class:`~tests.support.gcs_xml_proxy.GCSXmlProxy` in front of it,
which makes each XML write the JSON equivalent with the same precondition (the server still decides the 412).
"""

from __future__ import annotations

import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from hudi_cluster_core.io.gcs_settings import CREDENTIAL, CREDENTIAL_SOURCE, METADATA_HOST, ROOT_URL, resolve
from hudi_cluster_core.io.storage import Storage
from hudi_cluster_core.table.lock_provider import STORAGE_BASED
from hudi_cluster_core.table.storage_lock import LOCK_FILE, StorageLock
from tests.support import gcs_server
from tests.support.cloud_runs import Store, cli, crash_then_recover, racing_runs, run_args
from tests.support.gcs_xml_proxy import GCSXmlProxy
from tests.support.runs import error_lines, make_append_table

BUCKET = "lake"
LOCK = {"hoodie.write.lock.provider": STORAGE_BASED, "hoodie.write.lock.storage.validity.timeout.secs": "10",
        "hoodie.write.lock.storage.renew.interval.secs": "1"}  # fmt: skip


@pytest.fixture(scope="module")
def gcs(tmp_path_factory):
    with gcs_server.serving(tmp_path_factory.mktemp("gcs"), BUCKET) as server:
        with GCSXmlProxy(server.endpoint) as proxy:
            server.writable_endpoint = proxy.endpoint
            server.proxy = proxy
            yield server


def _store(gcs, *, flags: dict[str, str] | None = None, env: dict[str, str] | None = None) -> Store:
    return Store.on_emulator(gcs, BUCKET, name="GCS", uri=lambda prefix: f"gs://{BUCKET}/{prefix}",
                             rs_uri=lambda prefix: f"gs://{BUCKET}/{prefix}", flags=flags, env=env)  # fmt: skip


def _connector_keys(gcs) -> dict[str, str]:
    """How a Spark job on Dataproc or with the Hadoop connector names an emulator: ``fs.gs.*`` keys."""
    return {**gcs.options(), ROOT_URL: gcs.writable_endpoint}


def _storage(gcs, prefix: str) -> Storage:
    return Storage(f"gs://{BUCKET}/{prefix}", _connector_keys(gcs))


def test_a_crashed_run_is_recovered_then_shown_with_the_connectors_keys(gcs, hudi_tables, tmp_path):
    """A v9 table with the metadata table, written by Apache Hudi: a run killed inside its commit, the next one
    rolls it back and clusters, ``show`` lists the clustering; the endpoint from ``fs.gs.storage.root.url``."""
    local = hudi_tables.copy("cow_v9_mdt", "gcs-crash")
    note = crash_then_recover(_store(gcs, flags=_connector_keys(gcs)), local, "crash", tmp_path)
    assert f"hoodie.write.lock.provider={STORAGE_BASED})" in note


def test_two_runs_race_under_the_storage_lock_from_storage_emulator_host(gcs, hudi_tables, tmp_path):
    """A MERGE_ON_READ table with log files (hudi-rs merges them inside the tasks, on the server), the endpoint from
    ``STORAGE_EMULATOR_HOST`` only: two runs at once under Hudi's storage lock; afterwards the lease is released."""
    local = hudi_tables.copy("mor_v9_late_upserts", "gcs-race")
    store = _store(gcs, env={"STORAGE_EMULATOR_HOST": gcs.writable_endpoint})
    racing_runs(store, local, "race", LOCK, tmp_path)
    lock = json.loads(gcs.client().bucket(BUCKET).blob(f"race/{LOCK_FILE}").download_as_bytes())
    assert lock["expired"] is True and set(lock) == {"expired", "validUntil", "owner"}


def test_the_storage_lock_is_a_lease_kept_with_generation_preconditions(gcs):
    """Hudi's lock object on GCS: a second owner is kept out; an update from a stale generation is refused by the
    server (412); a released lease is taken by the next owner."""
    storage = _storage(gcs, "lease")
    first, second = StorageLock(storage), StorageLock(storage)
    assert first.try_acquire(storage, "a")
    try:
        assert not second.try_acquire(storage, "b")
        held = storage.read_versioned(storage.join(LOCK_FILE))
        assert held is not None and held.version.isdigit()  # a generation, not an ETag
        assert gcs.client().bucket(BUCKET).get_blob(f"lease/{LOCK_FILE}").generation == int(held.version)
        assert storage.put_if_match(storage.join(LOCK_FILE), b"{}", str(int(held.version) - 1)) is None
        assert storage.put_if_match(storage.join(LOCK_FILE), b"{}", None) is None
    finally:
        first.release(storage, "a")
    assert json.loads(storage.read_bytes(storage.join(LOCK_FILE)))["expired"] is True
    assert second.try_acquire(storage, "b")
    second.release(storage, "b")


def _service_account_key(path: Path) -> Path:
    """A service account key of Google's format (a fresh RSA key): object_store signs its own tokens with it."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    pem = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    path.write_text(json.dumps({"type": "service_account", "project_id": gcs_server.PROJECT, "private_key_id": "k1",
                                "private_key": pem, "client_email": "runner@hudi-cluster-test.iam.gserviceaccount.com",
                                "client_id": "1", "token_uri": "https://oauth2.googleapis.com/token"}))  # fmt: skip
    return path


@contextlib.contextmanager
def _metadata_server(token: str) -> Iterator[tuple[list[dict[str, str]], str]]:
    """A GCE metadata server on loopback that hands out ``token`` for the default service account; yields the
    headers of the requests it served and its address (``GCE_METADATA_HOST``)."""
    asked: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            asked.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
            ok = self.path.endswith("/service-accounts/default/token") and self.headers.get("Metadata-Flavor") == "Google"
            body = json.dumps({"access_token": token, "expires_in": 3600, "token_type": "Bearer"}).encode()
            self.send_response(200 if ok else 404)
            self.send_header("Content-Length", str(len(body) if ok else 0))
            self.end_headers()
            if ok:
                self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield asked, f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _bearers(gcs) -> set[str]:
    return {a for a in gcs.proxy.authorizations if a.startswith("Bearer ")}


def test_show_with_application_default_credentials(gcs, tmp_path):
    """Application Default Credentials as Google's libraries find them, the endpoint from the connector's key:
    ``GOOGLE_APPLICATION_CREDENTIALS`` naming a service account key (object_store signs its own token from it: no
    token endpoint is asked), then, with no credentials file, the machine's metadata server
    (``GCE_METADATA_HOST``), whose token the requests carry."""
    local = make_append_table(str(tmp_path / "t"), batches=2, rows=10)
    gcs.upload_dir(local, BUCKET, "adc")
    key = _service_account_key(tmp_path / "key.json")
    before = _bearers(gcs)
    store = _store(gcs, flags={ROOT_URL: gcs.writable_endpoint}, env={"GOOGLE_APPLICATION_CREDENTIALS": str(key)})
    shown = cli(store, "show", store.uri("adc"), tmp=tmp_path, timeout=120)
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr[-2000:]
    assert "credentials from GOOGLE_APPLICATION_CREDENTIALS" in shown.stderr
    assert _bearers(gcs) - before, "no request carried the service account's token"

    with _metadata_server("metadata-token") as (asked, host):
        store = _store(gcs, flags={ROOT_URL: gcs.writable_endpoint}, env={"GCE_METADATA_HOST": host})
        shown = cli(store, "show", store.uri("adc"), tmp=tmp_path, timeout=120)
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr[-2000:]
    assert asked and all(a["metadata-flavor"] == "Google" for a in asked)
    assert "Bearer metadata-token" in gcs.proxy.authorizations


def test_a_server_that_ignores_generation_preconditions_is_refused_before_anything_is_written(gcs, tmp_path):
    local = make_append_table(str(tmp_path / "t"), batches=2, rows=10)
    gcs.upload_dir(local, BUCKET, "ignored")
    before = gcs.keys(BUCKET, "ignored")
    with GCSXmlProxy(gcs.endpoint, drop_conditions=True) as careless:
        store = _store(gcs, flags={**gcs.options(), ROOT_URL: careless.endpoint})
        result = cli(store, *run_args(store.uri("ignored"), mode="schedule"), tmp=tmp_path, timeout=120)
        assert careless.dropped >= 2
    lines = error_lines(result.stderr)
    assert result.returncode == 2 and len(lines) == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "nothing was written" in lines[0] and careless.endpoint in lines[0], lines
    assert gcs.keys(BUCKET, "ignored") == before


def test_endpoint_and_credentials_as_users_give_them(tmp_path):
    """Precedence: the connector's keys, then ``STORAGE_EMULATOR_HOST``, then Google's; credentials from the
    connector's keys, else Application Default Credentials in Google's order (the file named by
    ``GOOGLE_APPLICATION_CREDENTIALS``, gcloud's file, the metadata server)."""
    key = str(_service_account_key(tmp_path / "key.json"))
    gcloud = tmp_path / "gcloud"
    gcloud.mkdir()
    (gcloud / "application_default_credentials.json").write_text(json.dumps(
        {"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r"}))  # fmt: skip
    emulator = {"STORAGE_EMULATOR_HOST": "127.0.0.1:9023"}
    assert resolve({}, emulator)[ROOT_URL] == "http://127.0.0.1:9023"
    assert resolve({}, emulator)[CREDENTIAL] == "none"  # as Google's libraries against an emulator
    assert resolve({f"spark.hadoop.{ROOT_URL}": "http://gcs:1"}, emulator)[ROOT_URL] == "http://gcs:1"
    assert ROOT_URL not in resolve({}, {"CLOUDSDK_CONFIG": str(tmp_path / "none")})  # Google's own endpoint
    named = resolve({}, {"GOOGLE_APPLICATION_CREDENTIALS": key, "CLOUDSDK_CONFIG": str(gcloud)})
    assert (named[CREDENTIAL], named[CREDENTIAL_SOURCE]) == ("service_account", f"GOOGLE_APPLICATION_CREDENTIALS={key}")
    assert resolve({}, {"CLOUDSDK_CONFIG": str(gcloud)})[CREDENTIAL] == "authorized_user"
    metadata = resolve({}, {"CLOUDSDK_CONFIG": str(tmp_path / "none"), "GCE_METADATA_HOST": "127.0.0.1:1"})
    assert (metadata[CREDENTIAL], metadata[METADATA_HOST]) == ("metadata", "127.0.0.1:1")
    keyfile = resolve({"fs.gs.auth.service.account.json.keyfile": key}, {"CLOUDSDK_CONFIG": str(gcloud)})
    assert keyfile[CREDENTIAL] == "service_account"
    shipped = resolve(keyfile, {"GOOGLE_APPLICATION_CREDENTIALS": "/elsewhere.json", **emulator})
    assert shipped == keyfile  # a task uses the driver's map whatever its environment


@pytest.mark.parametrize("case", ["missing bucket", "endpoint refusing connections", "unreadable key file"])
def test_bad_storage_input_is_one_line(gcs, tmp_path, case):
    from tests.support.s3_server import free_port

    uri, flags, expected = f"gs://{BUCKET}/t", _connector_keys(gcs), ""
    if case == "missing bucket":
        uri, expected = "gs://no-such-bucket/t", "bucket 'no-such-bucket' does not exist"
    elif case == "endpoint refusing connections":
        flags[ROOT_URL] = expected = f"http://127.0.0.1:{free_port()}"
    else:
        flags = {ROOT_URL: gcs.writable_endpoint, "fs.gs.auth.service.account.json.keyfile": str(tmp_path / "none.json")}
        expected = "cannot be read as a JSON credentials file"
    result = cli(_store(gcs, flags=flags), "show", uri, tmp=tmp_path, timeout=120)
    lines = error_lines(result.stderr)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert len(lines) == 1 and expected in lines[0], result.stderr[-2000:]
