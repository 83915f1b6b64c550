"""The ``space-curve`` plan strategy: Hudi's size-based grouping, executed by the ``space-curve`` strategy.

It lets one key choose curve-sorted clustering: ``hoodie.clustering.plan.strategy.class=space-curve`` with
``hoodie.clustering.plan.strategy.sort.columns=x,y`` (the layout defaults to ZORDER). Apache Hudi spells the
same thing as the size-based plan plus ``hoodie.layout.optimize.strategy``; the execution strategy named in
the plan is ``space-curve`` whatever ``hoodie.clustering.execution.strategy.class`` says.
"""

from __future__ import annotations

from hudi_cluster_core.sdk import PlanStrategy, SizeLimits, hookimpl, pack_by_size

from .params import SORT_COLUMNS_KEY, SpaceCurveParams

EXECUTION_STRATEGY = "space-curve"


class SpaceCurvePlanStrategy(PlanStrategy):
    name = "space-curve"
    kind = "plan"
    # Validating the layout keys here makes a bad value fail at scheduling: the scheduler checks the params of
    # the *configured* execution strategy, not of the one this plan names.
    params_model = SpaceCurveParams
    summary = "Size-based groups (small files up to max.bytes.per.group) rewritten along a z-order/Hilbert curve."

    @hookimpl
    def plan_group_slices(self, context, slices):
        return pack_by_size(slices, SizeLimits.from_config(context.config))

    @hookimpl
    def plan_execution_strategy(self, context):
        return EXECUTION_STRATEGY, {SORT_COLUMNS_KEY: context.params.sort_columns}
