"""Overlap-aware grouping: overlapping files grouped together, lone files left alone, the groups that cut the most
files per query first."""

from __future__ import annotations

from hypothesis import given, settings

from hudi_cluster_core.sdk import BaseFile, FileSlice, SliceStats
from hudi_cluster_core.testing import PlanningInput, check_plan_strategy, plan_with, planning_inputs
from hudi_cluster_overlap_aware import OverlapAwarePlanStrategy, overlap_components

MB, INSTANT = 1024 * 1024, "20260101000000000"
SORT = "hoodie.clustering.plan.strategy.sort.columns"


def _slice(partition: str, file_id: str, size: int = MB) -> FileSlice:
    return FileSlice(partition, file_id, INSTANT, BaseFile(f"{file_id}_0-1-0_{INSTANT}.parquet", file_id, "0-1-0", INSTANT, size))


def _components(slices, rng):
    """Connected components of overlapping ranges, by a sweep in value order (each in that order)."""
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


@settings(max_examples=100, deadline=None)
@given(planning_inputs())
def test_conforms_and_groups_runs_of_overlapping_files(case):
    """Each group is a run of consecutive files (in value order) of one component of overlapping record-key
    ranges (the kit sets no sort columns: the record key stands in), and holds at least two files."""
    outcome = check_plan_strategy(OverlapAwarePlanStrategy(), case)

    def rng(s):
        return (case.stats[s].min_record_key, case.stats[s].max_record_key)

    for group in outcome.groups:
        assert len(group.slices) > 1
        eligible = [s for s in outcome.eligible if s.partition == group.partition]
        [component] = [c for c in _components(eligible, rng) if group.slices[0] in c]
        places = sorted(component.index(s) for s in group.slices)  # ValueError: a member of another component
        assert places == list(range(places[0], places[0] + len(places))), (places, component)


def test_components_are_transitive_overlaps():
    slices = [_slice("p", f) for f in "abcde"]
    spans = {"a": (0, 10), "b": (5, 20), "c": (18, 30), "d": (40, 50), "e": None}
    found = overlap_components(slices, lambda s: spans[s.file_id])
    assert [[s.file_id for s in c] for c in found] == [["a", "b", "c"], ["d"], ["e"]]


def test_the_group_that_saves_most_files_per_query_comes_first():
    """Partition 'busy': four files all over [0, 100]; partition 'calm': two files barely overlapping. With
    max.num.groups=1 the busy partition's group is the one planned, although 'calm' sorts first by name."""
    slices = tuple([_slice("busy", f"b{i}") for i in range(4)] + [_slice("calm", f"c{i}") for i in range(2)])
    stats = {s: SliceStats(1000, columns={"amount": (0, 100)}) for s in slices[:4]}
    stats.update({slices[4]: SliceStats(1000, columns={"amount": (0, 51)}),
                  slices[5]: SliceStats(1000, columns={"amount": (50, 100)})})
    options = {SORT: "amount", "hoodie.clustering.plan.strategy.max.num.groups": 1,
               "hoodie.clustering.plan.strategy.small.file.limit": 300 * MB,
               "hoodie.clustering.plan.strategy.target.file.max.bytes": MB}  # fmt: skip
    outcome = plan_with(OverlapAwarePlanStrategy(), PlanningInput(slices, options=options, stats=stats,
                                                                  all_partitions=("busy", "calm")))  # fmt: skip
    assert [[s.file_id for s in g.slices] for g in outcome.groups] == [["b0", "b1", "b2", "b3"]]
    assert outcome.record is not None
