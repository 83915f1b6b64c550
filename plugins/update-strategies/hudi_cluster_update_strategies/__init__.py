"""What a writer may do to file groups under pending clustering: Hudi's three update strategies.

The three differ only in what happens when incoming records touch such file groups (``action``); records that
touch none are always allowed.
"""

from __future__ import annotations

from typing import Literal

from hudi_cluster_core.sdk import UpdateDecision, UpdateStrategy, hookimpl

_U = "org.apache.hudi.client.clustering.update.strategy."


def _describe(file_groups, pending) -> str:
    return ", ".join(f"{fg.partition or '(none)'}/{fg.file_id} (clustering {pending[fg]})" for fg in sorted(file_groups))


class _UpdateStrategy(UpdateStrategy):
    kind = "update"
    action: Literal["reject", "allow", "duplicate"] = "allow"  # the decision when incoming records touch file groups under pending clustering

    def explain(self, touched, pending) -> str:
        return ""

    @hookimpl
    def update_decide(self, context):
        touched = frozenset(fg for fg in context.incoming_file_groups if fg in context.pending_clustering)
        if not touched:
            return UpdateDecision("allow")
        return UpdateDecision(self.action, touched, self.explain(touched, context.pending_clustering))


class RejectUpdateStrategy(_UpdateStrategy):
    """Hudi's default: an update to a file group under pending clustering fails the write."""

    name, action = "reject", "reject"
    java_class_names = (_U + "SparkRejectUpdateStrategy",)
    summary = "Fail writes that update file groups under pending clustering (Hudi's default)."

    def explain(self, touched, pending) -> str:
        return (f"Not allowed to update the clustering file group(s) {_describe(touched, pending)}; "
                "wait for the clustering to complete or configure an allowing update strategy")  # fmt: skip


class AllowUpdateStrategy(_UpdateStrategy):
    """Updates go ahead; the pending clustering conflicts later and is rolled back by the writer if configured."""

    name, action = "allow", "allow"
    java_class_names = (_U + "SparkAllowUpdateStrategy",)
    summary = "Allow updates to file groups under pending clustering; the clustering yields on conflict."


class ConsistentBucketDuplicateUpdateStrategy(_UpdateStrategy):
    """Consistent-bucket tables: records for a bucket being resized are written to the old and the new bucket."""

    name, action = "consistent-bucket-duplicate", "duplicate"
    java_class_names = (_U + "SparkConsistentBucketDuplicateUpdateStrategy",)
    summary = "Write updates for buckets under resizing to both the pending and the target file groups."


@hookimpl
def hudi_cluster_strategies():
    return [RejectUpdateStrategy(), AllowUpdateStrategy(), ConsistentBucketDuplicateUpdateStrategy()]
