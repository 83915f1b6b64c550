"""Checking a stored clustering plan against its table before anything is written.

A plan is data from disk, written by us, by Apache Hudi or by anyone who can write ``.hoodie/``. Executing it
reads every file it names and writes output and markers under every partition it names, so a path that leaves
the table would import another table's rows or write outside the table. Every path in a plan must therefore
name a file of a file group of an existing partition, directly in that partition's directory (see
docs/format.md#file-names: ``<partition>/<fileId>_<writeToken>_<instant>.<ext>`` and
``<partition>/.<fileId>_<instant>.log.<n>_<token>``).
"""

from __future__ import annotations

import os
import posixpath

from ..errors import PlanError
from ..io import registry
from ..io.storage import FileEntry
from ..table import HudiTable
from ..table.naming import parse_base_file, parse_log_file
from ..table.view import PARTITION_METAFILE_PREFIX
from .avro_plan import InputSlice, StoredPlan

# top-level directories of a table that hold Hudi's own files (the metadata table's partitions have partition
# metafiles too, so the metafile alone does not make a data partition)
_RESERVED_TOP_DIRS = (".hoodie",)


class _Checker:
    def __init__(self, table: HudiTable, source: str):
        self.table = table
        self.storage = table.storage
        self.source = source
        self._listings: dict[str, dict[str, FileEntry]] = {}
        self.sizes: dict[str, int] = {}  # path as the plan names it (no scheme) -> size, of every file checked

    def fail(self, where: str, problem: str) -> PlanError:
        return PlanError(f"{self.source}: {where}: {problem}; nothing was written")

    def partition_dir(self, partition: str) -> str:
        return self.storage.join(partition) if partition else self.storage.base

    def check_partition(self, where: str, partition: str) -> None:
        accepted = f"accepted: a partition of the table, relative to {self.storage.base}"
        if not self.table.config.is_partitioned:
            if partition:
                raise self.fail(where, f"partitionPath {partition!r} in a non-partitioned table; accepted: ''")
            return
        if not partition:
            raise self.fail(where, f"partitionPath '' in a partitioned table; {accepted}")
        if partition.startswith("/"):
            raise self.fail(where, f"partitionPath {partition!r} is absolute; {accepted}")
        segments = partition.split("/")
        if "\\" in partition or any(s in ("", ".", "..") for s in segments) or posixpath.normpath(partition) != partition:
            raise self.fail(where, f"partitionPath {partition!r} is not a normalised relative path; {accepted}")
        if segments[0] in _RESERVED_TOP_DIRS:
            raise self.fail(where, f"partitionPath {partition!r} is inside Hudi's own {segments[0]}/; {accepted}")
        if not any(name.startswith(PARTITION_METAFILE_PREFIX) for name in self.listing(partition)):
            raise self.fail(where, f"partitionPath {partition!r} is not a partition of the table "
                                   f"(no {PARTITION_METAFILE_PREFIX} in {self.partition_dir(partition)}); {accepted}")  # fmt: skip

    def listing(self, partition: str) -> dict[str, FileEntry]:
        """The files storage holds in the partition's directory, by name: the table's own listing of it (read at
        most once per partition, and not again when the table's view read it already)."""
        if partition not in self._listings:
            entries = self.table.listing.stored_files(partition)
            self._listings[partition] = {entry.name: entry for entry in entries}
        return self._listings[partition]

    def check_file(self, where: str, input_slice: InputSlice, uri: str, stripped: str, kind: str) -> None:
        """``uri`` must be on the table's filesystem, directly in the slice's partition, exist, and carry its fileId."""
        directory = self.partition_dir(input_slice.partition)
        accepted = f"accepted: a {kind} of file group {input_slice.file_id!r} directly in {directory}"
        bad = f"{kind} path {uri!r}"
        if not self._same_filesystem(uri):
            table_uri = self.storage.qualified(self.storage.base)
            raise self.fail(where, f"{bad} is not on the table's filesystem ({table_uri}); {accepted}")
        if "\\" in stripped or posixpath.normpath(stripped) != stripped:
            raise self.fail(where, f"{bad} is not a normalised path; {accepted}")
        parent, name = posixpath.split(stripped)
        if parent != directory and not self._same_local_directory(parent, directory):
            raise self.fail(where, f"{bad} is outside the partition directory; {accepted}")
        parsed = parse_base_file(name) if kind == "base file" else parse_log_file(name)
        if parsed is None or (kind == "base file" and not name.endswith(self.table.config.base_file_extension)):
            raise self.fail(where, f"{bad} is not a Hudi {kind} name; {accepted}")
        if parsed.file_id != input_slice.file_id:
            raise self.fail(where, f"{bad} belongs to file group {parsed.file_id!r}, not the slice's fileId; {accepted}")
        entry = self.listing(input_slice.partition).get(name)
        if entry is None or entry.is_dir:
            raise self.fail(where, f"{bad} does not exist; {accepted}")
        self.sizes[stripped] = entry.size

    def _same_local_directory(self, first: str, second: str) -> bool:
        """Hudi stores the base path as its writer was given it, which may go through a symlink (``/tmp`` on macOS)."""
        return self.storage.capabilities.local_files and os.path.realpath(first) == os.path.realpath(second)

    def _same_filesystem(self, uri: str) -> bool:
        """A scheme-less path, or a URI of the table's store and authority (``file:/a`` and ``file:///a`` are the
        same; so are two schemes of one store, ``s3://`` and ``s3a://``)."""
        return not registry.scheme_of(uri) or self.storage.same_store(uri)


def validate_plan(table: HudiTable, plan: StoredPlan, source: str) -> dict[str, int]:
    """Raise :class:`PlanError` naming ``source`` and the first bad path unless every path of ``plan`` names an
    existing file of its slice's file group, directly in an existing partition of ``table``; returns the size of
    every file the plan names, by its path in the plan (no scheme), as the listing has it."""
    checker = _Checker(table, source)
    for group in plan.groups:
        for input_slice in group.slices:
            where = f"group {group.index} slice {input_slice.file_id!r}"
            checker.check_partition(where, input_slice.partition)
            if input_slice.base_file is None and not input_slice.log_files:
                raise checker.fail(where, "the slice names no base file (dataFilePath) and no log files (deltaFilePaths); "
                                          "accepted: at least one of them")  # fmt: skip
            if input_slice.base_file is not None:
                checker.check_file(where, input_slice, input_slice.base_file_uri or input_slice.base_file,
                                   input_slice.base_file, "base file")  # fmt: skip
            uris = input_slice.log_file_uris or input_slice.log_files
            for uri, stripped in zip(uris, input_slice.log_files):
                checker.check_file(where, input_slice, uri, stripped, "log file")
    return checker.sizes
