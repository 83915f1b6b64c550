"""GZIP pages compressed by libdeflate (write/gzip_pages.py): the file is what Arrow's own gzip writer would write,
page for page, readable by Arrow, by Spark's parquet-mr (Hadoop's GzipCodec) and by hudi-rs."""

from __future__ import annotations

import datetime as dt
import gzip
import itertools
import os
import struct
import tempfile
import threading

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from hudi_cluster_core.io import thrift_compact as tc
from hudi_cluster_core.write import gzip_pages
from hudi_cluster_core.write.base_file import dictionary_columns
from hudi_cluster_core.write.gzip_pages import GzipPageSink, GzipParquetWriter
from tests.support.arrow_strategies import arrow_schemas, arrow_tables, bit_exact, examples

SETTINGS = dict(data_page_size=64 * 1024, store_schema=False, coerce_timestamps="us", allow_truncated_timestamps=True)


def _rows(n: int, start: int = 0) -> pa.Table:
    ids = range(start, start + n)
    return pa.table({
        "_hoodie_record_key": pa.array([f"key-{i:08d}" for i in ids]),
        "c_int": pa.array([i % 97 for i in ids], pa.int32()),
        "c_long": pa.array([i * 7919 if i % 13 else None for i in ids], pa.int64()),
        "c_double": pa.array([i / 3 for i in ids]),
        "c_bool": pa.array([i % 3 == 0 for i in ids]),
        "c_text": pa.array([f"row {i} " + "x" * (i % 50) for i in ids]),
        "c_ts": pa.array([dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=i) for i in ids],
                         pa.timestamp("us", tz="UTC")),
        "c_list": pa.array([[i, i + 1] if i % 5 else [] for i in ids], pa.list_(pa.int64())),
        "c_struct": pa.array([{"a": i, "b": str(i % 11)} for i in ids],
                             pa.struct([("a", pa.int64()), ("b", pa.string())])),
    })  # fmt: skip


def _write(writer_cls, tables, **extra) -> bytes:
    sink = pa.BufferOutputStream()
    options = {**SETTINGS, **extra}
    if writer_cls is pq.ParquetWriter:
        writer = pq.ParquetWriter(sink, tables[0].schema, compression="gzip", compression_level=6, **options)
    else:
        writer = GzipParquetWriter(sink, tables[0].schema, compression_level=6, **options)
    for table in tables:
        writer.write_table(table, row_group_size=max(1, table.num_rows))
    writer.add_key_value_metadata({"hoodie_min_record_key": "key-00000000", "hoodie_max_record_key": "key-99999999"})
    writer.close()
    return sink.getvalue().to_pybytes()


@pytest.fixture(scope="module")
def written():
    tables = [_rows(30_000), _rows(1, 30_000), _rows(5_000, 40_000)]  # three row groups, one of a single row
    return tables, _write(pq.ParquetWriter, tables), _write(GzipParquetWriter, tables)


def _pages(data: bytes, header_bytes: bool = False):
    """(row group, column, page type, header, compressed body) of every page, walked from the footer's offsets."""
    meta = pq.ParquetFile(pa.BufferReader(data)).metadata
    for g in range(meta.num_row_groups):
        for c in range(meta.num_columns):
            chunk = meta.row_group(g).column(c)
            pos = chunk.dictionary_page_offset if chunk.has_dictionary_page else chunk.data_page_offset
            end = pos + chunk.total_compressed_size
            while pos < end:
                header, body_at = tc.read_struct(data, pos)
                size = tc.get(header, 3)
                page = (g, c, tc.get(header, 1), header, data[body_at : body_at + size])
                yield (*page, body_at - pos) if header_bytes else page
                pos = body_at + size
            assert pos == end


def test_same_rows_metadata_and_pages_as_arrows_gzip(written):
    tables, arrow_file, ours = written
    expected = pa.concat_tables(tables)
    assert pq.read_table(pa.BufferReader(ours)).equals(expected)
    a, b = (pq.ParquetFile(pa.BufferReader(d)).metadata for d in (arrow_file, ours))
    assert b.metadata == a.metadata and b.schema.equals(a.schema) and b.num_rows == a.num_rows
    assert b.num_row_groups == a.num_row_groups == 3
    for g in range(a.num_row_groups):
        for c in range(a.num_columns):
            x, y = a.row_group(g).column(c), b.row_group(g).column(c)
            assert y.compression == "GZIP"
            assert (y.encodings, y.num_values, y.has_dictionary_page) == (x.encodings, x.num_values, x.has_dictionary_page)
            assert y.statistics == x.statistics
    for data, meta in ((arrow_file, a), (ours, b)):  # sizes as the spec defines them (page headers included)
        uncompressed: dict[tuple[int, int], int] = {}
        for g, c, _, header, body, header_bytes in _pages(data, header_bytes=True):
            uncompressed[g, c] = uncompressed.get((g, c), 0) + header_bytes + tc.get(header, 2)
        assert all(meta.row_group(g).column(c).total_uncompressed_size == n for (g, c), n in uncompressed.items())
    pages_a, pages_b = list(_pages(arrow_file)), list(_pages(ours))
    assert [p[:3] for p in pages_a] == [p[:3] for p in pages_b]  # the same pages, in the same places
    for pa_, pb in zip(pages_a, pages_b):
        assert gzip.decompress(pb[4]) == gzip.decompress(pa_[4])  # each body one gzip member, same bytes inside
        assert tc.get(pb[3], 2) == tc.get(pa_[3], 2)  # uncompressed size
    assert len(ours) < len(arrow_file) * 1.05


def test_footer_rewritten_only_where_it_must(written):
    _, arrow_file, ours = written
    footer = lambda d: tc.read_struct(d[-8 - struct.unpack("<I", d[-8:-4])[0] : -8])[0]  # noqa: E731
    a, b = footer(arrow_file), footer(ours)
    assert tc.write_struct(a) == arrow_file[-8 - struct.unpack("<I", arrow_file[-8:-4])[0] : -8]  # exact round trip
    assert [f.id for f in a] == [f.id for f in b]
    assert tc.get(a, 2) == tc.get(b, 2) and tc.get(a, 5) == tc.get(b, 5)  # schema, key/values untouched


def test_page_checksums_are_of_the_compressed_pages():
    tables = [_rows(8_000)]
    data = _write(GzipParquetWriter, tables, write_page_checksum=True)
    assert all(tc.get(p[3], 4) is not None for p in _pages(data))
    read = pq.read_table(pa.BufferReader(data), page_checksum_verification=True)
    assert read.equals(tables[0])


def test_an_empty_table_and_an_aborted_writer():
    empty = _rows(1).schema.empty_table()
    assert pq.read_table(pa.BufferReader(_write(GzipParquetWriter, [empty]))).num_rows == 0
    sink = pa.BufferOutputStream()
    writer = GzipParquetWriter(sink, empty.schema, **SETTINGS)
    writer.write_table(_rows(100), row_group_size=100)
    writer.abort()
    writer.close()  # nothing more is written: no footer, no error
    data = sink.getvalue().to_pybytes()
    assert data.startswith(b"PAR1") and not data.endswith(b"PAR1")


def test_not_parquet_and_unsupported_pages_are_errors():
    sink = GzipPageSink(pa.BufferOutputStream())
    with pytest.raises(tc.ThriftError, match="PAR1"):
        sink.write(b"NOPE and more")
    with pytest.raises(tc.ThriftError, match="page type 3"):  # a v2 data page
        _write(GzipParquetWriter, [_rows(10)], data_page_version="2.0")
    sink = GzipPageSink(pa.BufferOutputStream())
    sink.write(b"PAR1\x15\x00")  # half a page header
    with pytest.raises(tc.ThriftError, match="not a whole parquet page"):
        sink.start_footer()


def test_base_files_use_it_for_gzip_only():
    from hudi_cluster_core.write.base_file import ParquetOptions, parquet_writer

    schema = _rows(1).schema
    assert gzip_pages.available()
    gz = parquet_writer(pa.BufferOutputStream(), schema, ParquetOptions(compression="gzip"))
    zstd = parquet_writer(pa.BufferOutputStream(), schema, ParquetOptions(compression="zstd"))
    assert isinstance(gz, GzipParquetWriter) and not isinstance(zstd, GzipParquetWriter)
    gz.close(), zstd.close()


def _write_counting(threads: int, tables, compressed_on: list[str]) -> tuple[bytes, list[int]]:
    """The file a sink with ``threads`` compressing threads writes, and the output's size after each row group."""
    sink = pa.BufferOutputStream()
    writer = GzipParquetWriter(sink, tables[0].schema, compression_level=6, compress_threads=threads,
                               **{**SETTINGS, "data_page_size": 4 * 1024})  # many pages in flight at once
    gzip_once = writer.page_sink._gzip

    def recording(data, level):
        compressed_on.append(threading.current_thread().name)
        return gzip_once(data, level)

    writer.page_sink._gzip = recording
    sizes = []
    for table in tables:
        writer.write_table(table, row_group_size=max(1, table.num_rows))
        sizes.append(sink.tell())
    writer.close()
    return sink.getvalue().to_pybytes(), sizes


def test_pages_compressed_on_threads_give_the_serial_file_byte_for_byte():
    tables = [_rows(20_000), _rows(1, 20_000), _rows(7_000, 30_000)]
    inline_threads: list[str] = []
    pooled_threads: list[str] = []
    serial, serial_sizes = _write_counting(0, tables, inline_threads)
    pooled, pooled_sizes = _write_counting(3, tables, pooled_threads)
    assert pooled == serial  # the same pages, in the same order, the same footer
    assert pooled_sizes == serial_sizes  # a row group's pages are all out when write_table returns (file rolling)
    assert len(pooled_threads) == len(inline_threads) > 100
    assert set(inline_threads) == {threading.current_thread().name}
    assert all(name.startswith("gzip-pages") for name in pooled_threads)
    assert pq.read_table(pa.BufferReader(pooled)).equals(pa.concat_tables(tables))


def test_a_page_whose_compression_fails_fails_the_write_and_leaves_no_footer():
    sink = pa.BufferOutputStream()
    writer = GzipParquetWriter(sink, _rows(1).schema, compress_threads=2, **SETTINGS)

    def failing(data, level):
        raise MemoryError("no room to compress a page")

    writer.page_sink._gzip = failing
    with pytest.raises(RuntimeError, match="could not be compressed: MemoryError.*no room"):
        writer.write_table(_rows(5_000), row_group_size=5_000)
    assert writer.page_sink.failed
    writer.close()  # aborts: the file is never finished
    assert sink.getvalue().to_pybytes() == b"PAR1"  # the magic alone: no page, no footer


def test_spark_and_hudi_rs_read_it(spark, tmp_path):
    """parquet-mr inflates the pages through Hadoop's GzipCodec (Apache Hudi's reader path)."""
    table = _rows(3_000)
    path = tmp_path / "part.parquet"
    path.write_bytes(_write(GzipParquetWriter, [table]))
    rows = spark.read.parquet(str(path)).select("_hoodie_record_key", "c_long", "c_text").orderBy("_hoodie_record_key").collect()
    assert [(r[0], r[1], r[2]) for r in rows] == list(zip(*(table[c].to_pylist() for c in ("_hoodie_record_key", "c_long", "c_text"))))


def test_dictionary_only_where_it_pays_as_parquet_mr_decides():
    """Unique keys and random numbers are written plain (parquet-mr falls back after its first page);
    low-cardinality columns keep their dictionary; nested columns keep Arrow's default."""
    from hudi_cluster_core.write.base_file import ParquetOptions, dictionary_columns, parquet_writer

    table = _rows(30_000)
    flat_columns = table.drop_columns(["c_list", "c_struct"])
    chosen = dictionary_columns(flat_columns)
    assert "c_int" in chosen and "c_bool" in chosen
    assert "_hoodie_record_key" not in chosen and "c_double" not in chosen and "c_ts" not in chosen
    assert dictionary_columns(table) is True and dictionary_columns(flat_columns.slice(0, 0)) is True
    sink = pa.BufferOutputStream()
    with parquet_writer(sink, flat_columns.schema, ParquetOptions(), sample=flat_columns) as writer:
        writer.write_table(flat_columns, row_group_size=flat_columns.num_rows)
    meta = pq.ParquetFile(pa.BufferReader(sink.getvalue())).metadata.row_group(0)
    encodings = {meta.column(i).path_in_schema: meta.column(i).has_dictionary_page for i in range(meta.num_columns)}
    assert encodings["c_int"] and not encodings["_hoodie_record_key"] and not encodings["c_double"]
    assert pq.read_table(pa.BufferReader(sink.getvalue())).equals(flat_columns)


# ------------------------------------------------------------------------------------- property: any layout
# GzipPageSink rewrites whatever page layout pyarrow chooses (hence pyarrow's upper bound in pyproject.toml):
# random schemas (nested, every leaf type), row-group sizes, page sizes and batch sizes small enough for many pages
# per chunk, dictionaries that fall back to plain mid-chunk, page checksums.


@st.composite
def layouts(draw, max_rows: int = 60, max_batches: int = 3):
    """(tables written in turn, write_table's row_group_size, writer options) of one file."""
    schema = draw(arrow_schemas(max_columns=4, max_depth=2))
    tables = [draw(arrow_tables(schema, max_rows=max_rows)) for _ in range(draw(st.integers(1, max_batches)))]
    dictionary = draw(st.sampled_from(["production", True, False]))
    options = {
        **SETTINGS,
        # not 1: pyarrow 26 then loses a row group's only row when it is a null list in a dictionary column, with
        # its own writers too (compression none or gzip)
        "data_page_size": draw(st.sampled_from([64, 1024, 64 * 1024])),
        "write_batch_size": draw(st.sampled_from([1, 7, 64, 1024])),  # how many values pyarrow checks sizes after
        "dictionary_pagesize_limit": draw(st.sampled_from([16, 256, 1024 * 1024])),  # small: plain pages follow
        "use_dictionary": dictionary_columns(tables[0]) if dictionary == "production" else dictionary,
        "write_page_checksum": draw(st.booleans()),
    }
    return tables, draw(st.integers(1, max_rows + 1)), options


def _write_layout(writer_cls, tables, row_group_size, options) -> bytes:
    sink = pa.BufferOutputStream()
    if writer_cls is pq.ParquetWriter:
        writer = pq.ParquetWriter(sink, tables[0].schema, compression="gzip", compression_level=6, **options)
    else:
        writer = GzipParquetWriter(sink, tables[0].schema, compression_level=6, **options)
    for table in tables:
        writer.write_table(table, row_group_size=row_group_size)
    writer.close()
    return sink.getvalue().to_pybytes()


def _check_read_by_arrow(tables, row_group_size, options) -> bytes:
    """Our file, after checking that pyarrow reads it back bit for bit, with the pages of Arrow's own gzip file."""
    ours = _write_layout(GzipParquetWriter, tables, row_group_size, options)
    expected = pa.concat_tables(tables)
    read = pq.read_table(pa.BufferReader(ours), page_checksum_verification=options["write_page_checksum"])
    assert bit_exact(read) == bit_exact(expected)
    arrow_file = _write_layout(pq.ParquetWriter, tables, row_group_size, options)
    a, b = (pq.ParquetFile(pa.BufferReader(d)).metadata for d in (arrow_file, ours))
    assert (b.num_row_groups, b.num_rows) == (a.num_row_groups, a.num_rows)
    for g in range(a.num_row_groups):
        assert b.row_group(g).num_rows == a.row_group(g).num_rows
        for c in range(a.num_columns):
            x, y = a.row_group(g).column(c), b.row_group(g).column(c)
            assert y.compression == "GZIP" and y.statistics == x.statistics
            assert (y.encodings, y.num_values, y.has_dictionary_page) == (x.encodings, x.num_values, x.has_dictionary_page)
    pages_a, pages_b = list(_pages(arrow_file)), list(_pages(ours))
    assert [p[:3] for p in pages_a] == [p[:3] for p in pages_b]
    for page_a, page_b in zip(pages_a, pages_b):
        assert gzip.decompress(page_b[4]) == gzip.decompress(page_a[4])
    return ours


@examples(150)
@given(layouts())
def test_any_layout_reads_back_equal_in_arrow_with_arrows_pages(layout):
    _check_read_by_arrow(*layout)


def _empty_data_pages(data: bytes) -> int:
    """Data pages (page type 0) whose DataPageHeader (field 5) counts no values (its field 1)."""
    return sum(kind == 0 and tc.get(tc.get(header, 5), 1) == 0 for _, _, kind, header, _ in _pages(data))


@examples(20)
@given(layout=layouts(max_rows=40, max_batches=2))
def test_any_layout_reads_back_equal_in_parquet_mr(spark, layout):
    """Spark (the session with Apache Hudi's bundle) reads our file with parquet-mr: its record reader (the
    vectorized reader off) and Spark's vectorized reader over parquet-mr's pages; both inflate them with Hadoop's
    GzipCodec. A ``_row`` column gives the order back.

    At the tiny page sizes drawn here pyarrow sometimes writes a data page of no values (its own files have it too:
    ours has Arrow's pages); parquet-mr's record reader fails on any such file ("Reading past RLE/BitPacking
    stream"), Arrow's own included, so those are read by the vectorized reader only."""
    tables, row_group_size, options = layout
    offsets = [0, *itertools.accumulate(t.num_rows for t in tables)]
    tables = [t.add_column(0, "_row", pa.array(range(start, start + t.num_rows), pa.int64()))
              for t, start in zip(tables, offsets)]  # fmt: skip
    ours = _check_read_by_arrow(tables, row_group_size, options)
    expected = bit_exact(pa.concat_tables(tables))
    readers = ("true",) if _empty_data_pages(ours) else ("false", "true")
    event(f"readers: {readers}")
    with tempfile.TemporaryDirectory(prefix="gzip-pages-") as scratch:
        path = os.path.join(scratch, "part.parquet")
        with open(path, "wb") as out:
            out.write(ours)
        setting = "spark.sql.parquet.enableVectorizedReader"
        before = spark.conf.get(setting)
        for vectorized in readers:
            spark.conf.set(setting, vectorized)
            try:
                batches = spark.read.parquet(path).orderBy("_row")._collect_as_arrow()
            finally:
                spark.conf.set(setting, before)
            read = pa.Table.from_batches(batches) if batches else pa.concat_tables(tables).slice(0, 0)
            assert bit_exact(read) == expected, f"vectorized reader {vectorized}"
