"""Entry point for ``spark-submit``, which runs a Python *file* (``python -m ...`` is not an application to it).

    PYSPARK_DRIVER_PYTHON=.venv/bin/python PYSPARK_PYTHON=./env/bin/python \
      .venv/bin/spark-submit --master spark://HOST:7077 --archives hudi-cluster-env.tar.gz#env \
      bin/hudi-cluster-submit.py run --base-path /path/to/table --mode scheduleAndExecute

Its arguments are the ``hudi-cluster`` command line; the session spark-submit configures (master, memory,
executors) is the one clustering runs on. The executors' environment and the whole recipe: README, "On a Spark
cluster" (tested as written by tests/test_standalone_cluster.py). Under spark-submit the driver's stderr reaches
spark-submit's stdout, so ``hudi-cluster: error:`` lines appear there.
"""

import sys

from hudi_cluster_core.cli import main

if __name__ == "__main__":
    sys.exit(main())
