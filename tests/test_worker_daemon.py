"""The Python worker daemon of a local run (run/worker_daemon.py): what its forked workers find already done."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyspark

from tests.support.standalone import clean_env

REPO = Path(__file__).resolve().parents[1]
SPARK_LIB = Path(pyspark.__file__).resolve().parent / "python" / "lib"  # the zips Spark puts first on a worker's path

PROBE = """
import json, sys
before = set(sys.modules)
import hudi_cluster_core.run.worker_daemon  # imported, not run: the daemon's loop is its __main__
imported = set(sys.modules)
import numpy as np, pyarrow as pa
pa.array(np.arange(3)); pa.scalar(1)  # what every task does early
import pyspark
print(json.dumps({"pyspark": pyspark.__file__, "first_conversion_imports": sorted(set(sys.modules) - imported)}))
"""


def test_the_daemon_imports_pyspark_installed_and_leaves_its_workers_no_first_import():
    """Spark's PYTHONPATH for a worker daemon starts with pyspark.zip, whose modules Python would compile in every
    daemon: the daemon imports the same pyspark from where it is installed (bytecode cached) instead; and the
    modules pyarrow imports at its first conversion of values (pandas) are imported before workers are forked."""
    zips = sorted(str(p) for p in SPARK_LIB.glob("*.zip"))
    assert any(z.endswith("pyspark.zip") for z in zips), zips
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300, cwd=REPO,
                          env=clean_env(PYTHONPATH=":".join([*zips, str(REPO)])))  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert ".zip" not in found["pyspark"] and Path(found["pyspark"]).resolve() == Path(pyspark.__file__).resolve()
    assert found["first_conversion_imports"] == []
