"""PySpark's worker daemon, with what every clustering task imports already imported before it forks workers.

Spark starts one daemon per executor (``python -m <spark.python.daemon.module>``) and forks a Python worker from
it for each task (or reuses one). Each fresh worker would otherwise import pyarrow and this package itself
(~1-2 s of CPU per worker, more on a busy machine); forked from this daemon it inherits them. Used for the local
masters of a session our run builds (``run/spark.py``), where the executors run this very environment.
"""

import encodings.idna  # noqa: F401 - the progress channel's connection to the driver (a host name)

import deflate  # noqa: F401 - the GZIP pages' compressor (write/gzip_pages.py imports it at its first page)
import pyarrow as pa
import pyarrow.dataset  # noqa: F401 - a whole base file's read (pq.read_table)
import pyarrow.parquet  # noqa: F401 - imported for the forked workers
from pyspark.daemon import manager

from . import spark  # noqa: F401 - the Spark task's own function, its progress and its check of what was written
from . import task  # noqa: F401 - GroupTask, the writers, the readers
from ..io import local_store  # noqa: F401 - a local table's storage
from ..sort import curves  # noqa: F401 - the sort orders
from ..write import gzip_pages  # noqa: F401

# pyarrow imports pandas at its first conversion of Python or NumPy values (pa.array, pa.scalar, a take with NumPy
# indices: every task makes some): ~0.2-0.5 CPU s, once here rather than in every worker
pa.array([0])

if __name__ == "__main__":
    manager()
