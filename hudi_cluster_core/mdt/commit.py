"""Keeping the metadata table (MDT) with a data-table commit: what is kept, and the MDT deltacommit itself.

Shared by every commit this project writes to the data table: the clustering's replacecommit (``run.commit``)
and our writers' commits (``write.append``, ``write.upsert``). The order is Hudi's (docs/format.md#mdt-commit-order):
the MDT deltacommit of the data instant ``T`` (requested, inflight, log files, completed) completes **before** the data
instant does, so a reader never sees a completed data instant the MDT does not list.

What is kept (:func:`prepare_metadata_table`): every built partition ``mdt.partitions`` has a builder for and
Hudi would keep; a partition with no builder, one Hudi would not keep, one this code can't route into, or one
the user's config turns off is dropped alone, with a warning naming it. The whole MDT is dropped when the user
asks (``hoodie.metadata.enable=false``), for v6 tables, and for an MDT this code can't read or write.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from ..failpoints import failpoint
from ..table import HudiTable
from ..table.metadata_table import (
    FILES_PARTITION, drop_metadata_partitions, drop_metadata_table, has_metadata_table, metadata_partitions,
)  # fmt: skip
from . import deltacommit as mdt_deltacommit
from .commit_files import CommitFiles
from .partitions import BUILDERS, REQUIRES, maintained, why_not_maintained

log = logging.getLogger(__name__)


def _why_not_kept(table: HudiTable) -> str | None:
    """Why the MDT can't be kept by this commit, or None when its ``files`` partition can be written."""
    storage = table.storage
    if table.config.version < 8:
        return f"table version {table.config.version} (the metadata table is written for versions 8 and 9 only)"
    if FILES_PARTITION not in metadata_partitions(storage):
        return "its files partition is not built (hoodie.table.metadata.partitions does not name it)"
    try:
        mdt_deltacommit.metadata_timeline(storage)
        mdt_deltacommit.file_group_ids(storage, FILES_PARTITION)
    except Exception as exc:  # noqa: BLE001 - any MDT we can't read is one we must not write into
        if _storage_failure(exc):
            raise
        return f"it can't be read here ({exc})"
    return None


def _storage_failure(exc: BaseException | None) -> bool:
    """Whether ``exc`` is (or was raised from) a failed storage request: a timeout or a refused request says
    nothing about the metadata table, so the commit fails (and is retried) and nothing is dropped. A missing or
    malformed metadata table is another matter: that one is dropped."""
    while exc is not None:
        if isinstance(exc, OSError) and not isinstance(exc, FileNotFoundError):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def _partition_maintainable(table: HudiTable, partition: str) -> bool:
    """Whether ``partition`` has a builder that supports this table and file groups this code can route into
    (a warning names it when not)."""
    why = why_not_maintained(table.storage, table.config.props, partition)
    if why is not None:
        log.warning("metadata-table partition %s can't be kept up to date: %s", partition, why)
        return False
    try:
        mdt_deltacommit.file_group_ids(table.storage, partition)
    except Exception as exc:  # noqa: BLE001 - a partition we can't route into is one we must not write
        if _storage_failure(exc):
            raise
        log.warning("metadata-table partition %s can't be written here (%s)", partition, exc)
        return False
    return True


def prepare_metadata_table(table: HudiTable, metadata_enable: bool, disabled: Mapping[str, str] | None = None) -> list[str]:
    """Drop what this commit can't keep up to date; returns the MDT partitions to write, in write order (empty:
    no metadata table is kept). ``metadata_enable`` is the user's ``hoodie.metadata.enable``; ``disabled`` maps
    an MDT partition to the key the user set to false (``mdt.partitions.disabled_by_config``)."""
    storage = table.storage
    if not has_metadata_table(storage) and not metadata_partitions(storage) and not metadata_partitions(storage, inflight=True):
        return []
    if not metadata_enable:
        log.info("hoodie.metadata.enable=false was asked: removing the metadata table %s as Hudi does; Apache Hudi "
                 "rebuilds it on its next write with the metadata table enabled", storage.join(".hoodie", "metadata"))  # fmt: skip
        drop_metadata_table(storage)
        return []
    why = _why_not_kept(table)
    if why is not None:
        log.info("the metadata table can't be kept up to date: %s", why)
        drop_metadata_table(storage)
        return []
    built = metadata_partitions(storage)
    partitioned = table.config.is_partitioned
    keep = [p for p in BUILDERS if p in built and maintained(p, partitioned=partitioned)
            and (p == FILES_PARTITION or _partition_maintainable(table, p))]  # fmt: skip
    for partition in [p for p in keep if p in (disabled or {})]:
        log.warning("metadata-table partition %s is dropped, as %s=false asks", partition, (disabled or {})[partition])
        keep.remove(partition)
    keep = [p for p in keep if REQUIRES.get(p, p) in keep]
    # a partition still being built (inflight) would miss this commit's records: Hudi re-indexes it from storage
    drop = [p for p in built + metadata_partitions(storage, inflight=True) if p not in keep]
    drop_metadata_partitions(storage, drop)
    return keep


def write_metadata_deltacommit(table: HudiTable, partitions: list[str], commit: CommitFiles) -> str:
    """The MDT deltacommit of the commit's instant with the records of ``partitions``; returns its completion
    time (the data instant must complete after it). A leftover of an earlier attempt at the same instant is
    removed first."""
    storage, instant_time = table.storage, commit.instant_time
    stale = mdt_deltacommit.rollback(storage, instant_time)
    if stale:
        log.info("instant %s: removed %d leftover metadata-table file(s) of an earlier attempt", instant_time, len(stale))
    mdt_deltacommit.begin(storage, instant_time)
    failpoint("mdt-after-inflight")
    mdt_stats: list[dict] = []
    for partition in partitions:
        records = BUILDERS[partition](commit)
        if records:
            mdt_stats += mdt_deltacommit.write_partition(storage, instant_time, partition, records,
                                                         first_task=len(mdt_stats))  # fmt: skip
    failpoint("mdt-after-log-files")
    completion = table.timeline.completion_time_after(instant_time)
    mdt_deltacommit.complete(storage, instant_time, mdt_stats, completion_time=completion)
    failpoint("mdt-after-deltacommit")
    return completion


def keep_metadata_table(table: HudiTable, commit: CommitFiles, *, metadata_enable: bool = True,
                        disabled: Mapping[str, str] | None = None) -> str | None:  # fmt: skip
    """Prepare the MDT and, when one is kept, write the commit's MDT deltacommit. Returns its completion time,
    or None when no metadata table is kept. Call it before the data instant completes."""
    kept = prepare_metadata_table(table, metadata_enable, disabled)
    if not kept:
        return None
    table = table.reload()  # the config no longer names what was dropped
    commit = CommitFiles(table.storage, commit.instant_time, commit.write_stats, commit.replaced, table.config.props,
                         commit.new_keys)  # fmt: skip
    return write_metadata_deltacommit(table, kept, commit)


def completion_after(table: HudiTable, instant_time: str, mdt_completion: str | None) -> str:
    """The data instant's completion time: later than the MDT deltacommit's (docs/format.md#mdt-valid-instants)."""
    completion = table.timeline.completion_time_after(instant_time)
    while mdt_completion is not None and completion <= mdt_completion:
        completion = table.timeline.new_instant_time()
    return completion
