"""The invariants, checked on the simulated store after every schedule, by the rules Apache Hudi's readers apply
(read here from the files themselves, not through the core's view of the table):

* every committed row is visible exactly once, with the value of the last committed write of its key (on a
  MERGE_ON_READ table, the latest slice's base file merged with its log blocks of committed instants:
  ``tests/sim/log_merge.py``);
* no instant was ever completed twice (two completed files of one instant, at any moment of the schedule);
* after the next run's recovery, nothing is pending that no live actor owns (scheduled clustering plans, work
  waiting to be executed, are allowed);
* the active timeline is readable: instants in order, one state file set per instant, a plan for every
  requested or inflight clustering, commit metadata that decodes, base files for every completed write;
* the metadata table's ``files`` partition lists exactly the committed base files in storage (and the log files
  of committed writes: a copy named with a pending clustering's instant is listed once its writer committed).
"""

from __future__ import annotations

import io
import re
from collections import defaultdict
from typing import Callable

import pyarrow.parquet as pq

from hudi_cluster_core.avro import decode_commit_metadata
from hudi_cluster_core.io.storage import Storage
from hudi_cluster_core.mdt.partition_reader import read_partition

from .log_merge import LOG_FILE, latest_slice_rows, log_blocks
from .store import World

COMPLETED = re.compile(r"^(\d{17})_(\d{17})\.(\w+)$")
PENDING = re.compile(r"^(\d{17})\.(?:(\w+)\.)?(requested|inflight)$")
BASE_FILE = re.compile(r"^([^_]+(?:-\d+)?)_([\d-]+)_(\d{17})\.parquet$")


def timeline_files(world: World, table: str) -> list[str]:
    prefix = f"{table}/.hoodie/timeline/"
    return sorted(k[len(prefix):] for k in world.objects if k.startswith(prefix) and "/" not in k[len(prefix):])


def completed_instants(names: list[str]) -> dict[str, tuple[str, str]]:
    """instant time -> (action, completed file name)."""
    found = {}
    for name in names:
        match = COMPLETED.match(name)
        if match:
            found[match.group(1)] = (match.group(3), name)
    return found


def committed(world: World, table: str) -> "Callable[[str], bool]":
    """Hudi's rule for whether an instant time is committed: completed on the active timeline, or older than the
    active timeline's first instant (archived: ``containsOrBeforeTimelineStarts``)."""
    names = timeline_files(world, table)
    done = set(completed_instants(names))
    times = [n[:17] for n in names if n[:17].isdigit()]
    start = min(times, default="9" * 17)
    return lambda time: time in done or time < start


def check_timeline(world: World, table: str) -> list[str]:
    problems = []
    names = timeline_files(world, table)
    completions: dict[str, list[str]] = defaultdict(list)
    for name in names:
        match = COMPLETED.match(name)
        if match:
            completions[match.group(1)].append(name)
            if match.group(2) < match.group(1):
                problems.append(f"{name}: completed before it was requested")
        elif not PENDING.match(name) and not name.endswith(".properties"):
            problems.append(f"timeline file {name}: not an instant file Hudi reads")
    for time, files in completions.items():
        if len(files) > 1:
            problems.append(f"instant {time} completed twice on the timeline: {files}")
    for time, files in world.completions.items():
        if len(files) > 1:
            problems.append(f"instant {time} was completed twice during the schedule: {sorted(files)}")
    completed = completed_instants(names)
    for name in names:
        match = PENDING.match(name)
        if not match or match.group(1) in completed:
            continue
        time, action = match.group(1), match.group(2) or "commit"
        if action == "clustering" and f"{time}.clustering.requested" not in names:
            problems.append(f"pending clustering {time} has no plan ({name} without {time}.clustering.requested)")
        if action == "clustering" and f"{time}.clustering.requested" in names:
            if not world.objects[f"{table}/.hoodie/timeline/{time}.clustering.requested"].data:
                problems.append(f"pending clustering {time}: its plan is empty")
    for time, (action, name) in completed.items():
        data = world.objects[f"{table}/.hoodie/timeline/{name}"].data
        try:
            decode_commit_metadata(data, layout_version=2, source=name) if action in ("commit", "deltacommit", "replacecommit") else None
        except Exception as exc:  # noqa: BLE001 - any failure to decode is the finding
            problems.append(f"{name}: commit metadata does not decode: {type(exc).__name__}: {exc}")
    return problems


def check_nothing_orphaned(world: World, table: str) -> list[str]:
    """After the next run's recovery: pending instants other than scheduled clustering plans are orphans."""
    names = timeline_files(world, table)
    completed = completed_instants(names)
    problems = []
    for name in names:
        match = PENDING.match(name)
        if not match or match.group(1) in completed:
            continue
        if match.group(2) == "clustering" and match.group(3) == "requested":
            continue  # a plan waiting for execution: Hudi's state, not a leftover
        if match.group(2) == "clustering" and f"{match.group(1)}.clustering.inflight" not in names:
            continue
        problems.append(f"{name}: pending after recovery, and no live actor owns it")
    return problems


def _replaced(world: World, table: str, completed: dict[str, tuple[str, str]]) -> set[tuple[str, str]]:
    replaced = set()
    for time, (action, name) in completed.items():
        if action != "replacecommit":
            continue
        metadata = decode_commit_metadata(world.objects[f"{table}/.hoodie/timeline/{name}"].data, layout_version=2, source=name)
        for partition, file_ids in (metadata.get("partitionToReplaceFileIds") or {}).items():
            replaced.update((partition, f) for f in file_ids)
    return replaced


def is_merge_on_read(world: World, table: str) -> bool:
    props = world.objects.get(f"{table}/.hoodie/hoodie.properties")
    return props is not None and b"hoodie.table.type=MERGE_ON_READ" in props.data


def _data_files(world: World, table: str):
    """(partition, file name, base file match or None, log file match or None) of every data file in storage."""
    for key in world.objects:
        if not key.startswith(table + "/") or "/.hoodie" in key:
            continue
        partition, _, name = key[len(table) + 1:].rpartition("/")
        yield partition, name, BASE_FILE.match(name), LOG_FILE.match(name)


def committed_base_files(world: World, table: str) -> dict[str, set[str]]:
    """partition -> names of base files whose instant completed (what a reader may see, replaced or not), and of
    log files whose writer's instant (their first block's) completed."""
    is_committed = committed(world, table)
    found: dict[str, set[str]] = defaultdict(set)
    for partition, name, base, log in _data_files(world, table):
        if base and is_committed(base.group(3)):
            found[partition].add(name)
        elif log:
            blocks = log_blocks(world.objects[f"{table}/{partition}/{name}"].data, name)
            if blocks and is_committed(blocks[0][0]):
                found[partition].add(name)
    return found


def visible_rows(world: World, table: str) -> list[dict]:
    """The snapshot a reader sees: per file group not replaced, the base file of its latest completed instant
    (merged with its latest slice's log files on a MERGE_ON_READ table)."""
    if is_merge_on_read(world, table):
        return _merged_rows(world, table)
    completed = completed_instants(timeline_files(world, table))
    replaced = _replaced(world, table, completed)
    latest: dict[tuple[str, str], tuple[str, str]] = {}
    for partition, names in committed_base_files(world, table).items():
        for name in names:
            match = BASE_FILE.match(name)
            if not match:
                continue
            group = (partition, match.group(1))
            if group not in replaced and (group not in latest or latest[group][0] < match.group(3)):
                latest[group] = (match.group(3), name)
    rows = []
    for (partition, _), (_, name) in sorted(latest.items()):
        rows.extend(_rows_of(world.objects[f"{table}/{partition}/{name}"].data))
    return rows


def _merged_rows(world: World, table: str) -> list[dict]:
    names = timeline_files(world, table)
    completed = completed_instants(names)
    completion = {time: COMPLETED.match(name).group(2) for time, (_, name) in completed.items()}
    replaced = _replaced(world, table, completed)
    is_committed = committed(world, table)
    bases: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)  # group -> base instant -> file name
    logs: dict[tuple[str, str], dict[str, bytes]] = defaultdict(dict)  # group -> log name -> its bytes
    for partition, name, base, log in _data_files(world, table):
        if base and is_committed(base.group(3)):
            bases[(partition, base.group(1))][base.group(3)] = name
        elif log and is_committed(log.group(2)):
            logs[(partition, log.group(1))][name] = world.objects[f"{table}/{partition}/{name}"].data
    rows = []
    for group in sorted(set(bases) | set(logs)):
        if group in replaced:
            continue
        base = None
        if bases[group]:
            instant = max(bases[group])
            base = (instant, _rows_of(world.objects[f"{table}/{group[0]}/{bases[group][instant]}"].data))
        rows.extend(latest_slice_rows(base, logs[group], completion, is_committed, sorted(bases[group])))
    return rows


_DECODED: dict[bytes, list[dict]] = {}  # a base file's bytes -> its rows (the initial table's files recur)
COLUMNS = ["_hoodie_record_key", "id", "ts", "val", "_hoodie_commit_time"]


def _rows_of(data: bytes) -> list[dict]:
    if data not in _DECODED:
        if len(_DECODED) > 4096:
            _DECODED.clear()
        _DECODED[data] = pq.read_table(io.BytesIO(data), columns=COLUMNS).to_pylist()
    return _DECODED[data]


def check_rows(world: World, table: str, expected: dict[str, int]) -> list[str]:
    seen: dict[str, list[int]] = defaultdict(list)
    for row in visible_rows(world, table):
        seen[row["id"]].append(row["val"])
    problems = []
    for key in sorted(set(seen) | set(expected)):
        values = seen.get(key, [])
        if key not in expected:
            problems.append(f"row {key}: visible {values}, but no committed write has it")
        elif len(values) != 1:
            problems.append(f"row {key}: visible {len(values)} times {values}, expected once with val {expected[key]}")
        elif values[0] != expected[key]:
            problems.append(f"row {key}: visible with val {values[0]}, its last committed write has {expected[key]}")
    return problems


def check_metadata_table(world: World, uri: str, table: str) -> list[str]:
    """The MDT ``files`` partition against the committed base files in storage."""
    storage = Storage(uri)
    listed: dict[str, set[str]] = defaultdict(set)
    try:
        records = read_partition(storage, "files", lambda key: True)
    except Exception as exc:  # noqa: BLE001 - an unreadable metadata table is the finding
        return [f"metadata table: files partition unreadable: {type(exc).__name__}: {exc}"]
    for key, versions in records.items():
        if key == "__all_partitions__":
            continue
        for record in versions:
            for name, info in (record.get("filesystemMetadata") or {}).items():
                if info.get("isDeleted"):
                    listed[key].discard(name)
                else:
                    listed[key].add(name)
    on_storage = committed_base_files(world, table)
    problems = []
    for partition in sorted(set(listed) | set(on_storage)):
        extra = listed.get(partition, set()) - on_storage.get(partition, set())
        missing = on_storage.get(partition, set()) - listed.get(partition, set())
        if extra:
            problems.append(f"metadata table lists files of {partition} that are not committed in storage: {sorted(extra)}")
        if missing:
            problems.append(f"metadata table misses committed files of {partition}: {sorted(missing)}")
    return problems

