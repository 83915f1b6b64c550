"""``hudi-cluster show``: a table's layout, as JSON (a stable contract) or a readable summary."""

from __future__ import annotations

from collections import Counter

from .byte_units import human_bytes
from .plan.avro_plan import read_plan
from .run_metrics import input_file_sizes
from .table import HudiTable
from .table.archive import load_archived_timeline

_BUCKETS = ((1 << 20, "< 1 MiB"), (16 << 20, "1-16 MiB"), (128 << 20, "16-128 MiB"), (512 << 20, "128-512 MiB"))


def table_layout(table: HudiTable, *, archived: bool = False) -> dict:
    """The JSON contract of ``show --json``; ``archived`` adds ``archived_completed_clustering`` (and only then
    reads the archive, which can be much larger than the active timeline)."""
    view = table.view()
    timeline = table.timeline
    layout = {
        "table_name": table.config.name,
        "table_type": table.config.table_type,
        "table_version": table.config.version,
        "file_slices": [s.to_json() for s in view.latest_file_slices()],
        "pending_clustering": [i.time for i in timeline.pending_clustering],
        "completed_clustering": [i.time for i in timeline.completed_clustering],
    }
    if archived:
        layout["archived_completed_clustering"] = archived_completed_clustering(table)
    return layout


def archived_completed_clustering(table: HudiTable) -> list[str]:
    """Requested times of the completed clusterings archival moved out of the active timeline, oldest first."""
    archive = load_archived_timeline(table.storage, table.config)
    # an archival that stopped between writing the archive and deleting the active files leaves an instant in
    # both; it is listed once, under completed_clustering
    active = {i.time for i in table.timeline.instants}
    return [i.time for i in archive.completed_clustering if i.time not in active]


def clustering_instants(table: HudiTable) -> list[dict]:
    """``show --clustering``: every clustering instant, oldest first, with its state, its plan's groups and
    partitions, and its bytes: written (from the commit's write stats) once completed, else the input files'
    bytes still to rewrite. Completed ones archival moved out of the active timeline are read from the archive."""
    timeline = table.timeline
    rows = []
    for instant in timeline.pending_clustering:
        plan = timeline.clustering_plan(instant.time) or {}
        rows.append(_instant_row(instant.time, instant.state.name.lower(), False, plan, None, _input_bytes(table, instant.time, plan)))
    for instant in timeline.completed_clustering:
        written = _bytes_written(timeline.commit_metadata(instant))
        rows.append(_instant_row(instant.time, "completed", False, timeline.clustering_plan(instant.time) or {}, written))
    active = {i.time for i in timeline.instants}
    archive = load_archived_timeline(table.storage, table.config)
    for archived in archive.completed_clustering:
        if archived.time not in active:
            plan = archive.clustering_plan(archived) or {}
            rows.append(_instant_row(archived.time, "completed", True, plan, _bytes_written(archive.commit_metadata(archived))))
    return sorted(rows, key=lambda row: row["instant_time"])


def _instant_row(time: str, state: str, archived: bool, plan: dict, written: int | None, pending: int | None = None) -> dict:
    groups = (plan.get("clusteringPlan") or {}).get("inputGroups") or []
    partitions = {s.get("partitionPath") or "" for g in groups for s in g.get("slices") or []}
    return {"instant_time": time, "state": state, "archived": archived, "groups": len(groups) if plan else None,
            "partitions": len(partitions) if plan else None, "bytes_written": written, "input_bytes": pending}  # fmt: skip


def _bytes_written(metadata: dict) -> int:
    return sum(int(stat.get("totalWriteBytes") or stat.get("fileSizeInBytes") or 0)
               for stats in (metadata.get("partitionToWriteStats") or {}).values() for stat in stats)  # fmt: skip


def _input_bytes(table: HudiTable, time: str, plan: dict) -> int | None:
    if not plan:
        return None
    stored = read_plan(table.storage, time, plan, source=f"the plan of {time}")
    return sum(input_file_sizes(table, stored))


def clustering_summary(table: HudiTable) -> str:
    """The text of ``show --clustering``: a line per clustering instant."""
    rows = clustering_instants(table)
    lines = [f"clustering instants of {table.config.name}: {len(rows) or 'none'}"]
    for row in rows:
        where = " (archived)" if row["archived"] else ""
        size = (f"{human_bytes(row['bytes_written'])} written" if row["bytes_written"] is not None
                else f"{human_bytes(row['input_bytes'] or 0)} to rewrite")  # fmt: skip
        plan = "plan not kept" if row["groups"] is None else f"{row['groups']} group(s), {row['partitions']} partition(s)"
        lines.append(f"  {row['instant_time']}  {row['state'] + where:<20} {plan}, {size}")
    return "\n".join(lines)


def _size_bucket(size: int) -> str:
    return next((label for limit, label in _BUCKETS if size < limit), ">= 512 MiB")


def table_summary(table: HudiTable, *, archived: bool = False) -> str:
    view = table.view()
    slices = view.latest_file_slices()
    config = table.config
    lines = [
        f"table {config.name} ({config.table_type}, version {config.version}) at {table.storage.base_uri}",
        f"{len(slices)} file group(s), {sum(bool(s.log_files) for s in slices)} with log files, "
        f"{human_bytes(sum(s.total_size for s in slices))} in latest slices",
    ]
    per_partition = Counter(s.partition for s in slices)
    bytes_per_partition: Counter[str] = Counter()
    for s in slices:
        bytes_per_partition[s.partition] += s.total_size
    lines.append("partitions:")
    for partition in sorted(per_partition):
        lines.append(f"  {partition or '(none)':<30} {per_partition[partition]:>6} files  {human_bytes(bytes_per_partition[partition]):>10}")
    histogram = Counter(_size_bucket(s.base_file_size) for s in slices if s.base_file)
    if histogram:
        lines.append("base file sizes:")
        for _, label in (*_BUCKETS, (0, ">= 512 MiB")):
            if histogram.get(label):
                lines.append(f"  {label:<12} {histogram[label]:>6}")
    pending = table.timeline.pending()
    lines.append("pending table services: " + (", ".join(f"{i.time} {i.action} ({i.state.name.lower()})" for i in pending) or "none"))
    done = table.timeline.completed_clustering
    lines.append("completed clustering: " + (", ".join(i.time for i in done) or "none"))
    if archived:
        lines.append("archived completed clustering: " + (", ".join(archived_completed_clustering(table)) or "none"))
    return "\n".join(lines)
