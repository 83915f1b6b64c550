"""The conformance kit's invariants, and this strategy's own: hottest partitions first, top.n honoured.

Heat is recomputed here by a plain count (slices and bytes from the newest ``lookback`` distinct base instants
among the eligible slices), independently of the plugin's ranking code. The kit's own generator often leaves
nothing eligible (filters, 1-byte small-file limits), so the properties also run on "busy table" options where
every slice is eligible and several partitions compete.
"""

from __future__ import annotations

from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_cluster_core.config import load_config
from hudi_cluster_core.sdk import SizeLimits, pack_by_size
from hudi_cluster_core.testing import check_plan_strategy, planning_inputs
from hudi_cluster_hot_partitions import LOOKBACK_COMMITS_KEY, TOP_N_KEY, HotPartitionsPlanStrategy

MB = 1024 * 1024
busy_table_options = st.fixed_dictionaries({
    "hoodie.clustering.plan.strategy.small.file.limit": st.just(4096 * MB),
    "hoodie.clustering.plan.strategy.max.bytes.per.group": st.sampled_from([8 * MB, 512 * MB, 2048 * MB]),
    "hoodie.clustering.plan.strategy.target.file.max.bytes": st.sampled_from([MB, 128 * MB]),
    "hoodie.clustering.plan.strategy.max.num.groups": st.integers(1, 12),
})  # fmt: skip


def expected_heat(eligible, lookback: int) -> dict[str, tuple[int, int]]:
    recent = set(sorted({s.base_instant for s in eligible})[-lookback:])
    heat: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for file_slice in eligible:
        counts = heat[file_slice.partition]
        if file_slice.base_instant in recent:
            counts[0] += 1
            counts[1] += file_slice.total_size
    return {partition: tuple(counts) for partition, counts in heat.items()}


def size_based_group_count(slices, options) -> int:
    return len(pack_by_size(slices, SizeLimits.from_config(load_config(overrides=options))))


def check_hottest_first(case, lookback: int, top_n: int):
    outcome = check_plan_strategy(HotPartitionsPlanStrategy(), case,
                                  extra_options={LOOKBACK_COMMITS_KEY: lookback, TOP_N_KEY: top_n})  # fmt: skip
    heat = expected_heat(outcome.eligible, lookback)
    planned = list(dict.fromkeys(group.partition for group in outcome.groups))  # in plan order

    # each partition's groups are contiguous, and partitions come hottest first
    assert [g.partition for g in outcome.groups] == [p for p in planned for g in outcome.groups if g.partition == p]
    for hotter, colder in zip(planned, planned[1:]):
        assert heat[hotter] >= heat[colder], f"{colder} {heat[colder]} planned after hotter {hotter} {heat[hotter]}"

    # top.n: at most that many partitions, and none left out is hotter than one planned
    if top_n:
        assert len(planned) <= top_n
    for left_out in set(heat) - set(planned):
        assert all(heat[left_out] <= heat[p] for p in planned), f"hotter {left_out} left out of {planned}"

    # a partition hotter than a planned one is planned whole (as size-based packs it): the cap cut the cold end
    by_partition = defaultdict(list)
    for file_slice in outcome.eligible:
        by_partition[file_slice.partition].append(file_slice)
    for partition in planned:
        for hotter in (p for p in planned if heat[p] > heat[partition]):
            count = sum(1 for g in outcome.groups if g.partition == hotter)
            assert count == size_based_group_count(by_partition[hotter], {**case.options, TOP_N_KEY: top_n})
    return outcome


@settings(max_examples=200, deadline=None)
@given(planning_inputs(), st.integers(1, 6), st.integers(0, 4))
def test_conforms_on_the_kits_inputs(case, lookback, top_n):
    check_hottest_first(case, lookback, top_n)


@settings(max_examples=200, deadline=None)
@given(planning_inputs(options=busy_table_options), st.integers(1, 6), st.integers(0, 4))
def test_busy_tables_cluster_the_hottest_partitions_first(case, lookback, top_n):
    check_hottest_first(case, lookback, top_n)


@settings(max_examples=100, deadline=None)
@given(planning_inputs(options=busy_table_options), st.integers(1, 3))
def test_top_n_partitions_are_planned_when_max_num_groups_does_not_bind(case, top_n):
    options = {TOP_N_KEY: top_n, "hoodie.clustering.plan.strategy.max.num.groups": 10_000}
    outcome = check_plan_strategy(HotPartitionsPlanStrategy(), case, extra_options=options)
    eligible_partitions = {s.partition for s in outcome.eligible}
    assert len({g.partition for g in outcome.groups}) == min(top_n, len(eligible_partitions))
