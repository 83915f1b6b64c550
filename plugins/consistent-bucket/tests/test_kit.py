"""The conformance kit on the consistent-bucket strategies, over the kit's real tables.

The kit's tables are plain COW tables, so the plan strategy gets a ring whose buckets are the table's file groups
(a metadata loader), and the execution strategy rewrites each group into its one REPLACE child bucket.
"""

from hudi_cluster_consistent_bucket.execution import ConsistentBucketExecutionStrategy
from hudi_cluster_consistent_bucket.hashing import (
    CHILD_NODE_KEY, HASH_MASK, PARTITION_KEY, REPLACE, SEQUENCE_NO_KEY, HashingMetadata, Node, new_file_id_prefix,
    nodes_to_json,
)  # fmt: skip
from hudi_cluster_consistent_bucket.plan import ConsistentBucketPlanStrategy
from hudi_cluster_core.testing import run_execution_kit, run_plan_kit

BUCKETS = {
    "hoodie.index.type": "BUCKET", "hoodie.index.bucket.engine": "CONSISTENT_HASHING",
    "hoodie.bucket.index.num.buckets": "4", "hoodie.bucket.index.max.num.buckets": "12",
    "hoodie.bucket.index.min.num.buckets": "1", "hoodie.parquet.max.file.size": str(64 * 1024 * 1024),
}  # fmt: skip


def ring_of_slices(context, partition, slices):
    ids = sorted(s.file_id for s in slices)
    if not ids:
        return None
    step = HASH_MASK // len(ids)
    nodes = tuple(Node(HASH_MASK if i == len(ids) - 1 else step * (i + 1), f[:-2]) for i, f in enumerate(ids))
    return HashingMetadata(partition, "00000000000000", len(nodes), 0, nodes)


def test_plan_kit():
    # buckets: no small-file limit, no max-bytes cap, split/merge output counts; partitions with a pending
    # clustering are left alone whole
    run_plan_kit(ConsistentBucketPlanStrategy(metadata_loader=ring_of_slices), extra_options=BUCKETS,
                 size_rule=False, honours_small_file_limit=False, honours_max_bytes=False)  # fmt: skip


def rewrite_child(case):
    prefix = new_file_id_prefix(case.instant_time, case.partition, HASH_MASK, "rewrite")
    return {PARTITION_KEY: case.partition, SEQUENCE_NO_KEY: "0",
            CHILD_NODE_KEY: nodes_to_json([Node(HASH_MASK, prefix, REPLACE)])}  # fmt: skip


def test_execution_kit():
    run_execution_kit(ConsistentBucketExecutionStrategy(), group_metadata=rewrite_child, expected_files=lambda task: 1)
