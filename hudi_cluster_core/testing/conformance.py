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

Sizes in failures are exact bytes (``5242881 B``), so a limit and a size never print alike.

**Inputs.** Besides the generated cases (:func:`~.strategies.planning_inputs`: empty partitions included),
``run_plan_kit`` first runs the fixed :func:`~.strategies.edge_inputs` (an empty table, nothing eligible,
everything pending...): a strategy must raise no error on any of them.

**Findings.** Two checks are judgement calls rather than invariants, and a strategy that means it silences them
with a class attribute, ``kit_silence = ("lone-slice-at-target",)``:

* ``lone-slice-at-target``: a group of one slice whose base file is already at or above
  ``target.file.max.bytes`` (and that has no log files to merge, and no sort columns passed on): its rewrite
  produces the file it reads. (Hudi plans such groups itself under its default
  ``single.group.clustering.enabled=true``; a strategy that follows Hudi there silences this.)
* ``unbounded-param``: a numeric field of the strategy's ``params_model`` with no lower bound (``ge``/``gt``)
  that accepts ``-1``.

**Params.** :func:`check_params_model` (run by every ``run_*_kit``) holds a ``params_model`` to the bounds its
fields declare: a value just outside a bound is rejected, the bound itself accepted unchanged, the default is
within them.

**Declarations.** A strategy whose groups may hold slices of several partitions says so with a class attribute
``groups_span_partitions = True``. Strategies that document other rules pass the flags of
:func:`check_plan_strategy` (``size_rule``, ``honours_small_file_limit``, ``honours_max_bytes``,
``selects_all_eligible``).

Every function here hides its own frames from pytest (``__tracebackhide__``): a failing kit run prints the
test's line and the one-line :class:`KitFailure`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Callable

import pydantic
from hypothesis import HealthCheck, Phase, Verbosity, given
from hypothesis import settings as hypothesis_settings

from ..avro import decode_avro, encode_avro
from ..config import catalogue as keys
from ..config import load_config, strategy_params
from ..config.strategy_params import _base_type
from ..errors import StrategyFailed
from ..io.storage import Storage
from ..plan.avro_plan import build_requested_replace_metadata
from ..plan.eligibility import select_partitions
from ..plan.limits import SizeLimits
from ..plan.model import PlanContext, PlannedGroup, SliceStats
from ..plugins import call_hook
from .strategies import KitGenerationError, PlanningInput, edge_inputs, load_kit_table, planning_inputs

KIT_TABLE = Storage("/kit/table")  # plans of cases without a table are built against this path
KIT_INSTANT = "20270101000000000"
SORT_COLUMNS_KEY = keys.SORT_COLUMNS


# ----------------------------------------------------------------------------------------------- failures


class KitFailure(AssertionError):
    """A strategy broke an invariant: ``<kind> strategy '<name>', hook <hook>: <invariant>: <detail>``, one line."""

    def __init__(self, strategy: Any, hook: str, invariant: str, detail: str):
        self.strategy = strategy
        self.strategy_name = getattr(strategy, "name", type(strategy).__name__)
        self.kind = getattr(strategy, "kind", "?")
        self.hook, self.invariant, self.detail = hook, invariant, " ".join(str(detail).split("\n"))
        super().__init__(f"{self.kind} strategy '{self.strategy_name}', hook {hook}: {invariant}: {self.detail}")

    def on(self, what: str) -> "KitFailure":
        """The same failure, naming the input it happened on."""
        return type(self)(self.strategy, self.hook, self.invariant, f"{self.detail}; input: {what}")


class KitFinding(KitFailure):
    """A finding (a judgement call, see the module doc): ``code`` is what ``kit_silence`` names to silence it."""

    def __init__(self, strategy: Any, hook: str, invariant: str, detail: str, code: str = ""):
        self.code = code
        super().__init__(strategy, hook, invariant, detail)

    def on(self, what: str) -> "KitFailure":
        return KitFinding(self.strategy, self.hook, self.invariant, f"{self.detail}; input: {what}", self.code)


LONE_SLICE_AT_TARGET = "lone-slice-at-target"
UNBOUNDED_PARAM = "unbounded-param"
FINDINGS = (LONE_SLICE_AT_TARGET, UNBOUNDED_PARAM)


def fail(strategy: Any, hook: str, invariant: str, detail: str) -> None:
    __tracebackhide__ = True
    raise KitFailure(strategy, hook, invariant, detail)


def finding(strategy: Any, hook: str, code: str, invariant: str, detail: str) -> None:
    __tracebackhide__ = True
    raise KitFinding(strategy, hook, f"{invariant} (finding {code})",
                     f"{detail}; if intended, declare kit_silence = ({code!r},) on the strategy", code)  # fmt: skip


def silenced(strategy: Any, silence: Iterable[str] = ()) -> frozenset[str]:
    """The findings ``strategy`` silences (its ``kit_silence`` attribute) plus ``silence``."""
    codes = frozenset(getattr(strategy, "kit_silence", ()) or ()) | frozenset(silence or ())
    unknown = sorted(codes - set(FINDINGS))
    if unknown:
        raise ValueError(f"kit_silence: unknown finding(s) {', '.join(unknown)}; known: {', '.join(FINDINGS)}")
    return codes


def _short(file_id: str) -> str:
    return file_id[:8]


def fmt_bytes(size: int) -> str:
    """Exact bytes: ``5242881 B`` (a rounded ``5.0MB > 5.0MB`` says nothing)."""
    return f"{int(size)} B"


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


def _call(strategy: Any, hook: str, **kwargs: Any) -> Any:
    """Every hook call of the kit goes through the core's one way of calling a strategy, which falls back to the
    core default for a hook the strategy does not implement."""
    __tracebackhide__ = True
    return call_hook(strategy, hook, **kwargs)


def _checked_call(strategy: Any, hook: str, *, _on: str | None = None, **kwargs: Any) -> Any:
    """``_call``, with an exception turned into a kit failure naming the hook (and ``_on``, the input)."""
    __tracebackhide__ = True
    try:
        return _call(strategy, hook, **kwargs)
    except KitFailure:
        raise
    except Exception as exc:  # noqa: BLE001 - any error on valid input is the strategy's bug
        # the strategy's own error, not the core's line about it: the kit's line names the strategy and hook
        error: BaseException = exc.__cause__ if isinstance(exc, StrategyFailed) and exc.__cause__ else exc
        lines = str(error).splitlines()
        message = lines[0][:200] if lines else ""
        where = f"; input: {_on}" if _on else ""
        raise KitFailure(strategy, hook, "raises no error on valid input",
                         f"{type(error).__name__}: {message}{where}") from None  # fmt: skip


# ------------------------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class PlanOutcome:
    eligible: tuple
    groups: tuple[PlannedGroup, ...]
    record: dict | None
    grouped: tuple[PlannedGroup, ...] = ()  # plan_group_slices' groups, before finalize
    execution: tuple | None = None  # plan_execution_strategy's (class, params)

    def __repr__(self) -> str:  # short: an assertion on an outcome does not print every slice and the plan record
        sizes = ", ".join(str(len(g.slices)) for g in self.groups[:8]) + (", ..." if len(self.groups) > 8 else "")
        chosen = f", execution {self.execution[0]}" if self.execution else ""
        return f"PlanOutcome({len(self.eligible)} eligible, {len(self.groups)} group(s) of [{sizes}] slices{chosen})"

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(repr(self))


def _context(strategy, case: PlanningInput, options: dict) -> tuple[PlanContext, Any, Any]:
    config = load_config(overrides=options)
    selection = select_partitions(list(case.all_partitions), config, now=case.now)
    params = strategy_params(strategy, dict(config.raw))
    table = load_kit_table(case.table_path) if case.table_path else None
    stats = dict(case.stats)
    context = PlanContext(table, config, params, KIT_INSTANT, dict(case.pending), selection.partitions,
                          lambda s: stats.get(s) or SliceStats())  # fmt: skip
    return context, config, selection


def plan_with(strategy, case: PlanningInput, *, extra_options: dict | None = None, checked: bool = False,
              label: str | None = None) -> PlanOutcome:  # fmt: skip
    """Run the four plan hooks of ``strategy`` on a case, as the scheduler does (missing hooks: core defaults).

    ``checked``: an error of a hook is a :class:`KitFailure` naming the input (``label``, else its description)."""
    __tracebackhide__ = True
    if checked:
        where = label or case.describe(options=False)

        def call(strategy, hook, **kwargs):
            __tracebackhide__ = True
            return _checked_call(strategy, hook, _on=where, **kwargs)
    else:
        call = _call
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
    __tracebackhide__ = True
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
    extra_options: dict | None = None, silence: Iterable[str] = (), label: str | None = None,
) -> PlanOutcome:
    """Assert the plan invariants for ``strategy`` on ``case``; returns the outcome for further checks.

    ``size_rule``: output-group counts are ``ceil(group size / target.file.max.bytes)`` (Hudi's rule);
    strategies with their own rule (single-file sort, buckets) pass False. ``honours_small_file_limit``,
    ``honours_max_bytes`` and ``selects_all_eligible`` (every standard-eligible slice is selected) likewise for
    strategies that document otherwise (``selects_all_eligible`` defaults to ``honours_small_file_limit``: a
    strategy with its own eligibility rule is not held to the standard one). ``groups_span_partitions`` defaults
    to the strategy's attribute. ``silence``: findings silenced on top of the strategy's ``kit_silence``.
    ``label``: what to call the input in a failure (default: its description).
    """
    __tracebackhide__ = True
    quiet = silenced(strategy, silence)
    if selects_all_eligible is None:
        selects_all_eligible = honours_small_file_limit
    if groups_span_partitions is None:
        groups_span_partitions = bool(getattr(strategy, "groups_span_partitions", False))
    options = {**case.options, **(extra_options or {})}
    outcome = plan_with(strategy, case, extra_options=extra_options, checked=True, label=label)
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
    if LONE_SLICE_AT_TARGET not in quiet:
        _check_lone_slices(strategy, outcome, limits)

    # -- deterministic: the same input gives the same result, hook by hook
    again = plan_with(strategy, case, extra_options=extra_options, checked=True, label=label)
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


def _check_lone_slices(strategy, outcome: PlanOutcome, limits: SizeLimits) -> None:
    """The finding ``lone-slice-at-target``: a planned group of one slice whose file is already at or above the
    target, with no log files to merge and no sort to apply, is rewritten into what it was."""
    __tracebackhide__ = True
    params = outcome.execution[1] if outcome.execution and len(outcome.execution) == 2 else None
    if isinstance(params, Mapping) and str(params.get(SORT_COLUMNS_KEY) or "").strip():
        return  # the rewrite sorts the file: not pointless (Hudi plans these too when sorting)
    for index, group in enumerate(outcome.groups):
        if len(group.slices) == 1 and not group.slices[0].log_files:
            size = group.slices[0].base_file_size
            if size >= limits.target_file_max_bytes:
                finding(strategy, "plan_group_slices", LONE_SLICE_AT_TARGET, "no pointless rewrite of a lone file",
                        f"{fmt_group(index, group, limits)}: its file is already >= target.file.max.bytes="
                        f"{fmt_bytes(limits.target_file_max_bytes)}, with no log file to merge and no sort columns")  # fmt: skip


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
    __tracebackhide__ = True
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
                 f"{fmt_group(index, group, limits)} > max.bytes.per.group={fmt_bytes(limits.max_bytes_per_group)}")  # fmt: skip
        if not isinstance(group.num_output_file_groups, int) or group.num_output_file_groups < 1:
            fail(strategy, hook, "num_output_file_groups >= 1", fmt_group(index, group, limits))
        if size_rule and group.num_output_file_groups != limits.output_files(size):
            fail(strategy, hook, "output files follow ceil(group size / target.file.max.bytes)",
                 f"{fmt_group(index, group, limits)}, expected {limits.output_files(size)} with target "
                 f"{fmt_bytes(limits.target_file_max_bytes)}")  # fmt: skip


# ------------------------------------------------------------------------------------------- the runner


def kit_settings(max_examples: int, **overrides: Any) -> hypothesis_settings:
    """Bounded, reproducible and quiet: no deadline flakiness, no database, no blobs, one (shrunk) bug reported."""
    scale = float(os.environ.get("HUDI_KIT_EXAMPLES_SCALE", "1"))
    values: dict[str, Any] = {
        "max_examples": max(1, int(max_examples * scale)), "deadline": None, "database": None, "derandomize": True,
        "print_blob": False, "verbosity": Verbosity.quiet, "report_multiple_bugs": False,
        "suppress_health_check": list(HealthCheck),
        # no explain phase: its notes are dropped from the one-line failure, and on the execution kit it re-ran
        # the strategy over freshly written tables for minutes after the shrink had found the minimal example
        "phases": [phase for phase in Phase if phase is not Phase.explain],
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
    __tracebackhide__ = True
    runs = [0]

    @kit_settings(max_examples, **settings_overrides)
    @given(inputs)
    def run(case):
        __tracebackhide__ = True
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
                 expect_groups: bool = True, edge_cases: bool = True, **flags: Any) -> None:  # fmt: skip
    """Check ``strategy``'s params model (:func:`check_params_model`), then the :func:`edge_inputs` (an empty
    table, partitions without a slice, nothing eligible...), then ``max_examples`` generated cases (shrunk on
    failure, bounded in time).

    ``flags`` are those of :func:`check_plan_strategy` (``silence`` included). With ``expect_groups`` the run also
    fails if the strategy planned no group on any generated case (a vacuous pass)."""
    __tracebackhide__ = True
    check_params_model(strategy, silence=flags.get("silence", ()))
    if edge_cases:
        for what, case in edge_inputs():
            try:
                check_plan_strategy(strategy, case, extra_options=extra_options, label=what, **flags)
            except KitFailure as failure:
                named = failure if "; input: " in failure.detail else failure.on(what)
                raise named.with_traceback(None) from None
    planned = [0]

    def test(case):
        __tracebackhide__ = True
        outcome = check_plan_strategy(strategy, case, extra_options=extra_options, **flags)
        planned[0] += bool(outcome.groups)

    run_kit(test, inputs if inputs is not None else planning_inputs(with_logs=True, log_only=True), max_examples=max_examples)
    if expect_groups and not planned[0]:
        fail(strategy, "plan_group_slices", "plans something on non-trivial input",
             f"no group planned on any of {max_examples} generated cases")  # fmt: skip


# ------------------------------------------------------------------------------------------- params models


def _declared_bounds(info) -> dict[str, float]:
    """``{"ge": 1, "le": 10, ...}``: the numeric bounds a pydantic field declares (``Field(ge=...)``,
    ``annotated_types`` ``Ge``/``Gt``/``Le``/``Lt``/``Interval``)."""
    bounds: dict[str, float] = {}
    for item in info.metadata:
        for name in ("ge", "gt", "le", "lt"):
            value = getattr(item, name, None)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                bounds[name] = value
    return bounds


_SIGNS = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}


def _shown_bounds(bounds: dict[str, float]) -> str:
    return " and ".join(f"{_SIGNS[k]} {v}" for k, v in bounds.items())


def _within(value: float, bounds: dict[str, float]) -> bool:
    checks = {"ge": value >= bounds.get("ge", -math.inf), "gt": value > bounds.get("gt", -math.inf),
              "le": value <= bounds.get("le", math.inf), "lt": value < bounds.get("lt", math.inf)}  # fmt: skip
    return all(checks[k] for k in bounds)


def _probes(base: type, bounds: dict[str, float]) -> list[float]:
    """Values at and just beyond each declared bound."""
    if base is int:
        step = {"ge": (-1, 0), "gt": (0, 1), "le": (1, 0), "lt": (0, -1)}
        return [int(bounds[k]) + d for k in bounds for d in step[k]]
    down, up = (lambda v: math.nextafter(v, -math.inf)), (lambda v: math.nextafter(v, math.inf))
    near = {"ge": (down, None), "gt": (None, up), "le": (up, None), "lt": (None, down)}
    values = []
    for k, v in bounds.items():
        values += [v] + [f(v) for f in near[k] if f is not None]
    return values


def _probe(model, name: str, key: str, value: Any) -> tuple[bool, Any]:
    """``(accepted, what the model made of it or why it refused)``, judged on the field alone: errors of other
    (required) fields left out of the probe do not count."""
    try:
        made = model.model_validate({key: value})
    except pydantic.ValidationError as exc:
        mine = [e for e in exc.errors() if e["loc"] and e["loc"][0] in (key, name)]
        whole = [e for e in exc.errors() if not e["loc"]]
        if mine or whole:
            return False, (mine or whole)[0]["msg"]
        return True, value  # only other, required fields are missing
    except (ValueError, TypeError) as exc:
        return False, str(exc)
    return True, getattr(made, name)


def check_params_model(strategy, *, silence: Iterable[str] = ()) -> None:
    """Hold ``strategy.params_model`` (if any) to the bounds its numeric fields declare: a value just outside a
    declared bound is rejected, the bound itself accepted as given, the default within them. A numeric field that
    declares no lower bound and accepts ``-1`` is the finding ``unbounded-param``."""
    __tracebackhide__ = True
    model = getattr(strategy, "params_model", None)
    if model is None:
        return
    quiet = silenced(strategy, silence)
    hook = "params_model"
    for name, info in model.model_fields.items():
        key = info.alias or name
        base = _base_type(info.annotation)
        if base not in (int, float):
            continue
        bounds = _declared_bounds(info)
        if not info.is_required():
            default = info.get_default(call_default_factory=True)
            if isinstance(default, (int, float)) and not isinstance(default, bool) and not _within(default, bounds):
                fail(strategy, hook, "default within its declared bounds",
                     f"{model.__name__}.{name} ({key}) defaults to {default!r}, declared {_shown_bounds(bounds)}")  # fmt: skip
        for value in _probes(base, bounds):
            accepted, made = _probe(model, name, key, value)
            if _within(value, bounds) and (not accepted or made != value):
                outcome = f"made it {made!r}" if accepted else f"rejected it: {made}"
                fail(strategy, hook, "accepts values within its declared bounds",
                     f"{key}={value!r}: {model.__name__}.{name} declares {_shown_bounds(bounds)} but {outcome}")  # fmt: skip
            if not _within(value, bounds) and accepted:
                became = f" (as {made!r})" if made != value else ""
                fail(strategy, hook, "rejects values outside its declared bounds",
                     f"{key}={value!r} accepted{became}; {model.__name__}.{name} declares {_shown_bounds(bounds)}")  # fmt: skip
        if UNBOUNDED_PARAM not in quiet and not ({"ge", "gt"} & set(bounds)):
            accepted, made = _probe(model, name, key, -1)
            if accepted:
                finding(strategy, hook, UNBOUNDED_PARAM, "numeric params declare their bounds",
                        f"{key}=-1 accepted: {model.__name__}.{name} declares no lower bound (Field(..., ge=...))")  # fmt: skip
