"""Conflicts between a clustering and the writers beside it, checked when the clustering commits.

A clustering replaces its input file groups. A write that reached one of them after the plan was made (a new base
file or log file, committed or still being written) would be lost once the replacecommit hides the group, so the
writer wins, as in Apache Hudi's ``PreferWriterConflictResolutionStrategy`` for table services (see
docs/format.md#write-conflicts): the clustering is not committed and is rolled back; the writer's data stays. (Hudi's
default strategy skips this check for clustering commits, which is how Hudi's own clustering loses such writes.)

The check compares files, not clocks: the plan names every input slice's files exactly, so any committed file of an
input group outside the planned slice, any file, marker or inflight workload profile of a write still in flight on
it, and any later replacecommit naming it, is a conflict. It runs under the timeline lock, just before the commit.

One write is not a conflict: a completed write that also **duplicated** every record it wrote into the input groups
into log files named with the clustering's instant, in groups the plan does not read (the new buckets of a
consistent-bucket resize: Hudi's ``SparkConsistentBucketDuplicateUpdateStrategy``, or ours). Those log files count
only once the clustering completes, and then they are merged on top of its new base files, so nothing is lost by
committing. The counts in the write's own stats decide: records (writes and deletes) into duplicates at least those
into the input groups.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from ..plan.avro_plan import StoredPlan
from ..table import HudiTable
from ..table.view import FileGroupId


@dataclass(frozen=True)
class Conflict:
    group: FileGroupId
    instant: str
    what: str
    committed: str = ""  # the file a completed write added to the group after the plan

    def describe(self) -> str:
        where = f"{self.group.partition}/{self.group.file_id}" if self.group.partition else self.group.file_id
        return f"file group {where}: {self.what}"


def _planned_files(plan: StoredPlan) -> dict[FileGroupId, set[str]]:
    planned: dict[FileGroupId, set[str]] = {}
    for group in plan.groups:
        for input_slice in group.slices:
            names = {posixpath.basename(p) for p in input_slice.log_files}
            if input_slice.base_file:
                names.add(posixpath.basename(input_slice.base_file))
            planned[FileGroupId(input_slice.partition, input_slice.file_id)] = names
    return planned


def find_conflicts(table: HudiTable, plan: StoredPlan) -> list[Conflict]:
    """Writes that touched the plan's input file groups after it was made, or are touching them now (``table`` read
    just now: its timeline, and a listing of the plan's partitions alone, read here)."""
    view = table.view(partitions={g.partition for g in plan.groups})
    planned = _planned_files(plan)
    conflicts: list[Conflict] = []
    in_flight = view.pending_write_file_groups()
    for group_id, names in sorted(planned.items()):
        if group_id in in_flight:
            writer = in_flight[group_id]
            action = table.timeline.get(writer)
            conflicts.append(Conflict(group_id, writer, f"{action.action if action else 'write'} {writer} is still "
                                                        "writing to it"))  # fmt: skip
            continue
        slices = view.file_slices(group_id.partition, group_id.file_id)
        latest = slices[-1] if slices else None
        now = set()
        if latest is not None:
            now = {log.name for log in latest.log_files} | ({latest.base_file.name} if latest.base_file else set())
        for name in sorted(now - names):
            instant = _instant_of(latest, name)
            conflicts.append(Conflict(group_id, instant, f"{name} was committed by {instant} after the plan was made",
                                      committed=name))  # fmt: skip
        for name in sorted(names - now):
            conflicts.append(Conflict(group_id, "", f"planned file {name} is no longer part of the table"))
    replaced_by_others = {g: t for g, t in view.replacing_instants().items() if t != plan.instant_time}
    for group_id in sorted(set(planned) & set(replaced_by_others)):
        instant = replaced_by_others[group_id]
        conflicts.append(Conflict(group_id, instant, f"replaced by replacecommit {instant}"))
    duplicated = _duplicating_writes(table, plan, planned, {c.instant for c in conflicts if c.committed})
    return [c for c in conflicts if not (c.committed and c.instant in duplicated)]


def _records(stat: dict) -> int:
    return int(stat.get("numWrites") or 0) + int(stat.get("numDeletes") or 0)


def _duplicating_writes(table: HudiTable, plan: StoredPlan, planned, instants: set[str]) -> set[str]:
    """The completed writes among ``instants`` that duplicated all they wrote into the plan's input groups into log
    files named with the clustering's instant (``<fileId>_<C>.log...``) of groups outside the plan."""
    duplicated = set()
    marker = f"_{plan.instant_time}.log."
    for time in sorted(instants):
        instant = table.timeline.get(time)
        if instant is None or not instant.is_completed:
            continue
        into_inputs = into_duplicates = 0
        for partition, stats in (table.timeline.commit_metadata(instant).get("partitionToWriteStats") or {}).items():
            for stat in stats or []:
                group = FileGroupId(stat.get("partitionPath") or partition or "", stat.get("fileId") or "")
                name = posixpath.basename(stat.get("path") or "")
                if group in planned:
                    into_inputs += _records(stat)
                elif marker in name:
                    into_duplicates += _records(stat)
        if into_inputs and into_duplicates >= into_inputs:
            duplicated.add(time)
    return duplicated


def _instant_of(file_slice, name: str) -> str:
    if file_slice.base_file is not None and file_slice.base_file.name == name:
        return file_slice.base_file.instant
    return next((log.instant for log in file_slice.log_files if log.name == name), "")
