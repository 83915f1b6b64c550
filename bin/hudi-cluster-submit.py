"""Entry point for ``spark-submit``: ``spark-submit --master yarn bin/hudi-cluster-submit.py run --base-path ...``.

spark-submit runs a Python *file*; this one hands its arguments to the ``hudi-cluster`` CLI. The session
spark-submit configures (master, memory, executors) is the one clustering runs on.
"""

import sys

from hudi_cluster_core.cli import main

if __name__ == "__main__":
    sys.exit(main())
