"""The catalogue of Hudi keys :mod:`hudi_cluster_core.config` models: name, default, unit, accepted values.

Facts (key names, defaults, units, accepted values, alternative keys) are those of Apache Hudi 1.1.1, taken from
the 1.1.1 configuration reference (``apache/hudi: website/versioned_docs/version-1.1.1/configurations.md``, sections
"Clustering Configs", "Storage Configs", "Metadata Configs", "Index Configs", "Write Configurations") and from the
config classes it is generated from:

- ``hudi-client/hudi-client-common/src/main/java/org/apache/hudi/config/HoodieClusteringConfig.java``
- ``hudi-common/src/main/java/org/apache/hudi/common/config/HoodieStorageConfig.java``
- ``hudi-client/hudi-client-common/src/main/java/org/apache/hudi/config/HoodieIndexConfig.java``
- ``hudi-client/hudi-client-common/src/main/java/org/apache/hudi/config/HoodieCompactionConfig.java``
  (``hoodie.parquet.small.file.limit``), ``HoodieWriteConfig.java`` (``hoodie.write.markers.type``),
  ``hudi-common/.../HoodieMetadataConfig.java`` (``hoodie.metadata.enable``).

Values are parsed as Hudi parses them: ``Integer.parseInt`` / ``Long.parseLong`` (plain digits, optional sign, no
units, no ``_``), booleans ``true``/``false`` in any case (Hudi's ``Boolean.parseBoolean`` silently reads anything
else as false; here anything else is an error), enums by name in any case. Ranges are this project's: they reject
values Hudi would fail on later (``Stream.limit(-1)``) or that make no sense (a 0-byte target file).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

CLUSTERING_PREFIX = "hoodie.clustering."
LAYOUT_PREFIX = "hoodie.layout.optimize."
STRATEGY_PARAM_PREFIX = "hoodie.clustering.plan.strategy."  # Hudi: "any strategy specific params" live here
NAMESPACES = (CLUSTERING_PREFIX, LAYOUT_PREFIX)

_PLAN = "org.apache.hudi.client.clustering.plan.strategy."
_RUN = "org.apache.hudi.client.clustering.run.strategy."
SPARK_SIZE_BASED_PLAN = _PLAN + "SparkSizeBasedClusteringPlanStrategy"
SPARK_SORT_AND_SIZE_EXECUTION = _RUN + "SparkSortAndSizeExecutionStrategy"
SPARK_CONSISTENT_BUCKET_PLAN = _PLAN + "SparkConsistentBucketClusteringPlanStrategy"
SPARK_CONSISTENT_BUCKET_EXECUTION = _RUN + "SparkConsistentBucketClusteringExecutionStrategy"
SINGLE_SPARK_JOB_CONSISTENT_HASHING_EXECUTION = _RUN + "SingleSparkJobConsistentHashingExecutionStrategy"

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
_JAVA_INT = re.compile(r"[+-]?[0-9]+")
_JAVA_DOUBLE = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[dDfF]?")

# Keys Hudi once had in these namespaces but 1.1 no longer defines: accepted (kept in ``extra``) with a warning.
REMOVED_KEYS = {
    "hoodie.clustering.preserve.commit.metadata": "removed from Hudi after 0.13 (HUDI-5782); clustering always "
    "preserves commit metadata, so this key has no effect",
}


@dataclass(frozen=True)
class Key:
    """One Hudi key; ``kind``: bool | int (Java int) | long | bytes (a long, in bytes) | double | str | enum."""

    key: str
    field: str
    kind: str
    default: Any
    doc: str
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False  # lower bound exclusive (doubles)
    hi_open: bool = False
    choices: tuple[str, ...] = ()  # enum: canonical spellings
    spellings: dict[str, str] = field(default_factory=dict)  # enum: extra accepted spelling (lower case) -> canonical
    alternatives: tuple[str, ...] = ()  # older/alternative key names Hudi also reads (the main key wins)
    optional: bool = False  # no default: None when not set
    regex: bool = False  # str holding a (Java) regular expression

    def accepted(self) -> str:
        """What this key accepts, for error messages."""
        if self.kind == "bool":
            return "true or false (any case)"
        if self.kind == "enum":
            lower = {c.lower() for c in self.choices}
            extra = sorted(s for s in self.spellings if s not in lower)
            return ", ".join(self.choices) + (f" (any case; also {', '.join(extra)})" if extra else " (any case)")
        if self.kind == "str":
            return "a Java regular expression" if self.regex else "any text" if self.optional else "non-empty text"
        noun = {"int": "an integer", "long": "an integer", "bytes": "a whole number of bytes", "double": "a number"}
        lo, hi = _bounds(self)
        text = f"{noun[self.kind]} {_range_text(self, lo, hi)}"
        return text + (" (plain bytes, no units)" if self.kind == "bytes" else "")

    def parse(self, value: Any) -> Any:
        """``value`` (a properties string, or a Python value from overrides) as this key's Python value.

        Raises ValueError whose text is the problem; the caller adds the key, the value and :meth:`accepted`.
        """
        if value is None:
            if self.optional:
                return None
            raise ValueError("no value")
        if self.kind == "bool":
            return _parse_bool(value)
        if self.kind in ("int", "long", "bytes", "double"):
            try:
                number = _parse_number(value, self.kind == "double")
            except ValueError as exc:
                raise ValueError(f"{exc} of bytes" if self.kind == "bytes" else str(exc)) from None
            lo, hi = _bounds(self)
            below = number <= lo if self.lo_open else number < lo
            above = number >= hi if self.hi_open else number > hi
            if below or above or number != number:  # NaN
                raise ValueError("out of range")
            return number
        text = str(value).strip()
        if self.kind == "enum":
            canonical = self.spellings.get(text.lower()) or (text.upper() if text.upper() in self.choices else None)
            if canonical is None:
                raise ValueError("not an accepted value")
            return canonical
        if text == "":
            if self.optional:
                return None
            raise ValueError("empty")
        if self.regex:
            try:
                re.compile(text)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression ({exc})") from None
        return text

    def to_hoodie(self, value: Any) -> str:
        """The Python value as the string Hudi reads back to the same value."""
        if isinstance(value, bool):
            return "true" if value else "false"
        return repr(value) if isinstance(value, float) else str(value)


def _bounds(spec: Key) -> tuple[float, float]:
    lo, hi = (INT_MIN, INT_MAX) if spec.kind == "int" else (LONG_MIN, LONG_MAX)
    if spec.kind == "double":
        lo, hi = float("-inf"), float("inf")
    return (lo if spec.lo is None else spec.lo), (hi if spec.hi is None else spec.hi)


def _range_text(spec: Key, lo: float, hi: float) -> str:
    if spec.kind == "double":
        left = f"> {lo:g}" if spec.lo_open else f">= {lo:g}"
        right = f"< {hi:g}" if spec.hi_open else f"<= {hi:g}"
        parts = [p for p, bound in ((left, lo), (right, hi)) if bound not in (float("inf"), float("-inf"))]
        return " and ".join(parts) if parts else ""
    return f"from {int(lo)} to {int(hi)}"


def _parse_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if isinstance(value, str) else None
    if text not in ("true", "false"):
        raise ValueError("not a boolean")
    return text == "true"


def _parse_number(value: Any, is_double: bool) -> int | float:
    if isinstance(value, bool):
        raise ValueError("not a number")
    if isinstance(value, int):
        return float(value) if is_double else value
    if isinstance(value, float):
        if is_double:
            return value
        raise ValueError("not a whole number")
    text = str(value).strip()
    if is_double:
        if not _JAVA_DOUBLE.fullmatch(text):
            raise ValueError("not a number")
        return float(text.rstrip("dDfF"))
    if not _JAVA_INT.fullmatch(text):
        raise ValueError("not a whole number")
    return int(text)


def _enum(key, field_name, default, choices, doc, spellings=None, **kw) -> Key:
    return Key(key, field_name, "enum", default, doc, choices=tuple(choices), spellings=spellings or {}, **kw)


_C, _S = CLUSTERING_PREFIX, STRATEGY_PARAM_PREFIX
_L = LAYOUT_PREFIX

# HoodieClusteringConfig: every key Hudi 1.1.1 defines, in the clustering and layout-optimisation namespaces.
CLUSTERING_KEYS: tuple[Key, ...] = (
    Key(_C + "inline", "inline", "bool", False, "Run clustering inline after each write.",
        alternatives=("hoodie.datasource.clustering.inline.enable",)),
    Key(_C + "inline.max.commits", "inline_max_commits", "int", 4, "Commits between inline clustering plans.", lo=0),
    Key(_C + "async.enabled", "async_enabled", "bool", False, "Run clustering asynchronously with writes.",
        alternatives=("hoodie.datasource.clustering.async.enable",)),
    Key(_C + "async.max.commits", "async_max_commits", "int", 4, "Commits between async clustering runs.", lo=0),
    Key(_C + "schedule.inline", "schedule_inline", "bool", False,
        "Writers schedule clustering inline; a separate job executes it."),
    Key(_S + "class", "plan_strategy_class", "str", SPARK_SIZE_BASED_PLAN,
        "Plan strategy (Hudi class name or plugin name); default depends on the index (consistent hashing)."),
    Key(_C + "execution.strategy.class", "execution_strategy_class", "str", SPARK_SORT_AND_SIZE_EXECUTION,
        "Execution strategy (Hudi class name or plugin name); default depends on the index (consistent hashing)."),
    Key(_C + "updates.strategy", "updates_strategy", "str",
        "org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy",
        "How writers treat updates to file groups in a pending clustering plan."),
    Key(_S + "small.file.limit", "small_file_limit", "bytes", 300 * 1024 * 1024,
        "Files smaller than this many bytes are clustering candidates.", lo=0),
    Key(_S + "max.bytes.per.group", "max_bytes_per_group", "bytes", 2 * 1024**3,
        "Most bytes of input in one clustering group.", lo=1),
    Key(_S + "max.num.groups", "max_num_groups", "int", 30, "Most clustering groups in one plan.", lo=0),
    Key(_S + "target.file.max.bytes", "target_file_max_bytes", "bytes", 1024**3,
        "Target size in bytes of each output file.", lo=1),
    Key(_S + "sort.columns", "sort_columns", "str", None, "Comma-separated columns to sort by when clustering.",
        optional=True),
    Key(_S + "partition.selected", "partition_selected", "str", None, "Comma-separated partitions to cluster.",
        optional=True),
    Key(_S + "partition.regex.pattern", "partition_regex_pattern", "str", None,
        "Only partitions matching this regular expression are clustered.", optional=True, regex=True),
    _enum("hoodie.clustering.plan.partition.filter.mode", "partition_filter_mode", "NONE",
          ("NONE", "RECENT_DAYS", "SELECTED_PARTITIONS", "DAY_ROLLING"), "Partition filter used when planning."),
    Key(_S + "daybased.lookback.partitions", "daybased_lookback_partitions", "int", 2,
        "RECENT_DAYS: number of (newest) partitions to consider; <= 0 means all."),
    Key(_S + "daybased.skipfromlatest.partitions", "skip_partitions_from_latest", "int", 0,
        "RECENT_DAYS: number of newest partitions to skip.", lo=0),
    Key(_S + "cluster.begin.partition", "cluster_begin_partition", "str", None,
        "SELECTED_PARTITIONS: first partition (inclusive).", optional=True),
    Key(_S + "cluster.end.partition", "cluster_end_partition", "str", None,
        "SELECTED_PARTITIONS: last partition (inclusive).", optional=True),
    Key(_S + "single.group.clustering.enabled", "single_group_clustering_enabled", "bool", True,
        "Plan a group even when it holds a single file group."),
    Key(_C + "group.read.parallelism", "group_read_parallelism", "int", 20,
        "Most read tasks for one clustering group.", lo=1),
    Key(_C + "max.parallelism", "max_parallelism", "int", 15, "Most clustering groups executed at once.", lo=1),
    Key(_C + "rollback.pending.replacecommit.on.conflict", "rollback_pending_on_conflict", "bool", False,
        "Writers roll back a pending clustering that conflicts with their update."),
    # 1.1.1 docs name it hoodie.clustering.plan.strategy.*; another upstream revision of the class names it
    # hoodie.file.stitching.*, read here as an alternative.
    Key(_S + "binary.copy.schema.evolution.enable", "binary_copy_schema_evolution_enable", "bool", False,
        "Binary file stitching may group files with different but compatible schemas.",
        alternatives=("hoodie.file.stitching.binary.copy.schema.evolution.enable",)),
)

LAYOUT_KEYS: tuple[Key, ...] = (
    _enum(_L + "strategy", "layout_optimize_strategy", "LINEAR", ("LINEAR", "ZORDER", "HILBERT"),
          "Record ordering: lexicographic, Z-order curve or Hilbert curve.", spellings={"z-order": "ZORDER"}),
    _enum(_L + "curve.build.method", "layout_curve_build_method", "DIRECT", ("DIRECT", "SAMPLE"),
          "How space-filling curves are built (z-order/Hilbert only)."),
    Key(_L + "build.curve.sample.size", "layout_build_curve_sample_size", "int", 200000,
        "SAMPLE method: rows sampled to find range boundaries.", lo=1),
    Key(_L + "data.skipping.enable", "layout_data_skipping_enable", "bool", True,
        "Deprecated since 0.11.0; no effect."),
    Key(_L + "enable", "layout_optimize_enable", "bool", False, "Deprecated since 0.11.0; no effect."),
)

# Outside the clustering namespaces: what a clustering run needs from the writer, storage and index configs.
WRITER_KEYS: tuple[Key, ...] = (
    Key("hoodie.parquet.max.file.size", "parquet_max_file_size", "bytes", 120 * 1024 * 1024,
        "Target size in bytes of parquet files; also the assumed size of a slice without a base file.", lo=1),
    Key("hoodie.parquet.small.file.limit", "parquet_small_file_limit", "bytes", 104857600,
        "Writers grow files below this size (<= 0 disables)."),
    _enum("hoodie.parquet.compression.codec", "parquet_compression_codec", "gzip",
          ("uncompressed", "snappy", "gzip", "lzo", "brotli", "lz4", "zstd", "lz4_raw"),
          "Parquet compression codec.", spellings={c: c for c in
          ("uncompressed", "snappy", "gzip", "lzo", "brotli", "lz4", "zstd", "lz4_raw")}),
    Key("hoodie.parquet.block.size", "parquet_block_size", "bytes", 120 * 1024 * 1024,
        "Parquet row group size in bytes.", lo=1),
    Key("hoodie.parquet.page.size", "parquet_page_size", "bytes", 1024 * 1024, "Parquet page size in bytes.", lo=1),
    Key("hoodie.parquet.bloom.filter.enabled", "parquet_bloom_filter_enabled", "bool", True,
        "Write the record-key bloom filter into parquet footers."),
    Key("hoodie.index.bloom.num_entries", "bloom_num_entries", "int", 60000,
        "Bloom filter entries (initial size of a dynamic filter).", lo=1),
    Key("hoodie.index.bloom.fpp", "bloom_fpp", "double", 0.000000001, "Bloom filter false-positive rate.",
        lo=0, hi=1, lo_open=True, hi_open=True),
    _enum("hoodie.bloom.index.filter.type", "bloom_filter_type", "DYNAMIC_V0", ("SIMPLE", "DYNAMIC_V0"),
          "Bloom filter type."),
    Key("hoodie.bloom.index.filter.dynamic.max.entries", "bloom_dynamic_max_entries", "int", 100000,
        "Most keys in a dynamic bloom filter.", lo=1),
    Key("hoodie.client.heartbeat.interval_in_ms", "heartbeat_interval_ms", "int", 60000,
        "How often a running clustering refreshes its heartbeat file .hoodie/.heartbeat/<instant>.", lo=1000),
    Key("hoodie.client.heartbeat.tolerable.misses", "heartbeat_tolerable_misses", "int", 2,
        "Missed heartbeats after which a pending clustering counts as abandoned.", lo=0),
    Key("hoodie.write.lock.wait_time_ms", "lock_wait_time_ms", "long", 60000,
        "Longest wait for the table's timeline lock before giving up.", lo=0),
    Key("hoodie.metadata.enable", "metadata_enable", "bool", True, "Keep the metadata table up to date."),
    _enum("hoodie.write.markers.type", "write_markers_type", "TIMELINE_SERVER_BASED",
          ("DIRECT", "TIMELINE_SERVER_BASED"), "Marker type."),
    _enum("hoodie.index.type", "index_type", None,
          ("INMEMORY", "BLOOM", "GLOBAL_BLOOM", "SIMPLE", "GLOBAL_SIMPLE", "BUCKET", "FLINK_STATE", "RECORD_INDEX",
           "GLOBAL_RECORD_LEVEL_INDEX", "RECORD_LEVEL_INDEX"),
          "Index type (no default; Hudi uses SIMPLE on Spark).", optional=True),
    _enum("hoodie.index.bucket.engine", "index_bucket_engine", "SIMPLE", ("SIMPLE", "CONSISTENT_HASHING"),
          "Bucket index engine."),
    Key("hoodie.bucket.index.num.buckets", "bucket_num_buckets", "int", 256,
        "Buckets per partition (initial count for consistent hashing).", lo=1),
    Key("hoodie.bucket.index.max.num.buckets", "bucket_max_num_buckets", "int", None,
        "Consistent hashing: most buckets per partition.", lo=1, optional=True),
    Key("hoodie.bucket.index.min.num.buckets", "bucket_min_num_buckets", "int", None,
        "Consistent hashing: fewest buckets per partition.", lo=1, optional=True),
    Key("hoodie.bucket.index.split.threshold", "bucket_split_threshold", "double", 2.0,
        "Consistent hashing: split a bucket above max.file.size times this.", lo=0, lo_open=True),
    Key("hoodie.bucket.index.merge.threshold", "bucket_merge_threshold", "double", 0.2,
        "Consistent hashing: merge buckets below max.file.size times this.", lo=0),
    Key("hoodie.bucket.index.hash.field", "bucket_hash_field", "str", None,
        "Fields hashed to buckets (default: the record key fields).", optional=True),
)

ALL_KEYS: tuple[Key, ...] = CLUSTERING_KEYS + LAYOUT_KEYS + WRITER_KEYS
BY_KEY: dict[str, Key] = {k.key: k for k in ALL_KEYS}
BY_FIELD: dict[str, Key] = {k.field: k for k in ALL_KEYS}
BY_ALTERNATIVE: dict[str, Key] = {alt: k for k in ALL_KEYS for alt in k.alternatives}
assert len(BY_KEY) == len(BY_FIELD) == len(ALL_KEYS)


def in_namespace(key: str) -> bool:
    return key.startswith(NAMESPACES)
