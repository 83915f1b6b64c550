"""What a plugin author sees when the kit fails: one line, not the kit's frames, not 300 lines of input.

The author's tests run in a pytest subprocess, as they would in a plugin's own suite."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from hudi_cluster_core.testing import PlanningInput, edge_inputs, plan_with
from hudi_cluster_core.testing.conformance import PlanOutcome, fmt_bytes
from hudi_cluster_core.testing.strategies import plan_table

REPO = Path(__file__).resolve().parent.parent

AUTHOR_TESTS = '''
from hypothesis import given, settings

from hudi_cluster_core.sdk import PlannedGroup, hookimpl
from hudi_cluster_core.testing import check_plan_strategy, planning_inputs, run_plan_kit, run_update_kit


class Doubles:
    """Puts the first eligible slice in two groups."""

    name, kind = "doubles", "plan"
    kit_silence = ("lone-slice-at-target",)

    @hookimpl
    def plan_group_slices(self, context, slices):
        groups = [PlannedGroup((s,), 1) for s in slices]
        return groups + groups[:1]


def test_kit():
    run_plan_kit(Doubles())


@settings(max_examples=5, deadline=None, database=None)
@given(planning_inputs())
def test_own_property(case):
    check_plan_strategy(Doubles(), case)


class Nothing:
    name, kind = "nothing", "plan"

    @hookimpl
    def plan_group_slices(self, context, slices):
        return []


@settings(max_examples=5, deadline=None, database=None)
@given(planning_inputs())
def test_own_assertion(case):
    outcome = check_plan_strategy(Nothing(), case)
    assert outcome.groups, outcome
'''


def run_author_tests(tmp_path: Path) -> str:
    """pytest's report of AUTHOR_TESTS."""
    tests = tmp_path / "test_author.py"
    tests.write_text(AUTHOR_TESTS, encoding="utf-8")
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)  # this checkout's kit
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(tests)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": path},
    )  # fmt: skip
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def sections(output: str) -> dict[str, list[str]]:
    """Each failure's section of pytest's report: its lines, by test name."""
    found: dict[str, list[str]] = {}
    current = None
    for line in output.splitlines():
        header = re.fullmatch(r"_{3,} (\w+) _{3,}", line)
        if header:
            current = found.setdefault(header.group(1), [])
        elif re.match(r"=+ short test summary", line):
            current = None
        elif current is not None:
            current.append(line)
    return found


def test_a_kit_failure_prints_one_line_not_the_kits_frames(tmp_path):
    output = run_author_tests(tmp_path)
    failures = sections(output)
    assert set(failures) == {"test_kit", "test_own_property", "test_own_assertion"}, output
    assert "hudi_cluster_core/testing" not in output and "hudi_cluster_core/" not in output, output
    assert "FileSlice(" not in output and "PlanningInput(slices=" not in output, output
    kit = [line for line in failures["test_kit"] if line.startswith("E ")]
    expected = "KitFailure: plan strategy 'doubles', hook plan_group_slices: each slice in at most one group: "
    assert len(kit) == 1 and expected in kit[0], output
    assert len(failures["test_kit"]) <= 10, "\n".join(failures["test_kit"])
    # a property test of the author's own: its frame, the one line, hypothesis' example in short
    own = failures["test_own_property"]
    assert sum("KitFailure: " in line for line in own) == 1 and len(own) <= 30, "\n".join(own)
    assert any("case=PlanningInput(" in line and " slices (" in line for line in own), "\n".join(own)
    mine = failures["test_own_assertion"]  # an assertion of the author's own on the outcome
    assert len(mine) <= 30 and any("AssertionError: PlanOutcome(" in line for line in mine), "\n".join(mine)


def test_reprs_are_short():
    path, slices = plan_table("days")
    case = PlanningInput(slices, options={"hoodie.clustering.plan.strategy.small.file.limit": 10 * 1024 * 1024},
                         all_partitions=("2024/01/01", "2024/01/02", "2024/01/03", "2024/02/01", "2024/02/02",
                                         "2024/03/01", "2025/01/01"), table_path=path)  # fmt: skip
    assert repr(case) == (
        f"PlanningInput({len(slices)} slices (0 MOR) in 6 partitions (1 without a slice: 2025/01/01), 0 pending; "
        f"options {{small.file.limit=10485760}})"
    )
    from hudi_cluster_size_based.plan import SizeBasedPlanStrategy

    outcome = plan_with(SizeBasedPlanStrategy(), case)
    assert isinstance(outcome, PlanOutcome) and len(repr(outcome)) < 200, repr(outcome)


def test_sizes_are_exact_bytes():
    assert fmt_bytes(5 * 1024 * 1024 + 1) == "5242881 B"


def test_edge_inputs_are_valid_and_empty_where_they_say():
    cases = dict(edge_inputs())
    assert any(not case.slices for case in cases.values())
    for what, case in cases.items():
        assert case.table_path and case.all_partitions, what
        if "without a slice" in what:
            assert {s.partition for s in case.slices} < set(case.all_partitions), what


def test_the_kit_hides_its_frames():
    """Every function of the kit that raises to the author's test carries ``__tracebackhide__``."""
    import ast

    for module in sorted((REPO / "hudi_cluster_core" / "testing").glob("*.py")):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for node in functions:
            if node.name.startswith(("check_", "run_", "_check", "fail", "finding")) or node.name in (
                "plan_with", "_checked_call", "_call", "_decide", "test", "run"
            ):
                hides = any(isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__tracebackhide__" for t in n.targets)
                            for n in node.body[:3])  # fmt: skip
                assert hides, f"{module.name}:{node.lineno} {node.name} lacks __tracebackhide__ = True"


def test_contributings_sample_failure_has_the_kits_format():
    """CONTRIBUTING.md's sample failure has the kit's real format."""
    guide = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    samples = re.findall(r"`((?:plan|execution|update) strategy '[\w-]+', hook \w+: [^`]+)`", guide)
    assert samples, "CONTRIBUTING.md shows no sample kit failure"
    for sample in samples:
        assert re.fullmatch(r"(plan|execution|update) strategy '[\w-]+', hook \w+: [^:]+: .+", sample), sample
