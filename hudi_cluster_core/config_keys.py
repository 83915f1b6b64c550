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

import dataclasses
import re
import typing
from dataclasses import dataclass
from typing import Any, Callable, Literal

from . import keys
from .keys import (  # noqa: F401 - re-exported: the catalogue's historical home of these names
    CLUSTERING_PREFIX, LAYOUT_PREFIX, NAMESPACES, SINGLE_SPARK_JOB_CONSISTENT_HASHING_EXECUTION,
    SPARK_CONSISTENT_BUCKET_EXECUTION, SPARK_CONSISTENT_BUCKET_PLAN, SPARK_SIZE_BASED_PLAN,
    SPARK_SORT_AND_SIZE_EXECUTION, STRATEGY_PARAM_PREFIX,
)  # fmt: skip
from .layout import LAYOUT_SPELLINGS, Layout, parse_layout

# The accepted values of the enum keys, as the typed fields of ClusteringConfig / WriterSettings declare them.
PartitionFilterMode = Literal["NONE", "RECENT_DAYS", "SELECTED_PARTITIONS", "DAY_ROLLING"]
CurveBuildMethod = Literal["DIRECT", "SAMPLE"]
CompressionCodec = Literal["uncompressed", "snappy", "gzip", "lzo", "brotli", "lz4", "zstd", "lz4_raw"]
BloomFilterType = Literal["SIMPLE", "DYNAMIC_V0"]
MarkersType = Literal["DIRECT", "TIMELINE_SERVER_BASED"]
IndexType = Literal["INMEMORY", "BLOOM", "GLOBAL_BLOOM", "SIMPLE", "GLOBAL_SIMPLE", "BUCKET", "FLINK_STATE",
                    "RECORD_INDEX", "GLOBAL_RECORD_LEVEL_INDEX", "RECORD_LEVEL_INDEX"]  # fmt: skip
BucketEngine = Literal["SIMPLE", "CONSISTENT_HASHING"]

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
    spellings: dict[str, str] = dataclasses.field(default_factory=dict)  # enum: extra accepted spelling (lower case) -> canonical
    alternatives: tuple[str, ...] = ()  # older/alternative key names Hudi also reads (the main key wins)
    optional: bool = False  # no default: None when not set
    regex: bool = False  # str holding a (Java) regular expression
    parser: Callable[[str], str] | None = None  # enum: the canonical parser of its names (ValueError if unknown)

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
            if self.parser is not None:
                try:
                    return self.parser(text)
                except ValueError:
                    raise ValueError("not an accepted value") from None
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
    lo: float
    hi: float
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


def _enum(key: str, field_name: str, default: str | None, choices: Any, doc: str, spellings: dict[str, str] | None = None,
          **kw: Any) -> Key:
    """An enum key; ``choices`` is the Literal type of its canonical names."""
    return Key(key, field_name, "enum", default, doc, choices=typing.get_args(choices), spellings=spellings or {},
               **kw)  # fmt: skip


# HoodieClusteringConfig: every key Hudi 1.1.1 defines, in the clustering and layout-optimisation namespaces.
CLUSTERING_KEYS: tuple[Key, ...] = (
    Key(keys.INLINE, "inline", "bool", False, "Run clustering inline after each write.",
        alternatives=("hoodie.datasource.clustering.inline.enable",)),
    Key(keys.INLINE_MAX_COMMITS, "inline_max_commits", "int", 4, "Commits between inline clustering plans.", lo=0),
    Key(keys.ASYNC_ENABLED, "async_enabled", "bool", False, "Run clustering asynchronously with writes.",
        alternatives=("hoodie.datasource.clustering.async.enable",)),
    Key(keys.ASYNC_MAX_COMMITS, "async_max_commits", "int", 4, "Commits between async clustering runs.", lo=0),
    Key(keys.SCHEDULE_INLINE, "schedule_inline", "bool", False,
        "Writers schedule clustering inline; a separate job executes it."),
    Key(keys.PLAN_STRATEGY_CLASS, "plan_strategy_class", "str", SPARK_SIZE_BASED_PLAN,
        "Plan strategy (Hudi class name or plugin name); default depends on the index (consistent hashing)."),
    Key(keys.EXECUTION_STRATEGY_CLASS, "execution_strategy_class", "str", SPARK_SORT_AND_SIZE_EXECUTION,
        "Execution strategy (Hudi class name or plugin name); default depends on the index (consistent hashing)."),
    Key(keys.UPDATES_STRATEGY, "updates_strategy", "str",
        keys.SPARK_REJECT_UPDATE,
        "How writers treat updates to file groups in a pending clustering plan."),
    Key(keys.SMALL_FILE_LIMIT, "small_file_limit", "bytes", 300 * 1024 * 1024,
        "Files smaller than this many bytes are clustering candidates.", lo=0),
    Key(keys.MAX_BYTES_PER_GROUP, "max_bytes_per_group", "bytes", 2 * 1024**3,
        "Most bytes of input in one clustering group.", lo=1),
    Key(keys.MAX_NUM_GROUPS, "max_num_groups", "int", 30, "Most clustering groups in one plan.", lo=0),
    Key(keys.TARGET_FILE_MAX_BYTES, "target_file_max_bytes", "bytes", 1024**3,
        "Target size in bytes of each output file.", lo=1),
    Key(keys.SORT_COLUMNS, "sort_columns", "str", None, "Comma-separated columns to sort by when clustering.",
        optional=True),
    Key(keys.PARTITION_SELECTED, "partition_selected", "str", None, "Comma-separated partitions to cluster.",
        optional=True),
    Key(keys.PARTITION_REGEX_PATTERN, "partition_regex_pattern", "str", None,
        "Only partitions matching this regular expression are clustered.", optional=True, regex=True),
    _enum(keys.PARTITION_FILTER_MODE, "partition_filter_mode", "NONE", PartitionFilterMode,
          "Partition filter used when planning."),
    Key(keys.DAYBASED_LOOKBACK_PARTITIONS, "daybased_lookback_partitions", "int", 2,
        "RECENT_DAYS: number of (newest) partitions to consider; <= 0 means all."),
    Key(keys.DAYBASED_SKIP_FROM_LATEST_PARTITIONS, "skip_partitions_from_latest", "int", 0,
        "RECENT_DAYS: number of newest partitions to skip.", lo=0),
    Key(keys.CLUSTER_BEGIN_PARTITION, "cluster_begin_partition", "str", None,
        "SELECTED_PARTITIONS: first partition (inclusive).", optional=True),
    Key(keys.CLUSTER_END_PARTITION, "cluster_end_partition", "str", None,
        "SELECTED_PARTITIONS: last partition (inclusive).", optional=True),
    Key(keys.SINGLE_GROUP_CLUSTERING_ENABLED, "single_group_clustering_enabled", "bool", True,
        "Plan a group even when it holds a single file group."),
    Key(keys.GROUP_READ_PARALLELISM, "group_read_parallelism", "int", 20,
        "Most read tasks for one clustering group.", lo=1),
    Key(keys.MAX_PARALLELISM, "max_parallelism", "int", 15, "Most clustering groups executed at once.", lo=1),
    Key(keys.ROLLBACK_PENDING_ON_CONFLICT, "rollback_pending_on_conflict", "bool", False,
        "Writers roll back a pending clustering that conflicts with their update."),
    # 1.1.1 docs name it hoodie.clustering.plan.strategy.*; another upstream revision of the class names it
    # hoodie.file.stitching.*, read here as an alternative.
    Key(keys.BINARY_COPY_SCHEMA_EVOLUTION_ENABLE, "binary_copy_schema_evolution_enable", "bool", False,
        "Binary file stitching may group files with different but compatible schemas.",
        alternatives=("hoodie.file.stitching.binary.copy.schema.evolution.enable",)),
)

LAYOUT_KEYS: tuple[Key, ...] = (
    _enum(keys.LAYOUT_STRATEGY, "layout_optimize_strategy", "LINEAR", Layout,
          "Record ordering: lexicographic, Z-order curve or Hilbert curve.", spellings=dict(LAYOUT_SPELLINGS),
          parser=parse_layout),
    _enum(keys.LAYOUT_CURVE_BUILD_METHOD, "layout_curve_build_method", "DIRECT", CurveBuildMethod,
          "How space-filling curves are built (z-order/Hilbert only)."),
    Key(keys.LAYOUT_BUILD_CURVE_SAMPLE_SIZE, "layout_build_curve_sample_size", "int", 200000,
        "SAMPLE method: rows sampled to find range boundaries.", lo=1),
    Key(keys.LAYOUT_DATA_SKIPPING_ENABLE, "layout_data_skipping_enable", "bool", True,
        "Deprecated since 0.11.0; no effect."),
    Key(keys.LAYOUT_OPTIMIZE_ENABLE, "layout_optimize_enable", "bool", False, "Deprecated since 0.11.0; no effect."),
)

# Outside the clustering namespaces: what a clustering run needs from the writer, storage and index configs.
WRITER_KEYS: tuple[Key, ...] = (
    Key(keys.PARQUET_MAX_FILE_SIZE, "parquet_max_file_size", "bytes", 120 * 1024 * 1024,
        "Target size in bytes of parquet files; also the assumed size of a slice without a base file.", lo=1),
    Key(keys.PARQUET_SMALL_FILE_LIMIT, "parquet_small_file_limit", "bytes", 104857600,
        "Writers grow files below this size (<= 0 disables)."),
    _enum(keys.PARQUET_COMPRESSION_CODEC, "parquet_compression_codec", "gzip", CompressionCodec,
          "Parquet compression codec.", spellings={c: c for c in typing.get_args(CompressionCodec)}),
    Key(keys.PARQUET_BLOCK_SIZE, "parquet_block_size", "bytes", 120 * 1024 * 1024,
        "Parquet row group size in bytes.", lo=1),
    Key(keys.PARQUET_PAGE_SIZE, "parquet_page_size", "bytes", 1024 * 1024, "Parquet page size in bytes.", lo=1),
    Key(keys.PARQUET_BLOOM_FILTER_ENABLED, "parquet_bloom_filter_enabled", "bool", True,
        "Write the record-key bloom filter into parquet footers."),
    Key(keys.BLOOM_NUM_ENTRIES, "bloom_num_entries", "int", 60000,
        "Bloom filter entries (initial size of a dynamic filter).", lo=1),
    Key(keys.BLOOM_FPP, "bloom_fpp", "double", 0.000000001, "Bloom filter false-positive rate.",
        lo=0, hi=1, lo_open=True, hi_open=True),
    _enum(keys.BLOOM_FILTER_TYPE, "bloom_filter_type", "DYNAMIC_V0", BloomFilterType,
          "Bloom filter type."),
    Key(keys.BLOOM_DYNAMIC_MAX_ENTRIES, "bloom_dynamic_max_entries", "int", 100000,
        "Most keys in a dynamic bloom filter.", lo=1),
    Key(keys.HEARTBEAT_INTERVAL_MS, "heartbeat_interval_ms", "int", 60000,
        "How often a running clustering refreshes its heartbeat file .hoodie/.heartbeat/<instant>.", lo=1000),
    Key(keys.HEARTBEAT_TOLERABLE_MISSES, "heartbeat_tolerable_misses", "int", 2,
        "Missed heartbeats after which a pending clustering counts as abandoned.", lo=0),
    Key(keys.LOCK_WAIT_TIME_MS, "lock_wait_time_ms", "long", 60000,
        "Longest wait for the table's timeline lock before giving up.", lo=0),
    Key(keys.METADATA_ENABLE, "metadata_enable", "bool", True, "Keep the metadata table up to date."),
    _enum(keys.WRITE_MARKERS_TYPE, "write_markers_type", "TIMELINE_SERVER_BASED", MarkersType, "Marker type."),
    _enum(keys.INDEX_TYPE, "index_type", None, IndexType, "Index type (no default; Hudi uses SIMPLE on Spark).",
          optional=True),
    _enum(keys.INDEX_BUCKET_ENGINE, "index_bucket_engine", "SIMPLE", BucketEngine,
          "Bucket index engine."),
    Key(keys.BUCKET_NUM_BUCKETS, "bucket_num_buckets", "int", 256,
        "Buckets per partition (initial count for consistent hashing).", lo=1),
    Key(keys.BUCKET_MAX_NUM_BUCKETS, "bucket_max_num_buckets", "int", None,
        "Consistent hashing: most buckets per partition.", lo=1, optional=True),
    Key(keys.BUCKET_MIN_NUM_BUCKETS, "bucket_min_num_buckets", "int", None,
        "Consistent hashing: fewest buckets per partition.", lo=1, optional=True),
    Key(keys.BUCKET_SPLIT_THRESHOLD, "bucket_split_threshold", "double", 2.0,
        "Consistent hashing: split a bucket above max.file.size times this.", lo=0, lo_open=True),
    Key(keys.BUCKET_MERGE_THRESHOLD, "bucket_merge_threshold", "double", 0.2,
        "Consistent hashing: merge buckets below max.file.size times this.", lo=0),
    Key(keys.BUCKET_HASH_FIELD, "bucket_hash_field", "str", None,
        "Fields hashed to buckets (default: the record key fields).", optional=True),
)

ALL_KEYS: tuple[Key, ...] = CLUSTERING_KEYS + LAYOUT_KEYS + WRITER_KEYS
BY_KEY: dict[str, Key] = {k.key: k for k in ALL_KEYS}
BY_FIELD: dict[str, Key] = {k.field: k for k in ALL_KEYS}
BY_ALTERNATIVE: dict[str, Key] = {alt: k for k in ALL_KEYS for alt in k.alternatives}
assert len(BY_KEY) == len(BY_FIELD) == len(ALL_KEYS)


def in_namespace(key: str) -> bool:
    return key.startswith(NAMESPACES)
