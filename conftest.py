"""Repository-wide test set-up.

One JVM per test process, and it must carry Apache Hudi's bundle: jars cannot be added to a running JVM, so if
our runtime started a plain Spark session first, every later Apache Hudi read in the process would fail with
``ClassNotFoundException: hudi.DefaultSource``. So, in tests, the session our runtime asks for is the Apache
Hudi one (same local Spark, plus Hudi's jar and extensions). Subprocess tests (CLI, spark-submit, crash) still
use the runtime's own session builder.
"""

import hudi_cluster_core.run.spark as spark_runtime


def _hudi_session(master=None, app_name="hudi-cluster", conf=None, *, hold_signals=True):
    from tests.support.apache_hudi import hudi_spark_session

    return hudi_spark_session()


spark_runtime.get_spark = _hudi_session
