"""The COW upsert writer of the seeds' implementation doc: one Hudi ``commit`` (operation UPSERT), rows in Arrow.

1. **Check** the rows against the table (record key, partition and ordering columns present, data columns and
   types those of the table's base files): a mismatch is one :class:`~hudi_cluster_core.errors.ConfigError`,
   before anything is written. Duplicate keys in the batch are combined first, the highest ordering value wins
   (Hudi's ``combine.before.upsert``).
2. **Tag** with the BLOOM index (``writer.bloom_index``): which keys already live in which file group.
3. **Consult the update strategy**: keys bound to file groups under pending clustering are handed to the
   caller's ``on_pending_clustering`` (the entry layer resolves ``hoodie.clustering.updates.strategy``), which
   raises to reject the write; still nothing is written.
4. **Profile** the work (``writer.workload``): updated file groups rewritten once, inserts packed into small
   files or new file groups.
5. **Write** each file group as one unit of work (``run_units``: here, or as Spark tasks): a new base file in the
   same file group with the new instant, the COW merge honouring the ordering field (an incoming record replaces
   the stored one unless the stored ordering value is greater, as Hudi's ``DefaultHoodieRecordPayload``; without
   an ordering field the incoming record wins); rows the batch does not change are copied as they are.
6. **Commit** (``writer.instant``): the MDT is kept (the record index gets the inserted keys; updated keys keep
   their file group, so their entries stay), then the completed ``commit`` with Hudi's write stats
   (``numUpdateWrites``, ``numInserts``, ``prevCommit``...). A failure anywhere undoes the instant.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..errors import ConfigError
from ..mdt.partitions import disabled_by_config
from ..table import FileGroupId, HudiTable, load_table
from ..table.schema import table_schema
from .append import key_and_partition, partition_values, with_meta_columns, write_partition_metadata
from ..write.avro_schema import arrow_to_avro_schema
from ..write.base_file import META_COLUMNS, ParquetOptions, WriteContext, write_base_file
from .bloom_index import RunUnits, locate_keys, run_in_process
from .instant import complete_commit, writing
from .workload import FileGroupWork, Sizing, profile_partition
from .write_unit import WriteUnit, lock_and_heartbeat

log = logging.getLogger(__name__)
KEY = "_hoodie_record_key"
# (the file groups the batch updates, file group under pending clustering -> its instant); raises to reject (what
# it returns is for bucket-index writers and ignored here)
PendingClusteringPolicy = Callable[[frozenset[FileGroupId], Mapping[FileGroupId, str]], object]


@dataclass(frozen=True)
class WriteFileGroup(WriteUnit):
    """One unit of work: the new base file of one file group (an existing one rewritten, or a new one)."""

    work: FileGroupWork
    ordering: str | None
    options: ParquetOptions

    def __call__(self) -> tuple[dict, pa.Array]:
        storage = self.storage()
        work = self.work
        incoming = pa.concat_tables([work.updates, work.inserts])
        incoming = incoming.set_column(0, "_hoodie_commit_time", pa.array([self.instant] * incoming.num_rows, pa.string()))
        updated = 0
        if work.base is None:
            rows, fresh = incoming, np.ones(incoming.num_rows, bool)
        else:
            with storage.fs.open_input_file(storage.join(work.base)) as handle:
                old = pq.read_table(handle).cast(incoming.schema)
            rows, fresh, updated = _merge(old, incoming, work.updates.num_rows, self.ordering)
        seqno = self.sequence_numbers(rows.num_rows)
        position = rows.schema.get_field_index("_hoodie_commit_seqno")
        rows = rows.set_column(position, "_hoodie_commit_seqno", pc.if_else(pa.array(fresh), seqno, rows.column(position)))
        context = WriteContext(self.base_uri, self.instant, work.partition, self.write_token(), self.options)
        stat = write_base_file(storage, context, rows, file_id=work.file_id)
        stat.update(prevCommit=work.prev_commit, numUpdateWrites=updated, numInserts=work.inserts.num_rows)
        return stat, work.inserts.column(KEY).combine_chunks()


def _merge(old: pa.Table, incoming: pa.Table, n_updates: int, ordering: str | None) -> tuple[pa.Table, np.ndarray, int]:
    """The COW merge: ``old`` in its order with each updated row replaced by its incoming version when that wins,
    then the inserts. Returns the rows, which of them are written by this instant, and the update count."""
    updates = incoming.slice(0, n_updates)
    position = pc.index_in(old.column(KEY), value_set=updates.column(KEY))
    matched = pc.is_valid(position)
    wins = matched
    if ordering is not None:
        stored_greater = pc.fill_null(pc.greater(old.column(ordering), pc.take(updates.column(ordering), position)), False)
        wins = pc.and_(matched, pc.invert(stored_greater))
    wins_np = wins.to_numpy(zero_copy_only=False)
    take = np.where(wins_np, old.num_rows + pc.fill_null(position, 0).to_numpy(zero_copy_only=False), np.arange(old.num_rows))
    inserts = np.arange(old.num_rows + n_updates, old.num_rows + incoming.num_rows)
    rows = pa.concat_tables([old, incoming]).take(pa.array(np.concatenate([take, inserts])))
    fresh = np.concatenate([wins_np, np.ones(len(inserts), bool)])
    return rows, fresh, int(pc.sum(matched.cast(pa.int64())).as_py() or 0)


def _ordering_field(table: HudiTable) -> str | None:
    props = table.config.props
    fields = props.get("hoodie.table.ordering.fields") or props.get("hoodie.table.precombine.field") or ""
    names = [f.strip() for f in fields.split(",") if f.strip()]
    if len(names) > 1:
        raise ConfigError(f"{table.base_path}: upsert supports one ordering field; the table has {names}")
    return names[0] if names else None


def _file_schema(table: HudiTable) -> pa.Schema | None:
    """The Arrow schema of the table's newest base file (meta columns included); None for a table without one."""
    slices = [s for s in table.view().latest_file_slices() if s.base_file is not None]
    if not slices:
        return None
    newest = max(slices, key=lambda s: s.base_instant)
    with table.storage.fs.open_input_file(table.storage.join(newest.relative_path(newest.base_file.name))) as handle:  # type: ignore[union-attr]
        return pq.read_schema(handle).remove_metadata()


def _aligned(rows: pa.Table, schema: pa.Schema) -> pa.Table:
    """The rows with the table's data columns, in its order and types; ConfigError naming the first mismatch."""
    data = [f for f in schema if f.name not in META_COLUMNS]
    accepted = ", ".join(f"{f.name} ({f.type})" for f in data)
    for field_ in data:
        if field_.name not in rows.column_names:
            raise ConfigError(f"column '{field_.name}' is missing from the rows; the table's columns: {accepted}")
    extra = [c for c in rows.column_names if c not in schema.names]
    if extra:
        raise ConfigError(f"column '{extra[0]}' is not a column of the table (upsert does not evolve the schema); "
                          f"the table's columns: {accepted}")  # fmt: skip
    columns = []
    for field_ in data:
        column = rows.column(field_.name)
        if column.type != field_.type:
            try:
                column = column.cast(field_.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                raise ConfigError(f"column '{field_.name}' has type {rows.schema.field(field_.name).type}; the table "
                                  f"stores {field_.type}") from None  # fmt: skip
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=pa.schema(data))


def _latest_per_key(rows: pa.Table, key: str, ordering: str | None) -> pa.Table:
    """One row per key: the one with the greatest ordering value (the last given on ties, or without one)."""
    keys = rows.column(key)
    if pc.count_distinct(keys).as_py() == rows.num_rows:
        return rows
    position = pa.array(np.arange(rows.num_rows))
    sort = [(key, "ascending")] + ([(ordering, "ascending")] if ordering else []) + [("__position", "ascending")]
    order = pc.sort_indices(rows.append_column("__position", position), sort_keys=sort, null_placement="at_start")
    ordered = rows.take(order)
    sorted_keys = ordered.column(key).combine_chunks()
    last = pc.not_equal(sorted_keys.slice(0, len(sorted_keys) - 1), sorted_keys.slice(1))
    keep = pa.concat_arrays([last, pa.array([True])])
    return ordered.filter(keep)


def upsert(
    base_path: str | Path, rows: pa.Table, *, options: Mapping[str, str] | None = None,
    run_units: RunUnits = run_in_process, on_pending_clustering: PendingClusteringPolicy | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> dict:  # fmt: skip
    """Upsert ``rows`` into the COW table at ``base_path`` in one commit; returns a summary (module docstring).
    ``options``: Hudi writer keys (``hoodie.parquet.*``, ``hoodie.metadata.*``...)."""
    raw = {k: str(v) for k, v in (options or {}).items()}
    table = load_table(base_path, storage_options)
    ordering = _ordering_field(table)
    key, partition = key_and_partition(table, rows, "upsert", {"ordering": ordering})
    data = _latest_per_key(rows, key, ordering)
    hive = table.config.props.get("hoodie.datasource.write.hive_style_partitioning", "false") == "true"
    schema = _file_schema(table)
    if schema is not None:
        data = _aligned(data, schema)
    full = with_meta_columns(data, "", key, partition_values(data, partition, hive))  # commit time set per unit
    if schema is not None:
        full = full.select(schema.names).cast(schema)

    view = table.view()
    indices: dict[str, list[int]] = defaultdict(list)
    for index, value in enumerate(full.column("_hoodie_partition_path").to_pylist()):
        indices[value].append(index)
    by_partition = {p: full.take(pa.array(ix)) for p, ix in sorted(indices.items())}
    keys = {p: part.column(KEY).combine_chunks() for p, part in by_partition.items()}
    slices: dict[str, list] = defaultdict(list)
    for file_slice in view.latest_file_slices(partitions=list(by_partition)):
        slices[file_slice.partition].append(file_slice)
    options_tuple = tuple(sorted((storage_options or {}).items()))
    found = locate_keys(table.storage, keys, slices, run_units, dict(options_tuple))

    pending = view.pending_clustering_file_groups()
    updated = frozenset(FileGroupId(p, f) for p, ids in found.items() for f in ids)
    if updated & set(pending) and on_pending_clustering is not None:
        on_pending_clustering(updated, pending)  # raises to reject: nothing is written yet
    excluded = set(pending) | set(view.pending_write_file_groups())
    sizing = Sizing.from_hoodie(table, raw)
    work = [w for p, part in by_partition.items()
            for w in profile_partition(p, part, keys[p], found.get(p, {}), slices[p], sizing, excluded)]  # fmt: skip

    parquet = ParquetOptions.from_hoodie(raw)
    wait_ms, heartbeat_ms = lock_and_heartbeat(raw)
    with writing(table, "UPSERT", wait_ms, heartbeat_ms, read_at=table.timeline) as instant:
        for partition_path in by_partition:
            write_partition_metadata(table.storage, partition_path, instant)
        units = [WriteFileGroup(table.storage.base_uri, options_tuple, instant, i, w, ordering, parquet)
                 for i, w in enumerate(work)]  # fmt: skip
        results = run_units(units)
        stats: dict[str, list[dict]] = defaultdict(list)
        for stat, _ in results:
            stats[stat["partitionPath"]].append(stat)
        new_keys = {stat["path"]: inserted for stat, inserted in results}
        schema_text = table_schema(table) or arrow_to_avro_schema(data.schema, table.config.name)
        metadata_enable = raw.get("hoodie.metadata.enable", "true").strip().lower() != "false"
        complete_commit(table, instant, stats, operation="UPSERT", schema=schema_text, new_keys=new_keys,
                        metadata_enable=metadata_enable, disabled_indexes=disabled_by_config(raw),
                        wait_ms=wait_ms, read_at=table.timeline)  # fmt: skip
    summary = {
        "instant_time": instant, "rows": data.num_rows,
        "updates": sum(s["numUpdateWrites"] for part in stats.values() for s in part),
        "inserts": sum(s["numInserts"] for part in stats.values() for s in part),
        "files_rewritten": sum(1 for w in work if w.base is not None),
        "files_created": sum(1 for w in work if w.base is None), "partitions": sorted(by_partition),
    }  # fmt: skip
    log.info("upsert %s: %d update(s), %d insert(s), %d file(s) rewritten, %d new", instant, summary["updates"],
             summary["inserts"], summary["files_rewritten"], summary["files_created"])  # fmt: skip
    return summary
