"""The metadata table (``.hoodie/metadata``): we do not update it, so we remove it the way Hudi does.

A clustering that leaves the metadata table untouched makes v8+ tables read as empty (format notes section 9,
trap 1). Hudi's own safe way to stop using it is what a write with ``hoodie.metadata.enable=false`` does: clear
``hoodie.table.metadata.partitions`` (and ``.inflight``) in ``hoodie.properties`` and delete the folder. The
next Apache Hudi write with the metadata table enabled rebuilds it from storage.
"""

from __future__ import annotations

import datetime as dt
import logging

from .. import javaprops
from ..io.storage import Storage
from .properties import PROPERTIES_FILE

log = logging.getLogger(__name__)
METADATA_DIR = ".hoodie/metadata"
_PARTITION_KEYS = ("hoodie.table.metadata.partitions", "hoodie.table.metadata.partitions.inflight")


def has_metadata_table(storage: Storage) -> bool:
    return storage.exists(storage.join(METADATA_DIR))


def drop_metadata_table(storage: Storage) -> bool:
    """Disable and delete the metadata table; returns whether there was one. Idempotent, crash-safe in order:
    the properties stop naming it before its folder goes, so no reader ever follows a half-deleted table."""
    path = storage.join(".hoodie", PROPERTIES_FILE)
    props = javaprops.parse(storage.read_bytes(path).decode("utf-8"))
    if any(props.get(key) for key in _PARTITION_KEYS):
        for key in _PARTITION_KEYS:
            if key in props or key == _PARTITION_KEYS[0]:
                props[key] = ""
        rewrite_properties(storage, props)
    existed = has_metadata_table(storage)
    if existed:
        log.info("removing the metadata table %s (it would go stale); Hudi rebuilds it on its next write",
                 storage.join(METADATA_DIR))  # fmt: skip
        storage.delete_dir(storage.join(METADATA_DIR))
    return existed


def rewrite_properties(storage: Storage, props: dict[str, str]) -> None:
    """Hudi's procedure: write a backup, replace the file, drop the backup; and drop Hadoop's stale ``.crc``."""
    path = storage.join(".hoodie", PROPERTIES_FILE)
    backup = path + ".backup"
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%a %b %d %H:%M:%S UTC %Y")
    text = javaprops.dump(props, header=f"Updated at {dt.datetime.now(dt.timezone.utc).isoformat()}")
    text = text.replace("\n", f"\n#{stamp}\n", 1)
    storage.write_bytes(backup, storage.read_bytes(path))
    storage.write_atomic(path, text.encode("utf-8"))
    for stale in (storage.join(".hoodie", f".{PROPERTIES_FILE}.crc"), backup):
        storage.delete_file(stale)
