"""``hudi-cluster show``: a table's layout, as JSON (a stable contract) or a readable summary."""

from __future__ import annotations

from collections import Counter

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


def _size_bucket(size: int) -> str:
    return next((label for limit, label in _BUCKETS if size < limit), ">= 512 MiB")


def human_size(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"


def table_summary(table: HudiTable, *, archived: bool = False) -> str:
    view = table.view()
    slices = view.latest_file_slices()
    config = table.config
    lines = [
        f"table {config.name} ({config.table_type}, version {config.version}) at {table.storage.base_uri}",
        f"{len(slices)} file group(s), {sum(bool(s.log_files) for s in slices)} with log files, "
        f"{human_size(sum(s.total_size for s in slices))} in latest slices",
    ]
    per_partition = Counter(s.partition for s in slices)
    bytes_per_partition: Counter[str] = Counter()
    for s in slices:
        bytes_per_partition[s.partition] += s.total_size
    lines.append("partitions:")
    for partition in sorted(per_partition):
        lines.append(f"  {partition or '(none)':<30} {per_partition[partition]:>6} files  {human_size(bytes_per_partition[partition]):>10}")
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
