"""Apache Hudi's own metadata-table listing of a partition, what a test compares ours with."""

from __future__ import annotations


def hudi_listing(spark, base: str, partition: str) -> dict[str, int]:
    """Apache Hudi 1.1.1's metadata-table listing of ``partition`` (``HoodieBackedTableMetadata``
    ``.getAllFilesInPartition``; "" for a table without partitions): name -> size."""
    jvm, jsc = spark._jvm, spark.sparkContext._jsc
    engine = jvm.org.apache.hudi.client.common.HoodieSparkEngineContext(jsc)
    conf = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(jsc.hadoopConfiguration())
    storage = jvm.org.apache.hudi.storage.HoodieStorageUtils.getStorage(base, conf)
    config = jvm.org.apache.hudi.common.config.HoodieMetadataConfig.newBuilder().enable(True).build()
    metadata = jvm.org.apache.hudi.metadata.HoodieBackedTableMetadata(engine, storage, config, base)
    try:
        path = jvm.org.apache.hudi.storage.StoragePath(f"{base}/{partition}" if partition else base)
        return {info.getPath().getName(): info.getLength() for info in metadata.getAllFilesInPartition(path)}
    finally:
        metadata.close()
