"""hudi-cluster: the clustering table service for Apache Hudi tables.

The public, typed API::

    from hudi_cluster_core import cluster, load_table
    result = cluster("/data/orders", mode="scheduleAndExecute",
                     options={"hoodie.clustering.plan.strategy.sort.columns": "customer_id,ts"})
"""

from .api import ClusterResult, PartitionEffect, cluster
from .ingest import upsert
from .errors import ConfigError, HudiClusterError, PlanError, PluginError, TableError
from .table import HudiTable, load_table
from .write.append import append

__all__ = [
    "ClusterResult", "ConfigError", "HudiClusterError", "HudiTable", "PartitionEffect", "PlanError", "PluginError",
    "TableError", "append", "cluster", "load_table", "upsert",
]  # fmt: skip
__version__ = "0.1.0"
