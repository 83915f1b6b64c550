"""Tables on S3 (``s3://``, ``s3a://``), on a real S3-compatible server the tests start on loopback (moto's server
mode, tests/support/s3_server.py): tables Apache Hudi 1.1.1 wrote locally are uploaded, clustered there by the
CLI (separate processes, one of them killed mid-commit) and by the API, and read back from the server by hudi-rs
and by Apache Hudi (Hadoop S3A); bad storage input fails with one line, exit 2, in bounded time."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hudi_cluster_core.errors import StorageError
from hudi_cluster_core.io.s3_settings import S3Settings, resolve
from hudi_cluster_core.io.storage import Storage
from hudi_cluster_core.io.store import StoreError
from tests.support.apache_hudi import read_hudi_snapshot, use_s3a
from tests.support.readers import assert_same_rows, read_hudi_rs
from tests.support.runs import cli_env, error_lines, table_problems
from tests.support.s3_server import S3Server, SilentServer, free_port, serving

BUCKET = "lake"
SORT = "hoodie.clustering.plan.strategy.sort.columns=c_int"
LOCK_NOTE = "cross-process exclusion on object stores needs a lock provider"


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("moto"), BUCKET) as server:
        yield server


def _conf_flags(options: dict[str, str]) -> list[str]:
    return [arg for key, value in options.items() for arg in ("--hoodie-conf", f"{key}={value}")]


def _env_without_aws() -> dict[str, str]:
    """The CLI's environment with no AWS_* variable: the settings must come from the flags alone."""
    return {k: v for k, v in cli_env().items() if not k.startswith("AWS_")}


def _cli(*args: str, env=None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hudi_cluster_core.cli", *args], env=env or _env_without_aws(),
                          text=True, capture_output=True, timeout=timeout)  # fmt: skip


def _rs_options(s3: S3Server) -> dict[str, str]:
    return Storage(f"s3a://{BUCKET}", s3.options()).hudi_rs_options()


def _hadoop_options(s3: S3Server) -> dict[str, str]:
    return Storage(f"s3a://{BUCKET}", s3.options()).hadoop_options()


def _completed_clustering(s3: S3Server, prefix: str) -> list[str]:
    return [k for k in s3.keys(BUCKET, f"{prefix}/.hoodie/timeline/") if k.endswith(".replacecommit")]


def test_cli_clusters_a_metadata_table_table_on_s3a_after_a_crash(s3, hudi_tables, spark, tmp_path):
    """A v9 table with the metadata table, on s3a: a first CLI run is killed inside the commit (MDT log files
    written), the next one rolls it back and clusters. Both readers read from the server the rows they read
    before; the MDT ``files`` partition is kept; nothing pending or stray is left."""
    local = hudi_tables.copy("cow_v9_mdt", "s3-cli")
    before_rs, before_hudi = read_hudi_rs(local), read_hudi_snapshot(spark, local)
    s3.upload_dir(local, BUCKET, "mdt")
    s3.put_text(BUCKET, "conf/clustering.properties", f"# on the object store too\n{SORT}\n")
    uri = f"s3a://{BUCKET}/mdt"
    args = ["run", "--base-path", uri, "--mode", "scheduleAndExecute", "--spark-master", "local[1]",
            "--props", f"s3a://{BUCKET}/conf/clustering.properties", *_conf_flags(s3.options())]  # fmt: skip

    crashed = _cli(*args, env={**_env_without_aws(), "HUDI_CLUSTER_FAILPOINT": "mdt-after-log-files"})
    assert crashed.returncode < 0, crashed.stderr[-2000:]  # SIGKILL mid-commit
    assert not _completed_clustering(s3, "mdt")

    done = _cli(*args)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "completed" in done.stdout and "Traceback" not in done.stderr
    assert done.stderr.count(LOCK_NOTE) == 1, done.stderr[-2000:]
    assert len(_completed_clustering(s3, "mdt")) == 1

    assert_same_rows(before_rs, read_hudi_rs(uri, options=_rs_options(s3)), labels=("before", "hudi-rs from S3"))
    use_s3a(spark, _hadoop_options(s3))
    assert_same_rows(before_hudi, read_hudi_snapshot(spark, uri), labels=("before", "Apache Hudi from S3"))

    assert not [k for k in s3.keys(BUCKET, "mdt/.hoodie/.temp/") if k != "mdt/.hoodie/.temp/"]  # no markers left
    copy = s3.download_dir(BUCKET, "mdt", tmp_path / "mdt")
    assert table_problems(str(copy)) == []
    properties = (copy / ".hoodie" / "hoodie.properties").read_text()
    assert "files" in next(line for line in properties.splitlines() if line.startswith("hoodie.table.metadata.partitions="))
    instant = _completed_clustering(s3, "mdt")[0].rsplit("/", 1)[1].split("_")[0]
    mdt_timeline = copy / ".hoodie" / "metadata" / ".hoodie" / "timeline"
    assert any(p.name.startswith(f"{instant}_") and p.name.endswith(".deltacommit") for p in mdt_timeline.iterdir())
    assert len(read_hudi_rs(uri, options=_rs_options(s3)).column("_hoodie_file_name").unique()) < len(
        before_rs.column("_hoodie_file_name").unique()
    )

    shown = _cli("show", uri, "--json", *_conf_flags(s3.options()))
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert instant in shown.stdout
    text = _cli("show", uri, *_conf_flags(s3.options()))
    assert text.returncode == 0 and f" at {uri}" in text.stdout, text.stdout[-2000:]  # the URI as given, scheme kept


def test_api_clusters_a_mor_table_on_s3_from_the_aws_environment(s3, hudi_tables, spark, monkeypatch):
    """The API on ``s3://``, settings from the standard AWS variables only. The Spark workers were started before
    these variables existed, so the tasks (pyarrow, and hudi-rs merging the MOR log files) reach the server only
    through the settings shipped with them."""
    from hudi_cluster_core.api import cluster

    local = hudi_tables.copy("mor_v9_late_upserts", "s3-api")
    before_rs, before_hudi = read_hudi_rs(local), read_hudi_snapshot(spark, local)
    s3.upload_dir(local, BUCKET, "mor")
    for key in [k for k in os.environ if k.startswith("AWS_")]:
        monkeypatch.delenv(key)
    for key, value in s3.environment().items():
        monkeypatch.setenv(key, value)
    worker_env = spark.sparkContext.parallelize([0], 1).map(lambda _: os.environ.get("AWS_ENDPOINT_URL")).collect()
    assert worker_env == [None]  # the tasks cannot have found the server through their environment

    result = cluster(f"s3://{BUCKET}/mor", "scheduleAndExecute", {"hoodie.clustering.plan.strategy.sort.columns": "c_int"},
                     spark)  # fmt: skip
    assert result.message == "completed" and result.input_file_groups > 0
    assert any(s["input_file_ids"] for s in result.groups)

    uri = f"s3a://{BUCKET}/mor"  # Hudi users write s3a: the same objects
    assert_same_rows(before_rs, read_hudi_rs(uri, options=_rs_options(s3)), labels=("before", "hudi-rs from S3"))
    use_s3a(spark, _hadoop_options(s3))
    assert_same_rows(before_hudi, read_hudi_snapshot(spark, uri), labels=("before", "Apache Hudi from S3"))


def test_conditional_put_keeps_the_first_writer(s3):
    storage = Storage(f"s3a://{BUCKET}/cput", s3.options())
    path = storage.join(".hoodie", "timeline", "20260101000000000.clustering.requested")
    assert storage.create_exclusive(path, b"first")
    assert not storage.create_exclusive(path, b"second")
    with pytest.raises(FileExistsError):
        storage.write_new(path, b"third")
    assert storage.read_bytes(path) == b"first"
    assert not [k for k in s3.keys(BUCKET, "cput") if k.endswith("/")]  # no directory objects were made


def test_props_file_on_s3_with_a_relative_include(s3):
    from hudi_cluster_core.config import load_config
    from hudi_cluster_core.errors import ConfigError

    s3.put_text(BUCKET, "conf/job/main.properties", "include=common.properties\nhoodie.clustering.max.parallelism 7\n")
    s3.put_text(BUCKET, "conf/job/common.properties", f"{SORT}\nhoodie.clustering.max.parallelism=3\n")
    flags = [f"{k}={v}" for k, v in s3.options().items()]
    config = load_config(f"s3a://{BUCKET}/conf/job/main.properties", flags)
    assert config.get("hoodie.clustering.plan.strategy.sort.columns") == "c_int"
    assert config.get("hoodie.clustering.max.parallelism") == 7  # the including file's later line wins
    with pytest.raises(ConfigError, match=r"^--props s3a://lake/conf/none.properties: properties file does not exist$"):
        load_config(f"s3a://{BUCKET}/conf/none.properties", flags)


def test_settings_precedence_job_keys_then_environment_then_profile(tmp_path):
    (tmp_path / "credentials").write_text("[team]\naws_access_key_id = P\naws_secret_access_key = PS\n")
    (tmp_path / "config").write_text("[profile team]\nregion = eu-west-3\nendpoint_url = http://profile:9000\n")
    env = {"AWS_PROFILE": "team", "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "credentials"),
           "AWS_CONFIG_FILE": str(tmp_path / "config")}  # fmt: skip
    from_profile = resolve({}, env)
    assert (from_profile["fs.s3a.access.key"], from_profile["fs.s3a.endpoint.region"]) == ("P", "eu-west-3")
    assert S3Settings(from_profile).endpoint_url == "http://profile:9000"
    env.update(AWS_ACCESS_KEY_ID="E", AWS_SECRET_ACCESS_KEY="ES", AWS_ENDPOINT_URL_S3="https://env:1")
    from_env = resolve({}, env)
    assert (from_env["fs.s3a.access.key"], from_env["fs.s3a.endpoint"]) == ("E", "https://env:1")
    given = resolve({"spark.hadoop.fs.s3a.access.key": "J", "hoodie.aws.secret.key": "JS",
                                  "fs.s3a.endpoint": "host:9", "fs.s3a.connection.ssl.enabled": "false"}, env)  # fmt: skip
    settings = S3Settings(given)
    assert (given["fs.s3a.access.key"], given["fs.s3a.secret.key"], settings.endpoint_url) == ("J", "JS", "http://host:9")
    rs = settings.hudi_rs_options()
    assert (rs["aws_endpoint_url"], rs["aws_allow_http"], rs["aws_access_key_id"]) == ("http://host:9", "true", "J")
    with pytest.raises(Exception, match="fs.s3a.connection.timeout='soon': accepted: a whole number above 0"):
        resolve({"fs.s3a.connection.timeout": "soon"}, {})


@pytest.fixture(scope="module")
def auth_s3(tmp_path_factory):
    """A second server that checks credentials and signatures; ``auth_s3.granted`` are the only keys it accepts
    (the default test keys are refused)."""
    server = S3Server(auth=True).start(tmp_path_factory.mktemp("moto-auth") / "moto.log")
    try:
        server.grant_user()
        yield server
    finally:
        server.stop()


def test_conditional_put_is_signed_as_s3_checks_it(auth_s3):
    """The conditional PUT (obstore's) on a server that verifies signatures: accepted once, refused after; a wrong
    secret is refused by the server (one line, an OSError naming the request)."""
    assert auth_s3.granted is not None
    key, secret = auth_s3.granted
    options = {**auth_s3.options(), "fs.s3a.access.key": key, "fs.s3a.secret.key": secret}
    storage = Storage(f"s3a://{BUCKET}/signed", options)
    auth_s3.create_bucket(BUCKET)  # boto3, with the granted keys
    assert storage.create_exclusive(f"{BUCKET}/signed/a b+c.requested", b"first")
    assert not storage.create_exclusive(f"{BUCKET}/signed/a b+c.requested", b"second")
    assert storage.read_bytes(f"{BUCKET}/signed/a b+c.requested") == b"first"
    wrong = Storage(f"s3a://{BUCKET}/signed", {**options, "fs.s3a.secret.key": "not-the-secret"})
    with pytest.raises(StoreError, match=r"^PUT lake/signed/other \(If-None-Match: \*\): .*403"):
        wrong.create_exclusive(f"{BUCKET}/signed/other", b"x")


@pytest.fixture(scope="module")
def silent():
    server = SilentServer()
    yield server
    server.close()


def _bad(s3, auth_s3, silent, case: str) -> tuple[list[str], str]:
    fast = {"fs.s3a.connection.timeout": "2000", "fs.s3a.connection.establish.timeout": "2000"}
    if case == "wrong credentials":
        return ["show", f"s3a://{BUCKET}/t", *_conf_flags({**auth_s3.options(), **fast})], auth_s3.endpoint
    if case == "endpoint that never answers":
        return ["show", f"s3a://{BUCKET}/t", *_conf_flags({**s3.options(), **fast, "fs.s3a.endpoint": silent.endpoint})], silent.endpoint
    if case == "endpoint refusing connections":
        closed = f"http://127.0.0.1:{free_port()}"  # nothing listens there
        return ["show", f"s3a://{BUCKET}/t", *_conf_flags({**s3.options(), "fs.s3a.endpoint": closed})], closed
    if case == "missing bucket":
        return ["show", "s3a://no-such-bucket/t", *_conf_flags(s3.options())], "bucket 'no-such-bucket' does not exist"
    if case == "unsupported oss":
        return ["show", "oss://bucket/t"], "supported: local paths, file:, s3://, s3a://, gs://, abfs://, abfss://, wasbs://"
    if case == "unsupported hdfs":
        return ["run", "--base-path", "hdfs://namenode:8020/t", "--mode", "scheduleAndExecute"], "'hdfs://' is not supported"
    if case == "unsupported adl":
        return ["run", "--base-path", "adl://account.azuredatalakestore.net/t", "--mode", "schedule"], \
            "'adl://' is not supported; supported: local paths, file:, s3://, s3a://, gs://"
    if case == "unsupported wasb":  # WASB over plain http: wasbs:// is the supported form
        return ["show", "wasb://c@account.blob.core.windows.net/t"], "'wasb://' is not supported"
    return ["show", "abfs://container/t"], "abfs://container/t: not an Azure storage URI; accepted: abfss://container@account"


@pytest.mark.parametrize("case", ["wrong credentials", "endpoint that never answers", "endpoint refusing connections",
                                  "missing bucket", "unsupported oss", "unsupported hdfs", "abfs without account",
                                  "unsupported adl", "unsupported wasb"])  # fmt: skip
def test_bad_storage_fails_with_one_line_in_bounded_time(s3, auth_s3, silent, case):
    args, expected = _bad(s3, auth_s3, silent, case)
    started = time.monotonic()
    result = _cli(*args, timeout=120)
    elapsed = time.monotonic() - started
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    lines = error_lines(result.stderr)
    assert len(lines) == 1 and expected in lines[0], result.stderr[-2000:]
    assert len([line for line in result.stderr.splitlines() if line.strip()]) == 1, result.stderr
    assert elapsed < 60, f"{case}: {elapsed:.1f} s"


def test_unsupported_scheme_from_the_api_names_the_supported_ones():
    from hudi_cluster_core.api import cluster

    with pytest.raises(StorageError, match=r"'oss://' is not supported; supported: local paths, file:, s3://, s3a://, gs://, "
                                           r"abfs://, abfss://, wasbs://$"):
        cluster("oss://bucket/table", "schedule")


def test_every_storage_call_has_a_timeout():
    """Connect and request timeouts and a retry budget are always set on the client (ours by default, Hadoop's keys
    override): every request, data reads included, goes through that one obstore client."""
    default = S3Settings(resolve({}, {}))
    assert default.client_options()["connect_timeout"] == "5000ms" and default.client_options()["timeout"] == "30000ms"
    assert default.retry_config()["max_retries"] == 2
    given = {"fs.s3a.connection.establish.timeout": "1500", "fs.s3a.connection.timeout": "4000", "fs.s3a.attempts.maximum": "2"}
    tuned = S3Settings(resolve(given, {}))
    assert (tuned.client_options()["connect_timeout"], tuned.client_options()["timeout"]) == ("1500ms", "4000ms")
    assert tuned.retry_config()["max_retries"] == 1 and tuned.retry_config()["retry_timeout"].total_seconds() == 13.0


@pytest.mark.parametrize("with_lock", [False, True], ids=["no lock provider", "storage-based lock"])
def test_a_server_that_ignores_if_none_match_is_refused_before_anything_is_written(s3, tmp_path, with_lock):
    """Behind the proxy, moto never sees the conditions: a second create of one name overwrites it. The run finds
    that out on a probe object (deleted again) and stops in one line, exit 2, the table untouched; Hudi's storage
    lock on the same server would rest on the same ignored conditions, so a lock provider does not help."""
    from tests.support.runs import make_append_table
    from tests.support.s3_server import ConditionsIgnoringProxy

    prefix = f"ignored-{with_lock}"
    s3.upload_dir(make_append_table(str(tmp_path / "t"), batches=2, rows=10), BUCKET, prefix)
    before = sorted(s3.keys(BUCKET, prefix))
    with ConditionsIgnoringProxy(s3.endpoint) as proxy:
        conf = {**s3.options(), "fs.s3a.endpoint": proxy.endpoint}
        if with_lock:
            conf["hoodie.write.lock.provider"] = "org.apache.hudi.client.transaction.lock.StorageBasedLockProvider"
        result = _cli("run", "--base-path", f"s3a://{BUCKET}/{prefix}", "--mode", "schedule", "--hoodie-conf", SORT,
                      *_conf_flags(conf), timeout=120)  # fmt: skip
        assert proxy.dropped >= 2
    lines = error_lines(result.stderr)
    assert result.returncode == 2 and len(lines) == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "ignored If-None-Match" in lines[0] and proxy.endpoint in lines[0] and "nothing was written" in lines[0]
    assert sorted(s3.keys(BUCKET, prefix)) == before


def test_a_shipped_map_is_used_as_it_is_whatever_the_executors_environment():
    """What a Spark task rebuilds its Storage from: the driver's resolved map; the task's own AWS_* variables and
    profile cannot change a setting (they could point it at another endpoint or principal)."""
    driver = Storage(f"s3a://{BUCKET}/x", {"fs.s3a.access.key": "A", "fs.s3a.secret.key": "S",
                                           "fs.s3a.endpoint": "http://h:1"})  # fmt: skip
    shipped = driver.options
    elsewhere = {"AWS_ACCESS_KEY_ID": "B", "AWS_SECRET_ACCESS_KEY": "T", "AWS_SESSION_TOKEN": "U",
                 "AWS_ENDPOINT_URL": "http://elsewhere:2", "AWS_REGION": "eu-west-1"}  # fmt: skip
    assert resolve(shipped, elsewhere) == resolve(shipped, {}) == {k: v for k, v in shipped.items()}
    assert Storage(f"s3a://{BUCKET}/x", shipped).options == shipped


def test_the_obstore_client_gets_every_setting_explicitly():
    aws = S3Settings(resolve({"fs.s3a.endpoint.region": "eu-west-3"}, {}))
    assert aws.obstore_config("lake") == {"region": "eu-west-3", "endpoint": "https://lake.s3.eu-west-3.amazonaws.com",
                                          "virtual_hosted_style_request": True}  # fmt: skip
    assert aws.obstore_config("my.lake")["endpoint"] == "https://s3.eu-west-3.amazonaws.com"  # dots: path style
    minio = S3Settings(resolve({"fs.s3a.endpoint": "minio:9000", "fs.s3a.connection.ssl.enabled": "false",
                                "fs.s3a.path.style.access": "false"}, {}))  # fmt: skip
    assert minio.obstore_config("lake")["endpoint"] == "http://lake.minio:9000"
    assert minio.client_options()["allow_http"] is True
