"""PySpark's worker daemon, with what every clustering task imports already imported before it forks workers.

Spark starts one daemon per executor (``python -m <spark.python.daemon.module>``) and forks a Python worker from
it for each task (or reuses one). Each fresh worker would otherwise import pyarrow and this package itself
(~1-2 s of CPU per worker, more on a busy machine); forked from this daemon it inherits them. Used for the local
masters of a session our run builds (``run/spark.py``), where the executors run this very environment.
"""

import os
import sys


def _installed_pyspark_first() -> None:
    """Spark puts its ``pyspark.zip`` (and py4j's zip) first on the daemon's path; Python compiles every module it
    imports from a zip anew in every daemon (~0.25 CPU s for pyspark's). Where that zip is the one inside an
    installed pyspark (``<site>/pyspark/python/lib/``), the same modules are in ``<site>``, with their bytecode
    cached: the zips go to the end of the path, py4j's only where ``<site>`` has that py4j version."""
    moved = []
    for entry in sys.path:
        lib = os.path.dirname(entry)
        site = os.path.dirname(os.path.dirname(os.path.dirname(lib)))
        if not entry.endswith(".zip") or not lib.endswith(os.path.join("pyspark", "python", "lib")):
            continue
        if not os.path.isfile(os.path.join(site, "pyspark", "__init__.py")) or site not in sys.path:
            continue
        name = os.path.basename(entry)
        if name == "pyspark.zip":
            moved.append(entry)
        elif name.startswith("py4j-") and name.endswith("-src.zip"):
            version = name[len("py4j-") : -len("-src.zip")]
            if os.path.isdir(os.path.join(site, f"py4j-{version}.dist-info")):
                moved.append(entry)
    for entry in moved:
        sys.path.remove(entry)
        sys.path.append(entry)


_installed_pyspark_first()

import encodings.idna  # noqa: F401 - the progress channel's connection to the driver (a host name)

import pyarrow as pa
import pyarrow.dataset  # noqa: F401 - a whole base file's read (pq.read_table)
import pyarrow.parquet  # noqa: F401 - imported for the forked workers
from pyspark.daemon import manager

from . import spark  # noqa: F401 - the Spark task's own function, its progress and its check of what was written
from . import task  # noqa: F401 - GroupTask, the writers, the readers
from ..io import local_store  # noqa: F401 - a local table's storage
from ..sort import curves  # noqa: F401 - the sort orders
from ..write import gzip_pages

gzip_pages.available()  # imports libdeflate, the pages' compressor, where installed (else a first page would)
# pyarrow imports pandas at its first conversion of Python or NumPy values (pa.array, pa.scalar, a take with NumPy
# indices: every task makes some): ~0.2 CPU s, once here rather than in every worker
pa.array([0])

if __name__ == "__main__":
    manager()
