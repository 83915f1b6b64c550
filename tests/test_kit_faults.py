"""Seeded faults the conformance kit used to miss (issue 21), one test each: a deliberately faulty strategy that the
kit must reject with the expected one-line message.

* a lone file already at or above the target, rewritten (the finding ``lone-slice-at-target``), and its silencing;
* an error on an empty partition (the kit generates partitions without a slice, and runs fixed empty inputs);
* a params model that accepts ``min_files=-1`` (no declared bound; a bound declared but not enforced; a default
  outside the declared bounds);
* an execution strategy writing three times the planned files.
"""

from __future__ import annotations

import re

import pytest
from pydantic import field_validator

from hudi_cluster_core.sdk import Field, PlannedGroup, SizeLimits, StrategyParams, hookimpl, params_key
from hudi_cluster_core.testing import KitFailure, KitFinding, check_params_model, run_execution_kit, run_plan_kit
from tests.test_conformance_faults import Packing, SortAndSize, assert_caught

# ------------------------------------------------------------------------------------------ a lone big file


class RewritesALoneBigFile(Packing):
    """Packs like size-based, but a file at or above the target gets a group of its own (by Hudi's size rule)."""

    name = "rewrites-a-lone-big-file"
    kit_silence = ()

    @hookimpl
    def plan_group_slices(self, context, slices):
        limits = SizeLimits.from_config(context.config)
        big = [s for s in slices if s.base_file_size >= limits.target_file_max_bytes]
        rest = [s for s in slices if s.base_file_size < limits.target_file_max_bytes]
        alone = [PlannedGroup((s,), limits.output_files(limits.slice_size(s))) for s in big]
        return super().plan_group_slices(context, rest) + alone


LONE = re.compile(
    r"^plan strategy 'rewrites-a-lone-big-file', hook plan_group_slices: no pointless rewrite of a lone file "
    r"\(finding lone-slice-at-target\): group #\d+ \[\S+/[0-9a-f]{8} (\d+) B\] = \1 B -> \d+ file\(s\): its file is "
    r"already >= target\.file\.max\.bytes=(\d+) B, with no log file to merge and no sort columns; if intended, "
    r"declare kit_silence = \('lone-slice-at-target',\) on the strategy$"
)


def test_a_lone_file_at_the_target_is_a_finding():
    invariant = "no pointless rewrite of a lone file"
    message = assert_caught(run_plan_kit, RewritesALoneBigFile(), "plan_group_slices", invariant)
    match = LONE.match(message)
    assert match, message
    assert int(match.group(1)) >= int(match.group(2))  # exact bytes: the size is at or above the target


def test_the_finding_is_silenced_per_strategy():
    class MeansIt(RewritesALoneBigFile):
        name = "means-it"
        kit_silence = ("lone-slice-at-target",)

    run_plan_kit(MeansIt())
    run_plan_kit(RewritesALoneBigFile(), silence=("lone-slice-at-target",))  # or per call
    with pytest.raises(ValueError, match="unknown finding"):
        run_plan_kit(RewritesALoneBigFile(), silence=("lone-slice",))


def test_a_lone_file_with_sort_columns_is_not_pointless():
    run_plan_kit(RewritesALoneBigFile(), extra_options={"hoodie.clustering.plan.strategy.sort.columns": "amount"})


# ------------------------------------------------------------------------------------------ empty partitions


class RaisesOnAnEmptyPartition(Packing):
    """Looks up the largest eligible file of every selected partition: max() of nothing on a partition with none."""

    name = "raises-on-an-empty-partition"

    @hookimpl
    def plan_group_slices(self, context, slices):
        limits = SizeLimits.from_config(context.config)
        for partition in context.partitions:
            max(limits.slice_size(s) for s in slices if s.partition == partition)
        return super().plan_group_slices(context, slices)


def test_an_error_on_an_empty_input_is_caught_first():
    invariant = "raises no error on valid input"
    message = assert_caught(run_plan_kit, RaisesOnAnEmptyPartition(), "plan_group_slices", invariant)
    assert re.fullmatch(
        r"plan strategy 'raises-on-an-empty-partition', hook plan_group_slices: raises no error on valid input: "
        r"ValueError: max\(\) (arg is an empty sequence|iterable argument is empty); "  # (Python 3.11; 3.12)
        r"input: an empty table \(no slice\), table days", message
    ), message


def test_an_error_on_an_empty_partition_is_caught_in_generated_cases():
    run = lambda strategy: run_plan_kit(strategy, edge_cases=False)  # noqa: E731 - the generated cases alone
    message = assert_caught(run, RaisesOnAnEmptyPartition(), "plan_group_slices", "raises no error on valid input")
    assert re.search(r": ValueError: max\(\) [^;]+; input: \d+ slices \(\d+ MOR\) in \d+ "
                     r"partitions \(1 without a slice: [^)]+\), \d+ pending$", message), message  # fmt: skip


# ----------------------------------------------------------------------------------------------- params


def key(setting: str) -> str:
    return params_key("min-files", setting)


class UnboundedParams(StrategyParams):
    min_files: int = Field(2, alias=key("min.files"), description="Plan a group of at least this many files (>= 1)")


class UnenforcedBoundParams(StrategyParams):
    min_files: int = Field(2, ge=1, alias=key("min.files"), description="Plan a group of at least this many files")

    @field_validator("min_files", mode="before")
    @classmethod
    def _at_least_one(cls, value):
        return max(1, int(value))  # clamps instead of refusing: the declared bound never rejects anything


class DefaultOutsideParams(StrategyParams):
    min_files: int = Field(0, ge=1, alias=key("min.files"), description="Plan a group of at least this many files")


def with_params(model):
    return type(f"MinFiles{model.__name__}", (Packing,), {"name": "min-files", "params_model": model})()


@pytest.mark.parametrize("model, invariant, detail", [
    (UnboundedParams, "numeric params declare their bounds (finding unbounded-param)",
     "hoodie.clustering.plan.strategy.min.files.min.files=-1 accepted: UnboundedParams.min_files declares no lower "
     "bound (Field(..., ge=...)); if intended, declare kit_silence = ('unbounded-param',) on the strategy"),
    (UnenforcedBoundParams, "rejects values outside its declared bounds",
     "hoodie.clustering.plan.strategy.min.files.min.files=0 accepted (as 1); UnenforcedBoundParams.min_files "
     "declares >= 1"),
    (DefaultOutsideParams, "default within its declared bounds",
     "DefaultOutsideParams.min_files (hoodie.clustering.plan.strategy.min.files.min.files) defaults to 0, declared >= 1"),
], ids=["no-bound", "bound-not-enforced", "default-outside"])  # fmt: skip
def test_a_params_model_is_held_to_its_declared_bounds(model, invariant, detail):
    strategy = with_params(model)
    message = assert_caught(run_plan_kit, strategy, "params_model", invariant)
    assert message == f"plan strategy 'min-files', hook params_model: {invariant}: {detail}", message


def test_unbounded_params_are_a_finding_to_silence():
    strategy = with_params(UnboundedParams)
    with pytest.raises(KitFinding) as caught:
        check_params_model(strategy)
    assert caught.value.code == "unbounded-param"
    check_params_model(strategy, silence=("unbounded-param",))


def test_bounds_declared_and_enforced_pass():
    class Bounded(StrategyParams):
        min_files: int = Field(2, ge=1, le=100, alias=key("min.files"))
        ratio: float = Field(0.5, gt=0, lt=1, alias=key("ratio"))
        required: str = Field(alias=key("required"))  # a required field of another type does not get in the way
        maybe: int | None = Field(None, ge=0, alias=key("maybe"))

    check_params_model(with_params(Bounded))


# ---------------------------------------------------------------------------------------------- execution


class WritesThreeTimesThePlannedFiles(SortAndSize):
    name = "writes-3x-the-files"

    @hookimpl
    def execute_group(self, task):
        return task.write(self.rows(task), 3 * task.num_output_file_groups)


def test_three_times_the_planned_files_is_caught():
    message = assert_caught(run_execution_kit, WritesThreeTimesThePlannedFiles(), "execute_group",
                            "output file count follows the plan's numOutputFileGroups")  # fmt: skip
    assert re.search(r": (\d+) file\(s\) for \d+ rows, the plan's numOutputFileGroups = (\d+): accepted \d+\.\.\d+ files, "
                     r"or files rolled at the target \(row bytes -?\d+ B a file; theirs: [-\d, .]+\)$", message), message  # fmt: skip


def test_failures_are_kit_failures():
    assert issubclass(KitFinding, KitFailure)


@pytest.mark.parametrize("seed, rows, outputs", [(0, 12, 3), (1, 12, 4), (2, 4, 2), (3, 25, 4), (4, 1, 2)])
def test_files_rolled_at_the_target_pass_however_small_the_group(seed, rows, outputs):
    """The kit's tables are small: a file's fixed bytes (~1.1 KB of column chunk headers and statistics) outweigh
    its rows. Its target counts them, so a strategy rolling files at it (sort-and-size) writes about the planned
    count: with a target of the inputs' data bytes over n, one 12-row slice planned as 3 files rolled 8."""
    from hudi_cluster_core.testing.execution import ExecutionInput, check_execution_strategy, execution_table
    from hudi_cluster_size_based.execution import SortAndSizeExecutionStrategy

    base, slices = execution_table(seed, 1, 1, rows)
    group = tuple(s for s in slices if s.partition == slices[0].partition)
    case = ExecutionInput(base, group, ("x",), "linear", outputs, f"2027000000{seed:07d}")
    check_execution_strategy(SortAndSizeExecutionStrategy(), case)
