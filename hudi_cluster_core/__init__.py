"""hudi-cluster: the clustering table service for Apache Hudi tables.

The public, typed API::

    from hudi_cluster_core import cluster, load_table
    result = cluster("/data/orders", mode="scheduleAndExecute",
                     options={"hoodie.clustering.plan.strategy.sort.columns": "customer_id,ts"})

The names load on first use: ``hudi-cluster`` installs its Ctrl-C and SIGTERM handling before pyarrow and the
rest are imported (seconds on a busy machine), so a stop during start-up is one line too.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .api import ClusterResult, PartitionEffect, cluster
    from .errors import ConfigError, HudiClusterError, PlanError, PluginError, TableError
    from .ingest import upsert
    from .table import HudiTable, load_table
    from .write.append import append

_HOMES = {
    "ClusterResult": ".api", "PartitionEffect": ".api", "cluster": ".api", "upsert": ".ingest",
    "ConfigError": ".errors", "HudiClusterError": ".errors", "PlanError": ".errors", "PluginError": ".errors",
    "TableError": ".errors", "HudiTable": ".table", "load_table": ".table", "append": ".write.append",
}  # fmt: skip
__all__ = sorted(_HOMES)
__version__ = "0.1.0"


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'hudi_cluster_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
