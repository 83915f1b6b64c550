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
* the new row order: sorting moves rows that compressed well together apart (sequential keys shuffled by a
  sort on other columns) or together; with sort columns, the rows' bytes are the rows times what a row takes in
  a sample of the group's rows (the first rows of up to 16 base files) sorted and compressed as the writer does.
  The sample is put in the writer's own order (:data:`RowOrder`, its z-order or Hilbert keys in a curve layout),
  handed in by the driver: a curve order compresses worse than a linear one (~2.5% on two uniform columns, enough
  for a file more where the linear rows just fit), and the sort engine sits above this layer. The sample's bytes
  are the writer's own (:data:`RowBytes`: its codec, level and dictionary choice; libdeflate's gzip is about a
  third of the CPU of Arrow's zlib), handed in by the driver too: plan and write do not import each other. A
  group that is one file in any order (twice its uncompressed bytes fit) takes no sample;
* files: the fewest that hold the rows' bytes when each is filled as the rolling writer fills it.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from ..config import catalogue
from ..errors import PlanError
from ..io.file_budget import FILL, ROLL_SLACK, BloomSizing
from ..io.storage import Storage
from .footer_stats import BaseFileFacts, FooterStats

if TYPE_CHECKING:
    from ..table import FileSlice
    from .avro_plan import PlanGroup

DEFAULT_METADATA_BYTES = 4096
SAMPLE_ROWS = 20_000  # rows compressed twice to learn what the new order does to the rows' bytes
SAMPLE_FILES = 16
# a new row order changes what the rows compress to, but no order makes them take twice their uncompressed bytes
ORDER_SLACK = 2

RowOrder = Callable[[pa.Table, list[str], str], pa.Array]
"""(rows, sort columns, layout) -> the rows' indices in the order the writer puts them in that layout (any
spelling :func:`..layout.parse_layout` accepts). Without one, a sample is sorted linearly by Arrow."""
RowBytes = Callable[[pa.Table, str], int]
"""(rows, codec) -> the bytes of the rows' column chunks as the writer writes them in one file with that codec
(``write.footer_size.column_chunk_bytes``). Without one, no sample is taken: the rows' bytes are the inputs'."""


@dataclass(frozen=True)
class OutputEstimate:
    files: int
    bytes: int
    input_bytes: int  # base and log files, as stored
    log_files: int


def bloom_sizing(settings) -> BloomSizing:
    """The bloom filter settings of a job's (or a task's) raw map of Hudi keys."""
    return BloomSizing(
        catalogue.read(settings, catalogue.PARQUET_BLOOM_FILTER_ENABLED), catalogue.read(settings, catalogue.BLOOM_FILTER_TYPE),
        catalogue.read(settings, catalogue.BLOOM_NUM_ENTRIES), catalogue.read(settings, catalogue.BLOOM_FPP),
        catalogue.read(settings, catalogue.BLOOM_DYNAMIC_MAX_ENTRIES),
    )  # fmt: skip


def sorted_bytes_per_row(storage: Storage, base_files: Sequence[str], columns: Sequence[str], codec: str,
                         layout: str = "LINEAR", order: RowOrder | None = None,
                         row_bytes: RowBytes | None = None) -> float | None:  # fmt: skip
    """Compressed bytes a row takes once the group is sorted by ``columns`` in ``layout``: a sample of its rows (the
    first rows of up to ``SAMPLE_FILES`` base files) put in the writer's ``order`` (else sorted linearly) and
    measured by the writer's ``row_bytes`` with the output codec. None without sort columns or ``row_bytes``, or
    when the sample cannot be sorted."""
    if not columns or not base_files or row_bytes is None:
        return None
    step = max(1, len(base_files) // SAMPLE_FILES)
    chosen = list(base_files[::step])[:SAMPLE_FILES]
    parts = []
    for path in chosen:
        with storage.fs.open_input_file(path) as handle:
            batch = next(pq.ParquetFile(handle).iter_batches(batch_size=max(1, SAMPLE_ROWS // len(chosen))), None)
        if batch is not None and batch.num_rows:
            parts.append(pa.Table.from_batches([batch]))
    try:
        sample = pa.concat_tables(parts, promote_options="permissive")
        if order is None:
            sample = sample.sort_by([(c, "ascending") for c in columns])
        else:
            sample = sample.take(order(sample, list(columns), layout))
    except (pa.ArrowException, ValueError, KeyError, PlanError):  # a column the sample lacks, a type it cannot sort
        return None
    return row_bytes(sample, codec) / sample.num_rows if sample.num_rows else None


def estimate_output(bases: Sequence[BaseFileFacts], log_bytes: int, log_files: int, target: int,
                    bloom: BloomSizing, sorted_per_row: float | None = None) -> OutputEstimate:  # fmt: skip
    """Files and bytes of a group of these inputs rewritten into files of at most ``target`` bytes
    (``sorted_per_row``: :func:`sorted_bytes_per_row`, the rows' bytes once sorted)."""
    data = sum(b.data_bytes for b in bases)
    uncompressed = sum(b.uncompressed_bytes for b in bases)
    rows = sum(b.rows for b in bases)
    ratio = data / uncompressed if uncompressed else 1.0
    if rows and uncompressed:
        rows += int(log_bytes / (uncompressed / rows))
    payload = int(rows * sorted_per_row) if sorted_per_row and rows else data + int(log_bytes * ratio)
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


def estimate_slices(footers: FooterStats, slices: Iterable[FileSlice], target: int, bloom: BloomSizing,
                    columns: Sequence[str] = (), codec: str = "gzip", layout: str = "LINEAR",
                    order: RowOrder | None = None, row_bytes: RowBytes | None = None) -> OutputEstimate:  # fmt: skip
    """:func:`estimate_output` of a planned group's file slices, sorted by ``columns`` in ``layout`` (``order`` and
    ``row_bytes``: the writer's, see :func:`sorted_bytes_per_row`); the base files' footers
    come from ``footers`` (the table's :func:`~.footer_stats.footer_stats_provider`: read once, concurrently, or
    not again when the strategy read them for its statistics)."""
    storage = footers.storage
    slices = list(slices)
    files = [(storage.join(s.partition, s.base_file.name), s.base_file.size) for s in slices if s.base_file]
    bases = footers.facts(files)
    paths = [path for path, _ in files]
    logs = [log for s in slices for log in s.log_files]
    log_bytes = sum(s.log_files_size for s in slices)
    per_row = _order_bytes_per_row(storage, bases, paths, log_bytes, target, bloom, columns, codec, layout, order,
                                   row_bytes)
    return estimate_output(bases, log_bytes, len(logs), target, bloom, per_row)


def estimate_plan_group(footers: FooterStats, group: PlanGroup, target: int, bloom: BloomSizing,
                        columns: Sequence[str] = (), codec: str = "gzip",
                        sizes: Mapping[str, int] | None = None, layout: str = "LINEAR",
                        order: RowOrder | None = None, row_bytes: RowBytes | None = None) -> OutputEstimate:  # fmt: skip
    """:func:`estimate_output` of a stored plan's group (its files as the plan names them), sorted by ``columns`` in
    ``layout`` (``order`` and ``row_bytes``: the writer's, see :func:`sorted_bytes_per_row`);
    ``sizes``: the files' sizes as the plan was checked against the listing (else asked of storage). A footer
    the schedule read for this table object (its statistics, its estimate) is not read again."""
    storage = footers.storage
    known = sizes or {}
    paths = [s.base_file for s in group.slices if s.base_file]
    bases = footers.facts([(p, known.get(p)) for p in paths])
    logs = [path for s in group.slices for path in s.log_files if not path.endswith(".cdc")]
    log_bytes = sum(known[p] if p in known else storage.size(p) for p in logs)
    per_row = _order_bytes_per_row(storage, bases, paths, log_bytes, target, bloom, columns, codec, layout, order,
                                   row_bytes)
    return estimate_output(bases, log_bytes, len(logs), target, bloom, per_row)


def _order_bytes_per_row(storage: Storage, bases: Sequence[BaseFileFacts], paths: Sequence[str], log_bytes: int,
                         target: int, bloom: BloomSizing, columns: Sequence[str], codec: str, layout: str,
                         order: RowOrder | None, row_bytes: RowBytes | None) -> float | None:  # fmt: skip
    """:func:`sorted_bytes_per_row`, unless the group is one file in any order: its rows at ``ORDER_SLACK`` times
    their uncompressed bytes still fit one file (a small table's groups at Hudi's 1 GiB target). Then no sample is
    read, sorted and compressed (a third of a small table's whole run), and the rows' bytes are the inputs'."""
    rows = sum(b.rows for b in bases)
    uncompressed = sum(b.uncompressed_bytes for b in bases)
    if columns and rows and uncompressed:
        worst = estimate_output(bases, log_bytes, 0, target, bloom, ORDER_SLACK * uncompressed / rows)
        if worst.files == 1:
            return None
    # a base file never changes under its name: a dry run's prediction takes its schedule's sample, not a second one
    key = (tuple(paths), tuple(columns), codec, layout, order, row_bytes)
    sampled = _SAMPLED.setdefault(storage, {})
    if key not in sampled:
        sampled[key] = sorted_bytes_per_row(storage, paths, columns, codec, layout, order, row_bytes)
    return sampled[key]


# per storage object (a table and its reloads share one): each group's sample, by its files and the writer's order
_SAMPLED: weakref.WeakKeyDictionary[Storage, dict[tuple, float | None]] = weakref.WeakKeyDictionary()
