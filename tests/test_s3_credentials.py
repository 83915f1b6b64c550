"""S3 credentials from every source an AWS SDK knows, on a moto server that checks signatures (issue 20).

Each case clusters a table on ``s3a://`` through the CLI (Spark tasks included) with one credential source in its
environment and no keys on the command line: static keys given as Hadoop keys, ``AWS_*`` variables, a profile, a
web identity token file (IRSA, exchanged at moto's STS), instance metadata (IMDSv2) and container credentials
(tests/support/imds_server.py). moto accepts only credentials it issued (the granted user's keys, the role's
temporary keys), so a run that signed with anything else fails. Nothing leaves the machine: the instance-metadata
endpoints (both names) point at a decoy on loopback whose keys moto refuses, STS at moto; every test asserts the
decoy was asked nothing unless instance metadata is the source under test.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from hudi_cluster_core.io import s3_credentials
from hudi_cluster_core.io.s3_settings import CREDENTIAL_EXPIRY, CREDENTIAL_SOURCE
from hudi_cluster_core.io.storage import Storage
from tests.support.imds_server import (MetadataServer, allow_role, allow_unsigned_calls, assume_role,
                                       web_identity_environment)  # fmt: skip
from tests.support.readers import assert_same_rows, read_hudi_rs
from tests.support.runs import cli_env, make_append_table, table_problems
from tests.support.s3_server import REGION, S3Server, free_port

BUCKET = "creds"
SORT = "hoodie.clustering.plan.strategy.sort.columns=id"
SOURCES = ("static job keys", "environment", "profile", "web identity (IRSA)", "instance metadata", "container")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """An auth-checking moto with a user and a role, instance metadata serving the role's keys, and a decoy."""
    work = tmp_path_factory.mktemp("creds")
    server = S3Server(auth=True).start(work / "moto.log")
    try:
        server.grant_user()
        server.create_bucket(BUCKET)
        role = allow_role(server)
        with MetadataServer(assume_role(server, role)) as imds, MetadataServer() as decoy:
            yield {"server": server, "role": role, "imds": imds, "decoy": decoy, "work": work}
    finally:
        server.stop()


def _environment(world, source: str, home: Path) -> tuple[dict[str, str], list[str]]:
    """(the CLI's environment, its extra --hoodie-conf flags) with ``source`` as the only credentials."""
    server, imds, decoy = world["server"], world["imds"], world["decoy"]
    key, secret = server.granted
    env = {k: v for k, v in cli_env().items() if not k.startswith("AWS_")}
    env.update({"HOME": str(home), "AWS_CONFIG_FILE": str(home / "no-config"), "AWS_REGION": REGION,
                "AWS_SHARED_CREDENTIALS_FILE": str(home / "no-credentials"), "AWS_ENDPOINT_URL_STS": server.endpoint,
                **decoy.environment()})  # fmt: skip
    flags = ["fs.s3a.endpoint=" + server.endpoint, "fs.s3a.path.style.access=true"]
    if source == "static job keys":
        flags += [f"fs.s3a.access.key={key}", f"fs.s3a.secret.key={secret}"]
    elif source == "environment":
        env.update(AWS_ACCESS_KEY_ID=key, AWS_SECRET_ACCESS_KEY=secret)
    elif source == "profile":
        (home / "credentials").write_text(f"[lake]\naws_access_key_id = {key}\naws_secret_access_key = {secret}\n")
        env.update(AWS_PROFILE="lake", AWS_SHARED_CREDENTIALS_FILE=str(home / "credentials"))
    elif source == "web identity (IRSA)":
        env.update(web_identity_environment(server, world["role"], home))
    elif source == "instance metadata":
        env.update(imds.environment())
    elif source == "container":
        env.update(imds.container_environment())
    return env, [arg for flag in flags for arg in ("--hoodie-conf", flag)]


@pytest.mark.parametrize("source", SOURCES)
def test_a_clustering_on_s3a_with_credentials_from(world, source, tmp_path):
    server, imds, decoy = world["server"], world["imds"], world["decoy"]
    prefix = "t-" + "".join(c for c in source if c.isalnum())
    local = make_append_table(str(tmp_path / "table"), batches=3, rows=10)
    before = read_hudi_rs(local)
    server.upload_dir(local, BUCKET, prefix)
    env, flags = _environment(world, source, tmp_path)
    imds.requests.clear(), decoy.requests.clear()
    if source.startswith("web identity"):
        allow_unsigned_calls(server, 1)  # the one AssumeRoleWithWebIdentity (unsigned) of the driver's chain
    try:
        run = subprocess.run([sys.executable, "-m", "hudi_cluster_core.cli", "run", "--base-path", f"s3a://{BUCKET}/{prefix}",
                              "--mode", "scheduleAndExecute", "--spark-master", "local[1]", "--hoodie-conf", SORT, *flags],
                             env=env, text=True, capture_output=True, timeout=600)  # fmt: skip
    finally:
        allow_unsigned_calls(server, 0)
    assert run.returncode == 0 and "completed" in run.stdout and "Traceback" not in run.stderr, run.stderr[-3000:]
    assert decoy.requests == []  # nothing fell through to instance metadata
    if source == "instance metadata":
        assert any(path.startswith("/latest/meta-data/iam/security-credentials/") for _, path in imds.requests)
    elif source == "container":
        assert ("GET", "/container-credentials") in imds.requests
    else:
        assert imds.requests == []
    copy = server.download_dir(BUCKET, prefix, tmp_path / "after")
    assert table_problems(str(copy)) == []
    assert [p for p in (copy / ".hoodie" / "timeline").iterdir() if p.name.endswith(".replacecommit")]
    assert_same_rows(before, read_hudi_rs(str(copy)), labels=("before", "after"))


def test_without_any_credentials_the_run_stops_in_one_line(world, tmp_path):
    env, flags = _environment(world, "none", tmp_path)
    closed = f"http://127.0.0.1:{free_port()}"  # no instance metadata here: nothing listens
    env.update(AWS_EC2_METADATA_SERVICE_ENDPOINT=closed, AWS_METADATA_ENDPOINT=closed)
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "hudi_cluster_core.cli", "show", f"s3a://{BUCKET}/none", *flags],
                         env=env, text=True, capture_output=True, timeout=120)  # fmt: skip
    lines = [line for line in run.stderr.splitlines() if line.strip()]  # nothing else: no source was found
    assert run.returncode == 2 and len(lines) == 1 and "no AWS credentials found" in lines[0], run.stderr[-2000:]
    assert time.monotonic() - started < 60


def test_a_task_uses_the_drivers_credentials_and_renews_them_only_from_the_same_source(world, monkeypatch, tmp_path):
    """What a Spark task gets: the driver's frozen temporary keys, their source and expiry, used as they are; past
    the renewal margin the task asks its own process's chain, which must give the same source."""
    server, imds = world["server"], world["imds"]
    monkeypatch.setattr(s3_credentials, "_process_chain", s3_credentials._process_chain.__wrapped__)  # no cache
    for key in [k for k in __import__("os").environ if k.startswith("AWS_")]:
        monkeypatch.delenv(key)
    for key, value in {**imds.environment(), "AWS_CONFIG_FILE": str(tmp_path / "none"), "AWS_REGION": REGION,
                       "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none")}.items():  # fmt: skip
        monkeypatch.setenv(key, value)
    options = {"fs.s3a.endpoint": server.endpoint, "fs.s3a.path.style.access": "true"}
    driver = Storage(f"s3a://{BUCKET}/x", options)
    shipped = driver.options
    assert shipped[CREDENTIAL_SOURCE] == "iam-role" and shipped["fs.s3a.session.token"]
    assert float(shipped[CREDENTIAL_EXPIRY]) > time.time() + 3600
    assert driver.hudi_rs_options()["aws_session_token"] == shipped["fs.s3a.session.token"]

    imds.requests.clear()
    task = Storage(f"s3a://{BUCKET}/x", shipped)  # as a task rebuilds it: nothing asked again
    task.write_bytes(f"{BUCKET}/x/probe", b"1")
    assert imds.requests == [] and task.options == shipped

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "someone-else")  # this "executor" would sign as another principal
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "else")
    expired = {**shipped, CREDENTIAL_EXPIRY: f"{time.time() + 10:.3f}"}  # within the renewal margin
    with pytest.raises(OSError, match="the driver.s AWS credentials came from iam-role, this process.s from env"):
        Storage(f"s3a://{BUCKET}/x", expired).write_bytes(f"{BUCKET}/x/probe", b"2")
