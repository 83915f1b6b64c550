"""The names our bundled strategies answer to, and the one line for a configured name no installed plugin has.

A configured strategy name (a short name or Apache Hudi's Java class name) that no installed plugin answers to is
either one of ours left uninstalled (the line says which distribution to install) or a typo (the line offers the
closest installed name and lists the installed ones).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

_P, _R = "org.apache.hudi.client.clustering.plan.strategy.Spark", "org.apache.hudi.client.clustering.run.strategy."
_U = "org.apache.hudi.client.clustering.update.strategy.Spark"
KNOWN_DISTRIBUTIONS = {
    "hudi-cluster-size-based": ("size-based", "sort-and-size", _P + "SizeBasedClusteringPlanStrategy",
                                _R + "SparkSortAndSizeExecutionStrategy"),
    "hudi-cluster-single-file-sort": ("single-file-sort", _P + "SingleFileSortPlanStrategy",
                                      _R + "SparkSingleFileSortExecutionStrategy"),
    "hudi-cluster-consistent-bucket": ("consistent-bucket", _P + "ConsistentBucketClusteringPlanStrategy",
                                       _R + "SparkConsistentBucketClusteringExecutionStrategy",
                                       _R + "SingleSparkJobConsistentHashingExecutionStrategy"),
    "hudi-cluster-update-strategies": ("reject", "allow", "consistent-bucket-duplicate", _U + "RejectUpdateStrategy",
                                       _U + "AllowUpdateStrategy", _U + "ConsistentBucketDuplicateUpdateStrategy"),
    "hudi-cluster-commit-time": ("commit-time",), "hudi-cluster-key-range": ("key-range",),
    "hudi-cluster-space-curve": ("space-curve",),
}  # fmt: skip


def unknown_strategy(kind: str, name: str, config_key: str | None, aliases: Iterable[str], installed: Iterable[str]) -> str:
    """The line for ``name``, which none of the installed ``kind`` strategies (``installed``: their short names;
    ``aliases``: every name they answer to) answers to."""
    where = f"{config_key}={name}" if config_key else f"'{name}'"
    distribution = next((d for d, names in KNOWN_DISTRIBUTIONS.items() if name in names), None)
    if distribution:
        return (f"{where}: no installed plugin provides this {kind} strategy; install the distribution "
                f"'{distribution}' (pip install plugins/{distribution.removeprefix('hudi-cluster-')})")  # fmt: skip
    close = difflib.get_close_matches(name, sorted(aliases), n=1, cutoff=0.6)
    hint = f"; did you mean '{close[0]}'?" if close else ";"
    shown = ", ".join(sorted(installed)) or "none (no plugin is installed)"
    return (f"{where}: unknown {kind} strategy{hint} Installed {kind} strategies: {shown}. Name one by its short "
            "name or a Hudi class name it answers to (hudi-cluster plugins lists them), or install the plugin that "
            "provides it (pip install plugins/<family>; README: Strategies)")  # fmt: skip
