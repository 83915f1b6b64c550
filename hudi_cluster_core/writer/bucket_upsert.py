"""The MOR upsert of a bucket-indexed table (consistent hashing): one ``deltacommit`` of log files, rows in Arrow.

1. **Check** the rows against the table (record key, partition and ordering columns present; the data columns
   those of the table's schema): one :class:`~hudi_cluster_core.errors.ConfigError`, before anything is written.
   Duplicate keys in the batch are combined first, the highest ordering value wins.
2. **Locate**: each record's bucket, hence its file group, comes from the index (``locate``: the execution
   strategy's ``bucket_file_ids`` hook); no file is read, as with Hudi's bucket index.
3. **Consult the update strategy** for records bound to file groups under pending clustering
   (``on_pending_clustering``): it raises to reject; ``allow`` writes them as they are (the clustering yields at its
   commit); ``duplicate`` writes each of them twice, to its bucket and to its bucket after the clustering, in a
   log file named with the clustering's instant (Hudi's ``SparkConsistentBucketDuplicateUpdateStrategy``): readers
   see that copy only once the clustering completes, merged on top of its new base file.
4. **Write** one log file (one Avro data block) per file group, each a unit of work (``run_units``: here, or as
   Spark tasks); readers merge it with the slice by the ordering field, as for Hudi's own log files.
5. **Commit** (``writer.instant``, action ``deltacommit``; begun only if no clean began and no instant of the
   read was archived since step 2, else the table is read again): under the timeline lock, a clustering that
   completed meanwhile and replaced a file group this write appended to fails the write (its log would be
   hidden), unless the records were duplicated into that very clustering's buckets (and one that completed and
   was archived meanwhile, which the active timeline no longer shows, makes it read the table again); then the
   metadata table (``files`` partition) and the completed deltacommit. A failure anywhere undoes the instant.

Limits: the batch is routed in the driver (its rows shipped to the tasks); the metadata table is kept when it has only the ``files``
partition (other indexes of log records are refused before writing).
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from ..errors import ConfigError, WriteConflict
from ..mdt.partitions import disabled_by_config
from ..table import FileGroupId, HudiTable, load_table
from ..table.rollback_plans import pending_rollback_of
from ..table.schema import table_schema
from .append import key_and_partition, partition_values, with_meta_columns, write_partition_metadata
from .instant import complete_commit, writing
from ..write.log_file import avro_data_block, write_log_file, writer_schema
from .bloom_index import RunUnits, run_in_process
from .upsert import KEY, _latest_per_key, _ordering_field
from .write_unit import WriteUnit, lock_and_heartbeat

log = logging.getLogger(__name__)
# (table, partition, record keys, pending clustering instant or None) -> the file id of each record's bucket
Locate = Callable[[HudiTable, str, list, "str | None"], list]
# (file groups the batch writes, file group under pending clustering -> its instant) -> "allow" or "duplicate"
PendingPolicy = Callable[[frozenset[FileGroupId], Mapping[FileGroupId, str]], str]
MAINTAINED_MDT_PARTITIONS = ("files",)


def _check_metadata_table(table: HudiTable, raw: Mapping[str, str]) -> bool:
    """Whether to keep the MDT; ConfigError when it has indexes this writer can't keep for log records."""
    enabled = raw.get("hoodie.metadata.enable", "true").strip().lower() != "false"
    built = [p for p in table.config.metadata_partitions if p not in MAINTAINED_MDT_PARTITIONS]
    if enabled and built:
        raise ConfigError(f"{table.base_path}: the metadata table has {', '.join(built)}, which this writer does not "
                          f"keep for log records (it keeps: {', '.join(MAINTAINED_MDT_PARTITIONS)}); write with "
                          "Apache Hudi, or drop those indexes")  # fmt: skip
    return enabled


def _data_columns(table: HudiTable, rows: pa.Table) -> tuple[str, pa.Table]:
    """The table's schema and ``rows`` holding exactly the table's data columns."""
    schema = table_schema(table)
    if not schema:
        raise ConfigError(f"{table.base_path}: no table schema in its commits or hoodie.properties; write the first "
                          "batch with Apache Hudi")  # fmt: skip
    fields = [f["name"] for f in json.loads(schema).get("fields", []) if not f["name"].startswith("_hoodie_")]
    missing = [f for f in fields if f not in rows.column_names]
    extra = [c for c in rows.column_names if c not in fields]
    if missing or extra:
        what = f"column '{missing[0]}' is missing from the rows" if missing else \
            f"column '{extra[0]}' is not a column of the table (upsert does not evolve the schema)"
        raise ConfigError(f"{what}; the table's columns: {', '.join(fields)}")
    return schema, rows.select(fields)


def _no_lost_logs(duplicated: Mapping[FileGroupId, str]):
    """The commit-time check: no file group this write appended to was replaced since, unless by the clustering
    its records were duplicated for. Copies for a clustering rolled back meanwhile, or whose rollback began, are
    deleted and left out of the commit: the records are in their bucket, and an orphan copy would read as committed
    once archival passes the clustering's instant. (A rollback that began deletes the copies it finds with an
    older instant than this write's: committed here, the metadata table would list them again after it.)"""

    def check(table: HudiTable, instant: str, stats) -> None:
        for clustering in sorted(set(duplicated.values())):
            if table.timeline.get(clustering) is None or pending_rollback_of(table, clustering) is not None:
                _drop_copies(table, instant, clustering, stats)
        replacing = table.view().replacing_instants()
        written = {FileGroupId(s["partitionPath"], s["fileId"]) for part in stats.values() for s in part}
        lost = sorted(g for g in written if g in replacing and duplicated.get(g) != replacing[g])
        if lost:
            names = ", ".join(f"{g.partition or '(none)'}/{g.file_id} (by {replacing[g]})" for g in lost)
            raise WriteConflict(f"write {instant} not committed: a clustering replaced file group(s) it appended "
                                f"to while it ran: {names}; its files were removed, retry the write")  # fmt: skip

    return check


def _drop_copies(table: HudiTable, instant: str, clustering: str, stats: dict[str, list[dict]]) -> None:
    marker = f"_{clustering}.log."
    for partition, part in stats.items():
        for stat in [s for s in part if marker in s["path"]]:
            table.storage.delete_file(table.storage.join(stat["path"]))
            part.remove(stat)
    log.warning("write %s: clustering %s was rolled back while it ran: its copies for it are dropped (the records "
                "are in their buckets)", instant, clustering)  # fmt: skip


@dataclass(frozen=True)
class WriteLogFile(WriteUnit):
    """One unit of work (here, or a Spark task): one file group's records as one log file of one Avro block."""

    partition: str
    file_id: str
    name_instant: str  # the instant, or the pending clustering's for a duplicate copy
    rows: pa.Table  # meta columns (commit time and sequence numbers set here) and data columns
    schema_json: str
    base_instant: str | None

    def __call__(self) -> dict:
        n = self.rows.num_rows
        rows = self.rows.set_column(0, "_hoodie_commit_time", pa.array([self.instant] * n, pa.string()))
        rows = rows.set_column(1, "_hoodie_commit_seqno", self.sequence_numbers(n))
        rows = rows.set_column(4, "_hoodie_file_name", pa.array([self.file_id] * n, pa.string()))
        # a copy is named with the clustering's instant, not this write's: its token carries the writing instant,
        # or a retry of a write that failed (its copy deleted) would write a file of the same name, which undoing
        # the failed write (by its markers) then deletes, committed
        token = self.write_token(self.instant if self.name_instant != self.instant else None)
        return write_log_file(
            self.storage(), partition=self.partition, file_id=self.file_id,
            writing_instant=self.instant, name_instant=self.name_instant, write_token=token,
            block=avro_data_block(self.instant, rows, self.schema_json), records=n, base_instant=self.base_instant,
        )  # fmt: skip


def upsert(base_path: str | Path, rows: pa.Table, *, options: Mapping[str, str] | None = None, locate: Locate,
           on_pending_clustering: PendingPolicy | None = None, storage_options: Mapping[str, str] | None = None,
           run_units: RunUnits = run_in_process) -> dict:  # fmt: skip
    """Upsert ``rows`` into the bucket-indexed MOR table at ``base_path`` in one deltacommit (module docstring)."""
    raw = {k: str(v) for k, v in (options or {}).items()}
    table = load_table(base_path, storage_options)
    ordering = _ordering_field(table)
    key, partition_field = key_and_partition(table, rows, "the bucket-index upsert", {"ordering": ordering},
                                             table_type="MERGE_ON_READ")  # fmt: skip
    metadata_enable = _check_metadata_table(table, raw)
    schema, data = _data_columns(table, _latest_per_key(rows, key, ordering))
    schema_json = writer_schema(schema)
    hive = table.config.props.get("hoodie.datasource.write.hive_style_partitioning", "false") == "true"
    full = with_meta_columns(data, "", key, partition_values(data, partition_field, hive))

    # records -> (partition, file id, log-name instant): their bucket's file group, then the copies
    partitions = full.column("_hoodie_partition_path").to_numpy(zero_copy_only=False)
    targets: dict[tuple[str, str, str | None], list[int]] = defaultdict(list)
    per_partition: dict[str, np.ndarray] = {p: np.flatnonzero(partitions == p) for p in sorted(set(partitions))}
    located: dict[str, list[str]] = {}
    for partition, index in per_partition.items():
        keys = full.column(KEY).take(pa.array(index)).to_pylist()
        located[partition] = list(locate(table, partition, keys, None))
        for row, file_id in zip(index, located[partition]):
            targets[(partition, file_id, None)].append(int(row))
    pending = table.view().pending_clustering_file_groups()
    touched = frozenset(FileGroupId(p, f) for p, f, _ in targets) & set(pending)
    action = "allow"
    if touched and on_pending_clustering is not None:
        action = on_pending_clustering(touched, pending)  # raises to reject: nothing is written yet
    duplicated: dict[FileGroupId, str] = {}
    if touched and action == "duplicate":
        for partition in sorted({g.partition for g in touched}):
            index = per_partition[partition]
            bound = [(row, f) for row, f in zip(index, located[partition]) if FileGroupId(partition, f) in touched]
            for clustering in sorted({pending[FileGroupId(partition, f)] for _, f in bound}):
                rows_for = [int(row) for row, f in bound if pending[FileGroupId(partition, f)] == clustering]
                keys = full.column(KEY).take(pa.array(rows_for)).to_pylist()
                for row, file_id in zip(rows_for, locate(table, partition, keys, clustering)):
                    targets[(partition, file_id, clustering)].append(row)
                duplicated.update({FileGroupId(partition, f): clustering for _, f in bound
                                   if pending[FileGroupId(partition, f)] == clustering})  # fmt: skip

    slices = {(s.partition, s.file_id): s for s in table.view().latest_file_slices(partitions=list(per_partition))}
    wait_ms, heartbeat_ms = lock_and_heartbeat(raw)
    # begun only if no clean began, and no instant of this read was archived, since the read: a resize that
    # completed meanwhile, its old buckets cleaned and its replacecommit archived, would leave this write routing
    # records to buckets no replacecommit names any more (every key then read twice); else the table is read again
    with writing(table, "UPSERT", wait_ms, heartbeat_ms, action="deltacommit", read_at=table.timeline) as instant:
        for partition in per_partition:
            write_partition_metadata(table.storage, partition, instant)
        options_tuple = tuple(sorted((storage_options or {}).items()))
        units = []
        for number, ((partition, file_id, copy_for), rows_at) in enumerate(sorted(targets.items(), key=str)):
            current = slices.get((partition, file_id))
            units.append(WriteLogFile(
                table.storage.base_uri, options_tuple, instant, number, partition, file_id, copy_for or instant,
                full.take(pa.array(rows_at)), schema_json, current.base_instant if current is not None else None,
            ))  # fmt: skip
        stats: dict[str, list[dict]] = defaultdict(list)
        for stat in run_units(units):
            stats[stat["partitionPath"]].append(stat)
        complete_commit(table, instant, stats, operation="UPSERT", schema=schema,
                        metadata_enable=metadata_enable, disabled_indexes=disabled_by_config(raw), wait_ms=wait_ms,
                        action="deltacommit", check=_no_lost_logs(duplicated), read_at=table.timeline)  # fmt: skip
    copies = sum(len(r) for (_, _, c), r in targets.items() if c is not None)
    summary = {
        "instant_time": instant, "rows": data.num_rows, "log_files": sum(len(s) for s in stats.values()),
        "duplicated": copies, "partitions": sorted(per_partition),
    }  # fmt: skip
    log.info("upsert %s: %d record(s) into %d log file(s)%s", instant, data.num_rows, summary["log_files"],
             f", {copies} duplicated into the buckets of pending clustering" if copies else "")  # fmt: skip
    return summary
