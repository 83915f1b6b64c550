"""Hudi's size-based grouping, exactly, plus the conformance kit's invariants on generated input."""

from __future__ import annotations

import math

from hypothesis import given, settings

from hudi_cluster_core.sdk import FileSlice, SizeLimits, pack_by_size
from hudi_cluster_core.table.naming import BaseFile
from hudi_cluster_core.testing import check_plan_strategy, planning_inputs
from hudi_cluster_size_based.plan import SizeBasedPlanStrategy

MB = 1024 * 1024


def limits(max_bytes: int, target: int, max_groups: int, missing: int, single: bool = True) -> SizeLimits:
    return SizeLimits(small_file_limit=0, max_bytes_per_group=max_bytes, target_file_max_bytes=target,
                      max_num_groups=max_groups, missing_base_size=missing, single_group_clustering=single)  # fmt: skip


def slice_of(name: str, size: int, partition: str = "p") -> FileSlice:
    return FileSlice(partition, name, "1", BaseFile(f"{name}_0-1-1_1.parquet", name, "0-1-1", "1", size))


def test_packs_largest_first_and_closes_before_the_cap():
    slices = [slice_of(n, s * MB) for n, s in [("a", 10), ("b", 60), ("c", 30), ("d", 50), ("e", 20)]]
    groups = pack_by_size(slices, limits(100 * MB, 40 * MB, 30, 120 * MB))
    assert [[s.file_id for s in g.slices] for g in groups] == [["b"], ["d", "c", "e"], ["a"]]
    assert [g.num_output_file_groups for g in groups] == [2, 3, 1]


def test_last_single_slice_group_dropped_when_single_group_clustering_is_off():
    slices = [slice_of("a", 90 * MB), slice_of("b", 20 * MB)]
    kept = pack_by_size(slices, limits(100 * MB, MB, 30, 1, single=False))
    assert [[s.file_id for s in g.slices] for g in kept] == [["a"]]


def test_max_num_groups_per_partition_stops_packing():
    slices = [slice_of(f"f{i}", 10 * MB) for i in range(10)]
    groups = pack_by_size(slices, limits(20 * MB, MB, 2, 1))
    assert len(groups) == 2 and all(len(g.slices) == 2 for g in groups)


def test_slice_without_base_file_counts_as_a_full_file():
    log_only = FileSlice("p", "log-only", "1")
    groups = pack_by_size([log_only, slice_of("a", MB)], limits(10 * MB, MB, 5, 120 * MB))
    assert [[s.file_id for s in g.slices] for g in groups] == [["log-only"], ["a"]]
    assert groups[0].num_output_file_groups == 120


@settings(max_examples=150, deadline=None)
@given(planning_inputs())
def test_size_based_conforms(case):
    outcome = check_plan_strategy(SizeBasedPlanStrategy(), case)
    target = int(case.options["hoodie.clustering.plan.strategy.target.file.max.bytes"])
    for group in outcome.groups:
        assert group.num_output_file_groups == max(1, math.ceil(group.total_bytes / target))
