"""What one commit changes in the data table, as the metadata table's builders see it (:class:`CommitFiles`).

Its own module so that the builders (``bloom_filters``, ``column_stats``, ``record_index``) and the registry of
builders (``partitions``) can all name it without importing one another.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from ..io.storage import Storage


@dataclass(frozen=True)
class CommitFiles:
    """What one clustering commit changes in the data table.

    ``write_stats``: data partition path -> the ``HoodieWriteStat`` dicts of the new base files (``path`` is
    relative to the table's base path). ``replaced``: data partition path -> the file ids the commit replaces.
    ``table_config``: the data table's ``hoodie.properties``. ``new_keys``: for a writer's commit, write-stat
    ``path`` -> the record keys of that file that are new to their file group (inserts); an updated key keeps
    its record-index location, as in Hudi's upsert. None (a clustering, an append): every key of every new file
    moved or is new. ``deleted``: data partition path -> names of files a rollback deleted (``files`` only)."""

    storage: Storage
    instant_time: str
    write_stats: Mapping[str, Sequence[Mapping[str, Any]]]
    replaced: Mapping[str, Sequence[str]] = field(default_factory=dict)
    table_config: Mapping[str, str] = field(default_factory=dict)
    new_keys: Mapping[str, pa.Array] | None = None
    deleted: Mapping[str, Sequence[str]] = field(default_factory=dict)  # partition -> file names a rollback deleted
