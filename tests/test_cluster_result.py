"""The instants of one partial-progress run make one ``ClusterResult``: their figures added up, the first's mode and
instant kept; the result's names stay those of ``hudi_cluster_core.api``."""

from __future__ import annotations

import time

import hudi_cluster_core
from hudi_cluster_core import api
from hudi_cluster_core.cluster_result import ClusterResult, PartitionEffect, combined_result
from hudi_cluster_core.run_metrics import FileSizes, durations


def _instant(time_: str, partition: str, inputs: int, written: list[int], considered: int) -> ClusterResult:
    removed = FileSizes.of([100] * inputs)
    added = FileSizes.of(written)
    return ClusterResult(
        time_, "scheduleAndExecute", False, inputs, len(written), 100 * inputs,
        ({"partition": partition, "input_file_ids": [f"{partition}{i}" for i in range(inputs)]},),
        (PartitionEffect(partition, inputs, len(written), 100 * inputs, sum(written)),), (), f"{time_}.replacecommit",
        "completed", files_added=added, files_removed=removed, partitions_clustered=1, files_considered=considered,
        files_skipped=considered - inputs, rows_read=10 * inputs, rows_written=10 * inputs, bytes_read=100 * inputs,
        bytes_written=sum(written), duration_s=durations(plan=1.0, spark=2.0, commit=0.5, total=4.0),
    )  # fmt: skip


def test_partial_progress_instants_add_up():
    first, second = _instant("001", "us", 3, [250], 10), _instant("002", "eu", 2, [90, 110], 10)
    started = time.monotonic() - 7.0
    result = combined_result([first, second], started)
    assert (result.instant_time, result.mode, result.completed_file) == ("001", "scheduleAndExecute", "001.replacecommit")
    assert (result.input_file_groups, result.output_files, result.bytes_rewritten) == (5, 3, 500)
    assert [p.partition for p in result.partitions] == ["us", "eu"] and len(result.groups) == 2
    assert result.files_added == FileSizes(3, 90, 150, 250, 450) and result.files_removed == FileSizes(5, 100, 100, 100, 500)
    assert (result.partitions_clustered, result.files_considered, result.files_skipped) == (2, 10, 5)
    assert (result.rows_read, result.rows_written, result.bytes_read, result.bytes_written) == (50, 50, 500, 450)
    assert result.message == "completed 2 instants (partial progress): 001, 002"
    assert result.duration_s["plan"] == 1.0 and result.duration_s["total"] >= 7.0


def test_one_instant_is_its_own_result():
    only = _instant("001", "us", 3, [250], 10)
    assert combined_result([only], time.monotonic()) is only


def test_the_result_types_are_the_apis():
    assert api.ClusterResult is ClusterResult is hudi_cluster_core.ClusterResult
    assert api.PartitionEffect is PartitionEffect and set(api.__all__) == {"ClusterResult", "PartitionEffect", "cluster", "PlanError"}
