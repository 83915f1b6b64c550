"""The JVM class-data-sharing archive of Spark's classes: the driver JVM of a local run maps the classes a run
loads (~6,000 of Spark's, Hadoop's, Scala's) from one file instead of finding, reading and verifying each in
Spark's 250 jars, which is most of a JVM's start.

The archive is made once by the set-up (``scripts/build-jvm-archive``, run by ``make setup``): a JVM started
with ``-XX:ArchiveClassesAtExit`` runs a small clustering and writes, at its exit, every class it loaded. It lives
beside the environment whose jars it was made from (``<venv>/share/hudi-cluster/``), named after the pyspark
version; ``HUDI_CLUSTER_JVM_ARCHIVE`` names another file (empty: none). The JVM checks the archive against its own
build and class path and, where they differ (another JDK, jars changed), silently loads classes as usual: the
archive can make a start faster, never change what runs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ENV = "HUDI_CLUSTER_JVM_ARCHIVE"
# a mismatched archive is not worth a warning on every run: the JVM just starts without it
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"


def archive_path() -> Path | None:
    """Where the archive is (or would be made); None when ``HUDI_CLUSTER_JVM_ARCHIVE`` is set empty."""
    named = os.environ.get(ENV)
    if named is not None:
        return Path(named) if named.strip() else None
    from pyspark.version import __version__

    return Path(sys.prefix) / "share" / "hudi-cluster" / f"spark-{__version__}-classes.jsa"


def java_options() -> str:
    """The driver JVM's options that use the archive, or "" when there is none."""
    path = archive_path()
    if path is None or not path.is_file():
        return ""
    return f"-XX:SharedArchiveFile={path} {QUIET}"


def making_options(path: Path) -> str:
    """The options of the JVM that makes the archive at ``path`` when it exits."""
    return f"-XX:ArchiveClassesAtExit={path} {QUIET}"
