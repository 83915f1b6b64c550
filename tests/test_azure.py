"""Tables on Azure Blob Storage (``abfs://`` and ``abfss://`` as ``container@account.dfs.core.windows.net``,
``wasbs://`` as ``container@account.blob.core.windows.net``), on Azurite started on loopback by these tests
(tests/support/azurite_server.py): a Hudi-written table crashed mid-commit then recovered, two racing runs under a
lock provider, ``show``; hudi-rs reads the rows back from the server (as ``az://``: it takes no ``wasbs://``).

Endpoints and credentials come as users give them: ``AZURE_STORAGE_CONNECTION_STRING`` (its ``BlobEndpoint`` is
the only way to name Azurite's address), ``AZURE_STORAGE_ACCOUNT_NAME`` / ``_KEY``, Hadoop ABFS's
``fs.azure.account.key.<account>.dfs.core.windows.net``; the identity chain of real accounts is resolved, not
served here (Azurite takes Shared Key only over http). Azurite has no hierarchical namespace: the runs must not
rename, and its request log shows they copied nothing.

Apache Hudi 1.1 has no storage lock client for Azure (its ``StorageBasedLockProvider`` refuses abfs/wasbs), so the
lock two runs share here is Hudi's ``FileSystemBasedLockProvider``, whose lock file is created with
``If-None-Match: *``; the storage-based provider is refused in one line, as Hudi refuses it.
"""

from __future__ import annotations

import pytest

from hudi_cluster_core.io import azure_settings
from hudi_cluster_core.io.azure_settings import AzureSettings, resolve
from hudi_cluster_core.io.storage import Storage
from hudi_cluster_core.table.lock_provider import FILE_SYSTEM, STORAGE_BASED
from tests.support import azurite_server
from tests.support.azurite_server import ACCOUNT, KEY
from tests.support.cloud_runs import Store, cli, crash_then_recover, racing_runs, run_args
from tests.support.runs import error_lines, make_append_table

CONTAINER = "lake"
DFS = f"{CONTAINER}@{ACCOUNT}.dfs.core.windows.net"
BLOB = f"{CONTAINER}@{ACCOUNT}.blob.core.windows.net"


@pytest.fixture(scope="module")
def azurite(tmp_path_factory):
    with azurite_server.serving(tmp_path_factory.mktemp("azurite"), CONTAINER, debug=True) as server:
        yield server


def _nothing_copied_or_renamed(azurite) -> None:
    """Every blob the runs made was put whole where it belongs: the server served no copy (object_store's "rename"
    on a store without a hierarchical namespace is a copy and a delete)."""
    operations = azurite.operations()
    assert operations["BlockBlob_Upload"] > 0, operations
    assert not [op for op in operations if "Copy" in op or "Rename" in op], operations


def _endpoint_only(azurite) -> dict[str, str]:
    """A connection string naming the server and the account, no key: the key comes another way."""
    return {"AZURE_STORAGE_CONNECTION_STRING": f"BlobEndpoint={azurite.endpoint};AccountName={ACCOUNT}"}


def _store(azurite, scheme: str, *, flags: dict[str, str] | None = None, env: dict[str, str] | None = None) -> Store:
    authority = BLOB if scheme == "wasbs" else DFS
    return Store.on_emulator(azurite, CONTAINER, name="Azurite", uri=lambda prefix: f"{scheme}://{authority}/{prefix}",
                             rs_uri=lambda prefix: f"az://{CONTAINER}/{prefix}", flags=flags, env=env)  # fmt: skip


def test_a_crashed_run_is_recovered_then_shown_with_the_connection_string(azurite, hudi_tables, tmp_path):
    """A v9 table with the metadata table, written by Apache Hudi, on ``abfss://``: a run killed inside its commit,
    the next one rolls it back and clusters, ``show`` lists the clustering; endpoint and key from
    ``AZURE_STORAGE_CONNECTION_STRING`` alone."""
    local = hudi_tables.copy("cow_v9_mdt", "azure-crash")
    note = crash_then_recover(_store(azurite, "abfss", env=azurite.environment()), local, "crash", tmp_path)
    assert f"hoodie.write.lock.provider={FILE_SYSTEM})" in note  # the one Hudi 1.1's writers can share on Azure
    _nothing_copied_or_renamed(azurite)


def test_two_runs_race_on_wasbs_under_the_lock_file_with_the_abfs_key(azurite, hudi_tables, tmp_path):
    """A MERGE_ON_READ table with log files (hudi-rs merges them inside the tasks, reaching the server as
    ``az://``) on ``wasbs://``, the key from Hadoop ABFS's key: two runs at once under Hudi's
    ``FileSystemBasedLockProvider``; the lock file is gone afterwards."""
    local = hudi_tables.copy("mor_v9_late_upserts", "azure-race")
    store = _store(azurite, "wasbs", flags=azurite.options(), env=_endpoint_only(azurite))
    racing_runs(store, local, "race", {"hoodie.write.lock.provider": FILE_SYSTEM}, tmp_path)
    assert "race/.hoodie/lock" not in azurite.keys(CONTAINER, "race/.hoodie/")
    _nothing_copied_or_renamed(azurite)


def test_show_on_abfs_with_the_account_variables(azurite, tmp_path):
    local = make_append_table(str(tmp_path / "t"), batches=2, rows=10)
    azurite.upload_dir(local, CONTAINER, "vars")
    env = {**_endpoint_only(azurite), "AZURE_STORAGE_ACCOUNT_NAME": ACCOUNT, "AZURE_STORAGE_ACCOUNT_KEY": KEY}
    store = _store(azurite, "abfs", env=env)
    shown = cli(store, "show", store.uri("vars"), tmp=tmp_path, timeout=120)
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr[-2000:]
    wrong = cli(store, "show", store.uri("vars"), tmp=tmp_path, timeout=120,
                env={"AZURE_STORAGE_ACCOUNT_KEY": KEY[:-4] + "AAA="})  # fmt: skip
    lines = error_lines(wrong.stderr)
    assert wrong.returncode == 2 and len(lines) == 1 and azurite.endpoint in lines[0], wrong.stderr[-2000:]
    assert "AZURE_STORAGE_ACCOUNT_KEY" in lines[0] and "403" in lines[0], lines


def test_the_storage_based_lock_provider_is_refused_as_hudi_refuses_it(azurite, tmp_path):
    local = make_append_table(str(tmp_path / "t"), batches=2, rows=10)
    azurite.upload_dir(local, CONTAINER, "storage-lock")
    before = azurite.keys(CONTAINER, "storage-lock")
    store = _store(azurite, "abfss", flags={**azurite.options(), "hoodie.write.lock.provider": STORAGE_BASED},
                   env=_endpoint_only(azurite))  # fmt: skip
    result = cli(store, *run_args(store.uri("storage-lock"), mode="schedule"), tmp=tmp_path, timeout=120)
    lines = error_lines(result.stderr)
    assert result.returncode == 2 and len(lines) == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert STORAGE_BASED in lines[0] and FILE_SYSTEM in lines[0] and "abfss://" in lines[0], lines
    assert azurite.keys(CONTAINER, "storage-lock") == before


def test_conditional_writes_through_the_dfs_and_blob_names(azurite):
    """Exclusive create (``If-None-Match: *``), update on the ETag read (``If-Match``), through the dfs and the blob
    names of one account, which reach the same blobs."""
    env = azurite.environment()
    dfs = Storage(f"abfss://{DFS}/cond", resolve({}, ACCOUNT, "core.windows.net", env))
    blob = Storage(f"wasbs://{BLOB}/cond", dfs.options)
    path = dfs.join(".hoodie", "timeline", "20260101000000000.clustering.requested")
    assert dfs.create_exclusive(path, b"first")
    assert not blob.create_exclusive(path, b"second")
    read = blob.read_versioned(path)
    assert read is not None and read.data == b"first"
    assert dfs.put_if_match(path, b"update", read.version) is not None
    assert blob.put_if_match(path, b"lost", read.version) is None  # a stale ETag: the server refuses it
    assert dfs.read_bytes(path) == b"update"
    assert dfs.same_store(f"wasbs://{BLOB}/other") and not dfs.same_store(f"abfss://other@{ACCOUNT}.dfs.core.windows.net/x")


def test_account_key_precedence_and_the_identity_chain():
    """The job's ABFS key, then the connection string's, then ``AZURE_STORAGE_ACCOUNT_KEY``; without a key, the
    identity chain in DefaultAzureCredential's order; the endpoint from the connection string of this account."""
    domain = "core.windows.net"
    string = f"DefaultEndpointsProtocol=https;AccountName={ACCOUNT};AccountKey=S;EndpointSuffix=example.net"
    env = {"AZURE_STORAGE_CONNECTION_STRING": string, "AZURE_STORAGE_ACCOUNT_KEY": "E"}
    job = {f"spark.hadoop.fs.azure.account.key.{ACCOUNT}.dfs.{domain}": "J"}
    key = azure_settings.ACCOUNT_KEY
    assert resolve(job, ACCOUNT, domain, env)[key] == "J"
    assert resolve({}, ACCOUNT, domain, env)[key] == "S"
    assert resolve({}, ACCOUNT, domain, env)[azure_settings.ENDPOINT] == f"https://{ACCOUNT}.blob.example.net"
    assert resolve({}, ACCOUNT, domain, {"AZURE_STORAGE_ACCOUNT_KEY": "E"})[key] == "E"
    other = resolve({}, "other", domain, {"AZURE_STORAGE_CONNECTION_STRING": string})  # a string for another account
    assert key not in other and other[azure_settings.ENDPOINT] == f"https://other.blob.{domain}"
    assert resolve({}, "other", domain, {"AZURE_STORAGE_ACCOUNT_NAME": ACCOUNT, "AZURE_STORAGE_ACCOUNT_KEY": "E"}
                   )[azure_settings.CREDENTIAL] == "managed_identity"  # fmt: skip

    principal = {"AZURE_CLIENT_ID": "c", "AZURE_TENANT_ID": "t", "AZURE_CLIENT_SECRET": "s"}
    chain = [({**principal, "AZURE_FEDERATED_TOKEN_FILE": "/token"}, "client_secret"),
             ({"AZURE_CLIENT_ID": "c", "AZURE_TENANT_ID": "t", "AZURE_FEDERATED_TOKEN_FILE": "/token"}, "workload_identity"),
             ({"AZURE_USE_AZURE_CLI": "true"}, "azure_cli"), ({"AZURE_CLIENT_ID": "c"}, "managed_identity")]  # fmt: skip
    for environ, expected in chain:
        settings = AzureSettings(resolve({}, ACCOUNT, domain, environ))
        assert settings.credential == expected, environ
        assert settings.obstore_config()["credential_type"] == expected
        assert "azure_storage_account_key" not in settings.hudi_rs_options()
    service_principal = AzureSettings(resolve({}, ACCOUNT, domain, principal))
    assert service_principal.hudi_rs_options()["azure_storage_client_secret"] == "s"
    shipped = resolve(service_principal.options, ACCOUNT, domain, {"AZURE_STORAGE_ACCOUNT_KEY": "E"})
    assert shipped == dict(service_principal.options)  # a task uses the driver's map whatever its environment


@pytest.mark.parametrize("case", ["missing container", "endpoint refusing connections", "no account in the URI"])
def test_bad_storage_input_is_one_line(azurite, tmp_path, case):
    from tests.support.s3_server import free_port

    uri, env, expected = f"abfss://{DFS}/t", azurite.environment(), ""
    if case == "missing container":
        uri, expected = f"abfss://no-such-container@{ACCOUNT}.dfs.core.windows.net/t", "container 'no-such-container' does not exist"
    elif case == "endpoint refusing connections":
        expected = f"http://127.0.0.1:{free_port()}/{ACCOUNT}"
        env = {"AZURE_STORAGE_CONNECTION_STRING": f"BlobEndpoint={expected};AccountName={ACCOUNT};AccountKey={KEY}"}
    else:
        uri, expected = f"abfss://{CONTAINER}/t", "not an Azure storage URI; accepted: abfss://container@account"
    result = cli(_store(azurite, "abfss", env=env), "show", uri, tmp=tmp_path, timeout=120)
    lines = error_lines(result.stderr)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert len(lines) == 1 and expected in lines[0], result.stderr[-2000:]
