"""The invariants every plan strategy keeps: ``check_plan_strategy`` (one case) and ``run_plan_kit`` (a bounded,
shrinking hypothesis run). A broken invariant raises :class:`KitFailure`, one short message naming the strategy,
the hook and the invariant, and only the offending groups.

Use it from your plugin's tests (see CONTRIBUTING.md)::

    def test_my_strategy_conforms():
        run_plan_kit(MyPlanStrategy())

**Sizes.** The kit measures a slice as Hudi's size-based planning does (:meth:`SizeLimits.slice_size`): its base
file size, or ``hoodie.parquet.max.file.size`` for a slice without a base file; log files do not count. That is the
size checked against ``max.bytes.per.group`` (groups of one slice are exempt) and the one of Hudi's output rule
``num_output_file_groups == max(1, ceil(group size / target.file.max.bytes))``. ``small.file.limit`` is compared
with the base file size.

**Declarations.** A strategy whose groups may hold slices of several partitions says so with a class attribute
``groups_span_partitions = True``. Strategies that document other rules pass the flags of
:func:`check_plan_strategy` (``size_rule``, ``honours_small_file_limit``, ``honours_max_bytes``,
``selects_all_eligible``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable

from hypothesis import HealthCheck, Verbosity, given
from hypothesis import settings as hypothesis_settings

from ..avro import decode_avro, encode_avro
from ..config import load_config, strategy_params
from ..io.storage import Storage
from ..plan.avro_plan import build_requested_replace_metadata
from ..plan.eligibility import select_partitions
from ..plan.limits import SizeLimits
from ..plan.model import PlanContext, PlannedGroup, SliceStats
from ..plugins import call_hook
from .strategies import KitGenerationError, PlanningInput, load_kit_table, planning_inputs

KIT_TABLE = Storage("/kit/table")  # plans of cases without a table are built against this path
KIT_INSTANT = "20270101000000000"


# ----------------------------------------------------------------------------------------------- failures


class KitFailure(AssertionError):
    """A strategy broke an invariant: ``<kind> strategy '<name>', hook <hook>: <invariant>: <detail>``."""

    def __init__(self, strategy: Any, hook: str, invariant: str, detail: str):
        self.strategy_name = getattr(strategy, "name", type(strategy).__name__)
        self.kind = getattr(strategy, "kind", "?")
        self.hook, self.invariant, self.detail = hook, invariant, detail
        super().__init__(f"{self.kind} strategy '{self.strategy_name}', hook {hook}: {invariant}: {detail}")


def fail(strategy: Any, hook: str, invariant: str, detail: str) -> None:
    raise KitFailure(strategy, hook, invariant, detail)


def _short(file_id: str) -> str:
    return file_id[:8]


def fmt_bytes(size: int) -> str:
    return f"{size / 1024 / 1024:.1f}MB" if size >= 1024 * 1024 else f"{size / 1024:.0f}KB"


def fmt_slice(file_slice, size: int | None = None) -> str:
    where = file_slice.partition or "(none)"
    shown = f" {fmt_bytes(size)}" if size is not None else ""
    return f"{where}/{_short(file_slice.file_id)}{shown}"


def fmt_group(index: int, group: PlannedGroup, limits: SizeLimits | None = None, max_slices: int = 6) -> str:
    sizes = [limits.slice_size(s) for s in group.slices] if limits else [None] * len(group.slices)
    shown = ", ".join(fmt_slice(s, z) for s, z in list(zip(group.slices, sizes))[:max_slices])
    more = f", +{len(group.slices) - max_slices} more" if len(group.slices) > max_slices else ""
    total = f" = {fmt_bytes(sum(limits.slice_size(s) for s in group.slices))}" if limits else ""
    return f"group #{index} [{shown}{more}]{total} -> {group.num_output_file_groups} file(s)"


# ------------------------------------------------------------------------------------------- hook calls

# The core's default plan hooks, for strategies that implement only plan_group_slices. After the SDK merge these
# come from hudi_cluster_core.plugins; swapping this lookup is the one change the kit needs.


def _call(strategy: Any, hook: str, **kwargs: Any) -> Any:
    """Every hook call of the kit goes through the core's one way of calling a strategy, which falls back to the
    core default for a hook the strategy does not implement."""
    return call_hook(strategy, hook, **kwargs)


def _checked_call(strategy: Any, hook: str, **kwargs: Any) -> Any:
    """``_call``, with an exception turned into a kit failure naming the hook."""
    try:
        return _call(strategy, hook, **kwargs)
    except KitFailure:
        raise
    except Exception as exc:  # noqa: BLE001 - any error on valid input is the strategy's bug
        message = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise KitFailure(strategy, hook, "raises no error on valid input", f"{type(exc).__name__}: {message}") from None


# ------------------------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class PlanOutcome:
    eligible: tuple
    groups: tuple[PlannedGroup, ...]
    record: dict | None
    grouped: tuple[PlannedGroup, ...] = ()  # plan_group_slices' groups, before finalize
    execution: tuple | None = None  # plan_execution_strategy's (class, params)


def _context(strategy, case: PlanningInput, options: dict) -> tuple[PlanContext, Any, Any]:
    config = load_config(overrides=options)
    selection = select_partitions(list(case.all_partitions), config, now=case.now)
    params = strategy_params(strategy, dict(config.raw))
    table = load_kit_table(case.table_path) if case.table_path else None
    stats = dict(case.stats)
    context = PlanContext(table, config, params, KIT_INSTANT, dict(case.pending), selection.partitions,
                          lambda s: stats.get(s) or SliceStats())  # fmt: skip
    return context, config, selection


def plan_with(strategy, case: PlanningInput, *, extra_options: dict | None = None, checked: bool = False) -> PlanOutcome:
    """Run the four plan hooks of ``strategy`` on a case, as the scheduler does (missing hooks: core defaults)."""
    call = _checked_call if checked else _call
    options = {**case.options, **(extra_options or {})}
    context, _, selection = _context(strategy, case, options)
    eligible = tuple(call(strategy, "plan_select_slices", context=context, slices=list(case.slices)) or [])
    grouped = tuple(call(strategy, "plan_group_slices", context=context, slices=list(eligible)) or [])
    groups = tuple(call(strategy, "plan_finalize_groups", context=context, groups=list(grouped)) or [])
    record, execution = None, None
    if groups:
        execution = call(strategy, "plan_execution_strategy", context=context)
        if checked:
            _check_execution_choice(strategy, execution)
        storage = context.table.storage if context.table is not None else KIT_TABLE
        record = build_requested_replace_metadata(storage, list(groups), execution[0], execution[1], selection.missing)
    return PlanOutcome(eligible, groups, record, grouped, tuple(execution) if execution else None)


def _check_execution_choice(strategy, execution) -> None:
    hook = "plan_execution_strategy"
    if not (isinstance(execution, (tuple, list)) and len(execution) == 2):
        fail(strategy, hook, "returns (execution class, params)", f"returned {execution!r:.120}")
    name, params = execution
    if not isinstance(name, str) or not name:
        fail(strategy, hook, "names an execution strategy", f"class name {name!r:.80}")
    if not isinstance(params, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in params.items()):
        fail(strategy, hook, "params are a dict of str to str", f"{params!r:.120}")


def check_plan_strategy(
    strategy, case: PlanningInput, *, size_rule: bool = True, honours_small_file_limit: bool = True,
    honours_max_bytes: bool = True, selects_all_eligible: bool | None = None, groups_span_partitions: bool | None = None,
    extra_options: dict | None = None,
) -> PlanOutcome:
    """Assert the plan invariants for ``strategy`` on ``case``; returns the outcome for further checks.

    ``size_rule``: output-group counts are ``ceil(group size / target.file.max.bytes)`` (Hudi's rule);
    strategies with their own rule (single-file sort, buckets) pass False. ``honours_small_file_limit``,
    ``honours_max_bytes`` and ``selects_all_eligible`` (every standard-eligible slice is selected) likewise for
    strategies that document otherwise (``selects_all_eligible`` defaults to ``honours_small_file_limit``: a
    strategy with its own eligibility rule is not held to the standard one). ``groups_span_partitions`` defaults
    to the strategy's attribute.
    """
    if selects_all_eligible is None:
        selects_all_eligible = honours_small_file_limit
    if groups_span_partitions is None:
        groups_span_partitions = bool(getattr(strategy, "groups_span_partitions", False))
    options = {**case.options, **(extra_options or {})}
    outcome = plan_with(strategy, case, extra_options=extra_options, checked=True)
    config = load_config(overrides=options)
    limits = SizeLimits.from_config(config)
    selection = select_partitions(list(case.all_partitions), config, now=case.now)
    selected = set(selection.partitions)

    # -- plan_select_slices
    hook = "plan_select_slices"
    given_slices = {s.group_id: s for s in case.slices}
    seen_selected = set()
    for s in outcome.eligible:
        if given_slices.get(s.group_id) != s:
            fail(strategy, hook, "selects only slices it was given", f"{fmt_slice(s)} was not given (or was altered)")
        if s.group_id in seen_selected:
            fail(strategy, hook, "selects a slice once", f"{fmt_slice(s)} selected twice")
        seen_selected.add(s.group_id)
        if s.group_id in case.pending:
            fail(strategy, hook, "pending file groups excluded",
                 f"{fmt_slice(s)} selected while pending (instant {case.pending[s.group_id]})")  # fmt: skip
        if s.partition not in selected:
            fail(strategy, hook, "partition filter honoured",
                 f"{fmt_slice(s)} selected; the filter selects {sorted(selected)}")  # fmt: skip
        if honours_small_file_limit and s.base_file_size >= limits.small_file_limit:
            fail(strategy, hook, "small.file.limit honoured",
                 f"{fmt_slice(s, s.base_file_size)} is not below small.file.limit={limits.small_file_limit}")  # fmt: skip
    if selects_all_eligible:
        dropped = [s for s in case.slices if s.partition in selected and s.group_id not in case.pending
                   and s.base_file_size < limits.small_file_limit and s.group_id not in seen_selected]  # fmt: skip
        if dropped:
            fail(strategy, hook, "every eligible slice selected",
                 f"dropped {len(dropped)} eligible slice(s): {', '.join(fmt_slice(s, s.base_file_size) for s in dropped[:5])}")  # fmt: skip

    # -- plan_group_slices, then plan_finalize_groups (which may only order and filter them)
    _check_groups(strategy, "plan_group_slices", outcome.grouped, outcome.eligible, case, limits, size_rule,
                  honours_max_bytes, groups_span_partitions)  # fmt: skip
    hook = "plan_finalize_groups"
    grouped = {g.slices for g in outcome.grouped}
    for index, group in enumerate(outcome.groups):
        if group.slices not in grouped:
            fail(strategy, hook, "only orders and filters the groups",
                 f"{fmt_group(index, group, limits)} is not one plan_group_slices made")  # fmt: skip
    _check_groups(strategy, hook, outcome.groups, outcome.eligible, case, limits, size_rule, honours_max_bytes,
                  groups_span_partitions)  # fmt: skip
    if len(outcome.groups) > limits.max_num_groups:
        fail(strategy, hook, "at most max.num.groups groups",
             f"{len(outcome.groups)} groups, max.num.groups={limits.max_num_groups}")  # fmt: skip

    # -- deterministic: the same input gives the same result, hook by hook
    again = plan_with(strategy, case, extra_options=extra_options, checked=True)
    for hook, first, second in (
        ("plan_select_slices", outcome.eligible, again.eligible),
        ("plan_group_slices", outcome.grouped, again.grouped),
        ("plan_finalize_groups", outcome.groups, again.groups),
        ("plan_execution_strategy", outcome.execution, again.execution),
    ):
        if first != second:
            fail(strategy, hook, "deterministic (same input, same result)", _first_difference(first, second, limits))
    if outcome.record is not None:
        if decode_avro(encode_avro(outcome.record, "HoodieRequestedReplaceMetadata")) != outcome.record:
            fail(strategy, "plan_execution_strategy", "plan encodes as Hudi's Avro", "the plan changed in an Avro round trip")
    return outcome


def _first_difference(first, second, limits: SizeLimits) -> str:
    first, second = tuple(first or ()), tuple(second or ())
    for index, (a, b) in enumerate(zip(first, second)):
        if a != b:
            if isinstance(a, PlannedGroup) and isinstance(b, PlannedGroup):
                return f"run 1 {fmt_group(index, a, limits)}; run 2 {fmt_group(index, b, limits)}"
            if hasattr(a, "file_id") and hasattr(b, "file_id"):
                return f"item #{index}: run 1 {fmt_slice(a)}, run 2 {fmt_slice(b)}"
            return f"item #{index}: run 1 {a!r:.100}, run 2 {b!r:.100}"
    return f"run 1 gave {len(first)} item(s), run 2 {len(second)}"


def _check_groups(strategy, hook, groups, eligible, case, limits, size_rule, honours_max_bytes, span_partitions):
    eligible_ids = {s.group_id for s in eligible}
    owner: dict = {}
    for index, group in enumerate(groups):
        if not isinstance(group, PlannedGroup):
            fail(strategy, hook, "returns PlannedGroup objects", f"item #{index} is {type(group).__name__}")
        if not group.slices:
            fail(strategy, hook, "no empty group", f"group #{index} has no slices")
        for s in group.slices:
            if s.group_id in case.pending:
                fail(strategy, hook, "pending file groups excluded",
                     f"{fmt_group(index, group, limits)} holds {fmt_slice(s)}, pending (instant {case.pending[s.group_id]})")  # fmt: skip
            if s.group_id not in eligible_ids:
                fail(strategy, hook, "groups only selected slices", f"{fmt_group(index, group, limits)} holds unselected {fmt_slice(s)}")
            if s.group_id in owner:
                other = owner[s.group_id]
                fail(strategy, hook, "each slice in at most one group",
                     f"{fmt_slice(s)} is in {fmt_group(other, groups[other], limits)} and {fmt_group(index, group, limits)}")  # fmt: skip
            owner[s.group_id] = index
        partitions = sorted({s.partition for s in group.slices})
        if len(partitions) > 1 and not span_partitions:
            fail(strategy, hook, "one partition per group (groups_span_partitions not declared)",
                 f"{fmt_group(index, group, limits)} spans {partitions}")  # fmt: skip
        size = sum(limits.slice_size(s) for s in group.slices)
        if honours_max_bytes and len(group.slices) > 1 and size > limits.max_bytes_per_group:
            fail(strategy, hook, "max.bytes.per.group honoured",
                 f"{fmt_group(index, group, limits)} > max.bytes.per.group={limits.max_bytes_per_group / 1024 / 1024:.1f}MB")  # fmt: skip
        if not isinstance(group.num_output_file_groups, int) or group.num_output_file_groups < 1:
            fail(strategy, hook, "num_output_file_groups >= 1", fmt_group(index, group, limits))
        if size_rule and group.num_output_file_groups != limits.output_files(size):
            fail(strategy, hook, "output files follow ceil(group size / target.file.max.bytes)",
                 f"{fmt_group(index, group, limits)}, expected {limits.output_files(size)} with target "
                 f"{limits.target_file_max_bytes / 1024 / 1024:.1f}MB")  # fmt: skip


# ------------------------------------------------------------------------------------------- the runner


def kit_settings(max_examples: int, **overrides: Any) -> hypothesis_settings:
    """Bounded, reproducible and quiet: no deadline flakiness, no database, no blobs, one (shrunk) bug reported."""
    scale = float(os.environ.get("HUDI_KIT_EXAMPLES_SCALE", "1"))
    values: dict[str, Any] = {
        "max_examples": max(1, int(max_examples * scale)), "deadline": None, "database": None, "derandomize": True,
        "print_blob": False, "verbosity": Verbosity.quiet, "report_multiple_bugs": False,
        "suppress_health_check": list(HealthCheck),
    }  # fmt: skip
    values.update(overrides)
    return hypothesis_settings(**values)


def first_kit_failure(exc: BaseException) -> BaseException | None:
    """The KitFailure (or kit generation error) inside ``exc``, also when hypothesis wrapped it (Flaky, groups)."""
    if isinstance(exc, (KitFailure, KitGenerationError)):
        return exc
    for inner in (*getattr(exc, "exceptions", ()), exc.__cause__, exc.__context__):
        if inner is not None and inner is not exc:
            found = first_kit_failure(inner)
            if found is not None:
                return found
    return None


def run_kit(test: Callable[[Any], object], inputs, *, max_examples: int, **settings_overrides: Any) -> int:
    """Run ``test`` over ``inputs`` with the kit's settings; a failure is re-raised as its one short message.

    Returns how many examples ran."""
    runs = [0]

    @kit_settings(max_examples, **settings_overrides)
    @given(inputs)
    def run(case):
        runs[0] += 1
        test(case)

    try:
        run()
    except BaseException as exc:  # noqa: BLE001 - re-raised short, or as it is
        found = first_kit_failure(exc)
        if found is None:
            raise
        if hasattr(found, "__notes__"):
            del found.__notes__  # hypothesis' "Falsifying example" repr of the whole input
        raise found.with_traceback(None) from None
    return runs[0]


def run_plan_kit(strategy, *, max_examples: int = 40, inputs=None, extra_options: dict | None = None,
                 expect_groups: bool = True, **flags: Any) -> None:  # fmt: skip
    """Check ``strategy`` on ``max_examples`` generated cases (shrunk on failure, bounded in time).

    ``flags`` are those of :func:`check_plan_strategy`. With ``expect_groups`` the run also fails if the strategy
    planned no group on any case (a vacuous pass)."""
    planned = [0]

    def test(case):
        outcome = check_plan_strategy(strategy, case, extra_options=extra_options, **flags)
        planned[0] += bool(outcome.groups)

    run_kit(test, inputs if inputs is not None else planning_inputs(with_logs=True, log_only=True), max_examples=max_examples)
    if expect_groups and not planned[0]:
        fail(strategy, "plan_group_slices", "plans something on non-trivial input",
             f"no group planned on any of {max_examples} generated cases")  # fmt: skip

