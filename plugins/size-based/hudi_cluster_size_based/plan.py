"""``SparkSizeBasedClusteringPlanStrategy``: small files, largest first, packed up to max.bytes.per.group.

Only the grouping is its own; eligibility, the ``max.num.groups`` cut and the execution strategy (with the sort
columns passed on) are the core's defaults, which are Hudi's.
"""

from __future__ import annotations

from hudi_cluster_core.sdk import PlanStrategy, SizeLimits, hookimpl, pack_by_size

_PLAN = "org.apache.hudi.client.clustering.plan.strategy."


class SizeBasedPlanStrategy(PlanStrategy):
    name = "size-based"
    kind = "plan"
    java_class_names = (_PLAN + "SparkSizeBasedClusteringPlanStrategy",)
    summary = "Files below small.file.limit, largest first, packed into groups of at most max.bytes.per.group."
    # a file alone in its group is planned as Hudi plans it (single.group.clustering.enabled, default true), even
    # one already at the target size
    kit_silence = ("lone-slice-at-target",)

    @hookimpl
    def plan_group_slices(self, context, slices):
        return pack_by_size(slices, SizeLimits.from_config(context.config))
