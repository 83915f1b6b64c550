"""``SparkConsistentBucketClusteringExecutionStrategy``: rewrite buckets into their child buckets' file groups.

Per group (inside a Spark task): the group's rows (MOR slices merged, log-only file groups included) go to the
REPLACE children named in ``clustering.group.child.node``: with one child every row goes to it (merge, rewrite);
with more (split) each row goes to the child its record key hashes to. Each child with rows becomes one base file
``<child fileIdPrefix>-0_<token>_<T>.parquet`` (a bucket is one file group, whatever its size), rows sorted by
``hoodie.clustering.plan.strategy.sort.columns`` when the plan names any. A child without rows gets no file, as in
Hudi; the next write into that bucket creates its file group.

On the driver, once every group succeeded and before the completed instant (``execution_before_commit``), the new
``<T>.hashing_meta`` of each partition is written: the current metadata (its ``seqNo`` must equal the plan's
``clustering.group.sequence.no``) with the children applied, all nodes ``NORMAL``, ``seqNo + 1``, instant ``T``,
``numBuckets`` unchanged (as Hudi 1.1.1 writes it). No ``<T>.commit`` marker is written: before the replacecommit
completes it would make the new buckets count for writers of a clustering that may still fail; once ``T`` is a
completed replacecommit Hudi's writers accept the file and create the marker themselves.
"""

from __future__ import annotations

import logging
from collections import defaultdict

import numpy as np
from hudi_cluster_core.sdk import (
    ColumnsKey, ExecutionStrategy, PlanError, RangeSpill, SortAndSizeParams, group_schema, hookimpl, keys,
    load_table_config, range_allowance, slice_batches, spill_directory, write_run,
)  # fmt: skip
from pydantic import Field

from .hashing import (
    REPLACE, HashingMetadata, Node, Ring, hash_fields, list_metadata_files, load_valid_metadata, read_metadata,
    record_hash, write_metadata,
)  # fmt: skip
from .plan import group_children
from .routing import bucket_file_ids

log = logging.getLogger(__name__)
_RUN = "org.apache.hudi.client.clustering.run.strategy."


class ConsistentBucketExecutionParams(SortAndSizeParams):
    """The sort columns the plan carries; ``columns`` is the core's one parse of them."""

    sort_columns: str | None = Field(
        None, alias=keys.SORT_COLUMNS,
        description="Comma-separated columns to sort each bucket's rows by; none keeps input order.",
    )  # fmt: skip


# ------------------------------------------------------------------------------------------------ writing


def assign_children(record_keys: list[str], children: list[Node], fields: list[str]) -> np.ndarray:
    """Index into ``children`` (REPLACE nodes, ring order) of each record: by hash when there are several."""
    if len(children) == 1:
        return np.zeros(len(record_keys), dtype=np.int64)
    values = np.array([c.value for c in children], dtype=np.int64)
    hashes = np.fromiter((record_hash(k, fields) for k in record_keys), dtype=np.int64, count=len(record_keys))
    index = np.searchsorted(values, hashes, side="left")
    index[index == len(values)] = 0
    return index


VERIFY_ROWS_PER_SLICE = 2000


def plan_ring(task, seq_no: int):
    """The ring of the hashing metadata the plan was made from (its ``seqNo``, naming the group's file groups),
    or None (with a warning) when none is found."""
    partition = task.partition
    storage = task.storage
    wanted = set(task.group.file_ids)
    for instant in reversed(list_metadata_files(storage, partition).hashing):
        try:
            candidate = read_metadata(storage, partition, instant)
        except (OSError, ValueError):
            continue
        if candidate.seq_no == seq_no and wanted <= set(Ring(candidate.nodes).by_file_id):
            return Ring(candidate.nodes)
    log.warning("group %d (%s): no hashing metadata with seqNo %d names its file groups; hash fields not checked",
                task.group.index, partition, seq_no)  # fmt: skip
    return None


def check_rows_hash_home(ring, partition: str, input_slice, keys: list[str], fields: list[str]) -> None:
    """The first rows' record keys (``task.record_keys``: virtual keys too) hash into their slice's bucket."""
    if ring is None:
        return
    stray = [k for k in keys if ring.bucket_of_key(k, fields).file_id != input_slice.file_id]
    if stray:
        raise PlanError(
            f"file group {partition}/{input_slice.file_id}: record key {stray[0]!r} does not hash into its bucket "
            f"with hash fields {fields}; set hoodie.bucket.index.hash.field to what the table's writers use"
        )


def write_children(task, targets: list[Node], fields: list[str], ring) -> list[dict]:
    """Every row of the group into the file of the child bucket its key hashes to, within the task's memory
    budget: rows are streamed slice by slice (MOR slices merged by hudi-rs as they stream) into one spill run
    per child (held in memory while they fit), then each child's run is written, sorted out of core when the
    plan names sort columns, as that child's one file."""
    schema = group_schema(task)
    columns = task.params.columns if task.params else []
    key = ColumnsKey(columns, task.settings.get("hoodie.layout.optimize.strategy", "linear"), schema.names)
    allowance = range_allowance(task)
    stats: list[dict] = []
    with spill_directory(task) as spill_dir:
        spill = RangeSpill(spill_dir, schema, len(targets), prefix="child", keep_in_memory=allowance)
        checked = set()
        for input_slice, batch in slice_batches(task, schema):
            if input_slice.file_id not in checked:
                first = task.record_keys(batch.slice(0, VERIFY_ROWS_PER_SLICE)).to_pylist()
                check_rows_hash_home(ring, task.partition, input_slice, first, fields)
                checked.add(input_slice.file_id)
            task.note_input(batch)  # every row goes to a child: all of them are this task's (the rewrite check)
            spill.add(batch, assign_children(task.record_keys(batch).to_pylist(), targets, fields))
        for run in spill.filled():  # a child without rows gets no file, as in Hudi
            writer = task.rolling_writer(file_id=targets[run.index].file_id)
            try:
                if columns:
                    write_run(run, key, writer, allowance, spill_dir, schema)
                else:
                    for batch in run.batches():
                        writer.write(batch)
                    run.discard()
                stats.extend(writer.close())
            except BaseException:
                writer.abort()
                raise
    return stats


class ConsistentBucketExecutionStrategy(ExecutionStrategy):
    name = "consistent-bucket"
    kind = "execution"
    java_class_names = (
        _RUN + "SparkConsistentBucketClusteringExecutionStrategy",
        _RUN + "SingleSparkJobConsistentHashingExecutionStrategy",
    )
    params_model = ConsistentBucketExecutionParams
    summary = "Rewrites each bucket group into one base file per child bucket (<fileIdPrefix>-0), then writes the new hashing metadata."

    @hookimpl
    def execute_group(self, task):
        _, seq_no, children = group_children(task.group)
        targets = sorted((c for c in children if c.tag == REPLACE), key=lambda c: c.value)
        fields = hash_fields(task.settings.get("hoodie.bucket.index.hash.field"),
                             load_table_config(task.storage).record_key_fields)  # fmt: skip
        if not fields:
            raise PlanError("no hash fields: set hoodie.bucket.index.hash.field or the table's record key fields")
        return write_children(task, targets, fields, plan_ring(task, seq_no))

    @hookimpl
    def execution_before_commit(self, table, plan, write_stats):
        write_new_metadata(table, plan, write_stats)

    @hookimpl
    def bucket_file_ids(self, table, partition, record_keys, settings, after_clustering):
        return bucket_file_ids(table, partition, record_keys, settings, after_clustering)


def write_new_metadata(table, plan, write_stats) -> dict[str, HashingMetadata]:
    """Write ``<T>.hashing_meta`` for every partition of ``plan`` (idempotent: overwrites); returns them."""
    per_partition: dict[str, tuple[int, list[Node]]] = {}
    for group in plan.groups:
        partition, seq_no, children = group_children(group)
        if partition in per_partition and per_partition[partition][0] != seq_no:
            raise PlanError(f"clustering {plan.instant_time}: partition {partition!r} groups were planned from "
                            f"different hashing metadata (seqNo {per_partition[partition][0]} and {seq_no})")  # fmt: skip
        per_partition.setdefault(partition, (seq_no, []))[1].extend(children)

    expected: defaultdict[str, set[str]] = defaultdict(set)
    for partition, (_, children) in per_partition.items():
        expected[partition].update(c.file_id for c in children if c.tag == REPLACE)
    for stat in write_stats:
        if stat["fileId"] not in expected.get(stat["partitionPath"], ()):
            raise PlanError(f"clustering {plan.instant_time} wrote {stat['path']}, not a file group of a new bucket")

    timeline = table.timeline
    completed = [i.time for i in timeline.completed(("commit", "replacecommit"))]
    pending = [i.time for i in timeline.pending()]
    latest = defaultdict(list)
    for file_slice in table.view().latest_file_slices(partitions=per_partition):
        if file_slice.base_file is not None:
            latest[file_slice.partition].append(file_slice.file_id)
    written = {}
    for partition, (seq_no, children) in sorted(per_partition.items()):
        current = load_valid_metadata(
            table.storage, partition, completed=completed, pending=pending, latest_file_ids=latest[partition],
            exclude=[plan.instant_time],
        )  # fmt: skip
        if current is None:
            raise PlanError(f"clustering {plan.instant_time}: partition {partition!r} has no hashing metadata")
        if current.seq_no != seq_no:
            raise PlanError(
                f"clustering {plan.instant_time}: non-serialized update of the hashing metadata of {partition!r}: "
                f"it is at seqNo {current.seq_no} ({current.file_name}), the plan was made from seqNo {seq_no}"
            )
        try:
            ring = Ring(current.nodes).apply(children)
        except ValueError as exc:
            raise PlanError(f"clustering {plan.instant_time}, partition {partition!r}: {exc}") from None
        new = HashingMetadata(
            current.partition_path, plan.instant_time, current.num_buckets, seq_no + 1,
            tuple(n.with_tag("NORMAL") for n in ring.nodes), current.version,
        )  # fmt: skip
        path = write_metadata(table.storage, new)
        log.info("clustering %s: %s: %d -> %d buckets (%s)", plan.instant_time, partition or "<table>",
                 len(current.nodes), len(new.nodes), path)  # fmt: skip
        written[partition] = new
    return written
