"""Seeded faults: deliberately broken strategies, each of which the conformance kit must fail with one short
message naming the strategy, the hook and the broken invariant."""

from __future__ import annotations

import atexit
import random
import shutil
import tempfile
import time
from dataclasses import replace

import pytest

from hudi_cluster_core.hookspecs import hookimpl
from hudi_cluster_core.plan.eligibility import select_eligible_slices
from hudi_cluster_core.plan.limits import SizeLimits
from hudi_cluster_core.plan.model import PlannedGroup, UpdateDecision
from hudi_cluster_core.sort.curves import sort_rows
from hudi_cluster_core.testing import KitFailure, run_execution_kit, run_plan_kit, run_update_kit
from hudi_cluster_size_based.execution import SortAndSizeExecutionStrategy, SortAndSizeParams
from hudi_cluster_size_based.plan import SizeBasedPlanStrategy
from hudi_cluster_update_strategies import RejectUpdateStrategy

# A failing kit run (search + shrink) takes 1-17 s of CPU here; the bound only catches a blow-up (the issue
# measured 299 s), loose enough not to make the test timing-flaky. CPU time, not wall time: on a loaded machine
# (a load of 12 on 2 cores) the same run took 4 minutes of wall time for 33 s of CPU.
MAX_SECONDS = 60


# ------------------------------------------------------------------------------------------- plan faults


class Packing:
    """Groups like size-based; the faults below break one thing each."""

    kind = "plan"
    java_class_names = ()
    params_model = None
    summary = "fault"
    kit_silence = ("lone-slice-at-target",)  # like Hudi's packing, it may rewrite a lone big file; not the fault here

    @hookimpl
    def plan_group_slices(self, context, slices):
        limits = SizeLimits.from_config(context.config)
        groups, by_partition = [], {}
        for s in slices:
            by_partition.setdefault(s.partition, []).append(s)
        for partition in sorted(by_partition):
            current, total = [], 0
            for s in sorted(by_partition[partition], key=lambda s: s.file_id):
                if current and total + limits.slice_size(s) > limits.max_bytes_per_group:
                    groups.append(PlannedGroup(tuple(current), limits.output_files(total)))
                    current, total = [], 0
                current.append(s)
                total += limits.slice_size(s)
            if current:
                groups.append(PlannedGroup(tuple(current), limits.output_files(total)))
        return groups


class DropsASlice(Packing):
    name = "drops-a-slice"

    @hookimpl
    def plan_select_slices(self, context, slices):
        return select_eligible_slices(context, slices)[1:]


class IgnoresPendingGroups(Packing):
    name = "ignores-pending"

    @hookimpl
    def plan_select_slices(self, context, slices):
        return select_eligible_slices(replace(context, pending_file_groups={}), slices)


class IgnoresPartitionFilter(Packing):
    name = "ignores-partition-filter"

    @hookimpl
    def plan_select_slices(self, context, slices):
        everywhere = tuple(sorted({s.partition for s in slices}))
        return select_eligible_slices(replace(context, partitions=everywhere), slices)


class DuplicatesASlice(Packing):
    name = "duplicates-a-slice"

    @hookimpl
    def plan_group_slices(self, context, slices):
        groups = super().plan_group_slices(context, slices)
        return groups + [PlannedGroup((groups[0].slices[0],), 1)] if groups else groups


class MixesPartitions(Packing):
    name = "mixes-partitions"

    @hookimpl
    def plan_group_slices(self, context, slices):
        ordered = sorted(slices, key=lambda s: s.file_id)
        return [PlannedGroup(tuple(ordered[i : i + 2]), 1) for i in range(0, len(ordered), 2)]


class ExceedsMaxBytes(Packing):
    name = "exceeds-max-bytes"

    @hookimpl
    def plan_group_slices(self, context, slices):
        limits = SizeLimits.from_config(context.config)
        by_partition = {}
        for s in slices:
            by_partition.setdefault(s.partition, []).append(s)
        return [PlannedGroup(tuple(m), limits.output_files(sum(limits.slice_size(s) for s in m)))
                for _, m in sorted(by_partition.items())]  # fmt: skip


class NonDeterministic(Packing):
    name = "non-deterministic"

    @hookimpl
    def plan_group_slices(self, context, slices):
        shuffled = list(slices)
        random.shuffle(shuffled)
        return super().plan_group_slices(context, shuffled[: max(1, len(shuffled) - 1)])


class BreaksTheSizeRule(Packing):
    name = "breaks-size-rule"

    @hookimpl
    def plan_group_slices(self, context, slices):
        return [replace(g, num_output_file_groups=g.num_output_file_groups + 1) for g in super().plan_group_slices(context, slices)]


class IgnoresMaxNumGroups(Packing):
    name = "ignores-max-num-groups"

    @hookimpl
    def plan_finalize_groups(self, context, groups):
        return list(groups)


class RaisesOnLogOnlySlices(Packing):
    name = "raises-on-log-only"

    @hookimpl
    def plan_group_slices(self, context, slices):
        limits = SizeLimits.from_config(context.config)
        return [PlannedGroup((s,), limits.output_files(s.base_file.size)) for s in slices]  # no base: AttributeError


PLAN_FAULTS = [
    (DropsASlice, "plan_select_slices", "every eligible slice selected"),
    (IgnoresPendingGroups, "plan_select_slices", "pending file groups excluded"),
    (IgnoresPartitionFilter, "plan_select_slices", "partition filter honoured"),
    (DuplicatesASlice, "plan_group_slices", "each slice in at most one group"),
    (MixesPartitions, "plan_group_slices", "one partition per group"),
    (ExceedsMaxBytes, "plan_group_slices", "max.bytes.per.group honoured"),
    (NonDeterministic, "plan_group_slices", "deterministic"),
    (BreaksTheSizeRule, "plan_group_slices", "output files follow ceil(group size / target.file.max.bytes)"),
    (IgnoresMaxNumGroups, "plan_finalize_groups", "at most max.num.groups groups"),
    (RaisesOnLogOnlySlices, "plan_group_slices", "raises no error on valid input"),
]


def assert_caught(run, strategy, hook: str, invariant: str) -> str:
    started = time.process_time()
    with pytest.raises(KitFailure) as caught:
        run(strategy)
    elapsed = time.process_time() - started
    message = str(caught.value)
    assert message.startswith(f"{strategy.kind} strategy '{strategy.name}', hook {hook}: "), message
    assert invariant in message, message
    assert caught.value.hook == hook and invariant in caught.value.invariant
    assert len(message) < 700 and message.count("\n") == 0, message  # short: the offending groups only
    assert not getattr(caught.value, "__notes__", None), "hypothesis' example dump leaked into the failure"
    assert elapsed < MAX_SECONDS, f"kit took {elapsed:.1f}s of CPU to fail {strategy.name}"
    return message


@pytest.mark.parametrize("fault, hook, invariant", PLAN_FAULTS, ids=[f[0].name for f in PLAN_FAULTS])
def test_plan_kit_catches(fault, hook, invariant):
    assert_caught(run_plan_kit, fault(), hook, invariant)


def test_plan_kit_passes_the_real_strategy_within_bounds():
    started = time.process_time()
    run_plan_kit(SizeBasedPlanStrategy())
    assert time.process_time() - started < MAX_SECONDS


def test_a_strategy_with_only_plan_group_slices_gets_the_core_defaults():
    class OnlyGroups(Packing):
        name = "only-groups"

    run_plan_kit(OnlyGroups())


# --------------------------------------------------------------------------------------- execution faults


class SortAndSize:
    kind = "execution"
    java_class_names = ()
    params_model = SortAndSizeParams
    summary = "fault"

    def rows(self, task):
        columns = task.params.columns if task.params else []
        return sort_rows(task.read_arrow(), columns, task.settings.get("hoodie.layout.optimize.strategy", "linear"))


class DropsARow(SortAndSize):
    name = "drops-a-row"

    @hookimpl
    def execute_group(self, task):
        rows = self.rows(task)
        return task.write(rows.slice(0, rows.num_rows - 1))


class DuplicatesARow(SortAndSize):
    name = "duplicates-a-row"

    @hookimpl
    def execute_group(self, task):
        rows = self.rows(task)
        return task.write(rows) + task.write(rows.slice(0, 1), 1)


class RewritesCommitTime(SortAndSize):
    name = "rewrites-commit-time"

    @hookimpl
    def execute_group(self, task):
        import pyarrow as pa

        rows = self.rows(task)
        index = rows.schema.get_field_index("_hoodie_commit_time")
        return task.write(rows.set_column(index, "_hoodie_commit_time", pa.array([task.instant_time] * rows.num_rows)))


class WritesUnsorted(SortAndSize):
    name = "writes-unsorted"

    @hookimpl
    def execute_group(self, task):
        rows = self.rows(task)
        return task.write(rows.take(list(range(rows.num_rows))[::-1]))


class LinearForCurves(SortAndSize):
    name = "linear-for-curves"

    @hookimpl
    def execute_group(self, task):
        return task.write(sort_rows(task.read_arrow(), task.params.columns if task.params else [], "linear"))


class OneFileForAll(SortAndSize):
    name = "one-file-for-all"

    @hookimpl
    def execute_group(self, task):
        return task.write(self.rows(task), 1)


class SortsOnlyWithinFiles(SortAndSize):
    name = "sorts-within-files"

    @hookimpl
    def execute_group(self, task):
        import pyarrow as pa

        rows = task.read_arrow()
        columns = task.params.columns if task.params else []
        count = task.num_output_file_groups
        step = -(-rows.num_rows // count)
        parts = [sort_rows(rows.slice(i * step, step), columns, "linear") for i in range(count)]
        return task.write(pa.concat_tables(parts), count)


class ReadsFilesItself(SortAndSize):
    name = "reads-files-itself"

    @hookimpl
    def execute_group(self, task):
        import pyarrow as pa
        import pyarrow.parquet as pq

        rows = pa.concat_tables([pq.read_table(s.base_file, filesystem=task.storage.fs) for s in task.group.slices
                                 if not s.log_files])  # fmt: skip
        columns = task.params.columns if task.params else []
        return task.write(sort_rows(rows, columns, task.settings.get("hoodie.layout.optimize.strategy", "linear")))


EXECUTION_FAULTS = [
    (DropsARow, {}, "every input row written exactly once"),
    (ReadsFilesItself, {}, "the rewrite check passes"),
    (DuplicatesARow, {}, "every input row written exactly once"),
    (RewritesCommitTime, {}, "_hoodie_commit_time kept"),
    (WritesUnsorted, {"sorts": "required"}, "declared sort holds"),
    (LinearForCurves, {"sorts": "required", "layouts": ("z-order", "hilbert")}, "declared sort holds"),
    (OneFileForAll, {}, "output file count follows the plan's numOutputFileGroups"),
    (SortsOnlyWithinFiles, {"sorts": "required", "layouts": ("linear",)}, "declared sort holds"),
]


@pytest.mark.parametrize("fault, options, invariant", EXECUTION_FAULTS, ids=[f[0].name for f in EXECUTION_FAULTS])
def test_execution_kit_catches(fault, options, invariant):
    assert_caught(lambda s: run_execution_kit(s, **options), fault(), "execute_group", invariant)


def test_execution_kit_passes_sort_and_size():
    started = time.process_time()
    run_execution_kit(SortAndSizeExecutionStrategy())
    assert time.process_time() - started < MAX_SECONDS


# ------------------------------------------------------------------------------------------ update faults


class UpdateFault:
    kind = "update"
    java_class_names = ()
    params_model = None
    summary = "fault"


class RejectsNamingNothing(UpdateFault):
    name = "rejects-naming-nothing"

    @hookimpl
    def update_decide(self, context):
        touched = frozenset(g for g in context.incoming_file_groups if g in context.pending_clustering)
        return UpdateDecision("reject", touched, "rejected") if touched else UpdateDecision("allow")


class AllowThatRejects(UpdateFault):
    name = "allow-that-rejects"

    @hookimpl
    def update_decide(self, context):
        touched = frozenset(g for g in context.incoming_file_groups if g in context.pending_clustering)
        return UpdateDecision("reject" if touched else "allow", touched, str(touched))


class WritesAFile(UpdateFault):
    name = "writes-a-file"

    @hookimpl
    def update_decide(self, context):
        import tempfile

        with tempfile.TemporaryFile("w") as sink:
            sink.write("decided")
        return UpdateDecision("allow", frozenset(g for g in context.incoming_file_groups if g in context.pending_clustering))


_PYARROW_SINK = tempfile.mkdtemp(prefix="kit-pyarrow-sink-")  # made here: a mkdir in the hook is audited
atexit.register(shutil.rmtree, _PYARROW_SINK, True)


class WritesThroughPyarrow(UpdateFault):
    """Writes through pyarrow's file system only: native code, which Python's audit events never see."""

    name = "writes-through-pyarrow"

    @hookimpl
    def update_decide(self, context):
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"decided": [1]}), f"{_PYARROW_SINK}/decision.parquet")
        return UpdateDecision("allow", frozenset(g for g in context.incoming_file_groups if g in context.pending_clustering))


UPDATE_FAULTS = [
    (RejectsNamingNothing, "reject", "a rejection names the file groups"),
    (AllowThatRejects, "allow", "allow policy"),
    (WritesAFile, "allow", "pure (writes nothing)"),
    (WritesThroughPyarrow, "allow", "pure (writes nothing)"),
]


@pytest.mark.parametrize("fault, policy, invariant", UPDATE_FAULTS, ids=[f[0].name for f in UPDATE_FAULTS])
def test_update_kit_catches(fault, policy, invariant):
    assert_caught(lambda s: run_update_kit(s, policy=policy), fault(), "update_decide", invariant)


def test_update_kit_passes_reject():
    run_update_kit(RejectUpdateStrategy(), policy="reject")

