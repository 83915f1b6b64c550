"""Commit-time grouping: groups contiguous in commit order, within the window; the kit's invariants."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_cluster_commit_time import WINDOW_KEY, CommitTimePlanStrategy
from hudi_cluster_core.testing import check_plan_strategy, planning_inputs


@settings(max_examples=150, deadline=None)
@given(planning_inputs(), st.integers(1, 6))
def test_commit_time_conforms_and_groups_are_contiguous_in_time(case, window):
    outcome = check_plan_strategy(CommitTimePlanStrategy(), case, extra_options={WINDOW_KEY: window})
    spans: dict[str, list[tuple[str, str]]] = {}
    for group in outcome.groups:
        instants = sorted(s.base_instant for s in group.slices)
        assert len(set(instants)) <= window
        spans.setdefault(group.partition, []).append((instants[0], instants[-1]))
    for partition_spans in spans.values():
        ordered = sorted(partition_spans)
        for (_, end), (start, _) in zip(ordered, ordered[1:]):
            assert end <= start, f"groups interleave in time: {ordered}"


def test_window_must_be_positive():
    import pytest

    from hudi_cluster_core.errors import ConfigError
    from hudi_cluster_core.config import strategy_params

    with pytest.raises(ConfigError, match=WINDOW_KEY):
        strategy_params(CommitTimePlanStrategy(), {WINDOW_KEY: "0"})
