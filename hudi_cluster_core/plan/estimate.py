"""How many files and bytes a clustering group becomes: the one estimate behind a plan's ``numOutputFileGroups``
and the dry run's predicted files and bytes.

Apache Hudi's rule, ``ceil(base file bytes / target.file.max.bytes)``, counts what the inputs cost on disk, and
small files are mostly footer: at Hudi's defaults every base file carries a ~431 KB bloom filter, so 36 files of
440 KB hold ~15 KB of rows each. What a group becomes is its rows' bytes, written again into as few files as
the target allows, each with a footer of its own (the rolling writer keeps every whole file within the target):

* rows' bytes: the base files' column chunks as their footers give them (compressed, no footer), plus the log
  files' bytes corrected by the base files' compression ratio (compressed / uncompressed bytes of their
  chunks): a log block holds about a row's uncompressed bytes;
* a file's footer: the inputs' parquet metadata (their footer less their bloom filter text) plus the bloom text
  of the keys one output file holds (:class:`..io.file_budget.BloomSizing`);
* files: the fewest that hold the rows' bytes when each is filled as the rolling writer fills it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Sequence

import pyarrow.parquet as pq

from ..config import catalogue
from ..io.bloom import BLOOM_FILTER_FOOTER_KEY
from ..io.file_budget import FILL, ROLL_SLACK, BloomSizing

if TYPE_CHECKING:
    from ..io.storage import Storage
    from ..table import FileSlice
    from .avro_plan import PlanGroup

DEFAULT_METADATA_BYTES = 4096  # a file's parquet metadata when no input base file shows it (log-only groups)


@dataclass(frozen=True)
class BaseFileFacts:
    """A base file's size and footer facts: rows, column chunk bytes compressed and uncompressed, and its parquet
    metadata's bytes (the footer less Hudi's bloom filter text)."""

    size: int
    rows: int
    data_bytes: int
    uncompressed_bytes: int
    metadata_bytes: int


@dataclass(frozen=True)
class OutputEstimate:
    files: int
    bytes: int
    input_bytes: int  # base and log files, as stored
    log_files: int


def base_file_facts(storage: Storage, path: str, size: int | None = None) -> BaseFileFacts:
    """The footer facts of the base file at ``path`` (``size``: its size when the caller knows it)."""
    size = storage.size(path) if size is None else size
    with storage.fs.open_input_file(path) as handle:
        metadata = pq.ParquetFile(handle).metadata
    data = uncompressed = 0
    for g in range(metadata.num_row_groups):
        row_group = metadata.row_group(g)
        for c in range(row_group.num_columns):
            chunk = row_group.column(c)
            data += chunk.total_compressed_size
            uncompressed += chunk.total_uncompressed_size
    bloom = len((metadata.metadata or {}).get(BLOOM_FILTER_FOOTER_KEY.encode(), b""))
    return BaseFileFacts(size, metadata.num_rows, data, uncompressed, max(0, size - data - bloom - 4))


def bloom_sizing(settings) -> BloomSizing:
    """The bloom filter settings of a job's (or a task's) raw map of Hudi keys."""
    return BloomSizing(
        catalogue.read(settings, catalogue.PARQUET_BLOOM_FILTER_ENABLED), catalogue.read(settings, catalogue.BLOOM_FILTER_TYPE),
        catalogue.read(settings, catalogue.BLOOM_NUM_ENTRIES), catalogue.read(settings, catalogue.BLOOM_FPP),
        catalogue.read(settings, catalogue.BLOOM_DYNAMIC_MAX_ENTRIES),
    )  # fmt: skip


def estimate_output(bases: Sequence[BaseFileFacts], log_bytes: int, log_files: int, target: int,
                    bloom: BloomSizing) -> OutputEstimate:  # fmt: skip
    """Files and bytes of a group of these inputs rewritten into files of at most ``target`` bytes."""
    data = sum(b.data_bytes for b in bases)
    uncompressed = sum(b.uncompressed_bytes for b in bases)
    rows = sum(b.rows for b in bases)
    ratio = data / uncompressed if uncompressed else 1.0
    if rows and uncompressed:
        rows += int(log_bytes / (uncompressed / rows))
    payload = data + int(log_bytes * ratio)
    metadata = max((b.metadata_bytes for b in bases), default=DEFAULT_METADATA_BYTES)

    def footer(files: int) -> int:
        return metadata + bloom.text_bytes(math.ceil(rows / files) if rows else 0)

    # the writer fills a file to FILL of the target and closes it once less than ROLL_SLACK is left
    fill = target * (FILL - ROLL_SLACK / 2)
    files = 1
    for _ in range(32):  # the footer shrinks as files grow in number (a dynamic bloom filter): a fixed point
        room = fill - footer(files)
        wanted = max(1, rows) if room <= 0 else max(1, math.ceil(payload / room))
        if wanted == files:
            break
        files = wanted
    input_bytes = sum(b.size for b in bases) + log_bytes
    return OutputEstimate(files, payload + files * footer(files), input_bytes, log_files)


def estimate_slices(storage: Storage, slices: Iterable[FileSlice], target: int, bloom: BloomSizing) -> OutputEstimate:
    """:func:`estimate_output` of a planned group's file slices."""
    slices = list(slices)
    bases = [base_file_facts(storage, storage.join(s.relative_path(s.base_file.name)), s.base_file_size)
             for s in slices if s.base_file]  # fmt: skip
    logs = [log for s in slices for log in s.log_files]
    return estimate_output(bases, sum(s.log_files_size for s in slices), len(logs), target, bloom)


def estimate_plan_group(storage: Storage, group: PlanGroup, target: int, bloom: BloomSizing) -> OutputEstimate:
    """:func:`estimate_output` of a stored plan's group (its files as the plan names them)."""
    bases = [base_file_facts(storage, s.base_file) for s in group.slices if s.base_file]
    logs = [path for s in group.slices for path in s.log_files if not path.endswith(".cdc")]
    return estimate_output(bases, sum(storage.size(p) for p in logs), len(logs), target, bloom)
