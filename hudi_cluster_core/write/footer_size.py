"""What a base file costs beyond its column chunks: the footer, sized before the file is written.

A Hudi base file's footer holds parquet's own metadata (the schema, and per row group every column chunk's
offsets, sizes and min/max statistics) and Hudi's key/values: the record-key bloom filter (base64 text,
``HoodieBloomFilterWriteSupport``) and the min/max record keys. The bloom filter is the large part: at Hudi's
defaults (60,000 entries, fpp 1e-9) one filter row is ~431 KB of text, and a DYNAMIC_V0 filter adds a row per
60,000 keys up to ``dynamic.max.entries``. A writer that must keep whole files under a target (the rolling
writer), and a plan that predicts how many files and bytes a group becomes (``plan.estimate``), both size it here.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from ..io.file_budget import BloomSizing
from .base_file import ParquetOptions, parquet_writer

# the footer key names and the bloom filter type code, their lengths as thrift strings (generous)
_KEY_VALUE_FIXED = 160
# per column per row group: what statistics of other rows may add over a one-row file's (longer min/max strings)
_STATS_SLACK_PER_COLUMN = 96


def bloom_sizing_of(options: ParquetOptions) -> BloomSizing:
    return BloomSizing(options.bloom_enabled, options.bloom_filter_type, options.bloom_num_entries, options.bloom_fpp,
                       options.bloom_dynamic_max_entries)  # fmt: skip


def bloom_text_bytes(n_keys: int, options: ParquetOptions) -> int:
    """The length of the bloom filter's base64 text for a file of ``n_keys`` keys (0 when bloom filters are off)."""
    return bloom_sizing_of(options).text_bytes(n_keys)


@dataclass(frozen=True)
class FooterModel:
    """A footer's size as a function of the file's keys and row groups: ``fixed`` bytes (schema, magic, Hudi's
    key names and record-key range) plus ``per_row_group`` bytes of column chunk metadata, plus the bloom text."""

    options: ParquetOptions
    fixed: int
    per_row_group: int

    def bytes(self, n_keys: int, row_groups: int = 1) -> int:
        return self.fixed + self.per_row_group * max(1, row_groups) + bloom_text_bytes(n_keys, self.options)


def footer_model(sample: pa.Table, options: ParquetOptions, key_bytes: int = 0) -> FooterModel:
    """The footer model of files of ``sample``'s rows, written as base files are: parquet's metadata measured on a
    one-row and a two-row-group file written in memory (no bloom filter), with room for longer statistics.
    ``key_bytes``: the longest record key, stored twice (min and max)."""
    one = _metadata_bytes(sample.slice(0, 1), options, 1)
    two = _metadata_bytes(sample.slice(0, 1), options, 2)
    columns = max(1, sample.num_columns)
    per_row_group = max(0, two - one) + _STATS_SLACK_PER_COLUMN * columns
    fixed = max(0, one - (two - one)) + _KEY_VALUE_FIXED + 2 * key_bytes
    return FooterModel(options, fixed, per_row_group)


def fixed_data_bytes(sample: pa.Table, options: ParquetOptions) -> int:
    """The column chunk bytes a file of ``sample``'s rows has before any row (page and dictionary headers,
    statistics in page headers): a one-row file's less what its second row adds, from two files written in memory."""
    one = chunk_bytes(sample.slice(0, 1), options)
    if sample.num_rows < 2:
        return 0  # unknown: 0 counts every written byte as the rows', which overestimates what a row costs
    return max(0, 2 * one - chunk_bytes(sample.slice(0, 2), options))


def chunk_bytes(rows: pa.Table, options: ParquetOptions) -> int:
    """The column chunk bytes of ``rows`` written in memory as one row group of a base file (no bloom filter)."""
    return _write_in_memory(rows, options, 1)[1]


def column_chunk_bytes(rows: pa.Table, codec: str) -> int:
    """:func:`chunk_bytes` with the writer's default options in ``codec`` (its level, dictionary choice and page
    size): what a plan's estimate measures its sample with (``plan.estimate.RowBytes``, handed in by the driver)."""
    return chunk_bytes(rows, ParquetOptions(compression=codec))


def _metadata_bytes(row: pa.Table, options: ParquetOptions, row_groups: int) -> int:
    """Bytes after the last column chunk of a file of ``row`` written ``row_groups`` times: footer and magic."""
    size, chunks = _write_in_memory(row, options, row_groups)
    return size - chunks - 4  # the leading magic belongs to no footer


def _write_in_memory(row: pa.Table, options: ParquetOptions, row_groups: int) -> tuple[int, int]:
    """(file bytes, column chunk bytes) of ``row`` written ``row_groups`` times as a base file, without bloom."""
    sink = pa.BufferOutputStream()
    plain = ParquetOptions(options.compression, False, page_bytes=options.page_bytes)
    with parquet_writer(sink, row.schema, plain, sample=row) as writer:
        for _ in range(row_groups):
            writer.write_table(row, row_group_size=max(1, row.num_rows))
    data = sink.getvalue()
    metadata = pq.read_metadata(pa.BufferReader(data))
    chunks = sum(metadata.row_group(g).column(c).total_compressed_size
                 for g in range(metadata.num_row_groups) for c in range(metadata.num_columns))  # fmt: skip
    return len(data), chunks


def long_values(rows: pa.Table) -> int:
    """The longest string or binary value of each such column of ``rows``, summed: the bytes their min/max
    statistics may take in a row group's metadata beyond a one-row file's."""
    import pyarrow.compute as pc

    total = 0
    for column in rows.columns:
        kind = column.type
        if rows.num_rows and (pa.types.is_string(kind) or pa.types.is_binary(kind) or pa.types.is_large_string(kind)
                              or pa.types.is_large_binary(kind)):  # fmt: skip
            total += pc.max(pc.binary_length(column)).as_py() or 0
    return total
