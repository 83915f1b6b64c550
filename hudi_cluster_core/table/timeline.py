"""The active timeline: instants and their states, for layout 1 (v6) and layout 2 (v8/v9).

Layout 1 keeps instant files directly in ``.hoodie/`` and names a completed instant ``T.action``; layout 2 keeps
them in ``.hoodie/timeline/`` and names a completed instant ``T_C.action`` (C = completion time). A clustering is
``replacecommit`` in all three states on v6, and ``clustering.requested/.inflight`` then ``replacecommit`` on v8+.
"""

from __future__ import annotations

import datetime as dt
import logging
import re

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from functools import cached_property
from typing import TypeVar

from .. import clock
from ..avro import decode_avro, decode_commit_metadata
from ..errors import TableError, TimelineChanged
from ..io.storage import Storage
from .properties import TableConfig

ACTIONS = (
    "commit", "deltacommit", "clean", "rollback", "savepoint", "replacecommit", "clustering",
    "compaction", "logcompaction", "restore", "indexing", "schemacommit",
)  # fmt: skip
WRITE_ACTIONS = ("commit", "deltacommit", "replacecommit")
log = logging.getLogger(__name__)
# how often a write or a clustering reads the table again when a timeline file it listed vanished under it (Hudi's
# archival or a rollback by another writer, both legitimate while writers run beside each other)
TIMELINE_ATTEMPTS = 3
_T = TypeVar("_T")
_INSTANT_RE = re.compile(r"^(\d{14,17})(?:_(\d{14,17}))?\.([a-z]+)(?:\.(requested|inflight))?$")


class State(IntEnum):
    REQUESTED = 0
    INFLIGHT = 1
    COMPLETED = 2


@dataclass(frozen=True)
class Instant:
    time: str
    action: str  # the action of the file in the latest state (a completed compaction is "commit")
    state: State
    completion_time: str | None = None
    file_name: str = ""

    @property
    def is_completed(self) -> bool:
        return self.state is State.COMPLETED


def parse_instant_file(name: str) -> Instant | None:
    """An instant from a timeline file name, or None for anything that is not one."""
    match = _INSTANT_RE.match(name)
    if not match:
        return None
    requested, completed, action, suffix = match.groups()
    if action == "inflight" and suffix is None:  # ``T.inflight`` is a COW commit in flight
        return Instant(requested, "commit", State.INFLIGHT, None, name)
    if action not in ACTIONS:
        return None
    if suffix is None:
        return Instant(requested, action, State.COMPLETED, completed, name)
    if completed:
        return None
    return Instant(requested, action, State[suffix.upper()], None, name)


class Timeline:
    """All instants of the active timeline; one :class:`Instant` per requested time, in its latest state."""

    def __init__(self, storage: Storage, config: TableConfig, files: list[Instant]):
        self.storage = storage
        self.config = config
        self.directory = storage.join(".hoodie", config.timeline_dir)
        self.files = sorted(files, key=lambda i: (i.time, i.state))
        latest: dict[str, Instant] = {}
        for instant in self.files:
            latest[instant.time] = instant
        self.instants: tuple[Instant, ...] = tuple(sorted(latest.values(), key=lambda i: i.time))

    @property
    def layout_version(self) -> int:
        return self.config.timeline_layout_version

    def files_of(self, instant_time: str) -> list[Instant]:
        return [f for f in self.files if f.time == instant_time]

    def get(self, instant_time: str) -> Instant | None:
        return next((i for i in self.instants if i.time == instant_time), None)

    def completed(self, actions=WRITE_ACTIONS) -> list[Instant]:
        return [i for i in self.instants if i.is_completed and i.action in actions]

    def pending(self) -> list[Instant]:
        return [i for i in self.instants if not i.is_completed]

    def read(self, instant: Instant, *, missing_ok: bool = False) -> bytes:
        """The instant file's bytes. ``missing_ok``: a file gone since the listing (a writer or a clustering
        rolled back beside us) reads as empty, for readers to whom that instant no longer matters."""
        path = posix_join(self.directory, instant.file_name)
        try:
            return self.storage.read_bytes(path)
        except FileNotFoundError:
            if missing_ok:
                return b""
            raise TimelineChanged(f"timeline file {path} cannot be read: it no longer exists (archived or rolled "
                                  "back since the timeline was listed)") from None
        except OSError as exc:
            raise TableError(f"timeline file {path} cannot be read: {exc}") from None

    def path_of(self, file_name: str) -> str:
        return posix_join(self.directory, file_name)

    def commit_metadata(self, instant: Instant, data: bytes | None = None) -> dict:
        """The instant file's commit metadata; ``data`` is its bytes when the caller has read them already."""
        return decode_commit_metadata(
            self.read(instant) if data is None else data, layout_version=self.layout_version,
            source=self.path_of(instant.file_name),
        )

    def requested_file(self, instant_time: str) -> Instant | None:
        return next((f for f in self.files_of(instant_time) if f.state is State.REQUESTED), None)

    def clustering_plan(self, instant_time: str) -> dict | None:
        """The HoodieRequestedReplaceMetadata of a clustering instant, or None if it is not one."""
        requested = self.requested_file(instant_time)
        if requested is None or requested.action not in ("clustering", "replacecommit"):
            return None
        data = self.read(requested, missing_ok=True)  # gone: rolled back since the listing, no longer pending
        if not data:
            return None
        record = decode_avro(data, source=self.path_of(requested.file_name))
        if record.get("operationType") != "CLUSTER" or not record.get("clusteringPlan"):
            return None  # a v6 replacecommit may be insert_overwrite, not clustering
        return record

    @cached_property
    def pending_clustering(self) -> list[Instant]:
        return [i for i in self.pending() if i.action in ("clustering", "replacecommit") and self.clustering_plan(i.time)]

    @cached_property
    def completed_clustering(self) -> list[Instant]:
        return [
            i for i in self.completed(("replacecommit",))
            if self.commit_metadata(i).get("operationType") == "CLUSTER"
        ]  # fmt: skip

    def pending_compaction(self) -> list[Instant]:
        return [i for i in self.pending() if i.action in ("compaction", "logcompaction")]

    def max_timestamp(self) -> str:
        stamps = [f.time for f in self.files] + [f.completion_time for f in self.files if f.completion_time]
        return max(stamps, default="0")

    def new_instant_time(self) -> str:
        """A requested time strictly later than every timestamp on the timeline and every time this process
        issued before, in the table's time zone (Hudi's generator keeps the same in-process rule). Unique
        across processes only together with the timeline lock (``ownership.timeline_lock``)."""
        zone = dt.timezone.utc if self.config.timeline_timezone == "UTC" else None
        now = clock.now(zone).strftime("%Y%m%d%H%M%S%f")[:17]
        latest = max(self.max_timestamp().ljust(17, "0"), _LAST_ISSUED.get(self.directory, "0"))
        if now <= latest:
            now = _plus_one_ms(latest)
        _LAST_ISSUED[self.directory] = now
        return now

    def pending_rollbacks(self) -> list[Instant]:
        return [i for i in self.pending() if i.action == "rollback"]

    # file names of a clustering instant, by table layout
    def clustering_file_name(self, instant_time: str, state: State, completion_time: str | None = None) -> str:
        if state is State.COMPLETED:
            if self.layout_version >= 2:
                return f"{instant_time}_{completion_time}.replacecommit"
            return f"{instant_time}.replacecommit"
        action = "clustering" if self.layout_version >= 2 else "replacecommit"
        return f"{instant_time}.{action}.{state.name.lower()}"

    def completion_time_after(self, instant_time: str) -> str:
        return max(self.new_instant_time(), _plus_one_ms(instant_time))


_LAST_ISSUED: dict[str, str] = {}  # timeline directory -> the last time this process issued for it


def _plus_one_ms(stamp: str) -> str:
    padded = stamp.ljust(17, "0")
    later = dt.datetime.strptime(padded[:14], "%Y%m%d%H%M%S") + dt.timedelta(milliseconds=int(padded[14:17]) + 1)
    return later.strftime("%Y%m%d%H%M%S%f")[:17]


def posix_join(directory: str, name: str) -> str:
    return f"{directory.rstrip('/')}/{name}"


def load_timeline(storage: Storage, config: TableConfig) -> Timeline:
    directory = storage.join(".hoodie", config.timeline_dir)
    files = []
    for entry in storage.list(directory):
        if entry.is_dir or entry.name.startswith(".") or entry.name.endswith(".crc"):
            continue
        instant = parse_instant_file(entry.name)
        if instant is not None:
            files.append(instant)
    return Timeline(storage, config, files)


def retry_when_timeline_changes(attempt: Callable[[], _T], what: str, attempts: int = TIMELINE_ATTEMPTS) -> _T:
    """``attempt()`` again, from a fresh read of the table, while it raises :class:`TimelineChanged`; a failed
    attempt must leave nothing behind (ours roll their own instant back before they raise)."""
    for number in range(1, attempts + 1):
        try:
            return attempt()
        except TimelineChanged as changed:
            if number == attempts:
                raise
            log.info("%s: %s; reading the table again (attempt %d of %d)", what, changed, number + 1, attempts)
    raise AssertionError("unreachable: the last attempt returns or raises")
