"""Imported only by the local pool's fork server as it starts (its preload, run/local_pool.py): the worker's modules,
and an exit without Python's teardown.

The fork server exits when its driver does. A normal exit would tear down pyarrow, pandas and the rest (~0.15 s),
and the server holds the driver's stdout and stderr until it is gone, so a caller reading them (``hudi-cluster run
| ...``, a scheduler capturing the output) would wait that long after the run has said everything. It has nothing
to flush or clean: its workers are gone before the driver exits. Workers (forked from it) end by ``os._exit``
already, as multiprocessing's forked children do.
"""

import atexit
import os

from . import local_worker  # noqa: F401 - imported once here, inherited by every worker forked from this server

atexit.register(os._exit, 0)
