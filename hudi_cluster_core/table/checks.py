"""Checks run when a table is opened for ``show`` or ``run``, so bad input fails at once with one clear line.

Reading is lazy elsewhere: a corrupt completed commit would otherwise surface half-way through a run, or never
(a view that only needs replacecommits skips the others), and clustering would go ahead on a timeline it cannot
trust. The active timeline is small, so decoding every file a run depends on up front is cheap.
"""

from __future__ import annotations

import os

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


def check_writable(table: HudiTable) -> None:
    """Raise :class:`TableError` unless this process may create files in ``.hoodie/`` and the timeline directory.

    Only local disk is probed (``access(2)`` with the real user, which also reports a read-only mount); on other
    schemes permissions live in the store, and the first write's error is reported instead."""
    storage = table.storage
    if storage.scheme != "file":
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


__all__ = ["check_timeline", "check_writable"]
