"""The ``space-curve`` plan strategy: Hudi's size-based grouping, executed by the ``space-curve`` strategy.

It lets one key choose curve-sorted clustering: ``hoodie.clustering.plan.strategy.class=space-curve`` with
``hoodie.clustering.plan.strategy.sort.columns=x,y`` (the layout defaults to ZORDER). Apache Hudi spells the
same thing as the size-based plan plus ``hoodie.layout.optimize.strategy``; the execution strategy named in
the plan is ``space-curve`` whatever ``hoodie.clustering.execution.strategy.class`` says.
"""

from __future__ import annotations

from hudi_cluster_core.hookspecs import hookimpl
from hudi_cluster_core.plan.eligibility import select_eligible_slices
from hudi_cluster_size_based.plan import pack_by_size

from .params import SORT_COLUMNS_KEY, SpaceCurveParams

EXECUTION_STRATEGY = "space-curve"


class SpaceCurvePlanStrategy:
    name = "space-curve"
    kind = "plan"
    java_class_names = ()
    # Validating the layout keys here makes a bad value fail at scheduling: the scheduler checks the params of
    # the *configured* execution strategy, not of the one this plan names.
    params_model = SpaceCurveParams
    summary = "Size-based groups (small files up to max.bytes.per.group) rewritten along a z-order/Hilbert curve."

    @hookimpl
    def plan_select_slices(self, context, slices):
        return select_eligible_slices(context, slices)

    @hookimpl
    def plan_group_slices(self, context, slices):
        config = context.config
        return pack_by_size(
            slices,
            max_bytes_per_group=int(config.get("hoodie.clustering.plan.strategy.max.bytes.per.group")),
            target_file_max_bytes=int(config.get("hoodie.clustering.plan.strategy.target.file.max.bytes")),
            max_num_groups=int(config.get("hoodie.clustering.plan.strategy.max.num.groups")),
            missing_base_size=int(config.get("hoodie.parquet.max.file.size")),
            single_group_clustering=bool(config.get("hoodie.clustering.plan.strategy.single.group.clustering.enabled")),
        )

    @hookimpl
    def plan_finalize_groups(self, context, groups):
        return list(groups)[: int(context.config.get("hoodie.clustering.plan.strategy.max.num.groups"))]

    @hookimpl
    def plan_execution_strategy(self, context):
        return EXECUTION_STRATEGY, {SORT_COLUMNS_KEY: context.params.sort_columns}
