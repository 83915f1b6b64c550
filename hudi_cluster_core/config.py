"""Clustering configuration: Hudi's ``hoodie.clustering.*`` / ``hoodie.layout.optimize.*`` keys, loaded as Hudi does.

:func:`load_config` merges, lowest precedence first (as ``HoodieClusteringJob`` + ``DFSPropertiesConfiguration``):

1. ``hudi-defaults.conf`` in ``/etc/hudi/conf`` (if present), then in ``$HUDI_CONF_DIR`` (if set; must exist);
2. the ``--props`` file (Hudi's own format, not ``java.util.Properties``: ``key=value`` or ``key value``, ``#``
   comments, whitespace runs collapsed to one space, key and value trimmed, no backslash escapes, no ``${...}``
   substitution, ``include=other.properties`` relative to the including file);
3. ``--hoodie-conf key=value`` entries (split at the first ``=``, trimmed);
4. Python ``overrides`` (Hudi keys or the snake_case field names; ``None`` values are ignored).

The result is a frozen :class:`ClusteringConfig`: one field per clustering/layout key (see
:mod:`hudi_cluster_core.config_keys`), plus ``writer`` (:class:`WriterSettings`), a separate model for the few
storage/index/writer keys a clustering run reads. ``config.get(key)`` answers both by Hudi key or field name.
Unknown keys inside the two clustering namespaces are errors (unless a strategy params model declares them);
every other unknown key is kept in ``config.extra``. ``config.raw`` is the merged map of strings, as strategies
read their own keys from it. Every problem found is reported at once in one :class:`ConfigError`.
"""

from __future__ import annotations

import difflib
import logging
import os
import re
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationInfo, field_validator

from . import config_keys as ck
from . import keys
from .config_keys import (
    BY_ALTERNATIVE, BY_FIELD, BY_KEY, BloomFilterType, BucketEngine, CompressionCodec, CurveBuildMethod, IndexType,
    MarkersType, PartitionFilterMode,
)  # fmt: skip
from .errors import ConfigError
from .io.registry import is_local, local_path, scheme_of
from .layout import Layout
from .params import PLUGIN_KEYS, join_problems
# a strategy's params live in .params; still importable from here, where plugins written so far take them
from .params import StrategyParams, strategy_params, validate_strategy_params  # noqa: F401

log = logging.getLogger(__name__)
DEFAULTS_FILE_NAME = "hudi-defaults.conf"
DEFAULT_CONF_DIR = Path("/etc/hudi/conf")
CONF_DIR_ENV = "HUDI_CONF_DIR"


def _hudi(key: str, default: Any) -> Any:
    """The field of Hudi key ``key``: aliased to it, described from the catalogue (:mod:`.config_keys`), and
    parsed as Hudi parses it (``_Settings._parse_as_hudi``). The field's annotation and ``default`` must agree
    with the catalogue (tests/test_config.py checks they do)."""
    spec = BY_KEY[key]
    return Field(default, alias=key, description=f"{spec.doc} [{spec.key}; accepts {spec.accepted()}]")


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

    parquet_max_file_size: int = _hudi(keys.PARQUET_MAX_FILE_SIZE, 120 * 1024**2)
    parquet_small_file_limit: int = _hudi(keys.PARQUET_SMALL_FILE_LIMIT, 100 * 1024**2)
    parquet_compression_codec: CompressionCodec = _hudi(keys.PARQUET_COMPRESSION_CODEC, "gzip")
    parquet_block_size: int = _hudi(keys.PARQUET_BLOCK_SIZE, 120 * 1024**2)
    parquet_page_size: int = _hudi(keys.PARQUET_PAGE_SIZE, 1024**2)
    parquet_bloom_filter_enabled: bool = _hudi(keys.PARQUET_BLOOM_FILTER_ENABLED, True)
    bloom_num_entries: int = _hudi(keys.BLOOM_NUM_ENTRIES, 60000)
    bloom_fpp: float = _hudi(keys.BLOOM_FPP, 1e-09)
    bloom_filter_type: BloomFilterType = _hudi(keys.BLOOM_FILTER_TYPE, "DYNAMIC_V0")
    bloom_dynamic_max_entries: int = _hudi(keys.BLOOM_DYNAMIC_MAX_ENTRIES, 100000)
    heartbeat_interval_ms: int = _hudi(keys.HEARTBEAT_INTERVAL_MS, 60000)
    heartbeat_tolerable_misses: int = _hudi(keys.HEARTBEAT_TOLERABLE_MISSES, 2)
    lock_wait_time_ms: int = _hudi(keys.LOCK_WAIT_TIME_MS, 60000)
    metadata_enable: bool = _hudi(keys.METADATA_ENABLE, True)
    write_markers_type: MarkersType = _hudi(keys.WRITE_MARKERS_TYPE, "TIMELINE_SERVER_BASED")
    index_type: IndexType | None = _hudi(keys.INDEX_TYPE, None)
    index_bucket_engine: BucketEngine = _hudi(keys.INDEX_BUCKET_ENGINE, "SIMPLE")
    bucket_num_buckets: int = _hudi(keys.BUCKET_NUM_BUCKETS, 256)
    bucket_max_num_buckets: int | None = _hudi(keys.BUCKET_MAX_NUM_BUCKETS, None)
    bucket_min_num_buckets: int | None = _hudi(keys.BUCKET_MIN_NUM_BUCKETS, None)
    bucket_split_threshold: float = _hudi(keys.BUCKET_SPLIT_THRESHOLD, 2.0)
    bucket_merge_threshold: float = _hudi(keys.BUCKET_MERGE_THRESHOLD, 0.2)
    bucket_hash_field: str | None = _hudi(keys.BUCKET_HASH_FIELD, None)


class ClusteringConfig(_Settings):
    """Hudi 1.1 clustering and layout-optimisation keys (frozen); ``writer`` holds the non-clustering keys.

    One typed attribute per Hudi key (``config.max_num_groups``, ``config.sort_columns``,
    ``config.writer.parquet_max_file_size``); the Hudi key is the field's alias. ``config.get(key)`` answers by
    Hudi key, alternative key or field name, and gives the raw string of any other key; ``config.raw`` and
    ``config.extra`` are the merged map and the keys without a field.
    """

    _raw: dict[str, str] = PrivateAttr(default_factory=dict)
    _extra: dict[str, str] = PrivateAttr(default_factory=dict)

    writer: WriterSettings = Field(default_factory=WriterSettings, description="Storage/index/writer keys.")
    inline: bool = _hudi(keys.INLINE, False)
    inline_max_commits: int = _hudi(keys.INLINE_MAX_COMMITS, 4)
    async_enabled: bool = _hudi(keys.ASYNC_ENABLED, False)
    async_max_commits: int = _hudi(keys.ASYNC_MAX_COMMITS, 4)
    schedule_inline: bool = _hudi(keys.SCHEDULE_INLINE, False)
    plan_strategy_class: str = _hudi(keys.PLAN_STRATEGY_CLASS, keys.SPARK_SIZE_BASED_PLAN)
    execution_strategy_class: str = _hudi(keys.EXECUTION_STRATEGY_CLASS, keys.SPARK_SORT_AND_SIZE_EXECUTION)
    updates_strategy: str = _hudi(keys.UPDATES_STRATEGY, keys.SPARK_REJECT_UPDATE)
    small_file_limit: int = _hudi(keys.SMALL_FILE_LIMIT, 300 * 1024**2)
    max_bytes_per_group: int = _hudi(keys.MAX_BYTES_PER_GROUP, 2 * 1024**3)
    max_num_groups: int = _hudi(keys.MAX_NUM_GROUPS, 30)
    target_file_max_bytes: int = _hudi(keys.TARGET_FILE_MAX_BYTES, 1024**3)
    sort_columns: str | None = _hudi(keys.SORT_COLUMNS, None)
    partition_selected: str | None = _hudi(keys.PARTITION_SELECTED, None)
    partition_regex_pattern: str | None = _hudi(keys.PARTITION_REGEX_PATTERN, None)
    partition_filter_mode: PartitionFilterMode = _hudi(keys.PARTITION_FILTER_MODE, "NONE")
    daybased_lookback_partitions: int = _hudi(keys.DAYBASED_LOOKBACK_PARTITIONS, 2)
    skip_partitions_from_latest: int = _hudi(keys.DAYBASED_SKIP_FROM_LATEST_PARTITIONS, 0)
    cluster_begin_partition: str | None = _hudi(keys.CLUSTER_BEGIN_PARTITION, None)
    cluster_end_partition: str | None = _hudi(keys.CLUSTER_END_PARTITION, None)
    single_group_clustering_enabled: bool = _hudi(keys.SINGLE_GROUP_CLUSTERING_ENABLED, True)
    group_read_parallelism: int = _hudi(keys.GROUP_READ_PARALLELISM, 20)
    max_parallelism: int = _hudi(keys.MAX_PARALLELISM, 15)
    rollback_pending_on_conflict: bool = _hudi(keys.ROLLBACK_PENDING_ON_CONFLICT, False)
    binary_copy_schema_evolution_enable: bool = _hudi(keys.BINARY_COPY_SCHEMA_EVOLUTION_ENABLE, False)
    layout_optimize_strategy: Layout = _hudi(keys.LAYOUT_STRATEGY, "LINEAR")
    layout_curve_build_method: CurveBuildMethod = _hudi(keys.LAYOUT_CURVE_BUILD_METHOD, "DIRECT")
    layout_build_curve_sample_size: int = _hudi(keys.LAYOUT_BUILD_CURVE_SAMPLE_SIZE, 200000)
    layout_data_skipping_enable: bool = _hudi(keys.LAYOUT_DATA_SKIPPING_ENABLE, True)
    layout_optimize_enable: bool = _hudi(keys.LAYOUT_OPTIMIZE_ENABLE, False)

    @property
    def raw(self) -> Mapping[str, str]:
        """The merged Hudi map (all layers, every key as given, values trimmed): read-only."""
        return types.MappingProxyType(self._raw)

    @property
    def extra(self) -> Mapping[str, str]:
        """Given keys this model does not have a field for (writer/table keys, strategy params): read-only."""
        return types.MappingProxyType(self._extra)

    def get(self, key: str, default: Any = None) -> Any:
        """The typed value of a modelled key (Hudi key, alternative key or field name); else the raw string."""
        spec = BY_KEY.get(key) or BY_ALTERNATIVE.get(key) or BY_FIELD.get(key)
        if spec is None:
            return self._raw.get(key, default)
        value = getattr(self.writer if spec.key in _WRITER_KEYS else self, spec.field)
        return default if value is None else value

    def defaults(self) -> dict[str, Any]:
        """Hudi key -> default in effect (strategy classes depend on the index, as in Hudi's builder)."""
        return {**{spec.key: spec.default for spec in ck.ALL_KEYS}, **_strategy_defaults(self.writer)}

    def to_hoodie_map(self, *, include_extra: bool = False) -> dict[str, str]:
        """Every modelled key whose value is not the default, as Hudi strings (``extra`` too if asked)."""
        defaults = self.defaults()
        out = {spec.key: spec.to_hoodie(v) for spec in ck.ALL_KEYS if (v := self.get(spec.key)) != defaults[spec.key]}
        return {**out, **self._extra} if include_extra else out

    def __eq__(self, other: object) -> bool:  # typed settings and extra keys; raw is provenance
        if not isinstance(other, ClusteringConfig):
            return NotImplemented
        return self.model_dump() == other.model_dump() and self._extra == other._extra

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.to_hoodie_map(include_extra=True).items())))


_WRITER_KEYS = frozenset(spec.key for spec in ck.WRITER_KEYS)
_PLAN_KEY, _EXEC_KEY = keys.PLAN_STRATEGY_CLASS, keys.EXECUTION_STRATEGY_CLASS


def _consistent_hashing(writer) -> bool:
    return writer.index_type == "BUCKET" and writer.index_bucket_engine == "CONSISTENT_HASHING"


def _strategy_defaults(writer) -> dict[str, str]:
    """Hudi's builder: with the consistent hashing bucket index the default strategies change (Spark engine)."""
    if not _consistent_hashing(writer):
        return {}
    return {_PLAN_KEY: ck.SPARK_CONSISTENT_BUCKET_PLAN, _EXEC_KEY: ck.SINGLE_SPARK_JOB_CONSISTENT_HASHING_EXECUTION}


# ----------------------------------------------------------------------------------------------- loading


def load_config(
    props_file: str | Path | None = None,
    hoodie_conf: typing.Iterable[str] = (),
    overrides: Mapping[str, Any] | None = None,
) -> ClusteringConfig:
    """Merge defaults file < props file < ``--hoodie-conf`` < overrides and validate; raise one ConfigError."""
    problems: list[str] = []
    entries: list[tuple[str, str, str]] = []  # (key, value, source), lowest precedence first
    hoodie_conf = [hoodie_conf] if isinstance(hoodie_conf, str) else hoodie_conf
    entries += _global_defaults(problems)
    given: list[tuple[str, str, str]] = []
    for entry in hoodie_conf:
        key, sep, value = str(entry).partition("=")
        if not sep or not key.strip():
            problems.append(f"--hoodie-conf {entry!r}: not key=value; accepted: --hoodie-conf hoodie.some.key=value")
            continue
        given.append((key.strip(), value.strip(), "--hoodie-conf"))
    for key, value in (overrides or {}).items():
        if value is not None:
            spec = BY_FIELD.get(key) if key not in BY_KEY else None
            given.append((spec.key if spec else key, _to_text(value), "overrides"))
    if props_file not in (None, ""):
        # a props file on an object store is read with the storage keys given beside it (and the AWS environment)
        storage_keys = {k: v for k, v, _ in [*entries, *given]}
        entries += _read_props(props_file, problems, set(), "--props", storage_keys)
    entries += given
    merged: dict[str, tuple[str, str]] = {}
    for key, value, source in entries:
        merged[key] = (value, source)
    config = _build(merged, problems)
    if problems:
        raise ConfigError(join_problems(problems))
    return config


def _build(merged: dict[str, tuple[str, str]], problems: list[str]):
    values: dict[str, Any] = {}
    extra: dict[str, str] = {}
    for key, (value, source) in merged.items():
        spec = BY_KEY.get(key) or BY_ALTERNATIVE.get(key)
        if spec is None:
            if ck.in_namespace(key) and key not in ck.REMOVED_KEYS and not _plugin_declares(key):
                problems.append(_unknown_key(key, source))
            elif key in ck.REMOVED_KEYS:
                log.warning("%s (%s): %s", key, source, ck.REMOVED_KEYS[key])
            extra[key] = value
            continue
        if key != next(k for k in (spec.key, *spec.alternatives) if k in merged):
            continue  # Hudi reads the main key first, then the alternatives in order
        try:
            values[spec.key] = spec.parse(value)
        except ValueError as exc:
            problems.append(f"{key}={value!r} ({source}): {exc}; accepted: {spec.accepted()}")
    if problems:
        return None
    writer = WriterSettings.model_validate({k: v for k, v in values.items() if k in _WRITER_KEYS})
    main = {**_strategy_defaults(writer), **{k: v for k, v in values.items() if k not in _WRITER_KEYS}}
    config = ClusteringConfig.model_validate({**main, "writer": writer})
    config._raw = {k: v for k, (v, _) in merged.items()}
    config._extra = extra
    problems += _cross_checks(config, merged)
    return config


def _cross_checks(config, merged) -> list[str]:
    out = []
    if config.inline and config.schedule_inline:
        out.append("hoodie.clustering.inline=true and hoodie.clustering.schedule.inline=true: only one of them may "
                   "be true (inline both schedules and executes)")  # fmt: skip
    w = config.writer
    if w.bucket_min_num_buckets and w.bucket_max_num_buckets and w.bucket_min_num_buckets > w.bucket_max_num_buckets:
        out.append(f"hoodie.bucket.index.min.num.buckets={w.bucket_min_num_buckets} is above "
                   f"hoodie.bucket.index.max.num.buckets={w.bucket_max_num_buckets}; accepted: min <= max")  # fmt: skip
    if _consistent_hashing(w):  # Hudi's checks; plugin short names (no '.') are left to the plugin registry
        plan, run = config.plan_strategy_class, config.execution_strategy_class
        if "." in plan and plan.lower() != ck.SPARK_CONSISTENT_BUCKET_PLAN.lower():
            out.append(f"{_PLAN_KEY}={plan!r}: not supported with the consistent hashing bucket index; accepted: "
                       f"{ck.SPARK_CONSISTENT_BUCKET_PLAN}")  # fmt: skip
        allowed = (ck.SPARK_CONSISTENT_BUCKET_EXECUTION, ck.SINGLE_SPARK_JOB_CONSISTENT_HASHING_EXECUTION)
        if "." in run and run not in allowed:
            out.append(f"{_EXEC_KEY}={run!r}: not supported with the consistent hashing bucket index; accepted: "
                       f"{', '.join(allowed)}")  # fmt: skip
    return out


def _unknown_key(key: str, source: str) -> str:
    def tail(k: str) -> str:  # compare what follows the namespace, or every key looks alike
        return k.removeprefix(ck.CLUSTERING_PREFIX).removeprefix(ck.LAYOUT_PREFIX)

    candidates = {tail(k): k for k in [*BY_KEY, *PLUGIN_KEYS] if ck.in_namespace(k)}
    close = difflib.get_close_matches(tail(key), list(candidates), n=1, cutoff=0.6)
    hint = (f"did you mean '{candidates[close[0]]}'?" if close else "accepted: a key Hudi 1.1 defines "
            "(hudi.apache.org/docs/configurations#Clustering-Configs) or one a strategy's params model declares")
    return f"unknown key '{key}' ({source}): not a Hudi 1.1 clustering or layout-optimisation key; {hint}"


def _plugin_declares(key: str) -> bool:
    if key in PLUGIN_KEYS:
        return True
    try:  # a strategy's params model may declare its own hoodie.clustering.plan.strategy.* keys
        from .plugins import default_registry

        default_registry()
    except Exception:  # noqa: BLE001 - a broken plugin is reported when the registry is built for the run
        pass
    return key in PLUGIN_KEYS


def _to_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value).strip()


# --------------------------------------------------------------------------------------- properties files

_JAVA_WS = re.compile(r"[ \t\n\x0b\f\r]+")
_JAVA_TRIM = "".join(chr(c) for c in range(0x21))


def _global_defaults(problems: list[str]) -> list[tuple[str, str, str]]:
    entries = []
    default = DEFAULT_CONF_DIR / DEFAULTS_FILE_NAME
    if default.is_file():
        entries += _read_props(default, problems, set(), "hudi-defaults.conf")
    conf_dir = os.environ.get(CONF_DIR_ENV)
    if conf_dir:
        path = Path(local_path(str(conf_dir))) / DEFAULTS_FILE_NAME
        if path != default:
            entries += _read_props(path, problems, set(), f"{CONF_DIR_ENV}={conf_dir}")
    return entries


def _read_remote_props(
    uri: str, problems: list[str], seen: set[str], via: str, storage_keys: Mapping[str, str]
) -> list[tuple[str, str, str]]:
    """A properties file on an object store (``s3a://bucket/conf/job.properties``); includes relative to it."""
    from .errors import HudiClusterError
    from .io.storage import Storage

    if uri in seen:
        problems.append(f"{via} {uri}: include loop; the file is already being read")
        return []
    try:
        storage = Storage(uri.rsplit("/", 1)[0], storage_keys)
        data = storage.read_bytes(storage.strip_scheme(uri))
        text = data.decode("utf-8-sig")
    except FileNotFoundError:
        problems.append(f"{via} {uri}: properties file does not exist")
        return []
    except HudiClusterError as exc:
        problems.append(f"{via} {uri}: {exc}")
        return []
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{via} {uri}: properties file cannot be read: {' '.join(str(exc).split())[:300]}")
        return []
    return _parse_props(text, uri, problems, seen | {uri}, storage_keys)


def _read_props(
    path: str | Path, problems: list[str], seen: set[str], via: str, storage_keys: Mapping[str, str] | None = None
) -> list[tuple[str, str, str]]:
    """``DFSPropertiesConfiguration`` semantics: entries (key, value, "file:line") in file order, includes inline."""
    if not is_local(str(path)):
        return _read_remote_props(str(path), problems, seen, via, storage_keys or {})
    local = Path(local_path(str(path)))
    marker = str(local.resolve())
    if marker in seen:
        problems.append(f"{via} {path}: include loop; the file is already being read")
        return []
    try:
        text = local.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        problems.append(f"{via} {path}: properties file does not exist")
        return []
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        problems.append(f"{via} {path}: properties file cannot be read: {reason}")
        return []
    return _parse_props(text, str(local), problems, seen | {marker}, storage_keys or {})


def _include_target(location: str, value: str) -> str | Path:
    """``include=`` is relative to the including file, on the same store."""
    if not is_local(value):
        return value
    if not is_local(location):
        return value if scheme_of(value) else location.rsplit("/", 1)[0] + "/" + value
    target = Path(local_path(value))
    return target if target.is_absolute() else Path(location).parent / target


def _parse_props(
    text: str, location: str, problems: list[str], seen: set[str], storage_keys: Mapping[str, str]
) -> list[tuple[str, str, str]]:
    entries: list[tuple[str, str, str]] = []
    for lineno, line in enumerate(re.split(r"\r\n|\r|\n", text), 1):
        stripped = line.strip(_JAVA_TRIM)
        if not stripped or stripped.startswith("#"):
            continue
        where = f"{location}:{lineno}"
        if "=" not in line and not _JAVA_WS.search(stripped):
            problems.append(f"{where}: {stripped!r} has no value; accepted: key=value or key value")
            continue
        collapsed = _JAVA_WS.sub(" ", line)
        key, _, value = collapsed.partition("=" if "=" in collapsed else " ")
        key, value = key.strip(_JAVA_TRIM), value.strip(_JAVA_TRIM)
        if line.startswith(("include=", "include =")):
            entries += _read_props(_include_target(location, value), problems, seen, f"{where} include", storage_keys)
        elif not key:
            problems.append(f"{where}: {stripped!r} has an empty key; accepted: key=value")
        else:
            entries.append((key, value, where))
    return entries
