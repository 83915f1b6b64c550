"""Drive the real Apache Hudi 1.1.1 (Spark 3.5 bundle) on local Spark, for interop tests.

Everything here goes through Hudi's public entry points: the Spark datasource (``format("hudi")``) for writes
and reads, and the Spark SQL procedures ``run_clustering`` / ``show_clustering`` for Hudi's own clustering.
Timeline and ``hoodie.properties`` inspection is done by reading the files directly (independently of
``hudi_cluster_core``, so the harness can act as an oracle for it).

Hudi facts this module relies on (all observed with the 1.1.1 bundle, see ``tests/test_harness.py``):

* A **v6 table** is written by Hudi 1.1.1 with ``hoodie.write.table.version=6`` plus
  ``hoodie.write.auto.upgrade=false``.  The version option applies when the table is created; auto-upgrade
  must stay off on *every* later writer of that table, including the write client ``run_clustering``
  creates, or Hudi upgrades the table to v9 in place (``_service_options`` passes both).
* ``hoodie.metadata.enable`` defaults to ``true`` in Hudi 1.1.1.  A writer with ``false`` deletes an existing
  metadata table; one with ``true`` builds it.  So every write here passes the table's current state
  unless told otherwise (a new table gets no metadata table unless ``metadata_enable=True``).
* Such a v6 table is *not* byte-identical to one from Hudi 0.14/0.15: its ``hoodie.properties`` uses the 1.x
  key names (``hoodie.table.ordering.fields`` instead of ``hoodie.table.precombine.field``,
  ``hoodie.table.keygenerator.type=SIMPLE`` instead of ``hoodie.table.keygenerator.class``) and adds
  ``hoodie.record.merge.strategy.id``, ``hoodie.table.format=native``, ``hoodie.timeline.path=timeline``,
  ``hoodie.archivelog.folder=history``; no ``hoodie.database.name`` / ``hoodie.table.create.schema``.  The
  timeline itself is layout 1 (files in ``.hoodie/``, JSON completed metadata, no completion times).
* ``run_clustering`` takes ``options => 'k=v,k=v'`` split on ``,`` with no escaping, so a value with a comma
  (sort columns) must go through ``order => 'a,b'`` instead (done here).
* Local runs: the embedded timeline server is switched off and markers are ``DIRECT`` (files under
  ``.hoodie/.temp/<instant>/``), which is what Hudi falls back to anyway without a timeline server, and
  saves starting a Javalin server per write.
"""

from __future__ import annotations

import atexit
import datetime as dt
import json
import os
import random
import re
import shutil
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Iterable, Mapping, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

REPO_ROOT = Path(__file__).resolve().parents[2]
HUDI_VERSION = "1.1.1"
BUNDLE_JAR = REPO_ROOT / ".cache" / "jars" / f"hudi-spark3.5-bundle_2.12-{HUDI_VERSION}.jar"
# Hadoop's S3A connector (scripts/setup.sh caches them), so Apache Hudi can read tables on the tests' S3 server
S3A_JARS = tuple(REPO_ROOT / ".cache" / "jars" / name for name in ("hadoop-aws-3.3.4.jar", "aws-java-sdk-bundle-1.12.262.jar"))

META_COLUMNS = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)
# Deterministic row order for reads: partition, key, then the file and sequence number to order
# duplicates of one key (real data: fixture mor_v9_nonpartitioned_rollback).
SORT_COLUMNS = ("_hoodie_partition_path", "_hoodie_record_key", "_hoodie_file_name", "_hoodie_commit_seqno")

REGIONS = ("us", "eu", "apac")

__all__ = [
    "BUNDLE_JAR",
    "CommitStats",
    "ClusteringInstant",
    "HudiBundleMissing",
    "Instant",
    "SMALL_FILE_SCHEMA",
    "assert_upsert_found_keys",
    "bundle_jar",
    "commit_stats",
    "completed_instants",
    "hudi_execute_clustering",
    "hudi_schedule_and_execute",
    "hudi_schedule_clustering",
    "hudi_show_clustering",
    "hudi_spark_session",
    "hudi_upsert",
    "instant_metadata",
    "make_small_file_table",
    "make_updates",
    "read_hoodie_properties",
    "read_hudi_incremental",
    "read_hudi_snapshot",
    "small_file_rows",
    "timeline_dir",
    "timeline_files",
    "write_hudi_table",
]


class HudiBundleMissing(RuntimeError):
    """The Apache Hudi Spark bundle is not where ``make setup`` puts it."""


# --------------------------------------------------------------------------------------------- session

_SESSION = None
_SCRATCH: Path | None = None

_LOG4J2 = """\
rootLogger.level = {level}
rootLogger.appenderRef.console.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{HH:mm:ss}} %p %c{{1}}: %m%n
"""


# Short-lived JVM on 2 cores: C1-only JIT and the parallel collector cut the suite's CPU time by about half
# (measured: ~145 s -> ~70-90 s of CPU for tests/test_harness.py).  ``HUDI_TEST_JAVA_OPTS`` replaces these.
_JVM_TUNING = "-XX:TieredStopAtLevel=1 -XX:+UseParallelGC -XX:ParallelGCThreads=2"


def bundle_jar() -> Path:
    """The cached bundle; raises :class:`HudiBundleMissing` (never downloads) when it is absent."""
    if not BUNDLE_JAR.is_file() or BUNDLE_JAR.stat().st_size == 0:
        raise HudiBundleMissing(
            f"Apache Hudi {HUDI_VERSION} Spark bundle not found at {BUNDLE_JAR}. "
            "Run `make setup` (scripts/setup.sh caches it under .cache/jars/); tests never download it."
        )
    return BUNDLE_JAR


def _scratch_dir() -> Path:
    global _SCRATCH
    if _SCRATCH is None:
        _SCRATCH = Path(tempfile.mkdtemp(prefix="hudi-spark-"))
        atexit.register(shutil.rmtree, _SCRATCH, True)
    return _SCRATCH


def hudi_spark_session():
    """The process-wide SparkSession with the Hudi 1.1.1 bundle (created on first call, then reused).

    ``local[2]``, 2 shuffle partitions, 4g driver, UI off, session time zone UTC, warehouse and Derby under
    a temp dir, log4j at ERROR (``HUDI_TEST_LOG_LEVEL`` overrides).  A Spark session already running in the
    process *without* Hudi is stopped first: jars cannot be added to a running JVM.
    """
    global _SESSION
    if _SESSION is not None and _SESSION.sparkContext._jsc is not None:
        return _SESSION
    jar = bundle_jar()
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    running = SparkContext._active_spark_context
    if running is not None:
        extensions = running.getConf().get("spark.sql.extensions", "")
        if "HoodieSparkSessionExtension" in extensions:
            _SESSION = SparkSession.builder.getOrCreate()
            return _SESSION
        running.stop()

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    scratch = _scratch_dir()
    log4j = scratch / "log4j2.properties"
    log4j.write_text(_LOG4J2.format(level=os.environ.get("HUDI_TEST_LOG_LEVEL", "error")))
    java_opts = (
        f"-Dderby.system.home={scratch / 'derby'} -Dlog4j2.configurationFile=file:{log4j}"
        # Hudi's record-size estimator (JOL) prints "Unable to get Instrumentation" warnings to stdout unless
        # it may attach to its own JVM.
        " -Djdk.attach.allowAttachSelf=true -Djol.skipHotspotSAAttach=true"
    )
    java_opts += " " + os.environ.get("HUDI_TEST_JAVA_OPTS", _JVM_TUNING)
    conf = {
        "spark.master": "local[2]",
        "spark.app.name": "hudi-cluster-tests",
        "spark.jars": str(jar),
        "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
        "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
        "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
        "spark.driver.memory": "4g",
        "spark.driver.extraJavaOptions": java_opts,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.warehouse.dir": str(scratch / "warehouse"),
        "spark.python.worker.reuse": "true",
    }
    s3a = [str(jar) for jar in S3A_JARS if jar.is_file()]
    if len(s3a) == len(S3A_JARS):  # on the class path directly: spark.jars would copy the 280 MB SDK per session
        conf["spark.driver.extraClassPath"] = ":".join(s3a)
    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    _SESSION = builder.getOrCreate()
    _SESSION.sparkContext.setLogLevel(os.environ.get("HUDI_TEST_LOG_LEVEL", "ERROR").upper())
    return _SESSION


# ------------------------------------------------------------------------------------- table files

def read_hoodie_properties(base_path: str | os.PathLike) -> dict[str, str]:
    """``.hoodie/hoodie.properties`` as a dict (Java properties: ``#`` comments, ``\\:``/``\\=`` escapes)."""
    text = (Path(base_path) / ".hoodie" / "hoodie.properties").read_text(encoding="utf-8")
    props: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        match = re.match(r"((?:\\.|[^=:\\])*)\s*[=:]\s*(.*)$", line)
        if match:
            key, value = (re.sub(r"\\(.)", r"\1", part) for part in match.groups())
            props[key.strip()] = value
    return props


def _table_exists(base_path) -> bool:
    return (Path(base_path) / ".hoodie" / "hoodie.properties").is_file()


def _has_metadata_table(base_path) -> bool:
    return (Path(base_path) / ".hoodie" / "metadata" / ".hoodie" / "hoodie.properties").is_file()


def timeline_dir(base_path) -> Path:
    """Where the active timeline lives: ``.hoodie/`` (layout 1, v6) or ``.hoodie/timeline/`` (layout 2, v8+)."""
    props = read_hoodie_properties(base_path)
    if props.get("hoodie.timeline.layout.version", "1") == "2" or int(props.get("hoodie.table.version", "0")) >= 8:
        return Path(base_path) / ".hoodie" / props.get("hoodie.timeline.path", "timeline")
    return Path(base_path) / ".hoodie"


_INSTANT_FILE = re.compile(r"^(\d{14,17})(?:_(\d{14,17}))?\.([a-z_]+)(?:\.(requested|inflight))?$")


@dataclass(frozen=True, order=True)
class Instant:
    time: str
    action: str
    state: str  # REQUESTED | INFLIGHT | COMPLETED
    completion_time: str | None
    file_name: str


def timeline_files(base_path) -> list[Instant]:
    """Every instant file of the active timeline, sorted by (time, action, state)."""
    result = []
    directory = timeline_dir(base_path)
    for entry in sorted(directory.iterdir()) if directory.is_dir() else []:
        match = _INSTANT_FILE.match(entry.name)
        if not match or not entry.is_file():
            continue
        time, completion, action, state = match.groups()
        if action == "inflight":  # v6/v9 COW commit inflight is ``T.inflight``
            action, state = "commit", "inflight"
        result.append(Instant(time, action, (state or "completed").upper(), completion, entry.name))
    return sorted(result)


def completed_instants(base_path, actions: Iterable[str] = ("commit", "deltacommit", "replacecommit")) -> list[Instant]:
    wanted = set(actions)
    return [i for i in timeline_files(base_path) if i.state == "COMPLETED" and i.action in wanted]


def instant_metadata(base_path, instant: str | Instant) -> dict:
    """Decoded completed-instant metadata: JSON (layout 1) or the single Avro record (layout 2)."""
    if isinstance(instant, str):
        matches = [i for i in timeline_files(base_path) if i.time == instant and i.state == "COMPLETED"]
        if not matches:
            raise KeyError(f"no completed instant {instant} in {base_path}")
        instant = matches[-1]
    raw = (timeline_dir(base_path) / instant.file_name).read_bytes()
    if raw[:4] == b"Obj\x01":
        import io

        import fastavro

        return next(iter(fastavro.reader(io.BytesIO(raw))))
    return json.loads(raw or b"{}")


@dataclass(frozen=True)
class CommitStats:
    """Totals over the write stats of one completed commit/deltacommit/replacecommit."""

    instant: str
    action: str
    operation_type: str | None
    num_writes: int
    num_inserts: int
    num_update_writes: int
    num_deletes: int
    files: tuple[str, ...]
    replaced_file_ids: dict = field(default_factory=dict)


def commit_stats(base_path, instant: str) -> CommitStats:
    meta = instant_metadata(base_path, instant)
    action = next(i.action for i in timeline_files(base_path) if i.time == instant and i.state == "COMPLETED")
    stats = [s for group in (meta.get("partitionToWriteStats") or {}).values() for s in group or []]

    def total(key):
        return sum(int(s.get(key) or 0) for s in stats)

    return CommitStats(
        instant=instant,
        action=action,
        operation_type=meta.get("operationType"),
        num_writes=total("numWrites"),
        num_inserts=total("numInserts"),
        num_update_writes=total("numUpdateWrites"),
        num_deletes=total("numDeletes"),
        files=tuple(sorted(s.get("path") or "" for s in stats)),
        replaced_file_ids={k: list(v) for k, v in (meta.get("partitionToReplaceFileIds") or {}).items()},
    )


# ------------------------------------------------------------------------------------------- writes

def _to_spark_df(spark, data, base_path=None):
    """Spark DataFrame from a DataFrame, a ``pa.Table`` or a list of dicts.

    A list of dicts takes its types from the existing table at ``base_path`` (data columns) when there is one,
    so ``{"qty": 1}`` stays an ``int`` column instead of being inferred as ``long``.
    """
    from pyspark.sql import DataFrame
    from pyspark.sql.pandas.types import from_arrow_schema

    if isinstance(data, DataFrame):
        return data
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        table = pa.Table.from_batches([data]) if isinstance(data, pa.RecordBatch) else data
        schema = from_arrow_schema(table.schema)
        columns = [[_spark_value(f.type, v) for v in table.column(f.name).to_pylist()] for f in table.schema]
        return spark.createDataFrame(list(zip(*columns)) if columns else [], schema=schema)
    rows = list(data)
    if base_path is not None and _table_exists(base_path) and completed_instants(base_path):
        existing = spark.read.format("hudi").load(str(base_path)).drop(*META_COLUMNS).schema
        names = existing.fieldNames()
        return spark.createDataFrame([tuple(row.get(n) for n in names) for row in rows], schema=existing)
    return _to_spark_df(spark, pa.Table.from_pylist(rows))


def _spark_value(arrow_type: pa.DataType, value):
    """A value as Spark's ``createDataFrame`` takes it: Arrow's maps come as lists of pairs, Spark wants dicts."""
    if value is None:
        return None
    if pa.types.is_map(arrow_type):
        return {k: _spark_value(arrow_type.item_type, v) for k, v in value}
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return [_spark_value(arrow_type.value_type, v) for v in value]
    if pa.types.is_struct(arrow_type):
        return tuple(_spark_value(f.type, value.get(f.name)) for f in arrow_type)
    return value


def _new_instants(base_path, before: set[str]) -> list[str]:
    return [i.time for i in completed_instants(base_path) if i.time not in before]


def write_hudi_table(
    spark,
    base_path,
    rows_or_df,
    *,
    table_name: str | None = None,
    table_version: int | None = None,
    table_type: str | None = None,
    record_key: str = "id",
    precombine: str | None = "ts",
    partition_field: str | None = None,
    operation: str = "insert",
    small_file_limit: int = 0,
    metadata_enable: bool | None = None,
    index_type: str = "BLOOM",
    extra_options: Mapping[str, str] | None = None,
) -> str:
    """One Apache Hudi datasource write (mode ``append``; the first write creates the table).

    Returns the instant time of the commit/deltacommit it completed.

    Defaults that depend on the table: for an **existing** table ``table_name``, ``table_version``,
    ``table_type``, ``partition_field`` and ``metadata_enable`` default to what the table has (so a later write
    never upgrades a v6 table, re-partitions, or creates/drops the metadata table by accident); for a **new**
    table they default to the path's last component, 9, ``COPY_ON_WRITE``, non-partitioned and no metadata
    table.  ``partition_field=""`` forces non-partitioned.  ``small_file_limit=0`` makes every insert batch
    create new file groups.  ``extra_options`` win over everything.
    """
    base_path = str(base_path)
    exists = _table_exists(base_path)
    props = read_hoodie_properties(base_path) if exists else {}
    if table_name is None:
        table_name = props.get("hoodie.table.name") or re.sub(r"\W", "_", Path(base_path).name) or "hudi_table"
    if table_version is None:
        table_version = int(props.get("hoodie.table.version", 9))
    if table_type is None:
        table_type = props.get("hoodie.table.type", "COPY_ON_WRITE")
    if partition_field is None:
        partition_field = props.get("hoodie.table.partition.fields", "")
    if metadata_enable is None:
        metadata_enable = _has_metadata_table(base_path) if exists else False
    if table_version not in (6, 8, 9):
        raise ValueError(f"table_version must be 6, 8 or 9, not {table_version}")

    partitioned = bool(partition_field)
    complex_key = "," in record_key or "," in (partition_field or "")
    if complex_key:
        keygen = "org.apache.hudi.keygen.ComplexKeyGenerator"
    elif partitioned:
        keygen = "org.apache.hudi.keygen.SimpleKeyGenerator"
    else:
        keygen = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
    options = {
        "hoodie.table.name": table_name,
        "hoodie.datasource.write.table.name": table_name,
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.operation": operation,
        "hoodie.datasource.write.recordkey.field": record_key,
        "hoodie.datasource.write.partitionpath.field": partition_field or "",
        "hoodie.datasource.write.keygenerator.class": keygen,
        "hoodie.datasource.write.hive_style_partitioning": "false",
        "hoodie.parquet.small.file.limit": str(small_file_limit),
        "hoodie.index.type": index_type,
        "hoodie.metadata.enable": str(bool(metadata_enable)).lower(),
        "hoodie.write.table.version": str(table_version),
        "hoodie.write.auto.upgrade": "false",
        "hoodie.insert.shuffle.parallelism": "2",
        "hoodie.upsert.shuffle.parallelism": "2",
        "hoodie.bulkinsert.shuffle.parallelism": "2",
        "hoodie.delete.shuffle.parallelism": "2",
        **_LOCAL_OPTIONS,
    }
    if precombine:
        options["hoodie.datasource.write.precombine.field"] = precombine
    options.update({k: str(v) for k, v in (extra_options or {}).items()})

    before = {i.time for i in completed_instants(base_path)} if exists else set()
    df = _to_spark_df(spark, rows_or_df, base_path)
    df.write.format("hudi").options(**options).mode("append").save(base_path)
    new = _new_instants(base_path, before)
    if not new:
        raise AssertionError(f"Hudi write ({operation}) to {base_path} completed no instant")
    return new[-1]


# Local-run settings (see the module docstring).
_LOCAL_OPTIONS = {
    "hoodie.embed.timeline.server": "false",
    "hoodie.write.markers.type": "DIRECT",
}


def small_file_rows(start: int, count: int, *, seed: int = 0) -> pa.Table:
    """Rows ``start .. start+count-1`` of the synthetic dataset (a pure function of index and seed).

    Columns: ``id`` (string key ``k000123``), ``ts`` (long, ordering field), ``c_int``, ``c_long``, ``c_double``,
    ``c_string`` (some nulls), ``c_date``, ``c_timestamp`` (UTC, microseconds), ``c_decimal`` (decimal(10,2)),
    ``c_bool`` (some nulls), ``region`` (``us``/``eu``/``apac``, the partition field when partitioned).
    """
    rows = []
    for n in range(start, start + count):
        rng = random.Random(f"{seed}:{n}")
        rows.append(
            {
                "id": f"k{n:06d}",
                "ts": 1_700_000_000_000 + n,
                "c_int": rng.randint(-100_000, 100_000),
                "c_long": rng.randint(-(2**40), 2**40),
                "c_double": round(rng.uniform(-1e6, 1e6), 4),
                "c_string": None if n % 11 == 5 else f"{rng.choice(_WORDS)}-{n}",
                "c_date": dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(0, 730)),
                "c_timestamp": _EPOCH_2024 + dt.timedelta(microseconds=rng.randint(0, 730 * 86_400 * 10**6)),
                "c_decimal": Decimal(rng.randint(-(10**8), 10**8)).scaleb(-2),
                "c_bool": None if n % 13 == 7 else rng.random() < 0.5,
                "region": REGIONS[n % len(REGIONS)],
            }
        )
    return pa.Table.from_pylist(rows, schema=SMALL_FILE_SCHEMA)


_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "ünïcode", "")
_EPOCH_2024 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
SMALL_FILE_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("ts", pa.int64()),
        ("c_int", pa.int32()),
        ("c_long", pa.int64()),
        ("c_double", pa.float64()),
        ("c_string", pa.string()),
        ("c_date", pa.date32()),
        ("c_timestamp", pa.timestamp("us", tz="UTC")),
        ("c_decimal", pa.decimal128(10, 2)),
        ("c_bool", pa.bool_()),
        ("region", pa.string()),
    ]
)


def make_small_file_table(
    spark,
    base_path,
    *,
    batches: int,
    rows_per_batch: int,
    table_version: int = 9,
    partitioned: bool = True,
    table_type: str = "COPY_ON_WRITE",
    seed: int = 0,
    metadata_enable: bool = False,
    extra_options: Mapping[str, str] | None = None,
) -> pa.Table:
    """Write ``batches`` separate ``insert`` commits of ``rows_per_batch`` new keys each, with small-file-limit 0,
    so the table ends with ``batches`` file groups per partition touched.  Returns every row written (data
    columns only, :data:`SMALL_FILE_SCHEMA`)."""
    written = []
    for batch in range(batches):
        rows = small_file_rows(batch * rows_per_batch, rows_per_batch, seed=seed)
        write_hudi_table(
            spark,
            base_path,
            rows,
            table_version=table_version,
            table_type=table_type,
            partition_field="region" if partitioned else "",
            operation="insert",
            small_file_limit=0,
            metadata_enable=metadata_enable,
            extra_options=extra_options,
        )
        written.append(rows)
    return pa.concat_tables(written) if written else SMALL_FILE_SCHEMA.empty_table()


def make_updates(rows: pa.Table, *, column: str = "c_string", tag: str = "upd", ts_bump: int = 1_000_000) -> pa.Table:
    """Copies of ``rows`` as updates: ``ts`` raised by ``ts_bump`` (so they win the ordering) and ``column`` set to
    ``"<tag>-<id>"``."""
    rows = rows.set_column(rows.schema.get_field_index("ts"), "ts", pc.add(rows["ts"], ts_bump))
    values = pa.array([f"{tag}-{key}" for key in rows["id"].to_pylist()], pa.string())
    return rows.set_column(rows.schema.get_field_index(column), column, values)


def hudi_upsert(spark, base_path, rows, *, index_type: str = "BLOOM", **write_options) -> CommitStats:
    """Upsert ``rows`` with Hudi's datasource (BLOOM index by default); returns the commit's write-stat totals.

    When the index found every key, ``num_inserts == 0`` and ``num_update_writes == len(rows)``
    (see :func:`assert_upsert_found_keys`)."""
    instant = write_hudi_table(spark, base_path, rows, operation="upsert", index_type=index_type, **write_options)
    return commit_stats(base_path, instant)


def assert_upsert_found_keys(
    spark, base_path, updates: pa.Table, stats: CommitStats, *, rows_before: int, column: str = "c_string", key: str = "id"
) -> pa.Table:
    """Prove Hudi's index located every updated key in its existing file group: the upsert commit inserted
    nothing and updated ``len(updates)`` records, the snapshot still has ``rows_before`` rows with no duplicate
    key, and every updated value is visible.  Returns the snapshot after the upsert."""
    n = updates.num_rows
    assert stats.num_inserts == 0 and stats.num_update_writes == n, (
        f"Hudi's index did not find all {n} existing keys: commit {stats.instant} ({stats.action}) has "
        f"numInserts={stats.num_inserts}, numUpdateWrites={stats.num_update_writes}"
    )
    after = read_hudi_snapshot(spark, base_path)
    assert after.num_rows == rows_before, f"row count changed by the upsert: {rows_before} -> {after.num_rows}"
    keys = after["_hoodie_record_key"].to_pylist()
    duplicates = sorted({k for k in keys if keys.count(k) > 1}) if len(set(keys)) != len(keys) else []
    assert not duplicates, f"duplicate keys after upsert: {duplicates[:10]}"
    seen = dict(zip(after[key].to_pylist(), after[column].to_pylist()))
    wrong = [(k, v, seen.get(k)) for k, v in zip(updates[key].to_pylist(), updates[column].to_pylist()) if seen.get(k) != v]
    assert not wrong, f"updated values not visible (key, expected, got): {wrong[:10]}"
    return after


# -------------------------------------------------------------------------------------------- reads

def _df_to_arrow(df) -> pa.Table:
    """Spark rows -> Arrow through Spark's own Arrow path (nested types included); timestamps arrive as
    ``timestamp[us, tz=UTC]`` whatever the session time zone."""
    if hasattr(df, "toArrow"):  # Spark 4
        return df.toArrow()
    from pyspark.sql.pandas.types import to_arrow_schema

    with warnings.catch_warnings():  # pyspark 3.5 still compares versions with distutils' LooseVersion
        warnings.simplefilter("ignore", DeprecationWarning)
        schema = to_arrow_schema(df.schema)
        batches = df._collect_as_arrow()
    return pa.Table.from_batches(batches, schema=schema) if batches else schema.empty_table()


def _sorted(table: pa.Table) -> pa.Table:
    keys = [(c, "ascending") for c in SORT_COLUMNS if c in table.column_names]
    if not keys or table.num_rows == 0:
        return table
    return table.take(pc.sort_indices(table, sort_keys=keys))


def use_s3a(spark, hadoop_options: Mapping[str, str]) -> None:
    """Point the session's Hadoop S3A connector at an S3 server (``fs.s3a.*`` keys); FileSystem caching off, so a
    later server on another port is not answered by a cached client."""
    if not all(jar.is_file() for jar in S3A_JARS):
        raise HudiBundleMissing(f"Hadoop S3A jars not found ({', '.join(map(str, S3A_JARS))}); run `make setup`")
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    for key, value in {**hadoop_options, "fs.s3a.impl.disable.cache": "true"}.items():
        conf.set(key, str(value))


def read_hudi_snapshot(spark, base_path, options: Mapping[str, str] | None = None) -> pa.Table:
    """Apache Hudi snapshot read (``spark.read.format("hudi")``), all columns incl. meta columns, as Arrow,
    ordered by partition path, record key, file name, sequence number."""
    reader = spark.read.format("hudi")
    for key, value in (options or {}).items():
        reader = reader.option(key, str(value))
    return _sorted(_df_to_arrow(reader.load(str(base_path))))


def read_hudi_incremental(
    spark, base_path, begin_instant: "str | Instant", end_instant: "str | Instant | None" = None, options=None
) -> pa.Table:
    """Apache Hudi incremental read (``hoodie.datasource.query.type=incremental``) as Arrow, in snapshot order.

    Hudi 1.1.1 semantics differ by table version (observed, see ``test_harness.py``):

    * **v6**: commits whose *instant* (requested) time is in ``(begin, end]``.
    * **v8/v9**: commits whose *completion* time is in ``(begin, end]``; passing a commit's requested time as
      ``begin`` therefore *includes* that commit (it completed later).

    Pass :class:`Instant` objects (from :func:`completed_instants`) to get "after commit X up to commit Y" on
    either version: the right time (requested for v6, completion for v8+) is picked here.
    """
    def pick(value):
        if isinstance(value, Instant):
            return value.completion_time or value.time
        return value

    opts = {
        "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.read.begin.instanttime": pick(begin_instant),
    }
    if end_instant is not None:
        opts["hoodie.datasource.read.end.instanttime"] = pick(end_instant)
    opts.update(options or {})
    return read_hudi_snapshot(spark, base_path, opts)


# --------------------------------------------------------------------------------------- clustering

class ClusteringInstant(NamedTuple):
    """One row of ``run_clustering`` / ``show_clustering``: a plain ``(instant, state, groups)`` tuple."""

    instant: str
    state: str  # REQUESTED | INFLIGHT | COMPLETED
    groups: int  # input groups in the plan


def _service_options(base_path) -> dict[str, str]:
    """Options a Hudi table service needs so it leaves the table as it is: same table version with
    auto-upgrade off (else a v6 table is upgraded to v9 by the service's write client) and the metadata table
    kept as it is (on or off), plus the local-run settings."""
    props = read_hoodie_properties(base_path)
    return {
        "hoodie.write.table.version": props.get("hoodie.table.version", "9"),
        "hoodie.write.auto.upgrade": "false",
        "hoodie.metadata.enable": str(_has_metadata_table(base_path)).lower(),
        **_LOCAL_OPTIONS,
    }


def _sql_string(value: str) -> str:
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"


def _run_clustering(spark, base_path, op: str, options=None, order=None, instants=None) -> list[ClusteringInstant]:
    opts = {**_service_options(base_path), **{k: str(v) for k, v in (options or {}).items()}}
    sort_key = "hoodie.clustering.plan.strategy.sort.columns"
    if sort_key in opts:  # the procedure's options string cannot carry commas; ``order`` can
        order = order or opts.pop(sort_key)
        opts.pop(sort_key, None)
    bad = [k for k, v in opts.items() if "," in v or "=" in k or "," in k]
    if bad:
        raise ValueError(f"run_clustering options cannot contain ',' (or '=' in keys): {bad}")
    args = [f"path => {_sql_string(base_path)}", f"op => {_sql_string(op)}"]
    if order:
        args.append(f"order => {_sql_string(order)}")
    if instants:
        args.append(f"instants => {_sql_string(','.join(instants))}")
    if opts:
        args.append("options => " + _sql_string(",".join(f"{k}={v}" for k, v in opts.items())))
    rows = spark.sql(f"CALL run_clustering({', '.join(args)})").collect()
    return [ClusteringInstant(r["timestamp"], r["state"], r["input_group_size"]) for r in rows]


def hudi_schedule_clustering(spark, base_path, options: Mapping[str, str] | None = None, *, order: str | None = None) -> str | None:
    """Schedule one clustering plan with Hudi's planner (``run_clustering`` op ``schedule``); returns its
    instant, or ``None`` when Hudi found nothing to cluster."""
    before = {i.time for i in _pending_clustering(base_path)}
    _run_clustering(spark, base_path, "schedule", options, order)
    new = sorted({i.time for i in _pending_clustering(base_path)} - before)
    return new[-1] if new else None


def hudi_execute_clustering(spark, base_path, instant: str | None = None, options: Mapping[str, str] | None = None) -> list[str]:
    """Execute pending clustering plans (``op => 'execute'``; only ``instant`` if given); returns the instants
    that completed."""
    pending = [i.time for i in _pending_clustering(base_path)]
    _run_clustering(spark, base_path, "execute", options, instants=[instant] if instant else None)
    done = {i.time for i in completed_instants(base_path, ("replacecommit",))}
    return [t for t in sorted(set(pending)) if t in done and (instant is None or t == instant)]


def hudi_schedule_and_execute(spark, base_path, options: Mapping[str, str] | None = None, *, order: str | None = None) -> list[str]:
    """``op => 'scheduleAndExecute'``: schedule a plan and run it (or, if nothing was scheduled, run every
    pending plan); returns the clustering instants that completed."""
    before = {i.time for i in completed_instants(base_path, ("replacecommit",))}
    _run_clustering(spark, base_path, "scheduleAndExecute", options, order)
    after = completed_instants(base_path, ("replacecommit",))
    return sorted(i.time for i in after if i.time not in before)


def hudi_show_clustering(spark, base_path, limit: int = 100) -> list[ClusteringInstant]:
    """``CALL show_clustering``: (instant, state, number of input groups) per clustering, newest first."""
    rows = spark.sql(f"CALL show_clustering(path => {_sql_string(base_path)}, limit => {int(limit)})").collect()
    return [ClusteringInstant(r["timestamp"], r["state"], r["input_group_size"]) for r in rows]


def _pending_clustering(base_path) -> list[Instant]:
    """Pending clustering instants on disk: ``clustering.requested/inflight`` (v8+) or a pending
    ``replacecommit`` (v6; may also be an insert_overwrite, which this harness never writes)."""
    version = int(read_hoodie_properties(base_path).get("hoodie.table.version", "9"))
    action = "replacecommit" if version < 8 else "clustering"
    completed = {i.time for i in completed_instants(base_path, ("replacecommit",))}
    return [i for i in timeline_files(base_path) if i.action == action and i.state != "COMPLETED" and i.time not in completed]
