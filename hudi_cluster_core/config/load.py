"""Loading a job's configuration as ``HoodieClusteringJob`` does, checked against the :mod:`.catalogue`.

:func:`load_config` merges, lowest precedence first (as ``HoodieClusteringJob`` + ``DFSPropertiesConfiguration``):

1. ``hudi-defaults.conf`` in ``/etc/hudi/conf`` (if present), then in ``$HUDI_CONF_DIR`` (if set; must exist);
2. the ``--props`` file, in Hudi's own format (:mod:`.properties_file`);
3. ``--hoodie-conf key=value`` entries (split at the first ``=``, trimmed);
4. Python ``overrides`` (keys or the snake_case field names; ``None`` values are ignored).

The result is a frozen :class:`~.clustering_config.ClusteringConfig`. Each catalogued key is parsed by its entry;
unknown keys inside the two clustering namespaces are errors (unless a strategy params model declares them);
every other unknown key is kept in ``config.extra``. ``config.raw`` is the merged map of strings, as strategies
read their own keys from it. Every problem found is reported at once in one :class:`ConfigError`, one line each
(:meth:`.catalogue.Key.problem`).
"""

from __future__ import annotations

import difflib
import logging
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from . import catalogue
from .catalogue import BY_ALIAS, BY_FIELD, BY_KEY, MODEL_OF, REMOVED_KEYS, in_namespace, join_problems
from .clustering_config import ClusteringConfig, TaskSettings, WriterSettings, consistent_hashing, strategy_defaults
from .properties_file import Entry, global_defaults, read_props
from .strategy_params import PLUGIN_KEYS, plugin_declares

log = logging.getLogger(__name__)


def load_config(
    props_file: str | Path | None = None,
    hoodie_conf: typing.Iterable[str] = (),
    overrides: Mapping[str, Any] | None = None,
) -> ClusteringConfig:
    """Merge defaults file < props file < ``--hoodie-conf`` < overrides and validate; raise one ConfigError.

    A strategy's own keys are known once its plugin is imported, or, for every installed plugin, once
    ``hudi_cluster_core.plugins`` is (it adds the installed plugins as a source of keys)."""
    problems: list[str] = []
    entries: list[Entry] = []  # lowest precedence first
    hoodie_conf = [hoodie_conf] if isinstance(hoodie_conf, str) else hoodie_conf
    entries += global_defaults(problems)
    given: list[Entry] = []
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
        entries += read_props(props_file, problems, set(), "--props", storage_keys)
    entries += given
    merged: dict[str, tuple[str, str]] = {}
    for key, value, source in entries:
        merged[key] = (value, source)
    config = _build(merged, problems)
    if problems or config is None:
        raise ConfigError(join_problems(problems))
    return config


def _build(merged: dict[str, tuple[str, str]], problems: list[str]) -> ClusteringConfig | None:
    values: dict[str, Any] = {}
    extra: dict[str, str] = {}
    for key, (value, source) in merged.items():
        spec = BY_KEY.get(key) or BY_ALIAS.get(key)
        if spec is None:
            if in_namespace(key) and key not in REMOVED_KEYS and not _plugin_declares(key):
                problems.append(_unknown_key(key, source))
            elif key in REMOVED_KEYS:
                log.warning("%s (%s): %s", key, source, REMOVED_KEYS[key])
            extra[key] = value
            continue
        if key != next(k for k in (spec.key, *spec.aliases) if k in merged):
            continue  # Hudi reads the main key first, then the aliases in order
        try:
            values[spec.key] = spec.parse(value)
        except ValueError as exc:
            problems.append(spec.problem(value, exc, given_as=key, source=source))
    if problems:
        return None
    parts = {part: {k: v for k, v in values.items() if MODEL_OF[k] == part} for part in ("", "writer", "task")}
    writer = WriterSettings.model_validate(parts["writer"])
    main = {**strategy_defaults(writer), **parts[""]}
    task = TaskSettings.model_validate(parts["task"])
    config = ClusteringConfig.model_validate({**main, "writer": writer, "task": task})
    config._raw = {k: v for k, (v, _) in merged.items()}
    config._extra = extra
    problems += _cross_checks(config)
    return config


def _cross_checks(config: ClusteringConfig) -> list[str]:
    out = []
    if config.inline and config.schedule_inline:
        out.append("hoodie.clustering.inline=true and hoodie.clustering.schedule.inline=true: only one of them may "
                   "be true (inline both schedules and executes)")  # fmt: skip
    w = config.writer
    if w.bucket_min_num_buckets and w.bucket_max_num_buckets and w.bucket_min_num_buckets > w.bucket_max_num_buckets:
        out.append(f"hoodie.bucket.index.min.num.buckets={w.bucket_min_num_buckets} is above "
                   f"hoodie.bucket.index.max.num.buckets={w.bucket_max_num_buckets}; accepted: min <= max")  # fmt: skip
    if consistent_hashing(w):  # Hudi's checks; plugin short names (no '.') are left to the plugin registry
        unsupported = "not supported with the consistent hashing bucket index; accepted:"
        plan, run = config.plan_strategy_class, config.execution_strategy_class
        if "." in plan and plan.lower() != catalogue.SPARK_CONSISTENT_BUCKET_PLAN.lower():
            out.append(f"{catalogue.PLAN_STRATEGY_CLASS}={plan!r}: {unsupported} {catalogue.SPARK_CONSISTENT_BUCKET_PLAN}")
        allowed = (catalogue.SPARK_CONSISTENT_BUCKET_EXECUTION, catalogue.SINGLE_SPARK_JOB_CONSISTENT_HASHING_EXECUTION)
        if "." in run and run not in allowed:
            out.append(f"{catalogue.EXECUTION_STRATEGY_CLASS}={run!r}: {unsupported} {', '.join(allowed)}")
    return out


def _unknown_key(key: str, source: str) -> str:
    def tail(k: str) -> str:  # compare what follows the namespace, or every key looks alike
        return k.removeprefix(catalogue.CLUSTERING_PREFIX).removeprefix(catalogue.LAYOUT_PREFIX)

    candidates = {tail(k): k for k in [*BY_KEY, *PLUGIN_KEYS] if in_namespace(k)}
    close = difflib.get_close_matches(tail(key), list(candidates), n=1, cutoff=0.6)
    hint = (f"did you mean '{candidates[close[0]]}'?" if close else "accepted: a key Hudi 1.1 defines "
            "(hudi.apache.org/docs/configurations#Clustering-Configs) or one a strategy's params model declares")
    return f"unknown key '{key}' ({source}): not a Hudi 1.1 clustering or layout-optimisation key; {hint}"


def _plugin_declares(key: str) -> bool:
    return plugin_declares(key)  # a strategy's params model may declare its own hoodie.clustering.plan.strategy.* keys


def _to_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value).strip()


