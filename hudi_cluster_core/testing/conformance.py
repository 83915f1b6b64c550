"""The invariants every plan strategy keeps, as one call: ``check_plan_strategy``.

Use it from a hypothesis test of your plugin (see CONTRIBUTING.md)::

    @given(planning_inputs())
    def test_my_strategy_conforms(case):
        check_plan_strategy(MyPlanStrategy(), case)
"""

from __future__ import annotations

import math
import datetime as dt
from dataclasses import dataclass

from ..avro import decode_avro, encode_avro
from ..config import load_config, strategy_params
from ..io.storage import Storage
from ..plan.avro_plan import build_requested_replace_metadata
from ..plan.eligibility import select_partitions
from ..plan.model import PlanContext, PlannedGroup
from ..plugins import call_hook
from .strategies import PlanningInput

KIT_TABLE = Storage("/kit/table")
FIXED_NOW = dt.datetime(2026, 1, 1, 5, 0, 0)


@dataclass(frozen=True)
class PlanOutcome:
    eligible: tuple
    groups: tuple[PlannedGroup, ...]
    record: dict | None


def plan_with(strategy, case: PlanningInput, *, extra_options: dict | None = None) -> PlanOutcome:
    """Run the four plan hooks of ``strategy`` on a generated case, as the scheduler does."""
    options = {**case.options, **(extra_options or {})}
    config = load_config(overrides=options)
    selection = select_partitions(list(case.all_partitions), config, now=FIXED_NOW)
    params = strategy_params(strategy, dict(config.raw))
    context = PlanContext(None, config, params, "20270101000000000", dict(case.pending), selection.partitions,
                          lambda s: case.stats.get(s) or _empty_stats())  # fmt: skip
    eligible = tuple(call_hook(strategy, "plan_select_slices", context=context, slices=list(case.slices)) or [])
    groups = call_hook(strategy, "plan_group_slices", context=context, slices=list(eligible)) or []
    groups = tuple(call_hook(strategy, "plan_finalize_groups", context=context, groups=list(groups)) or [])
    record = None
    if groups:
        execution_class, params_map = call_hook(strategy, "plan_execution_strategy", context=context)
        record = build_requested_replace_metadata(KIT_TABLE, list(groups), execution_class, params_map, selection.missing)
    return PlanOutcome(eligible, groups, record)


def _empty_stats():
    from ..plan.model import SliceStats

    return SliceStats()


def check_plan_strategy(
    strategy, case: PlanningInput, *, size_rule: bool = True, honours_small_file_limit: bool = True,
    honours_max_bytes: bool = True, extra_options: dict | None = None,
) -> PlanOutcome:
    """Assert the common invariants for ``strategy`` on ``case``; returns the outcome for further checks.

    ``size_rule``: output-group counts are ``ceil(group bytes / target.file.max.bytes)`` (Hudi's rule);
    strategies with their own rule (single-file sort, buckets) pass False. ``honours_small_file_limit`` and
    ``honours_max_bytes`` likewise for strategies that document otherwise.
    """
    outcome = plan_with(strategy, case, extra_options=extra_options)
    config = load_config(overrides={**case.options, **(extra_options or {})})
    selection = select_partitions(list(case.all_partitions), config, now=FIXED_NOW)
    given = {s.group_id: s for s in case.slices}
    limit = int(config.get("hoodie.clustering.plan.strategy.small.file.limit"))
    max_bytes = int(config.get("hoodie.clustering.plan.strategy.max.bytes.per.group"))
    target = int(config.get("hoodie.clustering.plan.strategy.target.file.max.bytes"))
    max_groups = int(config.get("hoodie.clustering.plan.strategy.max.num.groups"))

    for file_slice in outcome.eligible:
        assert given.get(file_slice.group_id) == file_slice, f"selected a slice it was not given: {file_slice.group_id}"
        assert file_slice.group_id not in case.pending, f"selected {file_slice.group_id}, pending {case.pending[file_slice.group_id]}"
        assert file_slice.partition in selection.partitions, f"partition filter not honoured: {file_slice.partition}"
        if honours_small_file_limit:
            assert file_slice.base_file_size < limit, f"{file_slice.group_id} is not below small.file.limit"

    eligible_ids = {s.group_id for s in outcome.eligible}
    seen = set()
    for group in outcome.groups:
        assert group.slices, "empty group"
        for file_slice in group.slices:
            assert file_slice.group_id in eligible_ids, f"grouped an ineligible slice {file_slice.group_id}"
            assert file_slice.group_id not in seen, f"{file_slice.group_id} is in two groups"
            seen.add(file_slice.group_id)
        if honours_max_bytes and len(group.slices) > 1:
            assert group.total_bytes <= max_bytes, f"group of {group.total_bytes} bytes above max.bytes.per.group"
        assert group.num_output_file_groups >= 1
        if size_rule:
            sized = sum(s.base_file_size if s.base_file else int(config.get("hoodie.parquet.max.file.size")) for s in group.slices)
            assert group.num_output_file_groups == max(1, math.ceil(sized / target)), "output groups break the size rule"
    assert len(outcome.groups) <= max_groups, f"{len(outcome.groups)} groups above max.num.groups={max_groups}"

    again = plan_with(strategy, case, extra_options=extra_options)
    assert again.groups == outcome.groups, "not deterministic for equal input"
    if outcome.record is not None:
        assert decode_avro(encode_avro(outcome.record, "HoodieRequestedReplaceMetadata")) == outcome.record
    return outcome
