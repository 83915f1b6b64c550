"""Hudi's size-based grouping, exactly, plus the conformance kit's invariants on generated input."""

from __future__ import annotations

import math

from hypothesis import given, settings

from hudi_cluster_core.table import FileSlice
from hudi_cluster_core.table.naming import BaseFile
from hudi_cluster_core.testing import check_plan_strategy, planning_inputs
from hudi_cluster_size_based.plan import SizeBasedPlanStrategy, pack_by_size

MB = 1024 * 1024


def slice_of(name: str, size: int, partition: str = "p") -> FileSlice:
    return FileSlice(partition, name, "1", BaseFile(f"{name}_0-1-1_1.parquet", name, "0-1-1", "1", size))


def test_packs_largest_first_and_closes_before_the_cap():
    slices = [slice_of(n, s * MB) for n, s in [("a", 10), ("b", 60), ("c", 30), ("d", 50), ("e", 20)]]
    groups = pack_by_size(slices, max_bytes_per_group=100 * MB, target_file_max_bytes=40 * MB, max_num_groups=30,
                          missing_base_size=120 * MB)  # fmt: skip
    assert [[s.file_id for s in g.slices] for g in groups] == [["b"], ["d", "c", "e"], ["a"]]
    assert [g.num_output_file_groups for g in groups] == [2, 3, 1]


def test_last_single_slice_group_dropped_when_single_group_clustering_is_off():
    slices = [slice_of("a", 90 * MB), slice_of("b", 20 * MB)]
    kept = pack_by_size(slices, max_bytes_per_group=100 * MB, target_file_max_bytes=MB, max_num_groups=30,
                        missing_base_size=1, single_group_clustering=False)  # fmt: skip
    assert [[s.file_id for s in g.slices] for g in kept] == [["a"]]


def test_max_num_groups_per_partition_stops_packing():
    slices = [slice_of(f"f{i}", 10 * MB) for i in range(10)]
    groups = pack_by_size(slices, max_bytes_per_group=20 * MB, target_file_max_bytes=MB, max_num_groups=2,
                          missing_base_size=1)  # fmt: skip
    assert len(groups) == 2 and all(len(g.slices) == 2 for g in groups)


def test_slice_without_base_file_counts_as_a_full_file():
    log_only = FileSlice("p", "log-only", "1")
    groups = pack_by_size([log_only, slice_of("a", MB)], max_bytes_per_group=10 * MB, target_file_max_bytes=MB,
                          max_num_groups=5, missing_base_size=120 * MB)  # fmt: skip
    assert [[s.file_id for s in g.slices] for g in groups] == [["log-only"], ["a"]]
    assert groups[0].num_output_file_groups == 120


@settings(max_examples=150, deadline=None)
@given(planning_inputs())
def test_size_based_conforms(case):
    outcome = check_plan_strategy(SizeBasedPlanStrategy(), case)
    target = int(case.options["hoodie.clustering.plan.strategy.target.file.max.bytes"])
    for group in outcome.groups:
        assert group.num_output_file_groups == max(1, math.ceil(group.total_bytes / target))
