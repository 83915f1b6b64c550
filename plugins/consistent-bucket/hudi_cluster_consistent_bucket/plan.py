"""``SparkConsistentBucketClusteringPlanStrategy``: split oversized buckets, merge small neighbours.

Per partition, from the partition's current hashing metadata (Hudi 1.1.1,
``BaseConsistentHashingBucketClusteringPlanStrategy``):

1. **split**: a bucket whose slice (base + log bytes) is above ``split.threshold * parquet.max.file.size`` is cut
   at the middle of its hash range into two new buckets (a group of one slice, 2 output file groups), while the
   bucket count stays at most ``max.num.buckets``;
2. **merge**: of the rest, in ring order, runs of ring neighbours whose combined size stays within
   ``merge.threshold * parquet.max.file.size`` become one bucket (a group, 1 output file group), while the bucket
   count stays at least ``min.num.buckets``;
3. **rewrite**: every other bucket gets a group of its own that rewrites it under a new file id (Hudi's "sort"
   groups; ``hoodie.clustering.plan.strategy.consistent.bucket.rewrite.unchanged=false`` leaves them out).

Each group's ``extraMetadata`` holds ``clustering.group.partition``, ``clustering.group.sequence.no`` (the
metadata's ``seqNo``) and ``clustering.group.child.node`` (the new nodes, REPLACE / DELETE). Unset
``max.num.buckets`` / ``min.num.buckets`` default to ``num.buckets`` (Hudi's builder; a max below or a min above
``num.buckets`` is raised / lowered to it). Unlike Hudi, a bucket count already beyond a bound is not taken as
room for unlimited splits or merges: the room is never negative.

Slices are selected as Hudi does: latest slices of the selected partitions, minus file groups pending compaction
or clustering, minus whole partitions that have a pending clustering; nothing while a deltacommit is in flight.
There is no small-file limit and no max-bytes cap for bucket groups.
"""

from __future__ import annotations

import logging
from typing import Callable

from hudi_cluster_core.sdk import (
    ClusteringConfig, PlanError, PlannedGroup, PlanStrategy, StrategyParams, execution_strategy, hookimpl, keys,
    params_key, slices_by_partition,
)  # fmt: skip
from pydantic import Field

from .hashing import (
    CHILD_NODE_KEY, PARTITION_KEY, REPLACE, SEQUENCE_NO_KEY, HashingMetadata, Node, Ring, load_valid_metadata,
    new_file_id_prefix, nodes_from_json, nodes_to_json,
)  # fmt: skip

log = logging.getLogger(__name__)
JAVA_EXECUTION_CLASS = keys.SPARK_CONSISTENT_BUCKET_EXECUTION
REWRITE_KEY = params_key("consistent-bucket", "rewrite.unchanged")


class ConsistentBucketPlanParams(StrategyParams):
    rewrite_unchanged: bool = Field(
        True, alias=REWRITE_KEY,
        description="Also rewrite (under a new file id) every bucket that is neither split nor merged, as Hudi "
                    "does; false plans only the resizing groups.",
    )  # fmt: skip


def bucket_limits(config: ClusteringConfig, current_buckets: int) -> tuple[int, int]:
    """``(max, min)`` bucket counts as Hudi's index config resolves them."""
    writer = config.writer
    num, high, low = writer.bucket_num_buckets, writer.bucket_max_num_buckets, writer.bucket_min_num_buckets
    return (num if high is None or high < num else high), (num if low is None or low > num else low)


def _extra(partition: str, children: list[Node], seq_no: int) -> dict[str, str]:
    return {PARTITION_KEY: partition, CHILD_NODE_KEY: nodes_to_json(children), SEQUENCE_NO_KEY: str(seq_no)}


def group_children(group) -> tuple[str, int, list[Node]]:
    """(partition, sequence number, child nodes) of a consistent-bucket plan group: what :func:`_extra` put in its
    ``extraMetadata``, read back by the execution and by writers routing records to the buckets after a resize."""
    meta = group.extra_metadata or {}
    if CHILD_NODE_KEY not in meta:
        raise PlanError(
            f"group {group.index} ({group.partition}): no '{CHILD_NODE_KEY}' in its extraMetadata; the plan was not "
            "made by a consistent bucket plan strategy"
        )
    try:
        children = nodes_from_json(meta[CHILD_NODE_KEY])
        seq_no = int(meta.get(SEQUENCE_NO_KEY, "0"))
    except ValueError as exc:
        raise PlanError(f"group {group.index} ({group.partition}): bad consistent bucket extraMetadata: {exc}") from None
    if not any(c.tag == REPLACE for c in children):
        raise PlanError(f"group {group.index} ({group.partition}): no REPLACE child node in {meta[CHILD_NODE_KEY]}")
    return meta.get(PARTITION_KEY, group.partition), seq_no, children


def plan_partition(
    metadata: HashingMetadata, slices: list, *, split_size: int, merge_size: int, max_buckets: int,
    min_buckets: int, instant_time: str, rewrite_unchanged: bool = True,
) -> list[PlannedGroup]:  # fmt: skip
    """Split, merge and rewrite groups for one partition's slices (those whose file group is a bucket of
    ``metadata``; others are left alone). Pure: new file-id prefixes derive from ``instant_time``."""
    ring = Ring(metadata.nodes)
    partition = metadata.partition_path
    known = sorted((s for s in slices if s.file_id in ring.by_file_id), key=lambda s: ring.by_file_id[s.file_id].value)
    unknown = [s.file_id for s in slices if s.file_id not in ring.by_file_id]
    if unknown:
        log.warning("partition %r: %d file group(s) are not buckets of hashing metadata %s and are left alone: %s",
                    partition, len(unknown), metadata.instant, ", ".join(sorted(unknown)[:5]))  # fmt: skip

    def prefix(value: int, role: str) -> str:
        return new_file_id_prefix(instant_time, partition, value, role)

    groups: list[PlannedGroup] = []
    # 1. split
    split_room = max(0, max_buckets - len(ring))
    splits, rest = 0, []
    for file_slice in known:
        node = ring.by_file_id[file_slice.file_id]
        if file_slice.total_size <= split_size or splits >= split_room:
            rest.append(file_slice)
            continue
        children = ring.split(node, (prefix(node.value, "split-low"), prefix(node.value, "split-high")))
        if children is None:
            rest.append(file_slice)
            continue
        splits += 1
        groups.append(PlannedGroup((file_slice,), 2, extra_metadata=_extra(partition, list(children), metadata.seq_no)))

    # 2. merge (rest is in ring order)
    merge_room = max(0, len(ring) - min_buckets + splits)
    merged_runs, rest = _merge_runs(ring, rest, merge_size, merge_room)
    for run in merged_runs:
        nodes = [ring.by_file_id[s.file_id] for s in run]
        merged = ring.merge(nodes, prefix(nodes[-1].value, "merge"))
        groups.append(PlannedGroup(tuple(run), 1, extra_metadata=_extra(partition, merged, metadata.seq_no)))

    # 3. rewrite the others under new file ids
    if rewrite_unchanged:
        for file_slice in rest:
            node = ring.by_file_id[file_slice.file_id]
            child = Node(node.value, prefix(node.value, "rewrite"), REPLACE)
            groups.append(PlannedGroup((file_slice,), 1, extra_metadata=_extra(partition, [child], metadata.seq_no)))
    return groups


def _merge_runs(ring: Ring, slices: list, merge_size: int, room: int) -> tuple[list[list], list]:
    """Hudi's merge rule over ``slices`` in ring order: grow a run backward then forward over ring neighbours
    while a merge slot is left, the neighbour is free, the run so far and the neighbour are each within
    ``merge_size``; runs of 2+ become merges. Returns (runs, untouched slices in ring order)."""
    count = len(slices)
    if count <= 1:
        return [], list(slices)
    size = [s.total_size for s in slices]
    node = [ring.by_file_id[s.file_id] for s in slices]
    added = [False] * count
    remaining = room
    runs = []
    for i in range(count):
        if added[i] or size[i] > merge_size:
            continue
        bounds = [i, i]  # start, end
        total = size[i]
        for k in (0, 1):  # backward first, then forward
            forward = k == 1
            while True:
                at = bounds[k]
                nxt = (at + 1 if at + 1 < count else 0) if forward else (at - 1 if at >= 1 else count - 1)
                neighbour = ring.latter(node[at].value) if forward else ring.former(node[at].value)
                if (remaining == 0 or added[nxt] or node[nxt] != neighbour or total > merge_size
                        or size[nxt] > merge_size or nxt == bounds[1 - k]):  # fmt: skip
                    break
                total += size[nxt]
                bounds[k] = nxt
                remaining -= 1
                if bounds[k] == i:
                    break
        start, end = bounds
        if start == i and end == i:
            continue
        run = []
        while True:
            added[start] = True
            run.append(slices[start])
            if start == end:
                break
            start = start + 1 if start + 1 < count else 0
        runs.append(run)
    return runs, [s for i, s in enumerate(slices) if not added[i]]


MetadataLoader = Callable[[object, str, list], "HashingMetadata | None"]


def load_partition_metadata(context, partition: str, slices: list) -> HashingMetadata | None:
    """The partition's current hashing metadata from the table (None without a table or metadata)."""
    table = context.table
    if table is None:
        return None
    timeline = table.timeline
    return load_valid_metadata(
        table.storage, partition,
        completed=[i.time for i in timeline.completed(("commit", "replacecommit"))],
        pending=[i.time for i in timeline.pending()],
        latest_file_ids=[s.file_id for s in slices if s.base_file is not None],
    )  # fmt: skip


class ConsistentBucketPlanStrategy(PlanStrategy):
    name = "consistent-bucket"
    kind = "plan"
    java_class_names = (keys.SPARK_CONSISTENT_BUCKET_PLAN,)
    params_model = ConsistentBucketPlanParams
    summary = "Consistent-hashing bucket index: splits buckets above split.threshold, merges small neighbours."
    # a bucket is one file group: splitting one, or rewriting an unchanged one (rewrite.unchanged, as Hudi does), is
    # a group of one slice whatever its size, on purpose
    kit_silence = ("lone-slice-at-target",)

    def __init__(self, metadata_loader: MetadataLoader | None = None):
        self.metadata_loader = metadata_loader or load_partition_metadata

    @hookimpl
    def plan_select_slices(self, context, slices):
        table = context.table
        if table is not None:
            writers = [i.time for i in table.timeline.pending() if i.action == "deltacommit"]
            if writers:
                log.warning("deltacommit(s) %s in flight: consistent bucket clustering is not scheduled", writers)
                return []
            clustering = table.view().pending_clustering_file_groups()
        else:
            clustering = context.pending_file_groups
        busy = {group.partition for group in clustering}
        partitions = set(context.partitions) - busy
        # log-only file groups come with every log file in their slice: the view applies Hudi's log-to-slice rule
        return [s for s in slices if s.partition in partitions and s.group_id not in context.pending_file_groups]

    @hookimpl
    def plan_group_slices(self, context, slices):
        config = context.config
        max_file = config.writer.parquet_max_file_size
        split_size = int(max_file * config.writer.bucket_split_threshold)
        merge_size = int(max_file * config.writer.bucket_merge_threshold)
        max_groups = config.max_num_groups
        rewrite = context.params.rewrite_unchanged if context.params is not None else True
        groups: list[PlannedGroup] = []
        for partition, members in slices_by_partition(slices).items():
            metadata = self.metadata_loader(context, partition, members)
            if metadata is None:
                log.warning("partition %r has no consistent hashing metadata: not planned", partition)
                continue
            high, low = bucket_limits(config, len(metadata.nodes))
            planned = plan_partition(
                metadata, members, split_size=split_size, merge_size=merge_size, max_buckets=high, min_buckets=low,
                instant_time=context.instant_time, rewrite_unchanged=rewrite,
            )  # fmt: skip
            groups.extend(planned[:max_groups])
        return groups

    @hookimpl
    def plan_execution_strategy(self, context):
        configured, params = execution_strategy(context)
        # our short name is stored as Hudi's class, so Apache Hudi can run the plan too
        return (JAVA_EXECUTION_CLASS if configured == ConsistentBucketPlanStrategy.name else configured), params
