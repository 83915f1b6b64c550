"""Tables Apache Hudi 1.1.1 wrote with aggressive archival and cleaning, so most of their history is archived.

Every write keeps 3-4 completed commits on the active timeline (``hoodie.keep.min.commits=3``,
``hoodie.keep.max.commits=4``, ``hoodie.clean.commits.retained=2``, clean and archive after each write) and uses
small-file limit 0, so each of the 12 insert commits adds one new file group per partition (3 partitions) and the
base files of 8-9 of them belong to archived commits.

``TableBuilder`` builds each kind once per test module and hands out copies (``shutil.copytree``) to change.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from tests.support.apache_hudi import hudi_upsert, make_small_file_table, make_updates, small_file_rows, write_hudi_table

ARCHIVAL_OPTIONS = {
    "hoodie.keep.min.commits": "3",
    "hoodie.keep.max.commits": "4",
    "hoodie.clean.commits.retained": "2",
    "hoodie.clean.automatic": "true",
    "hoodie.archive.automatic": "true",
    # a Spark batch write on MOR compacts inline unless told not to; the late upserts must stay in log files
    "hoodie.compact.inline": "false",
}
# Clustering options for both services: every file is small and one output file per partition is allowed, so
# the whole table is one plan (one group per partition).
WHOLE_TABLE_CLUSTERING = {
    "hoodie.clustering.plan.strategy.small.file.limit": str(100 << 20),
    "hoodie.clustering.plan.strategy.target.file.max.bytes": str(1 << 30),
    "hoodie.clustering.plan.strategy.max.bytes.per.group": str(2 << 30),
    "hoodie.clustering.plan.strategy.max.num.groups": "30",
}
INSERT_COMMITS = 12
ROWS_PER_COMMIT = 12  # 4 rows per partition and commit
PARTITIONS = 3
# inserts between the two late upserts: MOR v9 keeps 5 deltacommits active here, so the first upsert is archived
LATE_INSERTS = 4


@dataclass(frozen=True)
class TableKind:
    name: str
    table_version: int
    table_type: str
    late_upserts: bool = False
    metadata_table: bool = False  # files, column_stats and partition_stats, Hudi 1.1.1's defaults
    record_index: bool = False  # and the record index (hoodie.metadata.record.index.enable)


KINDS = {
    "cow_v6": TableKind("cow_v6", 6, "COPY_ON_WRITE"),
    "cow_v9": TableKind("cow_v9", 9, "COPY_ON_WRITE"),
    "mor_v9": TableKind("mor_v9", 9, "MERGE_ON_READ"),
    "mor_v9_late_upserts": TableKind("mor_v9_late_upserts", 9, "MERGE_ON_READ", late_upserts=True),
    "cow_v9_mdt": TableKind("cow_v9_mdt", 9, "COPY_ON_WRITE", metadata_table=True),
    "cow_v9_rli": TableKind("cow_v9_rli", 9, "COPY_ON_WRITE", metadata_table=True, record_index=True),
}
RECORD_INDEX_OPTIONS = {"hoodie.metadata.record.index.enable": "true"}


def insert_rows(spark, base_path: str, start: int, count: int = ROWS_PER_COMMIT) -> str:
    """One more insert commit (new file groups), with the archival options; returns its instant."""
    return write_hudi_table(spark, base_path, small_file_rows(start, count), operation="insert", extra_options=ARCHIVAL_OPTIONS)


def _late_upserts(spark, base_path: str) -> None:
    """Upsert rows of the first two commits, whose base files' commits are archived, into log files.

    The first upsert is followed by enough writes that its own deltacommit is archived too, so the table ends with
    log files of an archived deltacommit (no completion time on the active timeline) next to ones of an active
    one, all on base files of archived commits."""
    first_rows = small_file_rows(0, 2 * ROWS_PER_COMMIT)
    hudi_upsert(spark, base_path, make_updates(first_rows.slice(0, ROWS_PER_COMMIT), tag="late1"), extra_options=ARCHIVAL_OPTIONS)
    for n in range(LATE_INSERTS):
        insert_rows(spark, base_path, 10_000 + n * ROWS_PER_COMMIT)
    hudi_upsert(spark, base_path, make_updates(first_rows.slice(6, ROWS_PER_COMMIT), tag="late2"), extra_options=ARCHIVAL_OPTIONS)


class TableBuilder:
    """Builds each :data:`KINDS` table on first use under ``root`` (the MOR late-upsert table starts as a copy of
    the MOR one) and makes throw-away copies."""

    def __init__(self, spark, root: Path):
        self.spark = spark
        self.root = Path(root)
        self._built: dict[str, str] = {}
        self._copies = 0

    def table(self, name: str) -> str:
        if name not in self._built:
            kind = KINDS[name]
            path = self.root / "built" / name
            if kind.late_upserts:
                shutil.copytree(self.table("mor_v9"), path)
                _late_upserts(self.spark, str(path))
            else:
                make_small_file_table(
                    self.spark, str(path), batches=INSERT_COMMITS, rows_per_batch=ROWS_PER_COMMIT,
                    table_version=kind.table_version, table_type=kind.table_type,
                    extra_options=ARCHIVAL_OPTIONS | (RECORD_INDEX_OPTIONS if kind.record_index else {}),
                    metadata_enable=kind.metadata_table,
                )  # fmt: skip
            self._built[name] = str(path)
        return self._built[name]

    def copy(self, name: str, label: str) -> str:
        """A fresh copy of table ``name`` to modify."""
        self._copies += 1
        label = re.sub(r"[^A-Za-z0-9_-]+", "-", label)[:60]  # a test id has brackets, which URLs can't take
        target = self.root / "copies" / f"{name}-{label}-{self._copies}"
        shutil.copytree(self.table(name), target)
        return str(target)


def file_id_of(hoodie_file_name: str) -> str:
    """The file id a row's ``_hoodie_file_name`` names: a base file name, or (rows merged from a MOR log file)
    the bare file id Hudi writes there."""
    return hoodie_file_name.split("_", 1)[0]


def snapshot_file_groups(snapshot: pa.Table) -> set[tuple[str, str]]:
    """(partition, file id) of every file group an Apache Hudi snapshot read took rows from."""
    partitions = snapshot.column("_hoodie_partition_path").to_pylist()
    names = snapshot.column("_hoodie_file_name").to_pylist()
    return {(p, file_id_of(n)) for p, n in zip(partitions, names)}


def slices_as_hudi_rs(view_slices) -> list[dict]:
    """Our :class:`FileSlice` list in the shape of ``readers.hudi_rs_file_slices``."""
    slices = [
        {
            "partition": s.partition,
            "file_id": s.file_id,
            "base_file": s.base_file.name if s.base_file else None,
            "log_files": sorted(log.name for log in s.log_files),
        }
        for s in view_slices
    ]
    return sorted(slices, key=lambda s: (s["partition"], s["file_id"]))
