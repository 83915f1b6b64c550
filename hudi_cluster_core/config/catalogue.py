"""The configuration catalogue: every key hudi-cluster reads, each written once.

An entry holds a key's name, the older names Apache Hudi also reads (aliases), its type, its default, one line of
doc and the values it accepts. Everything else is built from the entries:

- the typed :class:`~hudi_cluster_core.config.ClusteringConfig` (:mod:`.clustering_config`): one field per entry,
  whose default, alias and description come from here;
- the validation of :func:`~hudi_cluster_core.config.load_config`, in one style: :meth:`Key.parse` reads a value
  as Hudi reads it, and :meth:`Key.problem` is the one line naming the key, the value and what is accepted;
- the configuration table of ``docs/configuration.md`` (:mod:`.docs`; ``make docs``);
- :func:`describe`: the entries as plain data, for ``hudi-cluster plugins --json``.

A key's name is the constant this module defines for it (``catalogue.SORT_COLUMNS``; plugins see this module as
``sdk.keys``): use it where the name itself is needed, e.g. in the strategy params stored in a plan or in
messages. Read a key's typed value as an attribute of ``ClusteringConfig`` (``config.max_num_groups``), or with
:func:`read` from a raw map of strings (a task's ``settings``).

Facts about Hudi's keys (names, defaults, units, accepted values, alternative names) are those of Apache Hudi
1.1.1, from the 1.1.1 configuration reference (``apache/hudi: website/versioned_docs/version-1.1.1/
configurations.md``, sections "Clustering Configs", "Storage Configs", "Metadata Configs", "Index Configs",
"Write Configurations") and the config classes it is generated from:

- ``hudi-client/hudi-client-common/src/main/java/org/apache/hudi/config/HoodieClusteringConfig.java``
- ``hudi-common/src/main/java/org/apache/hudi/common/config/HoodieStorageConfig.java``
- ``hudi-client/hudi-client-common/src/main/java/org/apache/hudi/config/HoodieIndexConfig.java``
- ``hudi-client/hudi-client-common/src/main/java/org/apache/hudi/config/HoodieCompactionConfig.java``
  (``hoodie.parquet.small.file.limit``), ``HoodieWriteConfig.java`` (``hoodie.write.markers.type``),
  ``hudi-common/.../HoodieMetadataConfig.java`` (``hoodie.metadata.enable``).

Values are parsed as Hudi parses them: ``Integer.parseInt`` / ``Long.parseLong`` (plain digits, optional sign, no
units, no ``_``), booleans ``true``/``false`` in any case (Hudi's ``Boolean.parseBoolean`` silently reads anything
else as false; here anything else is an error), enums by name in any case, column lists split at ``,`` and
trimmed (``String.split``, which drops trailing empty names). Ranges are this project's: they reject values Hudi
would fail on later (``Stream.limit(-1)``, a sort column named ``""``) or that make no sense (a 0-byte file).
"""

from __future__ import annotations

import dataclasses
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, Final, Literal

from ..errors import ConfigError
from ..layout import LAYOUT_SPELLINGS, Layout, parse_layout

Kind = Literal["bool", "int", "long", "bytes", "double", "str", "enum", "columns"]

# The accepted values of the enum keys, as the typed fields of ClusteringConfig and its parts declare them.
PartitionFilterMode = Literal["NONE", "RECENT_DAYS", "SELECTED_PARTITIONS", "DAY_ROLLING"]
CurveBuildMethod = Literal["DIRECT", "SAMPLE"]
CompressionCodec = Literal["uncompressed", "snappy", "gzip", "lzo", "brotli", "lz4", "zstd", "lz4_raw"]
BloomFilterType = Literal["SIMPLE", "DYNAMIC_V0"]
MarkersType = Literal["DIRECT", "TIMELINE_SERVER_BASED"]
IndexType = Literal["INMEMORY", "BLOOM", "GLOBAL_BLOOM", "SIMPLE", "GLOBAL_SIMPLE", "BUCKET", "FLINK_STATE",
                    "RECORD_INDEX", "GLOBAL_RECORD_LEVEL_INDEX", "RECORD_LEVEL_INDEX"]  # fmt: skip
BucketEngine = Literal["SIMPLE", "CONSISTENT_HASHING"]
VerifyLevel = Literal["true", "full", "false"]

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
_JAVA_INT = re.compile(r"[+-]?[0-9]+")
_JAVA_DOUBLE = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[dDfF]?")

CLUSTERING_PREFIX: Final = "hoodie.clustering."
LAYOUT_PREFIX: Final = "hoodie.layout.optimize."
STRATEGY_PARAM_PREFIX: Final = "hoodie.clustering.plan.strategy."  # Hudi: "any strategy specific params" live here
NAMESPACES: Final = (CLUSTERING_PREFIX, LAYOUT_PREFIX)  # an unknown key in these is an error

# Keys Hudi once had in these namespaces but 1.1 no longer defines: accepted (kept in ``extra``) with a warning.
REMOVED_KEYS: Final[Mapping[str, str]] = {
    "hoodie.clustering.preserve.commit.metadata": "removed from Hudi after 0.13 (HUDI-5782); clustering always "
    "preserves commit metadata, so this key has no effect",
}

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


# ------------------------------------------------------------------------------------------------ an entry


@dataclass(frozen=True)
class Key:
    """One key: its name, aliases, type (``kind``), default, doc and what it accepts.

    ``kind``: bool | int (Java int) | long | bytes (a long, in bytes) | double | str | enum | columns (a
    comma-separated list of column names, kept as the text given)."""

    key: str
    field: str  # the typed field holding its value (ClusteringConfig, or its writer / task part)
    kind: Kind
    default: Any
    doc: str
    section: str = ""  # the name of the Section declaring it
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False  # lower bound exclusive (doubles)
    hi_open: bool = False
    choices: tuple[str, ...] = ()  # enum: canonical spellings (matched in any case)
    spellings: Mapping[str, str] = dataclasses.field(default_factory=dict)  # enum: more spellings (lower) -> canonical
    aliases: tuple[str, ...] = ()  # older/alternative names Hudi also reads (the main key wins, then in order)
    optional: bool = False  # no default: None when not set (or set to blank text)
    regex: bool = False  # str holding a (Java) regular expression
    parser: Callable[[str], str] | None = None  # enum: the one parser of its names (ValueError when unknown)

    @property
    def python_type(self) -> Any:
        """The type of its typed field (``Optional`` of it when the key has no default)."""
        base: Any = {"bool": bool, "double": float, "str": str, "columns": str}.get(self.kind, int)
        if self.kind == "enum":
            base = Literal[self.choices]
        return base | None if self.optional else base

    def accepted(self) -> str:
        """What this key accepts, for error messages and the docs."""
        if self.kind == "bool":
            return "true or false (any case)"
        if self.kind == "enum":
            lower = {c.lower() for c in self.choices}
            extra = sorted(s for s in self.spellings if s not in lower)
            return ", ".join(self.choices) + (f" (any case; also {', '.join(extra)})" if extra else " (any case)")
        if self.kind == "columns":
            return "column names separated by commas, none empty"
        if self.kind == "str":
            return "a Java regular expression" if self.regex else "any text" if self.optional else "non-empty text"
        noun = {"int": "an integer", "long": "an integer", "bytes": "a whole number of bytes", "double": "a number"}
        lo, hi = _bounds(self)
        text = f"{noun[self.kind]} {_range_text(self, lo, hi)}"
        return text + (" (plain bytes, no units)" if self.kind == "bytes" else "")

    def parse(self, value: Any) -> Any:
        """``value`` (a properties string, or a Python value from overrides) as this key's Python value.

        Raises ValueError whose text is the problem; :meth:`problem` adds the key, the value and :meth:`accepted`.
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
            return self._parse_enum(text)
        if text == "":
            if self.optional:
                return None
            raise ValueError("empty")
        if self.kind == "columns":
            column_names(text)
        if self.regex:
            try:
                re.compile(text)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression ({exc})") from None
        return text

    def _parse_enum(self, text: str) -> str:
        if self.parser is not None:
            try:
                return self.parser(text)
            except ValueError:
                raise ValueError("not an accepted value") from None
        by_lower = {**{c.lower(): c for c in self.choices}, **self.spellings}
        canonical = by_lower.get(text.lower())
        if canonical is None:
            raise ValueError("not an accepted value")
        return canonical

    def problem(self, value: Any, reason: object, *, given_as: str | None = None, source: str | None = None) -> str:
        """The one line reporting a bad value: the key as given (``given_as``: an alias), the value, where it came
        from, the reason and what is accepted."""
        where = f" ({source})" if source else ""
        return f"{given_as or self.key}={value!r}{where}: {reason}; accepted: {self.accepted()}"

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


def column_names(text: str) -> tuple[str, ...]:
    """The names of a comma-separated column list, trimmed, as Hudi reads ``sort.columns`` (``split(",")``, which
    drops trailing empty names, then ``trim``): ``"a, b,"`` is ``("a", "b")``. ValueError for an empty name
    anywhere else (``"a,,b"``, ``",a"``: Hudi would fail on a column named ``""``) or for no name at all."""
    names = [name.strip() for name in text.split(",")]
    while names and not names[-1]:
        names.pop()
    if not names:
        raise ValueError("names no column")
    if "" in names:
        raise ValueError("an empty column name")
    return tuple(names)


# ------------------------------------------------------------------------------------------------ sections


@dataclass
class Section:
    """A group of keys: one table of the docs, and one part of the typed config (``model``)."""

    name: str
    title: str
    model: Literal["", "writer", "task"]  # ClusteringConfig's attribute holding its fields ("": the config itself)
    about: str  # one paragraph for the docs
    entries: list[Key] = dataclasses.field(default_factory=list)

    def key(self, key: str, field_name: str, kind: Kind, default: Any, doc: str, **options: Any) -> str:
        """Declare a key in this section; returns its name, for the module constant."""
        self.entries.append(Key(key, field_name, kind, default, doc, section=self.name, **options))
        return key

    def enum(self, key: str, field_name: str, default: str | None, choices: Any, doc: str, **options: Any) -> str:
        """Declare an enum key whose canonical names are the Literal type ``choices``."""
        return self.key(key, field_name, "enum", default, doc, choices=typing.get_args(choices), **options)


_CLUSTERING = Section(
    "clustering", "Clustering (`hoodie.clustering.*`)", "",
    "Apache Hudi 1.1's `HoodieClusteringConfig`: every key it defines in the clustering namespace. A key in "
    "`hoodie.clustering.*` that neither Hudi nor an installed strategy's params model declares is an error.",
)
_LAYOUT = Section(
    "layout", "Layout optimisation (`hoodie.layout.optimize.*`)", "",
    "How a sorted rewrite orders its rows. An unknown key in this namespace is an error too.",
)
_WRITER = Section(
    "writer", "Storage, index and writer keys a clustering run reads", "writer",
    "Outside the clustering namespaces (Hudi's storage, index, write and metadata configs): the few a clustering "
    "run reads (`config.writer`). Every other key is kept as given (`config.extra`) and never rejected.",
)
_TASK = Section(
    "task", "hudi-cluster's own keys (`hudi.cluster.task.*`)", "task",
    "Apache Hudi has no such settings; they sit outside its namespaces on purpose (`config.task`). Tasks read them "
    "from the job's settings.",
)

# -- hoodie.clustering.* ----------------------------------------------------------------------------------------
INLINE: Final = _CLUSTERING.key(
    "hoodie.clustering.inline", "inline", "bool", False, "Run clustering inline after each write.",
    aliases=("hoodie.datasource.clustering.inline.enable",))
INLINE_MAX_COMMITS: Final = _CLUSTERING.key(
    "hoodie.clustering.inline.max.commits", "inline_max_commits", "int", 4,
    "Commits between inline clustering plans.", lo=0)
ASYNC_ENABLED: Final = _CLUSTERING.key(
    "hoodie.clustering.async.enabled", "async_enabled", "bool", False, "Run clustering asynchronously with writes.",
    aliases=("hoodie.datasource.clustering.async.enable",))
ASYNC_MAX_COMMITS: Final = _CLUSTERING.key(
    "hoodie.clustering.async.max.commits", "async_max_commits", "int", 4,
    "Commits between async clustering runs.", lo=0)
SCHEDULE_INLINE: Final = _CLUSTERING.key(
    "hoodie.clustering.schedule.inline", "schedule_inline", "bool", False,
    "Writers schedule clustering inline; a separate job executes it.")
PLAN_STRATEGY_CLASS: Final = _CLUSTERING.key(
    "hoodie.clustering.plan.strategy.class", "plan_strategy_class", "str", SPARK_SIZE_BASED_PLAN,
    "Plan strategy (Hudi class name or plugin name); with the consistent hashing bucket index the default is "
    f"{SPARK_CONSISTENT_BUCKET_PLAN}.")
EXECUTION_STRATEGY_CLASS: Final = _CLUSTERING.key(
    "hoodie.clustering.execution.strategy.class", "execution_strategy_class", "str", SPARK_SORT_AND_SIZE_EXECUTION,
    "Execution strategy (Hudi class name or plugin name); with the consistent hashing bucket index the default is "
    f"{SINGLE_SPARK_JOB_CONSISTENT_HASHING_EXECUTION}.")
UPDATES_STRATEGY: Final = _CLUSTERING.key(
    "hoodie.clustering.updates.strategy", "updates_strategy", "str", SPARK_REJECT_UPDATE,
    "How writers treat updates to file groups in a pending clustering plan.")
SMALL_FILE_LIMIT: Final = _CLUSTERING.key(
    "hoodie.clustering.plan.strategy.small.file.limit", "small_file_limit", "bytes", 300 * 1024**2,
    "Files smaller than this many bytes are clustering candidates.", lo=0)
MAX_BYTES_PER_GROUP: Final = _CLUSTERING.key(
    "hoodie.clustering.plan.strategy.max.bytes.per.group", "max_bytes_per_group", "bytes", 2 * 1024**3,
    "Most bytes of input in one clustering group.", lo=1)
MAX_NUM_GROUPS: Final = _CLUSTERING.key(
    "hoodie.clustering.plan.strategy.max.num.groups", "max_num_groups", "int", 30,
    "Most clustering groups in one plan.", lo=0)
TARGET_FILE_MAX_BYTES: Final = _CLUSTERING.key(
    "hoodie.clustering.plan.strategy.target.file.max.bytes", "target_file_max_bytes", "bytes", 1024**3,
    "Target size in bytes of each output file.", lo=1)
SORT_COLUMNS: Final = _CLUSTERING.key(
    "hoodie.clustering.plan.strategy.sort.columns", "sort_columns", "columns", None,
    "Comma-separated columns to sort by when clustering; every one must be a column of the table.", optional=True)
PARTITION_SELECTED: Final = _CLUSTERING.key(
    "hoodie.clustering.plan.strategy.partition.selected", "partition_selected", "str", None,
    "Comma-separated partitions to cluster.", optional=True)
PARTITION_REGEX_PATTERN: Final = _CLUSTERING.key(
    "hoodie.clustering.plan.strategy.partition.regex.pattern", "partition_regex_pattern", "str", None,
    "Only partitions matching this regular expression are clustered.", optional=True, regex=True)
PARTITION_FILTER_MODE: Final = _CLUSTERING.enum(
    "hoodie.clustering.plan.partition.filter.mode", "partition_filter_mode", "NONE", PartitionFilterMode,
    "Partition filter used when planning.")
DAYBASED_LOOKBACK_PARTITIONS: Final = _CLUSTERING.key(
    "hoodie.clustering.plan.strategy.daybased.lookback.partitions", "daybased_lookback_partitions", "int", 2,
    "RECENT_DAYS: number of (newest) partitions to consider; <= 0 means all.")
DAYBASED_SKIP_FROM_LATEST_PARTITIONS: Final = _CLUSTERING.key(
    "hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions", "skip_partitions_from_latest", "int", 0,
    "RECENT_DAYS: number of newest partitions to skip.", lo=0)
CLUSTER_BEGIN_PARTITION: Final = _CLUSTERING.key(
    "hoodie.clustering.plan.strategy.cluster.begin.partition", "cluster_begin_partition", "str", None,
    "SELECTED_PARTITIONS: first partition (inclusive).", optional=True)
CLUSTER_END_PARTITION: Final = _CLUSTERING.key(
    "hoodie.clustering.plan.strategy.cluster.end.partition", "cluster_end_partition", "str", None,
    "SELECTED_PARTITIONS: last partition (inclusive).", optional=True)
SINGLE_GROUP_CLUSTERING_ENABLED: Final = _CLUSTERING.key(
    "hoodie.clustering.plan.strategy.single.group.clustering.enabled", "single_group_clustering_enabled", "bool",
    True, "Plan a group even when it holds a single file group.")
GROUP_READ_PARALLELISM: Final = _CLUSTERING.key(
    "hoodie.clustering.group.read.parallelism", "group_read_parallelism", "int", 20,
    "Most read tasks for one clustering group.", lo=1)
MAX_PARALLELISM: Final = _CLUSTERING.key(
    "hoodie.clustering.max.parallelism", "max_parallelism", "int", 15, "Most clustering groups executed at once.",
    lo=1)
PARTIAL_PROGRESS_MAX_GROUPS: Final = _CLUSTERING.key(
    "hoodie.clustering.partial.progress.max.groups", "partial_progress_max_groups", "int", 0,
    "hudi-cluster's own key, not Apache Hudi's: split a plan into clustering instants of at most this many groups, "
    "each committed as soon as its groups are written, so a crash loses at most one instant's work; 0 keeps one "
    "instant per plan.", lo=0)
ROLLBACK_PENDING_ON_CONFLICT: Final = _CLUSTERING.key(
    "hoodie.clustering.rollback.pending.replacecommit.on.conflict", "rollback_pending_on_conflict", "bool", False,
    "Writers roll back a pending clustering that conflicts with their update.")
# 1.1.1 docs name it hoodie.clustering.plan.strategy.*; another upstream revision of the class names it
# hoodie.file.stitching.*, read here as an alias.
BINARY_COPY_SCHEMA_EVOLUTION_ENABLE: Final = _CLUSTERING.key(
    "hoodie.clustering.plan.strategy.binary.copy.schema.evolution.enable", "binary_copy_schema_evolution_enable",
    "bool", False, "Binary file stitching may group files with different but compatible schemas.",
    aliases=("hoodie.file.stitching.binary.copy.schema.evolution.enable",))

# -- hoodie.layout.optimize.* -----------------------------------------------------------------------------------
LAYOUT_STRATEGY: Final = _LAYOUT.enum(
    "hoodie.layout.optimize.strategy", "layout_optimize_strategy", "LINEAR", Layout,
    "Record ordering: lexicographic, Z-order curve or Hilbert curve.", spellings=dict(LAYOUT_SPELLINGS),
    parser=parse_layout)
LAYOUT_CURVE_BUILD_METHOD: Final = _LAYOUT.enum(
    "hoodie.layout.optimize.curve.build.method", "layout_curve_build_method", "DIRECT", CurveBuildMethod,
    "How space-filling curves are built (z-order/Hilbert only).")
LAYOUT_BUILD_CURVE_SAMPLE_SIZE: Final = _LAYOUT.key(
    "hoodie.layout.optimize.build.curve.sample.size", "layout_build_curve_sample_size", "int", 200000,
    "SAMPLE method: rows sampled to find range boundaries.", lo=1)
LAYOUT_DATA_SKIPPING_ENABLE: Final = _LAYOUT.key(
    "hoodie.layout.optimize.data.skipping.enable", "layout_data_skipping_enable", "bool", True,
    "Deprecated since 0.11.0; no effect.")
LAYOUT_OPTIMIZE_ENABLE: Final = _LAYOUT.key(
    "hoodie.layout.optimize.enable", "layout_optimize_enable", "bool", False, "Deprecated since 0.11.0; no effect.")

# -- storage, index and writer keys a clustering run reads ------------------------------------------------------
PARQUET_MAX_FILE_SIZE: Final = _WRITER.key(
    "hoodie.parquet.max.file.size", "parquet_max_file_size", "bytes", 120 * 1024**2,
    "Target size in bytes of parquet files; also the assumed size of a slice without a base file.", lo=1)
PARQUET_SMALL_FILE_LIMIT: Final = _WRITER.key(
    "hoodie.parquet.small.file.limit", "parquet_small_file_limit", "bytes", 100 * 1024**2,
    "Writers grow files below this size (<= 0 disables).")
PARQUET_COMPRESSION_CODEC: Final = _WRITER.enum(
    "hoodie.parquet.compression.codec", "parquet_compression_codec", "gzip", CompressionCodec,
    "Parquet compression codec.")
PARQUET_BLOCK_SIZE: Final = _WRITER.key(
    "hoodie.parquet.block.size", "parquet_block_size", "bytes", 120 * 1024**2, "Parquet row group size in bytes.",
    lo=1)
PARQUET_PAGE_SIZE: Final = _WRITER.key(
    "hoodie.parquet.page.size", "parquet_page_size", "bytes", 1024**2, "Parquet page size in bytes.", lo=1)
PARQUET_BLOOM_FILTER_ENABLED: Final = _WRITER.key(
    "hoodie.parquet.bloom.filter.enabled", "parquet_bloom_filter_enabled", "bool", True,
    "Write the record-key bloom filter into parquet footers.")
BLOOM_NUM_ENTRIES: Final = _WRITER.key(
    "hoodie.index.bloom.num_entries", "bloom_num_entries", "int", 60000,
    "Bloom filter entries (initial size of a dynamic filter).", lo=1)
BLOOM_FPP: Final = _WRITER.key(
    "hoodie.index.bloom.fpp", "bloom_fpp", "double", 1e-09, "Bloom filter false-positive rate.",
    lo=0, hi=1, lo_open=True, hi_open=True)
BLOOM_FILTER_TYPE: Final = _WRITER.enum(
    "hoodie.bloom.index.filter.type", "bloom_filter_type", "DYNAMIC_V0", BloomFilterType, "Bloom filter type.")
BLOOM_DYNAMIC_MAX_ENTRIES: Final = _WRITER.key(
    "hoodie.bloom.index.filter.dynamic.max.entries", "bloom_dynamic_max_entries", "int", 100000,
    "Most keys in a dynamic bloom filter.", lo=1)
HEARTBEAT_INTERVAL_MS: Final = _WRITER.key(
    "hoodie.client.heartbeat.interval_in_ms", "heartbeat_interval_ms", "int", 60000,
    "How often a running clustering refreshes its heartbeat file .hoodie/.heartbeat/<instant>.", lo=1000)
HEARTBEAT_TOLERABLE_MISSES: Final = _WRITER.key(
    "hoodie.client.heartbeat.tolerable.misses", "heartbeat_tolerable_misses", "int", 2,
    "Missed heartbeats after which a pending clustering counts as abandoned.", lo=0)
LOCK_WAIT_TIME_MS: Final = _WRITER.key(
    "hoodie.write.lock.wait_time_ms", "lock_wait_time_ms", "long", 60000,
    "Longest wait for the table's timeline lock before giving up.", lo=0)
METADATA_ENABLE: Final = _WRITER.key(
    "hoodie.metadata.enable", "metadata_enable", "bool", True, "Keep the metadata table up to date.")
WRITE_MARKERS_TYPE: Final = _WRITER.enum(
    "hoodie.write.markers.type", "write_markers_type", "TIMELINE_SERVER_BASED", MarkersType, "Marker type.")
INDEX_TYPE: Final = _WRITER.enum(
    "hoodie.index.type", "index_type", None, IndexType, "Index type (no default; Hudi uses SIMPLE on Spark).",
    optional=True)
INDEX_BUCKET_ENGINE: Final = _WRITER.enum(
    "hoodie.index.bucket.engine", "index_bucket_engine", "SIMPLE", BucketEngine, "Bucket index engine.")
BUCKET_NUM_BUCKETS: Final = _WRITER.key(
    "hoodie.bucket.index.num.buckets", "bucket_num_buckets", "int", 256,
    "Buckets per partition (initial count for consistent hashing).", lo=1)
BUCKET_MAX_NUM_BUCKETS: Final = _WRITER.key(
    "hoodie.bucket.index.max.num.buckets", "bucket_max_num_buckets", "int", None,
    "Consistent hashing: most buckets per partition.", lo=1, optional=True)
BUCKET_MIN_NUM_BUCKETS: Final = _WRITER.key(
    "hoodie.bucket.index.min.num.buckets", "bucket_min_num_buckets", "int", None,
    "Consistent hashing: fewest buckets per partition.", lo=1, optional=True)
BUCKET_SPLIT_THRESHOLD: Final = _WRITER.key(
    "hoodie.bucket.index.split.threshold", "bucket_split_threshold", "double", 2.0,
    "Consistent hashing: split a bucket above max.file.size times this.", lo=0, lo_open=True)
BUCKET_MERGE_THRESHOLD: Final = _WRITER.key(
    "hoodie.bucket.index.merge.threshold", "bucket_merge_threshold", "double", 0.2,
    "Consistent hashing: merge buckets below max.file.size times this.", lo=0)
BUCKET_HASH_FIELD: Final = _WRITER.key(
    "hoodie.bucket.index.hash.field", "bucket_hash_field", "str", None,
    "Fields hashed to buckets (default: the record key fields).", optional=True)

# -- hudi-cluster's own keys ------------------------------------------------------------------------------------
TASK_MEMORY_BYTES: Final = _TASK.key(
    "hudi.cluster.task.memory.bytes", "memory_bytes", "bytes", 1024**3,
    "Bytes of rows one clustering task sorts in memory; a larger group spills to local disk. At most 3/4 of "
    "spark.executor.pyspark.memory when that caps the Python worker.", lo=1024)
TASK_SPLIT_MIN_BYTES: Final = _TASK.key(
    "hudi.cluster.task.split.min.bytes", "split_min_bytes", "bytes", 64 * 1024**2,
    "Fewest in-memory bytes of a group per task when a large group is split across tasks by key range.", lo=1024)
TASK_SPILL_DIR: Final = _TASK.key(
    "hudi.cluster.task.spill.dir", "spill_dir", "str", None,
    "Local directory of a task's spill files (unset: the executor's Spark local directory, else the system's "
    "temp dir).", optional=True)
TASK_VERIFY: Final = _TASK.enum(
    "hudi.cluster.task.verify", "verify", "true", VerifyLevel,
    "Check every rewrite: true (the rows handed to the writer, and the files' footers), full (also every written "
    "file read back) or false.")

SECTIONS: Final[tuple[Section, ...]] = (_CLUSTERING, _LAYOUT, _WRITER, _TASK)
CLUSTERING_KEYS: Final[tuple[Key, ...]] = tuple(_CLUSTERING.entries)
LAYOUT_KEYS: Final[tuple[Key, ...]] = tuple(_LAYOUT.entries)
WRITER_KEYS: Final[tuple[Key, ...]] = tuple(_WRITER.entries)
TASK_KEYS: Final[tuple[Key, ...]] = tuple(_TASK.entries)
ALL_KEYS: Final[tuple[Key, ...]] = CLUSTERING_KEYS + LAYOUT_KEYS + WRITER_KEYS + TASK_KEYS
BY_KEY: Final[Mapping[str, Key]] = {k.key: k for k in ALL_KEYS}
BY_FIELD: Final[Mapping[str, Key]] = {k.field: k for k in ALL_KEYS}
BY_ALIAS: Final[Mapping[str, Key]] = {alias: k for k in ALL_KEYS for alias in k.aliases}
MODEL_OF: Final[Mapping[str, str]] = {k.key: s.model for s in SECTIONS for k in s.entries}
assert len(BY_KEY) == len(BY_FIELD) == len(ALL_KEYS), "a key or field name declared twice"


def in_namespace(key: str) -> bool:
    """Whether ``key`` is in one of the namespaces where an unknown key is an error."""
    return key.startswith(NAMESPACES)


def spec_of(key: str) -> Key | None:
    """The entry of a key given by name, alias or field name."""
    return BY_KEY.get(key) or BY_ALIAS.get(key) or BY_FIELD.get(key)


def read(settings: Mapping[str, Any], key: str) -> Any:
    """The typed value of catalogued ``key`` in a raw map of strings (a job's merged Hudi map, a task's
    ``settings``): its main name first, then its aliases; the default when none is set. A bad value is a
    :class:`ConfigError` in the one style (``load_config`` has already reported it for a job's own map)."""
    spec = BY_KEY[key]
    for name in (spec.key, *spec.aliases):
        if name in settings:
            try:
                return spec.parse(settings[name])
            except ValueError as exc:
                raise ConfigError(spec.problem(settings[name], exc, given_as=name)) from None
    return spec.default


def join_problems(problems: list[str]) -> str:
    """Several problems as one error message: a count, then one line each."""
    if len(problems) == 1:
        return problems[0]
    return f"{len(problems)} configuration problems:\n" + "\n".join(f"  {p}" for p in problems)


def describe() -> list[dict[str, Any]]:
    """Every entry as plain data (JSON-ready), in catalogue order: ``key``, ``aliases``, ``type``, ``default``
    (None: not set), ``doc``, ``accepted``, ``section`` and ``field`` (its attribute: ``config.<field>``, or
    ``config.writer.<field>`` / ``config.task.<field>``)."""
    return [
        {
            "key": spec.key, "aliases": list(spec.aliases), "type": spec.kind, "default": spec.default,
            "doc": spec.doc, "accepted": spec.accepted(), "section": spec.section,
            "field": ".".join(p for p in (MODEL_OF[spec.key], spec.field) if p),
        }
        for spec in ALL_KEYS
    ]  # fmt: skip
