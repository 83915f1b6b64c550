"""The simulation's second kind of table: MERGE_ON_READ with Apache Hudi's consistent-hashing bucket index, the
table of the ``duplicate`` update strategy (``SparkConsistentBucketDuplicateUpdateStrategy``).

Built once per process as the consistent-bucket plugin's tests build theirs, with the writers of the project
instead of Apache Hudi's (no Spark here): ``sim://lake/b``, version 9 with its metadata table, partitioned by
``region``, two buckets per partition; two upserts into the buckets' log files, a resize that rewrites each bucket
into a base file (a large ``max.file.size``: no split), and a third upsert, whose log files sit on those base
files. In a schedule the clustering runs resize with a small ``max.file.size`` (``OPTIONS``): a first resize splits
every bucket in two (up to four buckets per partition), a later one rewrites them.
"""

from __future__ import annotations

from hudi_cluster_core import javaprops
from hudi_cluster_core.io.storage import Storage
from hudi_cluster_core.table.properties import PROPERTIES_FILE

URI, TABLE = "sim://lake/b", "lake/b"
INDEX = {"hoodie.index.type": "BUCKET", "hoodie.index.bucket.engine": "CONSISTENT_HASHING",
         "hoodie.bucket.index.num.buckets": "2", "hoodie.bucket.index.min.num.buckets": "1",
         "hoodie.bucket.index.max.num.buckets": "4",
         "hoodie.clustering.plan.strategy.class": "consistent-bucket",
         "hoodie.clustering.execution.strategy.class": "consistent-bucket"}  # fmt: skip
# a bucket of one base file (a few hundred KB: the footer's bloom filter) is over split.threshold x this
OPTIONS = {**INDEX, "hoodie.parquet.max.file.size": str(100 << 10)}
SETUP_OPTIONS = {**INDEX, "hoodie.parquet.max.file.size": str(64 << 20)}  # nothing to split: every bucket rewritten


def build(clock, rows_of, heartbeat: dict[str, str]) -> None:
    """The initial bucket table (module docstring), on the simulated store installed now."""
    from hudi_cluster_core.api import cluster
    from hudi_cluster_core.writer import ingest
    from hudi_cluster_core.writer.append import create_table

    from .actors import registry
    from .metadata_setup import add_metadata_table
    from .runtime import InProcessSpark

    storage = Storage(URI)
    create_table(storage, rows_of(0).schema, table_name="simb", record_key="id", partition_field="region",
                 precombine_field="ts", table_version=9)  # fmt: skip
    path = storage.join(".hoodie", PROPERTIES_FILE)
    props = javaprops.parse(storage.read_bytes(path).decode("utf-8"))
    props["hoodie.table.type"] = "MERGE_ON_READ"
    storage.write_atomic(path, javaprops.dump(props).encode())
    add_metadata_table(storage, "simb")
    options = {**heartbeat, **SETUP_OPTIONS}
    for batch in range(3):
        clock.advance(1.0)
        if batch == 2:
            result = cluster(URI, "scheduleAndExecute", options, spark=InProcessSpark(), registry=registry())
            assert result.message == "completed", result
            clock.advance(1.0)
        ingest.upsert(URI, rows_of(batch), options, spark=InProcessSpark(), registry=registry())
