"""Writing Hudi base files from Arrow: meta columns, Hudi's footers, markers, write stats.

The Arrow data path stays here and in ``run/``; metadata (timeline, plans) never touches rows.
A marker ``.hoodie/.temp/<T>/<partition>/<file>.marker.CREATE`` is created before each data file so that a
rollback can find partial files (docs/format.md#markers).

A table without meta fields (``hoodie.populate.meta.fields=false``) keeps all five ``_hoodie_*`` columns null, as
Apache Hudi 1.1.1 writes them (``HoodieAvroParquetWriter`` stamps them only when meta fields are populated; its
clustering leaves them null too, ``_hoodie_file_name`` included); the footer's bloom filter and key range then
hold the keys the table's key generator makes (``WriteContext.keys``).
"""

from __future__ import annotations

import math
import posixpath
import time
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..table import HudiTable
from ..table import markers as table_markers
from ..table.keygen import KeyGenerator
from ..table.naming import make_base_file_name, new_file_id
from ..hashing.bloom_filter import bloom_footer
from ..io.storage import Storage
from . import gzip_pages

META_COLUMNS = (
    "_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
    "_hoodie_file_name",
)  # fmt: skip
TEMP_DIR = table_markers.TEMP_DIR
# Hudi's parquet-mr compresses gzip at zlib's default level 6; Arrow's default for gzip is 9, ~4x slower for
# files of the same size within 0.2%. gzip pages are compressed by libdeflate at that level (gzip_pages.py).
_COMPRESSION_LEVELS = {"gzip": 6}
# Hudi's codec names are parquet-mr's (CompressionCodecName); Arrow calls one of them differently
_ARROW_CODECS = {"uncompressed": "none"}


@dataclass(frozen=True)
class ParquetOptions:
    compression: str = "gzip"
    bloom_enabled: bool = True
    bloom_num_entries: int = 60000
    bloom_fpp: float = 1e-9
    bloom_filter_type: str = "DYNAMIC_V0"
    bloom_dynamic_max_entries: int = 100000
    row_group_bytes: int = 120 * 1024 * 1024
    page_bytes: int = 1024 * 1024

    @classmethod
    def from_hoodie(cls, raw: dict[str, str]) -> "ParquetOptions":
        def get(key, default, cast):
            return cast(raw[key]) if raw.get(key) not in (None, "") else default

        return cls(
            compression=get("hoodie.parquet.compression.codec", "gzip", str).lower(),
            bloom_enabled=get("hoodie.parquet.bloom.filter.enabled", True, lambda v: v.lower() == "true"),
            bloom_num_entries=get("hoodie.index.bloom.num_entries", 60000, int),
            bloom_fpp=get("hoodie.index.bloom.fpp", 1e-9, float),
            bloom_filter_type=get("hoodie.bloom.index.filter.type", "DYNAMIC_V0", str).upper(),
            bloom_dynamic_max_entries=get("hoodie.bloom.index.filter.dynamic.max.entries", 100000, int),
            row_group_bytes=get("hoodie.parquet.block.size", 120 * 1024 * 1024, int),
            page_bytes=get("hoodie.parquet.page.size", 1024 * 1024, int),
        )


@dataclass(frozen=True)
class WriteContext:
    """Where and as what a task writes: the instant, partition and Spark task identity (for write tokens)."""

    base_uri: str
    instant_time: str
    partition: str
    write_token: str
    options: ParquetOptions = field(default_factory=ParquetOptions)
    keys: KeyGenerator | None = None  # virtual keys: the table's key generator (else _hoodie_record_key holds them)

    def record_keys(self, rows: pa.Table) -> pa.ChunkedArray:
        """The record keys of ``rows``: their ``_hoodie_record_key``, or the key generator's keys."""
        if self.keys is None:
            return rows.column("_hoodie_record_key")
        return pa.chunked_array([self.keys.record_keys(rows)], pa.string())

    def named(self, rows: pa.Table, file_name: str) -> pa.Table:
        """``rows`` as stored in ``file_name``: ``_hoodie_file_name`` set when meta fields are populated."""
        return rows if self.keys is not None else with_file_name(rows, file_name)


def marker_path(storage: Storage, instant_time: str, relative_file: str, kind: str = "CREATE") -> str:
    """The direct marker of a data file: ``CREATE`` for a new base file, ``APPEND`` for a log file."""
    return storage.join(TEMP_DIR, instant_time, f"{relative_file}.marker.{kind}")


def marked_files(table: HudiTable, instant_time: str) -> set[str]:
    """Data files (relative paths) that have a marker of ``instant_time`` (direct or timeline-server based)."""
    return table_markers.marked_files(table.storage, instant_time)


def footer_for_keys(keys, options: ParquetOptions) -> dict[str, str]:
    """Hudi's footer key/values (bloom filter, min/max record key) for a file holding exactly ``keys``."""
    if not options.bloom_enabled:
        return {
            "hoodie_min_record_key": pc.min(keys).as_py() or "",
            "hoodie_max_record_key": pc.max(keys).as_py() or "",
        }
    return bloom_footer(
        keys, filter_type=options.bloom_filter_type, num_entries=options.bloom_num_entries,
        fpp=options.bloom_fpp, dynamic_max_entries=options.bloom_dynamic_max_entries,
    )  # fmt: skip


def with_file_name(table: pa.Table, file_name: str) -> pa.Table:
    index = table.schema.get_field_index("_hoodie_file_name")
    column = pa.repeat(pa.scalar(file_name, pa.string()), table.num_rows)  # in Arrow: ~10x less CPU than a list
    field_ = pa.field("_hoodie_file_name", pa.string())
    return table.set_column(index, field_, column)


def write_base_file(storage: Storage, context: WriteContext, table: pa.Table, file_id: str | None = None) -> dict:
    """Write one base file (marker first) and return its HoodieWriteStat fields."""
    started = time.monotonic()
    file_id, name, relative = new_base_file(storage, context, file_id)
    table = context.named(table, name).replace_schema_metadata(None)
    footer = footer_for_keys(context.record_keys(table), context.options)
    path = storage.join(relative)
    with storage.fs.open_output_stream(path) as sink:
        with parquet_writer(sink, table.schema, context.options, sample=table) as writer:
            writer.write_table(table, row_group_size=_rows_per_row_group(table, context.options.row_group_bytes))
            writer.add_key_value_metadata(footer)
    return write_stat(file_id, relative, context.partition, table.num_rows, storage.size(path), started)


def parquet_writer(sink, schema: pa.Schema, options: ParquetOptions, sample: pa.Table | None = None) -> pq.ParquetWriter:
    """A writer of Hudi base file bytes; ``sample`` (the file's first rows) picks the dictionary-encoded columns."""
    # store_schema=False: Hudi's files carry no ARROW:schema; Hudi's keys go in through add_key_value_metadata
    settings = dict(data_page_size=options.page_bytes, store_schema=False, coerce_timestamps="us",
                    allow_truncated_timestamps=True,
                    use_dictionary=dictionary_columns(sample) if sample is not None else True)  # fmt: skip
    if options.compression == "gzip" and gzip_pages.available():  # the same codec and level, ~3x less CPU
        return gzip_pages.GzipParquetWriter(sink, schema, compression_level=_COMPRESSION_LEVELS["gzip"], **settings)
    codec = _ARROW_CODECS.get(options.compression, options.compression)
    return pq.ParquetWriter(sink, schema, compression=codec,
                            compression_level=_COMPRESSION_LEVELS.get(options.compression), **settings)  # fmt: skip


# parquet-mr (Hudi's writer) keeps a column dictionary-encoded only while dictionary + indices are smaller than
# the plain values (its fallback test after the first page); Arrow keeps every dictionary until it reaches 1 MiB,
# which on unique keys, sequence numbers and random numbers writes larger files, slower. Deciding per file on a
# first-page-sized sample writes the encodings parquet-mr would: ~7% smaller files, ~10% less write time.
_DICTIONARY_SAMPLE_ROWS = 20_000


def dictionary_columns(sample: pa.Table) -> list[str] | bool:
    """Columns worth a dictionary on ``sample`` (True, Arrow's default for all, when a column is nested)."""
    sample = sample.slice(0, _DICTIONARY_SAMPLE_ROWS)
    if not sample.num_rows or any(pa.types.is_nested(f.type) or pa.types.is_dictionary(f.type) for f in sample.schema):
        return True
    keep = []
    for name, column in zip(sample.column_names, sample.columns):
        n = len(column)
        distinct = max(1, pc.count_distinct(column).as_py())
        if pa.types.is_binary(column.type) or pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            width = max(1.0, (pc.sum(pc.binary_length(column)).as_py() or 0) / n + 4)  # plain: 4-byte length + bytes
        else:
            try:
                width = max(1, column.type.bit_width // 8)
            except ValueError:  # no fixed width (e.g. large binary): as a long would be
                width = 8
        if distinct * width + n * max(1, math.ceil(math.log2(distinct + 1))) / 8 < n * width:
            keep.append(name)
    return keep


def new_base_file(storage: Storage, context: WriteContext, file_id: str | None = None) -> tuple[str, str, str]:
    """``(file id, file name, relative path)`` of a new base file, its marker created (before any data)."""
    file_id = file_id or new_file_id()
    name = make_base_file_name(file_id, context.write_token, context.instant_time)
    relative = posixpath.join(context.partition, name) if context.partition else name
    storage.write_bytes(marker_path(storage, context.instant_time, relative), b"")
    return file_id, name, relative


def write_stat(file_id: str, relative: str, partition: str, rows: int, size: int, started: float) -> dict:
    """The HoodieWriteStat fields of one new base file."""
    return {
        "fileId": file_id, "path": relative, "prevCommit": "null", "numWrites": rows,
        "numDeletes": 0, "numUpdateWrites": 0, "numInserts": rows, "totalWriteBytes": size,
        "totalWriteErrors": 0, "partitionPath": partition, "fileSizeInBytes": size, "numUpdates": 0,
        "runtimeStats": {
            "totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": int((time.monotonic() - started) * 1000),
        },
    }  # fmt: skip


def _rows_per_row_group(table: pa.Table, row_group_bytes: int) -> int:
    if table.num_rows == 0:
        return 1
    # Arrow's in-memory size overestimates encoded size, which keeps row groups at or below the target.
    bytes_per_row = max(1, table.nbytes // table.num_rows)
    return max(1, row_group_bytes // bytes_per_row)
