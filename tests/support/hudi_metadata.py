"""Apache Hudi's own reader of a table's metadata table (``HoodieBackedTableMetadata``), what tests compare ours
with: its listing of a partition, its bloom filters."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator


@contextlib.contextmanager
def hudi_metadata(spark, base: str) -> Iterator[Any]:
    """Apache Hudi 1.1.1's metadata-table reader of the table at ``base`` (a JVM object), closed at the end."""
    jvm, jsc = spark._jvm, spark.sparkContext._jsc
    engine = jvm.org.apache.hudi.client.common.HoodieSparkEngineContext(jsc)
    conf = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(jsc.hadoopConfiguration())
    storage = jvm.org.apache.hudi.storage.HoodieStorageUtils.getStorage(base, conf)
    config = jvm.org.apache.hudi.common.config.HoodieMetadataConfig.newBuilder().enable(True).build()
    metadata = jvm.org.apache.hudi.metadata.HoodieBackedTableMetadata(engine, storage, config, base)
    try:
        yield metadata
    finally:
        metadata.close()


def hudi_listing(spark, base: str, partition: str) -> dict[str, int]:
    """Apache Hudi's metadata-table listing of ``partition`` (``getAllFilesInPartition``; "" for a table without
    partitions): name -> size."""
    with hudi_metadata(spark, base) as metadata:
        path = spark._jvm.org.apache.hudi.storage.StoragePath(f"{base}/{partition}" if partition else base)
        return {info.getPath().getName(): info.getLength() for info in metadata.getAllFilesInPartition(path)}
