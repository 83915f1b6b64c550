"""PySpark's worker daemon, with what every clustering task imports already imported before it forks workers.

Spark starts one daemon per executor (``python -m <spark.python.daemon.module>``) and forks a Python worker from
it for each task (or reuses one). Each fresh worker would otherwise import pyarrow and this package itself
(~1-2 s of CPU per worker, more on a busy machine); forked from this daemon it inherits them. Used for the local
masters of a session our run builds (``run/spark.py``), where the executors run this very environment.
"""

import pyarrow.parquet  # noqa: F401 - imported for the forked workers
from pyspark.daemon import manager

from . import task  # noqa: F401 - GroupTask, the writers, the readers
from ..sort import curves  # noqa: F401 - the sort orders
from ..write import gzip_pages  # noqa: F401

if __name__ == "__main__":
    manager()
