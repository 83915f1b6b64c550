"""Markers: which data files an instant is writing (or has written), before its commit says so.

A Hudi writer records every data file it is about to create under ``.hoodie/.temp/<T>/`` before creating it, in
one of two layouts (``hoodie.write.markers.type``):

* ``DIRECT``: one empty file ``<partition>/<file>.marker.<CREATE|MERGE|APPEND>`` per data file (what this
  project's own writers create);
* ``TIMELINE_SERVER_BASED`` (Hudi's default for Spark writers): a ``MARKERS.type`` file and ``MARKERS<N>``
  files, each line one ``<partition>/<file>.marker.<TYPE>``, written by the writer's timeline server.

Both are read here, so a clustering can see the file groups a live writer is touching.
"""

from __future__ import annotations

import posixpath

from ..io.storage import Storage

TEMP_DIR = ".hoodie/.temp"
_MARKER_INFIX = ".marker."


def _strip(marker: str) -> str | None:
    return marker.rsplit(_MARKER_INFIX, 1)[0] if _MARKER_INFIX in marker else None


def marked_files(storage: Storage, instant_time: str) -> set[str]:
    """Data files (paths relative to the table) that have a marker of ``instant_time``, in either layout."""
    root = storage.join(TEMP_DIR, instant_time)
    found = set()
    for entry in storage.list(root, recursive=True):
        if entry.is_dir:
            continue
        relative = posixpath.relpath(entry.path, root)
        if _MARKER_INFIX in entry.name:
            found.add(relative.rsplit(_MARKER_INFIX, 1)[0])
        elif relative.startswith("MARKERS") and relative != "MARKERS.type":
            text = storage.read_bytes(entry.path).decode("utf-8", errors="replace")
            found.update(f for f in (_strip(line.strip()) for line in text.splitlines()) if f)
    return found
