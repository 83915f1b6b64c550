"""Key-range grouping: overlapping files grouped together; output ranges no more overlapping than input."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_cluster_core.testing import check_plan_strategy, planning_inputs
from hudi_cluster_key_range import KeyRangePlanStrategy, key_range_overlap


def test_overlap_metric():
    assert key_range_overlap([("a", "c"), ("d", "f")]) == 0
    assert key_range_overlap([("a", "e"), ("b", "c"), ("d", "f")]) == 4 / 3


def _overlap_pair_by_pair(ranges):
    ordered, overlaps = sorted(ranges), 0
    for i, (low, high) in enumerate(ordered):
        overlaps += sum(1 for other_low, _ in ordered[i + 1 :] if other_low <= high and low <= high)
    return 2 * overlaps / len(ranges) if len(ranges) > 1 else 0.0


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.text("abcde", max_size=3), st.text("abcde", max_size=3)), max_size=30))
def test_overlap_metric_counts_every_overlapping_pair(ranges):
    """The binary-search count is the pair-by-pair one (ranges given low > high included: they overlap nothing)."""
    assert key_range_overlap(ranges) == _overlap_pair_by_pair(ranges)


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
