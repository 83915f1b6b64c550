"""What a writer may do to file groups under pending clustering: Hudi's three update strategies."""

from __future__ import annotations

from hudi_cluster_core.hookspecs import hookimpl
from hudi_cluster_core.plan.model import UpdateDecision

_U = "org.apache.hudi.client.clustering.update.strategy."


def _touched(context):
    return frozenset(fg for fg in context.incoming_file_groups if fg in context.pending_clustering)


def _describe(file_groups, pending) -> str:
    return ", ".join(f"{fg.partition or '(none)'}/{fg.file_id} (clustering {pending[fg]})" for fg in sorted(file_groups))


class RejectUpdateStrategy:
    """Hudi's default: an update to a file group under pending clustering fails the write."""

    name, kind = "reject", "update"
    java_class_names = (_U + "SparkRejectUpdateStrategy",)
    params_model = None
    summary = "Fail writes that update file groups under pending clustering (Hudi's default)."

    @hookimpl
    def update_decide(self, context):
        touched = _touched(context)
        if not touched:
            return UpdateDecision("allow")
        return UpdateDecision(
            "reject", touched,
            f"Not allowed to update the clustering file group(s) {_describe(touched, context.pending_clustering)}; "
            "wait for the clustering to complete or configure an allowing update strategy",
        )  # fmt: skip


class AllowUpdateStrategy:
    """Updates go ahead; the pending clustering conflicts later and is rolled back by the writer if configured."""

    name, kind = "allow", "update"
    java_class_names = (_U + "SparkAllowUpdateStrategy",)
    params_model = None
    summary = "Allow updates to file groups under pending clustering; the clustering yields on conflict."

    @hookimpl
    def update_decide(self, context):
        return UpdateDecision("allow", _touched(context))


class ConsistentBucketDuplicateUpdateStrategy:
    """Consistent-bucket tables: records for a bucket being resized are written to the old and the new bucket."""

    name, kind = "consistent-bucket-duplicate", "update"
    java_class_names = (_U + "SparkConsistentBucketDuplicateUpdateStrategy",)
    params_model = None
    summary = "Write updates for buckets under resizing to both the pending and the target file groups."

    @hookimpl
    def update_decide(self, context):
        touched = _touched(context)
        return UpdateDecision("duplicate" if touched else "allow", touched)


@hookimpl
def hudi_cluster_strategies():
    return [RejectUpdateStrategy(), AllowUpdateStrategy(), ConsistentBucketDuplicateUpdateStrategy()]
