"""Timeline archival as Apache Hudi 1.x does it on a version 9 table (LSM timeline), for the simulation's archiver.

Under the table lock, when more than ``MAX_COMMITS`` commits (writes and replacecommits) completed on the active
timeline, the oldest instants move to the LSM history, up to the latest ``MIN_COMMITS`` commits, which stay with
everything after them (rollbacks older than those go too). Like Hudi's ``TimelineArchiver`` it never archives:

* at or beyond the first pending instant (a pending instant and everything after it stay active);
* a clustering's ``replacecommit`` whose replaced files are still in storage (Hudi keeps it until the cleaner
  removed them, so that readers still skip those files), nor anything after it.

(Hudi also stops at the metadata table's last compaction; the simulation's metadata table is never compacted, so
that rule would archive nothing here: it is left out, so that instants do vanish under the other actors.)

The history is written first: a parquet file of ``HoodieLSMTimelineInstant`` rows, a new ``manifest_N`` naming
every live file, then ``_version_``; only then do the archived instants' files leave the active timeline, each
instant's requested and inflight files before its completed file, so that a reader never takes a completed
instant for a pending one.
"""

from __future__ import annotations

import io
import json
import re

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_cluster_core.avro import decode_commit_metadata
from hudi_cluster_core.io.storage import Storage
from hudi_cluster_core.table.ownership import timeline_lock

MAX_COMMITS, MIN_COMMITS = 4, 2  # hoodie.keep.max.commits, hoodie.keep.min.commits (commits, not all instants)
WRITE_ACTIONS = ("commit", "deltacommit", "replacecommit")
COMPLETED = re.compile(r"^(\d{17})_(\d{17})\.(\w+)$")
PENDING = re.compile(r"^(\d{17})\.(?:(\w+)\.)?(requested|inflight)$")


def archive(uri: str) -> list[str]:
    """Archive what Hudi's rules allow; returns the archived instant times."""
    storage = Storage(uri)
    timeline_dir = storage.join(".hoodie", "timeline")
    history = storage.join(".hoodie", "timeline", "history")
    with timeline_lock(storage, 60000):
        names = sorted(e.name for e in storage.list(timeline_dir) if not e.is_dir)
        completed = {m.group(1): (m.group(2), m.group(3), n) for n in names if (m := COMPLETED.match(n))}
        pending = sorted(m.group(1) for n in names if (m := PENDING.match(n)) and m.group(1) not in completed)
        writes = sorted(t for t, (_, action, _) in completed.items() if action in WRITE_ACTIONS)
        if len(writes) <= MAX_COMMITS:
            return []
        kept_from = writes[-MIN_COMMITS]  # the latest commits stay; rollbacks and the like go with older ones
        candidates = sorted(t for t in completed if t < kept_from)
        chosen = []
        for time in candidates:
            if pending and time >= pending[0]:
                break
            completion, action, name = completed[time]
            if action == "replacecommit" and _replaced_files_remain(storage, timeline_dir, name):
                break
            chosen.append(time)
        if not chosen:
            return []
        rows = []
        for time in chosen:
            completion, action, name = completed[time]
            plan = f"{time}.{'clustering' if action == 'replacecommit' else action}.requested"
            rows.append({"instantTime": time, "completionTime": completion, "action": action,
                         "metadata": storage.read_bytes(f"{timeline_dir}/{name}"),
                         "plan": storage.read_bytes(f"{timeline_dir}/{plan}") if plan in names else None,
                         "version": 1})  # fmt: skip
        _write_history(storage, history, rows)
        for time in chosen:
            _, _, name = completed[time]
            for other in names:
                if other.startswith(time) and PENDING.match(other):
                    storage.delete_file(f"{timeline_dir}/{other}")
            storage.delete_file(f"{timeline_dir}/{name}")
    return chosen


def _replaced_files_remain(storage: Storage, timeline_dir: str, name: str) -> bool:
    metadata = decode_commit_metadata(storage.read_bytes(f"{timeline_dir}/{name}"), layout_version=2, source=name)
    for partition, file_ids in (metadata.get("partitionToReplaceFileIds") or {}).items():
        names = [e.name for e in storage.list(storage.join(partition))]
        present = {n.split("_")[0] for n in names if n.endswith(".parquet")}
        # and the log files of a MERGE_ON_READ table (``.{fileId}_{instant}.log.{version}_{token}``)
        present |= {n[1:].split("_")[0] for n in names if n.startswith(".") and ".log." in n}
        if present & set(file_ids):
            return True
    return False


def _write_history(storage: Storage, history: str, rows: list[dict]) -> None:
    version_path = f"{history}/_version_"
    version = int(storage.read_bytes(version_path).decode()) if storage.exists(version_path) else 0
    files = []
    if version:
        files = json.loads(storage.read_bytes(f"{history}/manifest_{version}"))["files"]
    schema = pa.schema([("instantTime", pa.string()), ("completionTime", pa.string()), ("action", pa.string()),
                        ("metadata", pa.binary()), ("plan", pa.binary()), ("version", pa.int32())])  # fmt: skip
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema), sink)
    name = f"{rows[0]['instantTime']}_{rows[-1]['instantTime']}_0.parquet"
    storage.write_atomic(f"{history}/{name}", sink.getvalue())
    files.append({"fileName": name, "fileLen": len(sink.getvalue())})
    storage.write_atomic(f"{history}/manifest_{version + 1}", json.dumps({"files": files}).encode())
    storage.write_atomic(version_path, str(version + 1).encode())
