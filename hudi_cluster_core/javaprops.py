"""Java ``.properties`` files (``hoodie.properties``, ``.hoodie_partition_metadata``), through ``javaproperties``.

Hudi writes and reads these with ``java.util.Properties``: ``key=value`` or ``key: value`` or ``key value``,
``#``/``!`` comments, backslash escapes (``\\:``, ``\\=``, ``\\uXXXX``), and line continuations. The
``javaproperties`` package implements that format (its output, read back by ``Properties.load``, gives the same
map; its reading agrees with ``Properties.load`` but for a line holding only a continuation backslash).

(``clusteringjob.properties`` is not one of these: Hudi reads it with its own ``DFSPropertiesConfiguration``
rules, in :mod:`hudi_cluster_core.config`.)
"""

from __future__ import annotations

import javaproperties


def parse(text: str) -> dict[str, str]:
    """Parse properties text into an ordered dict (the last of a repeated key wins), as ``Properties.load`` does.

    Raises ValueError on a malformed ``\\uXXXX`` escape, where ``Properties.load`` throws."""
    return dict(javaproperties.loads(text))


def dump(props: dict[str, str], header: str | None = None) -> str:
    """Render properties as ``java.util.Properties.store`` would (escapes included; ``\\uXXXX`` escapes in lower
    case), with ``header`` as a leading comment and no timestamp line. The text is ASCII, header included."""
    return javaproperties.dumps(props, comments=header, timestamp=False, ensure_ascii_comments=True)
