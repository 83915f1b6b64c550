"""What a plan needs of base files' parquet footers (no data pages read): slice statistics (what key-range and
curve groupers need) and the sizes the output estimate works from (plan/estimate.py).

Footers are read only when a strategy asks (``context.slice_stats``) or a plan's output is estimated: size-based
plans read none until their groups are estimated, the sizes come from the listing. The first slice a strategy
asks about has every slice it may ask about next (those offered to its hook, :meth:`FooterStats.expect`) read
with it, concurrently on an object store, on a pool of threads: a footer is a request or two, waited for, so
reading them one after another would cost a round trip each (on local files, one after another:
``Storage.request_threads``). Each footer is read at most once per table object
(:func:`footer_stats_provider`): the strategy's statistics, the schedule's estimate, a dry run's prediction and
the files-per-query figures all read what the first of them read, in one ranged read of the file's end where the
listing gave its size (opening the file would ask the store for its size first: a second round trip per footer).
"""

from __future__ import annotations

import datetime as dt
import io
import json
import threading
import weakref
import zoneinfo
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from ..hashing.bloom_filter import BLOOM_FILTER_FOOTER_KEY
from ..io.storage import Storage, in_parallel
from ..table import FileSlice
from .model import SliceStats

FOOTER_THREADS = 16  # footers read at once: each is a small ranged read, so the pool waits on the store, not a core
# bytes of a file's end read in one request: what Arrow's parquet reader asks for first too, so a footer of up to a
# few hundred columns' chunks is in it; a larger one costs one more ranged read
FOOTER_READ = 64 << 10
FOOTER_READ_MAX = 4 << 20  # a wider footer than this is read in two requests
_MAGIC = b"PAR1"


_EPOCH = dt.datetime(1970, 1, 1)
_UTC = zoneinfo.ZoneInfo("UTC")  # the tzinfo pyarrow gives a UTC-adjusted timestamp's statistics


def _timestamp_unit(column: pq.ColumnSchema) -> tuple[str, dt.tzinfo | None] | None:
    """(unit, tzinfo) of a millisecond or microsecond timestamp column, else None. Read from the schema: once per
    column per file (a chunk's statistics would build the same logical type once per row group)."""
    logical = column.logical_type
    if logical.type != "TIMESTAMP":
        return None
    spec = json.loads(logical.to_json())
    unit = spec.get("timeUnit")
    if unit not in ("milliseconds", "microseconds"):
        return None
    return unit, (_UTC if spec.get("isAdjustedToUTC") else None)


def _min_max(stats: pq.Statistics, timestamp: tuple[str, dt.tzinfo | None] | None) -> tuple:
    """``(stats.min, stats.max)``; a millisecond or microsecond timestamp's built here from the raw values, as
    pyarrow builds them (its conversion imports pandas the first time: most of a second in a planner's process)."""
    if timestamp is not None:
        unit, tz = timestamp
        try:
            return tuple((_EPOCH + dt.timedelta(**{unit: raw})).replace(tzinfo=tz) for raw in (stats.min_raw, stats.max_raw))
        except OverflowError:  # beyond datetime's years: pyarrow's own conversion says what it makes of it
            pass
    return stats.min, stats.max


_Column = tuple[int, str, "tuple[str, dt.tzinfo | None] | None"]  # index, path, timestamp unit (see _timestamp_unit)


def _stats_columns(schema: pq.ParquetSchema) -> list[_Column]:
    """The columns whose statistics are kept: top-level ones only (a nested column's leaf is no column a strategy
    can name)."""
    columns = [schema.column(index) for index in range(len(schema))]
    return [(index, column.path, _timestamp_unit(column)) for index, column in enumerate(columns) if "." not in column.path]


class _FileEnd(io.RawIOBase):
    """A parquet file of known size as pyarrow reads it, its last bytes read already; a read before them (a footer
    larger than :data:`FOOTER_READ`) is one more ranged read."""

    def __init__(self, storage: Storage, path: str, size: int, tail: bytes):
        super().__init__()
        self.storage, self.path, self.size, self.tail = storage, path, size, tail
        self.tail_start, self.position = size - len(tail), 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        origin = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = max(0, origin + offset)
        return self.position

    def read(self, size: int | None = -1) -> bytes:
        start = min(self.position, self.size)
        end = self.size if size is None or size < 0 else min(self.size, start + size)
        before = min(end, self.tail_start) - start  # bytes to read that the tail does not hold
        data = self.storage.read_range(self.path, start, before) if before > 0 else b""
        data += self.tail[max(0, start - self.tail_start) : max(0, end - self.tail_start)]
        self.position = end
        return data


class FooterReads:
    """How much of a file's end to read first: :data:`FOOTER_READ`, or the largest footer met so far in this plan
    (up to :data:`FOOTER_READ_MAX`). A table's files have footers of much the same size (Hudi's writers put a bloom
    filter of a fixed size in each, some hundreds of KiB), so after the first few each footer is one request."""

    def __init__(self) -> None:
        self.first = FOOTER_READ
        self._schemas: list[tuple[pq.ParquetSchema, list[_Column]]] = []

    def columns(self, schema: pq.ParquetSchema) -> list[_Column]:
        """The columns of ``schema`` statistics are kept for, worked out once per schema met (a table's files share
        one, or a few after schema changes): comparing schemas costs ~1% of reading them column by column."""
        for known, columns in self._schemas:
            if schema.equals(known):
                return columns
        columns = _stats_columns(schema)
        self._schemas = [(schema, columns)] + self._schemas[:7]  # replaced whole: readers on other threads see either
        return columns

    def met(self, footer_bytes: int) -> None:
        if footer_bytes > self.first:  # a racing smaller value is harmless: the next larger footer raises it again
            self.first = min(footer_bytes, FOOTER_READ_MAX)


def read_footer(storage: Storage, path: str, size: int, reads: FooterReads | None = None) -> pq.FileMetaData:
    """The footer of the parquet file at ``path``, ``size`` bytes long as listed: one ranged read of its end (two
    for a footer larger than ``reads.first``). A size that is not the file's (no parquet magic where its end should
    be) or unknown (0) falls back to opening the file."""
    reads = reads or FooterReads()
    if size >= 2 * len(_MAGIC) + 4:
        start = max(0, size - reads.first)
        tail = storage.read_range(path, start, size - start)
        if len(tail) == size - start and tail.endswith(_MAGIC):
            metadata = pq.read_metadata(pa.PythonFile(_FileEnd(storage, path, size, tail), mode="r"))
            reads.met(metadata.serialized_size + 2 * len(_MAGIC))  # the footer, its length and the magic
            return metadata
    with storage.open_input_file(path) as handle:
        return pq.ParquetFile(handle).metadata


@dataclass(frozen=True)
class BaseFileFacts:
    """A base file's size and footer facts: rows, column chunk bytes compressed and uncompressed, and its parquet
    metadata's bytes (the footer less Hudi's bloom filter text). What the output estimate works from."""

    size: int
    rows: int
    data_bytes: int
    uncompressed_bytes: int
    metadata_bytes: int


@dataclass(frozen=True)
class FileFooter:
    """All a plan keeps of one base file's footer (the footer itself, bloom filter text and all, is not kept)."""

    stats: SliceStats
    facts: BaseFileFacts


def _facts(metadata: pq.FileMetaData, size: int) -> BaseFileFacts:
    data = uncompressed = 0
    for g in range(metadata.num_row_groups):
        row_group = metadata.row_group(g)
        for c in range(row_group.num_columns):
            chunk = row_group.column(c)
            data += chunk.total_compressed_size
            uncompressed += chunk.total_uncompressed_size
    bloom = len((metadata.metadata or {}).get(BLOOM_FILTER_FOOTER_KEY.encode(), b""))
    return BaseFileFacts(size, metadata.num_rows, data, uncompressed, max(0, size - data - bloom - 4))


def read_file_footer(storage: Storage, path: str, size: int, reads: FooterReads | None = None) -> FileFooter:
    """The statistics and estimate facts of the base file at ``path`` (``size`` bytes as listed), from one read of
    its footer (:func:`read_footer`)."""
    reads = reads or FooterReads()
    metadata = read_footer(storage, path, size, reads)
    return FileFooter(_slice_stats(metadata, reads), _facts(metadata, size))


def read_footer_stats(storage: Storage, file_slice: FileSlice, reads: FooterReads | None = None) -> SliceStats:
    """Row count, record-key range and per-column (min, max) of ``file_slice``'s base file, from its footer."""
    if file_slice.base_file is None:
        return SliceStats()
    path = storage.join(file_slice.partition, file_slice.base_file.name)
    return read_file_footer(storage, path, file_slice.base_file.size, reads).stats


def _slice_stats(metadata: pq.FileMetaData, reads: FooterReads) -> SliceStats:
    kv = {k.decode(): v.decode() for k, v in (metadata.metadata or {}).items()}
    columns: dict[str, tuple] = {}
    wanted = reads.columns(metadata.schema)
    for group_index in range(metadata.num_row_groups):
        group = metadata.row_group(group_index)
        for index, name, timestamp in wanted:
            stats = group.column(index).statistics
            if stats is None or not stats.has_min_max:
                continue
            low, high = _min_max(stats, timestamp)  # each a conversion to a Python value: once
            seen = columns.get(name)
            columns[name] = (low, high) if seen is None else (min(seen[0], low), max(seen[1], high))
    return SliceStats(
        metadata.num_rows, kv.get("hoodie_min_record_key"), kv.get("hoodie_max_record_key"), columns,
    )  # fmt: skip


class FooterStats:
    """``stats(slice) -> SliceStats``, cached by base file path with the file's :class:`BaseFileFacts`
    (:meth:`facts`); a slice not read yet is read together with every slice :meth:`expect` named and not read yet,
    ``threads`` at a time."""

    def __init__(self, storage: Storage, threads: int | None = None):
        self.storage, self.threads = storage, max(1, threads or FOOTER_THREADS)
        self.reads = FooterReads()
        self._read: dict[str, FileFooter] = {}  # base file path (as Storage.join gives it) -> its footer's facts
        self._expected: list[FileSlice] = []
        self._guard = threading.Lock()

    def _path(self, file_slice: FileSlice) -> str:
        assert file_slice.base_file is not None
        return self.storage.join(file_slice.partition, file_slice.base_file.name)

    def expect(self, slices: Iterable[FileSlice]) -> None:
        """The slices a strategy may ask about next (those offered to its hook): read together with the first
        one it asks about."""
        with self._guard:
            self._expected = [s for s in slices if s.base_file is not None]

    def __call__(self, file_slice: FileSlice) -> SliceStats:
        if file_slice.base_file is None:
            return SliceStats()
        path = self._path(file_slice)
        with self._guard:
            found = self._read.get(path)
            if found is not None:
                return found.stats
            batch = {path: file_slice.base_file.size}
            for s in self._expected:
                batch.setdefault(self._path(s), s.base_file_size)
            self._expected = []
            self._read_missing(batch)
            return self._read[path].stats

    def read_all(self, slices: Iterable[FileSlice]) -> dict[FileSlice, SliceStats]:
        """The stats of ``slices``, reading the ones not read yet concurrently."""
        wanted = list(dict.fromkeys(slices))
        with self._guard:
            self._read_missing({self._path(s): s.base_file_size for s in wanted if s.base_file is not None})
            return {s: self._read[self._path(s)].stats if s.base_file is not None else SliceStats() for s in wanted}

    def facts(self, files: Sequence[tuple[str, int | None]]) -> list[BaseFileFacts]:
        """The :class:`BaseFileFacts` of base files given as (path, size as listed or None: then asked of storage),
        reading the ones not read yet concurrently."""
        with self._guard:
            self._read_missing(dict(files))
            return [self._read[path].facts for path, _ in files]

    def _read_missing(self, files: Mapping[str, int | None]) -> None:
        """Read the footers of ``files`` (path -> size) not read yet; the caller holds the guard."""
        batch = [(path, size) for path, size in files.items() if path not in self._read]

        def read(file: tuple[str, int | None]) -> FileFooter:
            path, size = file
            return read_file_footer(self.storage, path, self.storage.size(path) if size is None else size, self.reads)

        self._read.update(zip((path for path, _ in batch), in_parallel(read, batch, min(self.threads, self.storage.request_threads))))


_PROVIDERS: weakref.WeakKeyDictionary[Storage, FooterStats] = weakref.WeakKeyDictionary()
_PROVIDERS_GUARD = threading.Lock()


def footer_stats_provider(storage: Storage, threads: int | None = None) -> FooterStats:
    """What ``context.slice_stats`` reads in production (see :class:`FooterStats`): one per storage object (a table
    object and its reloads share theirs), so the files-per-query prediction of a plan reads no footer its strategy
    read already (a base file never changes under its name). ``threads`` given: a provider of its own."""
    if threads is not None:
        return FooterStats(storage, threads)
    with _PROVIDERS_GUARD:
        provider = _PROVIDERS.get(storage)
        if provider is None or provider.threads != max(1, FOOTER_THREADS):  # FOOTER_THREADS changed since
            provider = _PROVIDERS[storage] = FooterStats(storage)
        return provider
