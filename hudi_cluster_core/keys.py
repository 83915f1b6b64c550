"""Every Hudi configuration key the core and the plugins act on, as one set of constants.

Key names are Apache Hudi 1.1.1's (``HoodieClusteringConfig``, ``HoodieStorageConfig``, ``HoodieIndexConfig``,
``HoodieCompactionConfig``, ``HoodieWriteConfig``, ``HoodieMetadataConfig``; see
:mod:`hudi_cluster_core.config_keys` for defaults and accepted values). Read a key's typed value as an attribute
of :class:`hudi_cluster_core.config.ClusteringConfig` (``config.max_num_groups``); use these constants where the
Hudi name itself is needed: strategy params stored in a plan (``{SORT_COLUMNS: ...}``), ``task.settings`` (the
job's raw map) and messages.
"""

from __future__ import annotations

from typing import Final

CLUSTERING_PREFIX: Final = "hoodie.clustering."
LAYOUT_PREFIX: Final = "hoodie.layout.optimize."
STRATEGY_PARAM_PREFIX: Final = "hoodie.clustering.plan.strategy."  # Hudi: "any strategy specific params" live here
NAMESPACES: Final = (CLUSTERING_PREFIX, LAYOUT_PREFIX)

# -- hoodie.clustering.* ----------------------------------------------------------------------------------------
INLINE: Final = "hoodie.clustering.inline"
INLINE_MAX_COMMITS: Final = "hoodie.clustering.inline.max.commits"
ASYNC_ENABLED: Final = "hoodie.clustering.async.enabled"
ASYNC_MAX_COMMITS: Final = "hoodie.clustering.async.max.commits"
SCHEDULE_INLINE: Final = "hoodie.clustering.schedule.inline"
PLAN_STRATEGY_CLASS: Final = "hoodie.clustering.plan.strategy.class"
EXECUTION_STRATEGY_CLASS: Final = "hoodie.clustering.execution.strategy.class"
UPDATES_STRATEGY: Final = "hoodie.clustering.updates.strategy"
SMALL_FILE_LIMIT: Final = "hoodie.clustering.plan.strategy.small.file.limit"
MAX_BYTES_PER_GROUP: Final = "hoodie.clustering.plan.strategy.max.bytes.per.group"
MAX_NUM_GROUPS: Final = "hoodie.clustering.plan.strategy.max.num.groups"
TARGET_FILE_MAX_BYTES: Final = "hoodie.clustering.plan.strategy.target.file.max.bytes"
SORT_COLUMNS: Final = "hoodie.clustering.plan.strategy.sort.columns"
PARTITION_SELECTED: Final = "hoodie.clustering.plan.strategy.partition.selected"
PARTITION_REGEX_PATTERN: Final = "hoodie.clustering.plan.strategy.partition.regex.pattern"
PARTITION_FILTER_MODE: Final = "hoodie.clustering.plan.partition.filter.mode"
DAYBASED_LOOKBACK_PARTITIONS: Final = "hoodie.clustering.plan.strategy.daybased.lookback.partitions"
DAYBASED_SKIP_FROM_LATEST_PARTITIONS: Final = "hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions"
CLUSTER_BEGIN_PARTITION: Final = "hoodie.clustering.plan.strategy.cluster.begin.partition"
CLUSTER_END_PARTITION: Final = "hoodie.clustering.plan.strategy.cluster.end.partition"
SINGLE_GROUP_CLUSTERING_ENABLED: Final = "hoodie.clustering.plan.strategy.single.group.clustering.enabled"
GROUP_READ_PARALLELISM: Final = "hoodie.clustering.group.read.parallelism"
MAX_PARALLELISM: Final = "hoodie.clustering.max.parallelism"
ROLLBACK_PENDING_ON_CONFLICT: Final = "hoodie.clustering.rollback.pending.replacecommit.on.conflict"
BINARY_COPY_SCHEMA_EVOLUTION_ENABLE: Final = "hoodie.clustering.plan.strategy.binary.copy.schema.evolution.enable"

# -- hoodie.layout.optimize.* -----------------------------------------------------------------------------------
LAYOUT_STRATEGY: Final = "hoodie.layout.optimize.strategy"
LAYOUT_CURVE_BUILD_METHOD: Final = "hoodie.layout.optimize.curve.build.method"
LAYOUT_BUILD_CURVE_SAMPLE_SIZE: Final = "hoodie.layout.optimize.build.curve.sample.size"
LAYOUT_DATA_SKIPPING_ENABLE: Final = "hoodie.layout.optimize.data.skipping.enable"
LAYOUT_OPTIMIZE_ENABLE: Final = "hoodie.layout.optimize.enable"

# -- storage, index and writer keys a clustering run reads ------------------------------------------------------
PARQUET_MAX_FILE_SIZE: Final = "hoodie.parquet.max.file.size"
PARQUET_SMALL_FILE_LIMIT: Final = "hoodie.parquet.small.file.limit"
PARQUET_COMPRESSION_CODEC: Final = "hoodie.parquet.compression.codec"
PARQUET_BLOCK_SIZE: Final = "hoodie.parquet.block.size"
PARQUET_PAGE_SIZE: Final = "hoodie.parquet.page.size"
PARQUET_BLOOM_FILTER_ENABLED: Final = "hoodie.parquet.bloom.filter.enabled"
BLOOM_NUM_ENTRIES: Final = "hoodie.index.bloom.num_entries"
BLOOM_FPP: Final = "hoodie.index.bloom.fpp"
BLOOM_FILTER_TYPE: Final = "hoodie.bloom.index.filter.type"
BLOOM_DYNAMIC_MAX_ENTRIES: Final = "hoodie.bloom.index.filter.dynamic.max.entries"
HEARTBEAT_INTERVAL_MS: Final = "hoodie.client.heartbeat.interval_in_ms"
HEARTBEAT_TOLERABLE_MISSES: Final = "hoodie.client.heartbeat.tolerable.misses"
LOCK_WAIT_TIME_MS: Final = "hoodie.write.lock.wait_time_ms"
METADATA_ENABLE: Final = "hoodie.metadata.enable"
WRITE_MARKERS_TYPE: Final = "hoodie.write.markers.type"
INDEX_TYPE: Final = "hoodie.index.type"
INDEX_BUCKET_ENGINE: Final = "hoodie.index.bucket.engine"
BUCKET_NUM_BUCKETS: Final = "hoodie.bucket.index.num.buckets"
BUCKET_MAX_NUM_BUCKETS: Final = "hoodie.bucket.index.max.num.buckets"
BUCKET_MIN_NUM_BUCKETS: Final = "hoodie.bucket.index.min.num.buckets"
BUCKET_SPLIT_THRESHOLD: Final = "hoodie.bucket.index.split.threshold"
BUCKET_MERGE_THRESHOLD: Final = "hoodie.bucket.index.merge.threshold"
BUCKET_HASH_FIELD: Final = "hoodie.bucket.index.hash.field"

# -- Hudi's strategy class names (values of the *.class keys) ---------------------------------------------------
_PLAN = "org.apache.hudi.client.clustering.plan.strategy."
_RUN = "org.apache.hudi.client.clustering.run.strategy."
_UPDATE = "org.apache.hudi.client.clustering.update.strategy."
SPARK_SIZE_BASED_PLAN: Final = _PLAN + "SparkSizeBasedClusteringPlanStrategy"
SPARK_SORT_AND_SIZE_EXECUTION: Final = _RUN + "SparkSortAndSizeExecutionStrategy"
SPARK_CONSISTENT_BUCKET_PLAN: Final = _PLAN + "SparkConsistentBucketClusteringPlanStrategy"
SPARK_CONSISTENT_BUCKET_EXECUTION: Final = _RUN + "SparkConsistentBucketClusteringExecutionStrategy"
SINGLE_SPARK_JOB_CONSISTENT_HASHING_EXECUTION: Final = _RUN + "SingleSparkJobConsistentHashingExecutionStrategy"
SPARK_REJECT_UPDATE: Final = _UPDATE + "SparkRejectUpdateStrategy"
