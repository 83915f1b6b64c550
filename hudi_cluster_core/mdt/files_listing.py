"""The data table's file listing as the metadata table's ``files`` partition holds it (Hudi's
``HoodieBackedTableMetadata.getAllPartitionPaths`` / ``getAllFilesInPartition``), instead of listing storage
(docs/format.md#mdt-as-the-file-listing, #mdt-files-records, #mdt-valid-instants).

The partition has one record per data partition (key: its path, ``.`` for a non-partitioned table) mapping file
names to ``{size, isDeleted}``, and one ``__all_partitions__`` record naming the partitions. A commit adds a record
naming the files it wrote; a clean adds one marking the files it deleted (``isDeleted``). A key's records merge as
``HoodieMetadataPayload.combineFileSystemMetadata`` merges them, oldest first: a later entry replaces an earlier
one, its size the larger of the two; a deleted entry removes the name. (Hudi merges the log blocks first, then the
base file, keeping a deletion of a name it has not seen yet until then: the same result.)

Which records count is Hudi's rule (``HoodieTableMetadataUtil.getValidInstantTimestamps``), which
:func:`~.partition_reader.read_partition` applies: the latest base HFile, and the log blocks of MDT deltacommits
that completed, except those whose data instant is still pending (a write that died after its MDT deltacommit and
before its own commit). So files of a write in flight or failed are never listed.

Hudi's reader trusts that rule alone; before a listing is trusted here the MDT must also be **in step** with the
data timeline (:func:`check_in_step`): every data instant that changes the files (commit, deltacommit,
replacecommit, clean) and completed after the MDT was built has a completed MDT deltacommit of the same time, as
Hudi writes it (its MDT deltacommit completes before the data instant does, and Hudi archives no MDT instant whose
data instant is still active). A table some writer changed behind the MDT's back fails it, and is listed from
storage instead (:class:`~..table.listing.MetadataTableListing`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..io.storage import Storage
from ..table.metadata_table import metadata_timeline
from ..table.timeline import Timeline
from .partition_reader import read_partition
from .records import ALL_PARTITIONS_KEY, FILES_PARTITION, NON_PARTITIONED_NAME

# data-table actions whose files the MDT records under the same instant time (a rollback is undone in the MDT by
# an MDT rollback instead, and a savepoint changes no file)
SYNCED_ACTIONS = ("commit", "deltacommit", "replacecommit", "clean")
# the MDT's own initialisation deltacommits: 00000000000000000, 00000000000000001, ... (Hudi's SOLO_COMMIT_TIMESTAMP)
INIT_PREFIX = "00000000000000"


class OutOfStep(Exception):
    """The metadata table does not record every change the data timeline completed."""


def merge_file_records(records: Iterable[Mapping]) -> dict[str, int]:
    """Name -> size of the entries ``records`` (oldest first) leave live."""
    live: dict[str, int] = {}
    for record in records:
        for name, info in (record.get("filesystemMetadata") or {}).items():
            if info.get("isDeleted"):
                live.pop(name, None)
            else:
                live[name] = max(int(info.get("size") or 0), live.get(name, 0))
    return live


def check_in_step(data: Timeline, mdt: Timeline) -> None:
    """Raise :class:`OutOfStep` unless every data instant of :data:`SYNCED_ACTIONS` that completed after the MDT's
    initialisation (all of them once it was archived) has a completed MDT deltacommit of the same time."""
    deltacommits = mdt.completed(("deltacommit",))
    built = max((i.completion_time or i.time for i in deltacommits if i.time.startswith(INIT_PREFIX)), default="")
    recorded = {i.time for i in deltacommits}
    missing = [i for i in data.completed(SYNCED_ACTIONS) if (i.completion_time or i.time) > built and i.time not in recorded]
    if missing:
        names = ", ".join(f"{i.time} ({i.action})" for i in missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise OutOfStep(f"data instant(s) {names} completed without a metadata-table deltacommit")


def read_files_partition(storage: Storage, data: Timeline, *, partitions: Iterable[str] | None = None) -> dict[str, dict[str, int]]:
    """Data partition path ("" for a non-partitioned table) -> {file name: size}, for every partition
    ``__all_partitions__`` names (of ``partitions`` alone when given; an empty one has no files). ``data`` is the
    data table's timeline, read before this (what is pending on it, and the check that the MDT is in step)."""
    mdt = metadata_timeline(storage)
    check_in_step(data, mdt)
    keys = None if partitions is None else {p or NON_PARTITIONED_NAME for p in partitions} | {ALL_PARTITIONS_KEY}
    records = read_partition(storage, FILES_PARTITION, (lambda key: True) if keys is None else keys.__contains__,
                             mdt_timeline=mdt, data_pending={i.time for i in data.pending()})  # fmt: skip
    listing: dict[str, dict[str, int]] = {}
    for key in merge_file_records(records.get(ALL_PARTITIONS_KEY, [])):
        if keys is None or key in keys:
            listing["" if key == NON_PARTITIONED_NAME else key] = merge_file_records(records.get(key, []))
    return listing
