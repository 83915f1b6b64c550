"""Which metadata-table partitions a clustering commit keeps up to date, and the records each one gets.

A builder turns what the commit wrote (:class:`CommitFiles`) into the records of one MDT partition. The clustering
commit (``run.commit``) writes one partition per builder whose partition the table has built; a partition with no
builder here (an expression or secondary index, say), or one Hudi would not keep (:data:`REQUIRES`,
:data:`PARTITIONED_ONLY`), is dropped alone, as Hudi drops an index it does not maintain.

Builders see only the data table and the commit: the new base files (their write stats) and the file groups they
replace. They read what else they need (footers of the new files, the MDT's current records) themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ..io.storage import Storage
from . import bloom_filters, column_stats
from .commit_files import CommitFiles
from .encoded import EncodedRecords
from .record_index import RECORD_INDEX_PARTITION, record_index_records
from .record_index import unsupported as record_index_unsupported
from .records import FILES_PARTITION, MetadataRecord, files_from_write_stats, files_records, files_records_from_write_stats

# A builder returns records, or, for a partition with a record per data-table key, records already encoded.
Builder = Callable[[CommitFiles], "Sequence[MetadataRecord] | EncodedRecords"]


def _files(commit: CommitFiles) -> list[MetadataRecord]:
    if commit.deleted:
        return files_records(files_from_write_stats(commit.write_stats), commit.deleted)
    return files_records_from_write_stats(commit.write_stats)


# MDT partition name (as ``hoodie.table.metadata.partitions`` spells it) -> its builder. Order is write order.
BUILDERS: dict[str, Builder] = {
    FILES_PARTITION: _files,
    column_stats.COLUMN_STATS_PARTITION: column_stats.column_stats_records,
    column_stats.PARTITION_STATS_PARTITION: column_stats.partition_stats_records,
    bloom_filters.BLOOM_FILTERS_PARTITION: bloom_filters.bloom_filter_records,
    RECORD_INDEX_PARTITION: record_index_records,
}
# A partition kept only with another: Hudi computes partition stats from the column_stats partition (and fails a
# commit without it), so partition_stats without column_stats is dropped.
REQUIRES: dict[str, str] = {column_stats.PARTITION_STATS_PARTITION: column_stats.COLUMN_STATS_PARTITION}
# Partitions Hudi maintains only for partitioned tables (``MetadataPartitionType.PARTITION_STATS`` is enabled
# only when ``tableConfig.isTablePartitioned()``): on a non-partitioned table one is dropped, as Hudi's writer does.
PARTITIONED_ONLY = frozenset({column_stats.PARTITION_STATS_PARTITION})


# MDT partition name -> why a table's partition can't be kept although it has a builder (None: it can).
UNSUPPORTED: dict[str, Callable[[Storage, Mapping[str, str]], str | None]] = {
    RECORD_INDEX_PARTITION: record_index_unsupported,
}


def why_not_maintained(storage: Storage, table_config: Mapping[str, str], partition: str) -> str | None:
    """Why this table's MDT ``partition`` can't be kept up to date by a clustering commit (None: it can)."""
    if partition not in BUILDERS:
        return "clustering has no builder for it"
    check = UNSUPPORTED.get(partition)
    return check(storage, table_config) if check else None


def maintained(partition: str, *, partitioned: bool = True) -> bool:
    """Whether a clustering commit can keep MDT ``partition`` up to date (on a partitioned table or not)."""
    return partition in BUILDERS and (partitioned or partition not in PARTITIONED_ONLY)


# Keys a user sets to false to have an index dropped rather than kept (Hudi's writer drops whatever its config does
# not enable; we keep what the table has unless the config turns it off explicitly).
DISABLE_KEYS = {
    "hoodie.metadata.index.column.stats.enable": "column_stats",
    "hoodie.metadata.index.partition.stats.enable": "partition_stats",
    "hoodie.metadata.index.bloom.filter.enable": "bloom_filters",
    "hoodie.metadata.record.index.enable": "record_index",
}


def disabled_by_config(options: Mapping[str, str]) -> dict[str, str]:
    """MDT partition -> the key that turns it off, for each index the user's config sets to ``false``."""
    return {partition: key for key, partition in DISABLE_KEYS.items()
            if str(options.get(key, "")).strip().lower() == "false"}  # fmt: skip
