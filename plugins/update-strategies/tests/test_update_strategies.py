"""Decision logic of the three update strategies, through the registry (entry point) and pluggy."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hudi_cluster_core.plan.model import UpdateContext
from hudi_cluster_core.plugins import call_hook, default_registry
from hudi_cluster_core.table import FileGroupId

U = "org.apache.hudi.client.clustering.update.strategy."
groups = st.builds(FileGroupId, st.sampled_from(["", "us", "eu"]), st.sampled_from([f"fg-{i}-0" for i in range(8)]))


def decide(name, incoming, pending):
    strategy = default_registry().resolve("update", name)
    return call_hook(strategy, "update_decide", context=UpdateContext(frozenset(incoming), dict(pending)))


@pytest.mark.parametrize("name", ["reject", U + "SparkRejectUpdateStrategy"])
def test_reject_names_the_pending_file_groups(name):
    pending = {FileGroupId("us", "fg-1-0"): "20260101000000000"}
    decision = decide(name, {FileGroupId("us", "fg-1-0"), FileGroupId("us", "fg-2-0")}, pending)
    assert decision.action == "reject" and decision.file_groups == {FileGroupId("us", "fg-1-0")}
    assert "us/fg-1-0 (clustering 20260101000000000)" in decision.message


@given(st.sets(groups), st.dictionaries(groups, st.just("20260101000000000")))
def test_decisions_are_exactly_about_the_overlap(incoming, pending):
    overlap = {fg for fg in incoming if fg in pending}
    reject = decide("reject", incoming, pending)
    assert reject.action == ("reject" if overlap else "allow") and reject.file_groups == overlap
    allow = decide(U + "SparkAllowUpdateStrategy", incoming, pending)
    assert allow.action == "allow" and allow.file_groups == overlap
    duplicate = decide(U + "SparkConsistentBucketDuplicateUpdateStrategy", incoming, pending)
    assert duplicate.action == ("duplicate" if overlap else "allow") and duplicate.file_groups == overlap
