"""Where a writer's records go in a consistent-hashing bucket table (``HoodieSparkConsistentBucketIndex``).

Each record key hashes to one bucket of its partition's ring, and the bucket is one file group
(``<fileIdPrefix>-0``). The ring is the partition's valid hashing metadata, as Hudi's writers load it; a partition
without any gets Hudi's initial metadata (``hoodie.bucket.index.num.buckets`` buckets), written on first use as
Hudi's writer does. For the duplicate update strategy, the ring *after* a pending resize is the current one with the
plan's child nodes applied (``SparkConsistentBucketDuplicateUpdateStrategy``): the records' copies go there.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from hudi_cluster_core.sdk import ConfigError, PlanError, TimelineChanged, read_plan

from .hashing import (
    INIT_INSTANT, Ring, hash_fields, initial_metadata, list_metadata_files, load_valid_metadata, read_metadata,
    write_metadata,
)  # fmt: skip
from .plan import group_children

log = logging.getLogger(__name__)
DEFAULT_NUM_BUCKETS = 256  # hoodie.bucket.index.num.buckets, Hudi's default


def current_ring(table, partition: str, settings: Mapping[str, str]) -> Ring:
    timeline = table.timeline
    latest = [s.file_id for s in table.view().latest_file_slices(partitions=[partition])]
    metadata = load_valid_metadata(
        table.storage, partition, completed=[i.time for i in timeline.completed(("commit", "deltacommit", "replacecommit"))],
        pending=[i.time for i in timeline.pending()], latest_file_ids=latest,
    )  # fmt: skip
    if metadata is not None:
        return Ring(metadata.nodes)
    if INIT_INSTANT in list_metadata_files(table.storage, partition).hashing or latest:
        raise PlanError(f"partition {partition!r} has file groups but no valid consistent hashing metadata")
    raw = settings.get("hoodie.bucket.index.num.buckets") or str(DEFAULT_NUM_BUCKETS)
    try:
        num_buckets = int(raw)
        if num_buckets < 1:
            raise ValueError
    except ValueError:
        raise ConfigError(f"hoodie.bucket.index.num.buckets={raw}: not a positive integer") from None
    metadata = initial_metadata(partition, num_buckets)
    log.info("partition %r: initial consistent hashing metadata, %d buckets (%s)", partition, num_buckets,
             write_metadata(table.storage, metadata))  # fmt: skip
    return Ring(metadata.nodes)


def ring_after(table, partition: str, clustering_instant: str, ring: Ring) -> Ring:
    """The buckets of ``partition`` once the pending resize ``clustering_instant`` completes: the plan's child nodes
    applied to the ring it was planned from (its groups' sequence number; ``ring``, the current one, when that
    metadata is not found). Planned-from, not current: the resize may complete while the writer routes."""
    record = table.timeline.clustering_plan(clustering_instant)
    if record is None:  # rolled back since the writer listed it: the writer reads the table again
        raise TimelineChanged(f"clustering {clustering_instant} is no longer pending: its plan is gone")
    plan = read_plan(table.storage, clustering_instant, record, source=f"clustering {clustering_instant}")
    children, seq_nos = [], set()
    for group in plan.groups:
        group_partition, seq_no, nodes = group_children(group)
        if group_partition == partition:
            children.extend(nodes)
            seq_nos.add(seq_no)
    base = ring
    for instant in reversed(list_metadata_files(table.storage, partition).hashing):
        candidate = read_metadata(table.storage, partition, instant)
        if candidate.seq_no in seq_nos and instant != clustering_instant:
            base = Ring(candidate.nodes)
            break
    try:
        return base.apply(children)
    except ValueError as exc:
        raise PlanError(f"clustering {clustering_instant}, partition {partition!r}: {exc}") from None


def bucket_file_ids(table, partition: str, record_keys: Sequence[str], settings: Mapping[str, str],
                    after_clustering: str | None) -> list[str]:  # fmt: skip
    fields = hash_fields(settings.get("hoodie.bucket.index.hash.field"), table.config.record_key_fields)
    if not fields:
        raise ConfigError("no hash fields: set hoodie.bucket.index.hash.field or the table's record key fields")
    ring = current_ring(table, partition, settings)
    if after_clustering is not None:
        ring = ring_after(table, partition, after_clustering, ring)
    return [ring.bucket_of_key(key, fields).file_id for key in record_keys]
