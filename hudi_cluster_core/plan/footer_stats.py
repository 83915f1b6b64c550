"""Slice statistics from parquet footers only (no data pages read): what key-range and curve groupers need.

Footers are read only when a strategy asks (``context.slice_stats``): size-based plans read none, the sizes come
from the listing. The first slice a strategy asks about has every slice it may ask about next (those offered to
its hook, :meth:`FooterStats.expect`) read with it, concurrently, on a pool of threads: a footer is a request or
two to an object store, waited for, so reading them one after another would cost a round trip each. Each footer is
read at most once per plan.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

import pyarrow.parquet as pq

from ..io.storage import Storage, in_parallel
from ..table import FileSlice
from .model import SliceStats

FOOTER_THREADS = 16  # footers read at once: each is a small ranged read, so the pool waits on the store, not a core


def read_footer_stats(storage: Storage, file_slice: FileSlice) -> SliceStats:
    """Row count, record-key range and per-column (min, max) of ``file_slice``'s base file, from its footer."""
    if file_slice.base_file is None:
        return SliceStats()
    path = storage.join(file_slice.partition, file_slice.base_file.name)
    with storage.open_input_file(path) as handle:
        metadata = pq.ParquetFile(handle).metadata
    kv = {k.decode(): v.decode() for k, v in (metadata.metadata or {}).items()}
    columns: dict[str, tuple] = {}
    for group_index in range(metadata.num_row_groups):
        group = metadata.row_group(group_index)
        for column_index in range(group.num_columns):
            chunk = group.column(column_index)
            stats = chunk.statistics
            if stats is None or not stats.has_min_max or "." in chunk.path_in_schema:
                continue
            name = chunk.path_in_schema
            low, high = columns.get(name, (stats.min, stats.max))
            columns[name] = (min(low, stats.min), max(high, stats.max))
    return SliceStats(
        metadata.num_rows, kv.get("hoodie_min_record_key"), kv.get("hoodie_max_record_key"), columns,
    )  # fmt: skip


class FooterStats:
    """``stats(slice) -> SliceStats``, cached; a slice not read yet is read together with every slice
    :meth:`expect` named and not read yet, ``threads`` at a time."""

    def __init__(self, storage: Storage, threads: int | None = None):
        self.storage, self.threads = storage, max(1, threads or FOOTER_THREADS)
        self._read: dict[FileSlice, SliceStats] = {}
        self._expected: list[FileSlice] = []
        self._guard = threading.Lock()

    def expect(self, slices: Iterable[FileSlice]) -> None:
        """The slices a strategy may ask about next (those offered to its hook): read together with the first
        one it asks about."""
        with self._guard:
            self._expected = [s for s in slices if s.base_file is not None]

    def __call__(self, file_slice: FileSlice) -> SliceStats:
        with self._guard:
            found = self._read.get(file_slice)
            if found is not None:
                return found
            batch = [file_slice] + [s for s in self._expected if s not in self._read and s != file_slice]
            self._expected = []
            self._read.update(self._read_all(batch))
            return self._read[file_slice]

    def read_all(self, slices: Iterable[FileSlice]) -> dict[FileSlice, SliceStats]:
        """The stats of ``slices``, reading the ones not read yet concurrently."""
        wanted = list(dict.fromkeys(slices))
        with self._guard:
            self._read.update(self._read_all([s for s in wanted if s not in self._read]))
            return {s: self._read[s] for s in wanted}

    def _read_all(self, batch: list[FileSlice]) -> dict[FileSlice, SliceStats]:
        return dict(zip(batch, in_parallel(lambda s: read_footer_stats(self.storage, s), batch, self.threads)))


def footer_stats_provider(storage: Storage, threads: int | None = None) -> FooterStats:
    """What ``context.slice_stats`` reads in production (see :class:`FooterStats`)."""
    return FooterStats(storage, threads)
