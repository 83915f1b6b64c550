"""The conformance kit on Hudi's three update strategies."""

import pytest

from hudi_cluster_core.testing import run_update_kit
from hudi_cluster_update_strategies import (
    AllowUpdateStrategy, ConsistentBucketDuplicateUpdateStrategy, RejectUpdateStrategy,
)  # fmt: skip


@pytest.mark.parametrize("strategy, policy", [
    (RejectUpdateStrategy(), "reject"), (AllowUpdateStrategy(), "allow"),
    (ConsistentBucketDuplicateUpdateStrategy(), "duplicate"),
])  # fmt: skip
def test_update_kit(strategy, policy):
    run_update_kit(strategy, policy=policy)
