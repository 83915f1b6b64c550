"""Checks run when a table is opened for ``show`` or ``run``, so bad input fails at once with one clear line.

Reading is lazy elsewhere: a corrupt completed commit would otherwise surface half-way through a run, or never
(a view that only needs replacecommits skips the others), and clustering would go ahead on a timeline it cannot
trust. The active timeline is small, so decoding every file a run depends on up front is cheap.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from ..avro import decode_avro
from ..errors import TableError
from . import HudiTable
from .timeline import WRITE_ACTIONS

_PLAN_ACTIONS = ("clustering", "replacecommit", "compaction", "logcompaction")


def check_timeline(table: HudiTable, *, plans: bool = True) -> None:
    """Decode every completed write instant's metadata and (with ``plans``) every pending clustering or compaction
    plan; raise :class:`TableError` naming the first file that cannot be read or decoded.

    A 0-byte completed commit is legal on v6 (Hudi writes empty ones for empty commits) and decodes as empty."""
    timeline = table.timeline
    for instant in timeline.completed(WRITE_ACTIONS):
        timeline.commit_metadata(instant)
    if not plans:
        return
    for instant in timeline.pending():
        if instant.action not in _PLAN_ACTIONS:
            continue
        requested = timeline.requested_file(instant.time)
        if requested is None:
            continue
        data = timeline.read(requested)
        # an empty requested file is legal (a v6 insert_overwrite ``replacecommit.requested``): no plan to check
        if data:
            decode_avro(data, source=timeline.path_of(requested.file_name))


# Hudi's simple bucket index names each file group by its bucket: ``%08d`` of the bucket number, then a UUID
_SIMPLE_BUCKET_FILE_ID = re.compile(r"^\d{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(-\d+)?$")
CONSISTENT_HASHING_DIR = ".hoodie/.bucket_index/consistent_hashing_metadata"


def check_clusterable(table: HudiTable, config: Mapping[str, object]) -> None:
    """Refuse, before anything is written, a table whose layout a clustering of ours would break:

    * base files that are not parquet (ORC, HFile, Lance): we write parquet only;
    * a simple bucket index: its file groups are its buckets (the file id starts with the bucket number), so
      stitching them would leave records where the index no longer finds them. Apache Hudi refuses these too
      (``SparkExecuteClusteringCommitActionExecutor is not compatible with table layout HoodieSimpleBucketLayout``),
      once its job says ``hoodie.index.type=BUCKET``; hoodie.properties does not record the index, so without that
      key a table whose every file group is named as a bucket is taken for one."""
    fmt = table.config.props.get("hoodie.table.base.file.format", "PARQUET").strip().upper()
    if fmt != "PARQUET":
        raise TableError(
            f"table {table.base_path}: its base files are {fmt} (hoodie.table.base.file.format); hudi-cluster writes "
            "parquet base files only, so it does not cluster this table (Apache Hudi's clustering does)"
        )
    index = str(config.get("hoodie.index.type", "")).strip().upper()
    engine = str(config.get("hoodie.index.bucket.engine", "SIMPLE")).strip().upper()
    if index and (index != "BUCKET" or engine != "SIMPLE"):
        return
    if table.storage.exists(table.storage.join(CONSISTENT_HASHING_DIR)):
        return  # a consistent-hashing bucket index: the consistent-bucket strategies resize it
    if index != "BUCKET":
        file_ids = {s.file_id for s in table.view().latest_file_slices()}
        if len(file_ids) < 2 or not all(_SIMPLE_BUCKET_FILE_ID.match(f) for f in file_ids):
            return
    raise TableError(
        f"table {table.base_path} has a simple bucket index (hoodie.index.type=BUCKET, hoodie.index.bucket.engine="
        "SIMPLE): each file group is a bucket, and clustering would move records out of their buckets, so it is "
        "not done (Apache Hudi refuses it too); if the table uses another index, set hoodie.index.type to it"
    )


def check_writable(table: HudiTable) -> None:
    """Raise :class:`TableError` unless this process may create files in ``.hoodie/`` and the timeline directory.

    Only local disk is probed (``access(2)`` with the real user, which also reports a read-only mount); on other
    schemes permissions live in the store, and the first write's error is reported instead."""
    storage = table.storage
    if not storage.capabilities.local_files:
        return
    for directory in dict.fromkeys((storage.join(".hoodie"), table.timeline.directory)):
        if os.path.isdir(directory) and not os.access(directory, os.W_OK | os.X_OK):
            user = _user_name()
            raise TableError(
                f"table {storage.base} is not writable: {directory} does not let {user} create files; "
                "clustering writes its instants there; run as a user who may write the table, or use --dry-run"
            )


def _user_name() -> str:
    uid = os.getuid()
    try:
        import pwd

        return f"user {pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


__all__ = ["check_clusterable", "check_timeline", "check_writable"]
