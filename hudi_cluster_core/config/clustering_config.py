"""The typed configuration: :class:`ClusteringConfig`, one frozen field per key of the :mod:`.catalogue`.

A field's default, alias (the Hudi key) and description come from its catalogue entry, and every value is parsed by
the entry (:meth:`~.catalogue.Key.parse`), so a default is written once, in the catalogue. What a field declares
itself is its Python type, for readers and type checkers; tests/test_config.py checks it is the catalogue's.
The clustering and layout keys are fields of the config itself; the storage/index/writer keys a run reads are
``config.writer`` (:class:`WriterSettings`), hudi-cluster's own keys ``config.task`` (:class:`TaskSettings`).
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationInfo, field_validator

from ..layout import Layout
from . import catalogue
from .catalogue import (
    ALL_KEYS, BY_FIELD, BY_KEY, MODEL_OF, BloomFilterType, BucketEngine, CompressionCodec, CurveBuildMethod, IndexType,
    MarkersType, PartitionFilterMode, VerifyLevel, spec_of,
)  # fmt: skip


def _hudi(key: str) -> Any:
    """The field of catalogued ``key``: its default, its name as alias, its doc and accepted values as description."""
    spec = BY_KEY[key]
    return Field(spec.default, alias=key, description=f"{spec.doc} [{spec.key}; accepts {spec.accepted()}]")


class _Settings(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _parse_as_hudi(cls, value: Any, info: ValidationInfo) -> Any:
        """Every catalogued field takes Hudi's text (``"true"``, ``"1073741824"``, ``"z-order"``) or a Python value."""
        spec = BY_FIELD.get(info.field_name or "")
        return value if spec is None else spec.parse(value)


class WriterSettings(_Settings):
    """Storage, index and writer keys (outside hoodie.clustering.*) that a clustering run reads."""

    parquet_max_file_size: int = _hudi(catalogue.PARQUET_MAX_FILE_SIZE)
    parquet_small_file_limit: int = _hudi(catalogue.PARQUET_SMALL_FILE_LIMIT)
    parquet_compression_codec: CompressionCodec = _hudi(catalogue.PARQUET_COMPRESSION_CODEC)
    parquet_block_size: int = _hudi(catalogue.PARQUET_BLOCK_SIZE)
    parquet_page_size: int = _hudi(catalogue.PARQUET_PAGE_SIZE)
    parquet_bloom_filter_enabled: bool = _hudi(catalogue.PARQUET_BLOOM_FILTER_ENABLED)
    bloom_num_entries: int = _hudi(catalogue.BLOOM_NUM_ENTRIES)
    bloom_fpp: float = _hudi(catalogue.BLOOM_FPP)
    bloom_filter_type: BloomFilterType = _hudi(catalogue.BLOOM_FILTER_TYPE)
    bloom_dynamic_max_entries: int = _hudi(catalogue.BLOOM_DYNAMIC_MAX_ENTRIES)
    heartbeat_interval_ms: int = _hudi(catalogue.HEARTBEAT_INTERVAL_MS)
    heartbeat_tolerable_misses: int = _hudi(catalogue.HEARTBEAT_TOLERABLE_MISSES)
    lock_wait_time_ms: int = _hudi(catalogue.LOCK_WAIT_TIME_MS)
    metadata_enable: bool = _hudi(catalogue.METADATA_ENABLE)
    write_markers_type: MarkersType = _hudi(catalogue.WRITE_MARKERS_TYPE)
    index_type: IndexType | None = _hudi(catalogue.INDEX_TYPE)
    index_bucket_engine: BucketEngine = _hudi(catalogue.INDEX_BUCKET_ENGINE)
    bucket_num_buckets: int = _hudi(catalogue.BUCKET_NUM_BUCKETS)
    bucket_max_num_buckets: int | None = _hudi(catalogue.BUCKET_MAX_NUM_BUCKETS)
    bucket_min_num_buckets: int | None = _hudi(catalogue.BUCKET_MIN_NUM_BUCKETS)
    bucket_split_threshold: float = _hudi(catalogue.BUCKET_SPLIT_THRESHOLD)
    bucket_merge_threshold: float = _hudi(catalogue.BUCKET_MERGE_THRESHOLD)
    bucket_hash_field: str | None = _hudi(catalogue.BUCKET_HASH_FIELD)


class TaskSettings(_Settings):
    """hudi-cluster's own keys (``hudi.cluster.task.*``): a clustering task's memory, spill and rewrite check."""

    memory_bytes: int = _hudi(catalogue.TASK_MEMORY_BYTES)
    split_min_bytes: int = _hudi(catalogue.TASK_SPLIT_MIN_BYTES)
    spill_dir: str | None = _hudi(catalogue.TASK_SPILL_DIR)
    verify: VerifyLevel = _hudi(catalogue.TASK_VERIFY)


class ClusteringConfig(_Settings):
    """Hudi 1.1 clustering and layout-optimisation keys (frozen); ``writer`` and ``task`` hold the other keys.

    One typed attribute per key (``config.max_num_groups``, ``config.sort_columns``,
    ``config.writer.parquet_max_file_size``, ``config.task.memory_bytes``); the key is the field's alias.
    ``config.get(key)`` answers by key, alias or field name, and gives the raw string of any other key;
    ``config.raw`` and ``config.extra`` are the merged map and the keys without a field.
    """

    _raw: dict[str, str] = PrivateAttr(default_factory=dict)
    _extra: dict[str, str] = PrivateAttr(default_factory=dict)

    writer: WriterSettings = Field(default_factory=WriterSettings, description="Storage/index/writer keys.")
    task: TaskSettings = Field(default_factory=TaskSettings, description="hudi-cluster's own keys.")
    inline: bool = _hudi(catalogue.INLINE)
    inline_max_commits: int = _hudi(catalogue.INLINE_MAX_COMMITS)
    async_enabled: bool = _hudi(catalogue.ASYNC_ENABLED)
    async_max_commits: int = _hudi(catalogue.ASYNC_MAX_COMMITS)
    schedule_inline: bool = _hudi(catalogue.SCHEDULE_INLINE)
    plan_strategy_class: str = _hudi(catalogue.PLAN_STRATEGY_CLASS)
    execution_strategy_class: str = _hudi(catalogue.EXECUTION_STRATEGY_CLASS)
    updates_strategy: str = _hudi(catalogue.UPDATES_STRATEGY)
    small_file_limit: int = _hudi(catalogue.SMALL_FILE_LIMIT)
    max_bytes_per_group: int = _hudi(catalogue.MAX_BYTES_PER_GROUP)
    max_num_groups: int = _hudi(catalogue.MAX_NUM_GROUPS)
    target_file_max_bytes: int = _hudi(catalogue.TARGET_FILE_MAX_BYTES)
    sort_columns: str | None = _hudi(catalogue.SORT_COLUMNS)
    partition_selected: str | None = _hudi(catalogue.PARTITION_SELECTED)
    partition_regex_pattern: str | None = _hudi(catalogue.PARTITION_REGEX_PATTERN)
    partition_filter_mode: PartitionFilterMode = _hudi(catalogue.PARTITION_FILTER_MODE)
    daybased_lookback_partitions: int = _hudi(catalogue.DAYBASED_LOOKBACK_PARTITIONS)
    skip_partitions_from_latest: int = _hudi(catalogue.DAYBASED_SKIP_FROM_LATEST_PARTITIONS)
    cluster_begin_partition: str | None = _hudi(catalogue.CLUSTER_BEGIN_PARTITION)
    cluster_end_partition: str | None = _hudi(catalogue.CLUSTER_END_PARTITION)
    single_group_clustering_enabled: bool = _hudi(catalogue.SINGLE_GROUP_CLUSTERING_ENABLED)
    group_read_parallelism: int = _hudi(catalogue.GROUP_READ_PARALLELISM)
    max_parallelism: int = _hudi(catalogue.MAX_PARALLELISM)
    rollback_pending_on_conflict: bool = _hudi(catalogue.ROLLBACK_PENDING_ON_CONFLICT)
    partial_progress_max_groups: int = _hudi(catalogue.PARTIAL_PROGRESS_MAX_GROUPS)
    binary_copy_schema_evolution_enable: bool = _hudi(catalogue.BINARY_COPY_SCHEMA_EVOLUTION_ENABLE)
    layout_optimize_strategy: Layout = _hudi(catalogue.LAYOUT_STRATEGY)
    layout_curve_build_method: CurveBuildMethod = _hudi(catalogue.LAYOUT_CURVE_BUILD_METHOD)
    layout_build_curve_sample_size: int = _hudi(catalogue.LAYOUT_BUILD_CURVE_SAMPLE_SIZE)
    layout_data_skipping_enable: bool = _hudi(catalogue.LAYOUT_DATA_SKIPPING_ENABLE)
    layout_optimize_enable: bool = _hudi(catalogue.LAYOUT_OPTIMIZE_ENABLE)

    @property
    def raw(self) -> Mapping[str, str]:
        """The merged Hudi map (all layers, every key as given, values trimmed): read-only."""
        return types.MappingProxyType(self._raw)

    @property
    def extra(self) -> Mapping[str, str]:
        """Given keys this model does not have a field for (writer/table keys, strategy params): read-only."""
        return types.MappingProxyType(self._extra)

    def get(self, key: str, default: Any = None) -> Any:
        """The typed value of a catalogued key (name, alias or field name); else the raw string."""
        spec = spec_of(key)
        if spec is None:
            return self._raw.get(key, default)
        part = MODEL_OF[spec.key]
        value = getattr(getattr(self, part) if part else self, spec.field)
        return default if value is None else value

    def defaults(self) -> dict[str, Any]:
        """Key -> default in effect (strategy classes depend on the index, as in Hudi's builder)."""
        return {**{spec.key: spec.default for spec in ALL_KEYS}, **strategy_defaults(self.writer)}

    def to_hoodie_map(self, *, include_extra: bool = False) -> dict[str, str]:
        """Every catalogued key whose value is not the default, as Hudi strings (``extra`` too if asked)."""
        defaults = self.defaults()
        out = {spec.key: spec.to_hoodie(v) for spec in ALL_KEYS if (v := self.get(spec.key)) != defaults[spec.key]}
        return {**out, **self._extra} if include_extra else out

    def __eq__(self, other: object) -> bool:  # typed settings and extra keys; raw is provenance
        if not isinstance(other, ClusteringConfig):
            return NotImplemented
        return self.model_dump() == other.model_dump() and self._extra == other._extra

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.to_hoodie_map(include_extra=True).items())))


def consistent_hashing(writer: WriterSettings) -> bool:
    """Whether the writer keys name the consistent hashing bucket index."""
    return writer.index_type == "BUCKET" and writer.index_bucket_engine == "CONSISTENT_HASHING"


def strategy_defaults(writer: WriterSettings) -> dict[str, str]:
    """Hudi's builder: with the consistent hashing bucket index the default strategies change (Spark engine)."""
    if not consistent_hashing(writer):
        return {}
    return {catalogue.PLAN_STRATEGY_CLASS: catalogue.SPARK_CONSISTENT_BUCKET_PLAN,
            catalogue.EXECUTION_STRATEGY_CLASS: catalogue.SINGLE_SPARK_JOB_CONSISTENT_HASHING_EXECUTION}  # fmt: skip
