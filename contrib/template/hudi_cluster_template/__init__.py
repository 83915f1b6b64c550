"""Plan strategy to copy (scripts/new-strategy NAME): each partition's small files by file id, size-capped groups."""

from hudi_cluster_core.sdk import (
    Field, PlanStrategy, SizeLimits, StrategyParams, cut_in_order, hookimpl, params_key, slices_by_partition,
)

NAME = "template"  # what users set in hoodie.clustering.plan.strategy.class
MIN_SLICES_KEY = params_key(NAME, "min.slices.per.group")  # hoodie.clustering.plan.strategy.template.min.slices...


class TemplateParams(StrategyParams):  # each field's alias is a config key users may set; description: its help
    min_slices_per_group: int = Field(
        2, ge=1, alias=MIN_SLICES_KEY, description="Plan a group only if it holds at least this many file slices"
    )


class TemplatePlanStrategy(PlanStrategy):  # mypy checks it against the plan hooks
    name, kind, params_model = NAME, "plan", TemplateParams
    java_class_names = (f"{__name__}.TemplatePlanStrategy",)  # a dotted name, like Hudi's Java class names
    summary = "Each partition's small files in file-id order, in groups of at most max.bytes.per.group."

    @hookimpl
    def plan_group_slices(self, context, slices):  # the other plan hooks are the core's defaults
        limits, groups = SizeLimits.from_config(context.config), []
        for members in slices_by_partition(slices).values():
            groups += cut_in_order(sorted(members, key=lambda s: s.file_id), limits)
        return [group for group in groups if worth_rewriting(group, limits, context.params.min_slices_per_group)]


def worth_rewriting(group, limits, min_slices):
    """At least ``min_slices`` slices, and never one file alone already at the target size: its rewrite would write
    the same file again (the conformance kit reports such a group: the finding lone-slice-at-target)."""
    alone_at_target = len(group.slices) == 1 and group.slices[0].base_file_size >= limits.target_file_max_bytes
    return len(group.slices) >= min_slices and not alone_at_target


@hookimpl
def hudi_cluster_strategies():
    return [TemplatePlanStrategy()]
