"""Rollbacks that began and did not complete, read from their plans (``T.rollback.requested``, a
``HoodieRollbackPlan``): which instant each one undoes. A table-level read: the clustering's rollback
(``run.rollback``) resumes them, and our writers must not commit files into an instant whose rollback began."""

from __future__ import annotations

from ..avro import decode_avro
from . import HudiTable, Instant


def rollback_plan(table: HudiTable, rollback: Instant) -> dict:
    """The plan of ``rollback`` ({} when its requested file is gone)."""
    requested = table.timeline.requested_file(rollback.time)
    if requested is None:
        return {}
    return decode_avro(table.timeline.read(requested), source=table.timeline.path_of(requested.file_name))


def pending_rollback_of(table: HudiTable, instant_time: str) -> Instant | None:
    """A rollback of ``instant_time`` that started and did not complete."""
    for rollback in table.timeline.pending_rollbacks():
        target = (rollback_plan(table, rollback).get("instantToRollback") or {}).get("commitTime")
        if target == instant_time:
            return rollback
    return None
