"""Apache Hudi's consistent-hashing bucket resizing: split oversized buckets, merge small neighbours.

Plan: ``SparkConsistentBucketClusteringPlanStrategy`` (:mod:`.plan`); execution:
``SparkConsistentBucketClusteringExecutionStrategy`` / ``SingleSparkJobConsistentHashingExecutionStrategy``
(:mod:`.execution`), which also writes the partition's new ``<T>.hashing_meta`` (:mod:`.hashing`) before commit.
"""

from hudi_cluster_core.sdk import hookimpl

from .execution import ConsistentBucketExecutionStrategy
from .plan import ConsistentBucketPlanStrategy


@hookimpl
def hudi_cluster_strategies():
    return [ConsistentBucketPlanStrategy(), ConsistentBucketExecutionStrategy()]
