"""Key-range grouping: overlapping files grouped together; output ranges no more overlapping than input."""

from __future__ import annotations

from hypothesis import given, settings

from hudi_cluster_core.testing import check_plan_strategy, planning_inputs
from hudi_cluster_key_range import KeyRangePlanStrategy, key_range_overlap


def test_overlap_metric():
    assert key_range_overlap([("a", "c"), ("d", "f")]) == 0
    assert key_range_overlap([("a", "e"), ("b", "c"), ("d", "f")]) == 4 / 3


def components(slices, rng):
    """Connected components of overlapping key ranges, by a sweep in key order."""
    result, reach = [], None
    for s in sorted(slices, key=lambda s: (*rng(s), s.file_id)):
        low, high = rng(s)
        if result and low <= reach:
            result[-1].append(s)
            reach = max(reach, high)
        else:
            result.append([s])
            reach = high
    return result


@settings(max_examples=150, deadline=None)
@given(planning_inputs())
def test_key_range_conforms_and_keeps_overlapping_files_together(case):
    outcome = check_plan_strategy(KeyRangePlanStrategy(), case)
    group_of = {s.group_id: i for i, g in enumerate(outcome.groups) for s in g.slices}
    cap = int(case.options["hoodie.clustering.plan.strategy.max.bytes.per.group"])

    def rng(s):
        return (case.stats[s].min_record_key, case.stats[s].max_record_key)

    for partition in {s.partition for s in outcome.eligible}:
        eligible = [s for s in outcome.eligible if s.partition == partition]
        for component in components(eligible, rng):
            placed = {group_of[s.group_id] for s in component if s.group_id in group_of}
            if sum(s.base_file_size for s in component) <= cap and len(placed) > 0:
                # a component that fits is never split across groups (it may be dropped whole by max.num.groups)
                assert len(placed) == 1 and all(s.group_id in group_of for s in component), component
