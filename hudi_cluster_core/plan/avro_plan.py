"""Clustering plans in Hudi's Avro shape (HoodieRequestedReplaceMetadata), built from and read into models."""

from __future__ import annotations

import math
import posixpath
from dataclasses import dataclass, field
from typing import Mapping

from ..errors import PlanError
from ..io.storage import Storage
from .model import PlannedGroup

_MB = 1024.0 * 1024.0


def group_metrics(group: PlannedGroup) -> dict[str, float]:
    """The metrics Hudi records per group; its MB figures are rounded up (a tiny group reads as 1.0 MB)."""
    read_mb = float(math.ceil(group.total_bytes / _MB))
    return {
        "TOTAL_IO_READ_MB": read_mb,
        "TOTAL_IO_WRITE_MB": read_mb,
        "TOTAL_IO_MB": 2 * read_mb,
        "TOTAL_LOG_FILES_SIZE": float(sum(s.log_files_size for s in group.slices)),
        "TOTAL_LOG_FILES": float(sum(len(s.log_files) for s in group.slices)),
    }


def build_requested_replace_metadata(
    storage: Storage,
    groups: list[PlannedGroup],
    execution_class: str,
    strategy_params: Mapping[str, str],
    missing_partitions: tuple[str, ...] = (),
    preserve_hoodie_metadata: bool = True,
) -> dict:
    def full_path(partition: str, name: str) -> str:
        return storage.qualified(storage.join(partition, name))

    input_groups = []
    for group in groups:
        slices = [
            {
                "dataFilePath": full_path(s.partition, s.base_file.name) if s.base_file else "",
                "deltaFilePaths": [full_path(s.partition, log.name) for log in s.log_files],
                "fileId": s.file_id,
                "partitionPath": s.partition,
                "bootstrapFilePath": "",
                "version": 1,
            }
            for s in group.slices
        ]
        input_groups.append({
            "slices": slices,
            "metrics": {**group_metrics(group), **group.metrics},
            "numOutputFileGroups": int(group.num_output_file_groups),
            "extraMetadata": dict(group.extra_metadata) if group.extra_metadata is not None else None,
            "version": 1,
        })  # fmt: skip
    plan = {
        "inputGroups": input_groups,
        "strategy": {"strategyClassName": execution_class, "strategyParams": dict(strategy_params), "version": 1},
        "extraMetadata": {},
        "version": 1,
        "preserveHoodieMetadata": preserve_hoodie_metadata,
        "missingSchedulePartitions": list(missing_partitions),
    }
    return {"operationType": "CLUSTER", "clusteringPlan": plan, "extraMetadata": {}, "version": 1}


def planned_file_sizes(storage: Storage, groups: list[PlannedGroup]) -> dict[str, int]:
    """Path as a plan of ``groups`` names it (no scheme) -> size, as the view had it when they were planned."""
    sizes: dict[str, int] = {}
    directories: dict[str, str] = {}  # partition -> its directory as a plan's paths name it, without the scheme
    for group in groups:
        for s in group.slices:
            directory = directories.get(s.partition)
            if directory is None:
                directory = directories[s.partition] = storage.strip_scheme(storage.qualified(storage.join(s.partition)))
            for f in ((s.base_file,) if s.base_file else ()) + tuple(s.log_files):
                sizes[posixpath.join(directory, f.name)] = f.size
    return sizes


@dataclass(frozen=True)
class InputSlice:
    partition: str
    file_id: str
    base_file: str | None  # path without scheme
    log_files: tuple[str, ...] = ()
    # the paths as the plan stores them (``file:/...``): the validator checks their scheme and authority
    base_file_uri: str | None = None
    log_file_uris: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlanGroup:
    """One group of a stored plan, as the executor needs it."""

    index: int
    partition: str
    slices: tuple[InputSlice, ...]
    num_output_file_groups: int
    extra_metadata: Mapping[str, str] = field(default_factory=dict)

    @property
    def file_ids(self) -> tuple[str, ...]:
        return tuple(s.file_id for s in self.slices)


@dataclass(frozen=True)
class StoredPlan:
    instant_time: str
    execution_class: str
    strategy_params: Mapping[str, str]
    groups: tuple[PlanGroup, ...]
    preserve_hoodie_metadata: bool
    # path as the plan names it (no scheme) -> size, from the listing the plan was checked against or built from
    # (empty: not known; read from storage where needed)
    file_sizes: Mapping[str, int] = field(default_factory=dict)

    def input_bytes(self, group: PlanGroup) -> int | None:
        """The bytes of every file ``group`` reads, when :attr:`file_sizes` knows them all."""
        paths = [p for s in group.slices for p in (s.base_file, *s.log_files) if p]
        if not all(p in self.file_sizes for p in paths):
            return None
        return sum(self.file_sizes[p] for p in paths)


def _fields(record, names: tuple[str, ...], what: str, source: str) -> dict:
    """``record`` when it has every field the reader uses: a plan whose writer schema names them otherwise (a
    damaged header) must not read as a plan without groups, slices or parameters."""
    missing = [n for n in names if not isinstance(record, dict) or n not in record]
    if missing:
        raise PlanError(f"{source}: {what} lacks the field(s) {', '.join(missing)} of Hudi's clustering plan")
    return record


def read_plan(storage: Storage, instant_time: str, record: dict, *, source: str) -> StoredPlan:
    plan = _fields(record.get("clusteringPlan"), ("inputGroups", "strategy"), "the clustering plan", source)
    strategy = _fields(plan.get("strategy") or {}, ("strategyClassName", "strategyParams"), "the strategy", source)
    groups = []
    for index, group in enumerate(plan.get("inputGroups") or []):
        _fields(group, ("slices", "numOutputFileGroups"), f"group {index}", source)
        slices = []
        for info in group.get("slices") or []:
            _fields(info, ("dataFilePath", "deltaFilePaths", "fileId", "partitionPath"), f"a slice of group {index}",
                    source)  # fmt: skip
            if not info.get("fileId"):
                raise PlanError(f"{source}: group {index} has a slice without fileId")
            partition = info.get("partitionPath") or ""
            data = info.get("dataFilePath") or None
            logs = tuple(info.get("deltaFilePaths") or [])
            slices.append(InputSlice(
                partition, info["fileId"],
                storage.strip_scheme(data) if data else None,
                tuple(storage.strip_scheme(p) for p in logs), data, logs,
            ))  # fmt: skip
        if not slices:
            raise PlanError(f"{source}: group {index} has no slices")
        partitions = {s.partition for s in slices}
        if len(partitions) != 1:
            raise PlanError(f"{source}: group {index} spans partitions {sorted(partitions)}; one is accepted")
        count = group.get("numOutputFileGroups") or 1
        if count < 1:
            raise PlanError(f"{source}: group {index} numOutputFileGroups={count}; accepted: >= 1")
        groups.append(PlanGroup(index, slices[0].partition, tuple(slices), int(count), group.get("extraMetadata") or {}))
    if not strategy.get("strategyClassName"):
        raise PlanError(f"{source}: the plan names no execution strategy (strategy.strategyClassName)")
    return StoredPlan(
        instant_time, strategy["strategyClassName"], dict(strategy.get("strategyParams") or {}), tuple(groups),
        plan.get("preserveHoodieMetadata") is not False,
    )  # fmt: skip

