"""The metadata table (``.hoodie/metadata``) seen from the data table's config: dropping it whole, or one of its
partitions (indexes) alone.

A clustering that leaves the metadata table untouched makes v8+ tables read as empty (see
docs/format.md#metadata-table). Clustering keeps the ``files`` partition up to date where it can (``run.commit`` with
``mdt``); what it can't maintain is removed here the way Hudi removes it:

* the whole table, as a write with ``hoodie.metadata.enable=false`` does: clear
  ``hoodie.table.metadata.partitions`` (and ``.inflight``) in ``hoodie.properties`` and delete the folder;
* one partition, as Hudi drops an index it no longer maintains (``HoodieTable.deleteMetadataIndexIfNecessary``,
  ``HoodieBackedTableMetadataWriter.dropMetadataPartitions``): the partition leaves the table config, its folder
  under ``.hoodie/metadata`` goes, and its definition leaves ``.hoodie/.index_defs/index.json`` (Hudi deletes the
  ``column_stats`` definition there; expression and secondary indexes are keyed there by their partition name).
  Hudi deletes the folder before updating the config; here the config goes first, so no reader ever follows a
  half-deleted partition.

The next Apache Hudi write with the metadata table (or the index) enabled rebuilds what was dropped from storage.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Iterable

from .. import javaprops
from ..io.storage import Storage
from .properties import PROPERTIES_FILE, load_table_config
from .timeline import Timeline, load_timeline

log = logging.getLogger(__name__)
METADATA_DIR = ".hoodie/metadata"
_PARTITION_KEYS = ("hoodie.table.metadata.partitions", "hoodie.table.metadata.partitions.inflight")


INDEX_DEFS_DEFAULT = ".hoodie/.index_defs/index.json"
FILES_PARTITION = "files"


def has_metadata_table(storage: Storage) -> bool:
    return storage.exists(storage.join(METADATA_DIR))


def metadata_storage(storage: Storage) -> Storage:
    """The metadata table as a table of its own (its base path is the data table's ``.hoodie/metadata``)."""
    return storage.at(storage.base_uri.rstrip("/") + "/" + METADATA_DIR)


def metadata_timeline(storage: Storage) -> Timeline:
    """The metadata table's timeline; ValueError unless it is layout 2 (data tables v8 and v9), the only one read
    and written here."""
    mdt = metadata_storage(storage)
    config = load_table_config(mdt)
    if config.timeline_layout_version < 2:
        raise ValueError(f"{mdt.base}: timeline layout {config.timeline_layout_version}; only layout 2 is read here")
    return load_timeline(mdt, config)


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


def _load_properties(storage: Storage) -> dict[str, str]:
    return javaprops.parse(storage.read_bytes(storage.join(".hoodie", PROPERTIES_FILE)).decode("utf-8"))


def metadata_partitions(storage: Storage, *, inflight: bool = False) -> list[str]:
    """The MDT partitions ``hoodie.properties`` names as built (or, with ``inflight``, as being built)."""
    value = _load_properties(storage).get(_PARTITION_KEYS[1 if inflight else 0], "")
    return [p.strip() for p in value.split(",") if p.strip()]


def drop_metadata_partitions(storage: Storage, names: Iterable[str]) -> list[str]:
    """Drop the MDT partitions ``names`` alone, the metadata table and its other partitions staying; returns those
    dropped. Idempotent and crash-safe in order: the table config stops naming them, then their folders go, then
    their index definitions. One warning line per index."""
    wanted = [n for n in dict.fromkeys(names) if n]
    if not wanted:
        return []
    props = _load_properties(storage)
    changed = False
    for key in _PARTITION_KEYS:
        if key not in props:
            continue
        current = [p.strip() for p in props[key].split(",") if p.strip()]
        kept = [p for p in current if p not in wanted]
        if kept != current:
            props[key] = ",".join(kept)
            changed = True
    if changed:
        rewrite_properties(storage, props)
    for name in wanted:
        log.warning("dropping metadata-table index %r: clustering can't keep it up to date yet; Apache Hudi "
                    "rebuilds it on its next write with the index enabled", name)  # fmt: skip
        storage.delete_dir(storage.join(METADATA_DIR, name))
    _drop_index_definitions(storage, props.get("hoodie.table.index.defs.path") or INDEX_DEFS_DEFAULT, wanted)
    return wanted


def _drop_index_definitions(storage: Storage, relative: str, names: list[str]) -> None:
    path = relative if "://" in relative or relative.startswith("/") else storage.join(relative)
    if not storage.exists(path):
        return
    defs = json.loads(storage.read_bytes(path).decode("utf-8"))
    entries = defs.get("indexDefinitions") or {}
    gone = [n for n in names if n in entries]
    if not gone:
        return
    for name in gone:
        del entries[name]
    storage.write_atomic(path, json.dumps(defs, indent=2).encode("utf-8"))
