"""GZIP parquet pages compressed by libdeflate: the same codec, about 3x less CPU than Arrow's zlib.

Profiles of a clustering task put ~80% of its time in the parquet write, nearly all of it in Arrow's gzip (zlib,
level 6, as parquet-mr writes for Hudi). libdeflate writes the same format (RFC 1952 gzip members, which every
parquet reader inflates: parquet-mr through Hadoop's GzipCodec, Arrow, hudi-rs) at the same level ~3x faster and
~3% smaller. Arrow's gzip cannot be swapped (zlib is linked into libarrow), so the file is written by pyarrow
*uncompressed* into a :class:`GzipPageSink`, which compresses each page on its way to the real output:

* a page header (Thrift compact) and its body arrive; the body is gzipped and the header's
  ``compressed_page_size`` (and ``crc`` when present) rewritten; everything else is kept as written;
* the footer (``FileMetaData``) arrives last: every column chunk gets ``codec = GZIP`` and its compressed size,
  and every offset (pages, dictionary pages, chunks, row groups) is moved to where the compressed bytes landed.

Arrow records offsets from :meth:`GzipPageSink.tell`, the uncompressed position, so the footer it writes is the
uncompressed file's; the mapping from those offsets to the written ones is exact (every page start and end).
Only the page kinds our writer produces are accepted: v1 data pages and dictionary pages; anything else (an
index page, a v2 page, page indexes or parquet bloom filters in the footer) is an error, never a wrong file.

Pages are compressed on a few threads of the file's own (libdeflate releases the GIL) while Arrow encodes the next ones,
and written in the order they arrived, so the file is byte for byte the one a serial compression writes. A
task writing one large group would otherwise use one core for encoding and deflate one after the other; with
two cores deflate (most of a task's time) runs beside the encoding. At most ``_IN_FLIGHT_PER_THREAD`` pages per
thread wait uncompressed (a few page sizes of memory), and every ``write_table`` ends with all of its pages
written, so a caller measuring the output's size after a row group sees exactly what a serial sink gives it.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pyarrow.parquet as pq

from ..io import thrift_compact as tc

_MAGIC = b"PAR1"
_DATA_PAGE, _DICTIONARY_PAGE = 0, 2
_GZIP = 2  # parquet's CompressionCodec enum
# PageHeader fields
_PAGE_TYPE, _PAGE_COMPRESSED_SIZE, _PAGE_CRC = 1, 3, 4
# FileMetaData.row_groups; RowGroup.columns/file_offset/total_compressed_size; ColumnChunk.file_offset/meta_data
_ROW_GROUPS, _RG_COLUMNS, _RG_FILE_OFFSET, _RG_COMPRESSED = 4, 1, 5, 6
_CC_FILE_OFFSET, _CC_META = 2, 3
_CC_PAGE_INDEX_FIELDS = (4, 5, 6, 7)  # offset/column index locations: not written by our writer
# ColumnMetaData fields
_CMD_UNCOMPRESSED = 6
_CMD_CODEC, _CMD_COMPRESSED, _CMD_DATA_PAGE, _CMD_INDEX_PAGE, _CMD_DICT_PAGE, _CMD_BLOOM = 4, 7, 9, 10, 11, 14


# threads compressing pages beside the encoding thread (0: inline): the cores of the machine, at most 4 (deflate
# of one column chunk's pages cannot keep more busy; each waits on the encoder for its pages). A Spark task sets
# it to its share of the cores (run/unit_work.py: task_threads), at least one
COMPRESS_THREADS = max(1, min(4, (os.cpu_count() or 1)))
_IN_FLIGHT_PER_THREAD = 2


def available() -> bool:
    try:
        import deflate  # noqa: F401
    except ImportError:  # an executor environment without it writes with Arrow's zlib: slower, same format
        return False
    return True


class GzipPageSink:
    """A write-only file object for ``pq.ParquetWriter`` (compression NONE) that writes the file to ``target``
    with every page gzipped. Call :meth:`start_footer` before the writer writes its footer (``writer.close()``),
    then :meth:`close`; :class:`GzipParquetWriter` does both."""

    def __init__(self, target: Any, level: int = 6, threads: int | None = None):
        import deflate

        self._gzip = deflate.gzip_compress
        self.threads = COMPRESS_THREADS if threads is None else max(0, threads)  # 0: compress inline
        # pages handed to the pool, in file order: (uncompressed offset, header, header bytes, page bytes, body)
        self._in_flight: deque[tuple[int, list, int, int, Future[Any]]] = deque()
        self._pool: ThreadPoolExecutor | None = None  # started with the first page, stopped with the file
        self.target = target
        self.level = level
        self._pending = bytearray()
        self._position = 0  # uncompressed offset of _pending[0]
        self._written = 0  # bytes written to target
        self._moved: dict[int, int] = {}  # uncompressed offset of a page boundary -> written offset
        # at a page boundary: how many bytes longer the rewritten page headers so far are (a varint may grow)
        self._header_growth: dict[int, int] = {}
        self._growth = 0
        self._in_footer = False
        self.closed = False
        self.failed = False  # a page could not be rewritten: the file is abandoned, never finished

    # -- the file object pyarrow writes to
    def write(self, data) -> int:
        if self.closed:
            raise ValueError("write to a closed GzipPageSink")
        self._pending += data
        if not self._in_footer:
            try:
                self._drain_pages()
            except BaseException:  # a page that cannot be rewritten, or its compression failed
                self.failed = True
                raise
        return len(data)

    def tell(self) -> int:
        return self._position + len(self._pending)

    def flush(self) -> None:
        pass

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def written_bytes(self) -> int:
        """Bytes in the output so far (compressed), e.g. to roll files at a target size."""
        return self._written

    def finish_pages(self) -> None:
        """Wait for every page handed to the pool and write it: the output then holds every whole page written."""
        try:
            while self._in_flight:
                self._emit_oldest()
        except BaseException:
            self.failed = True
            raise

    def stop_threads(self) -> None:
        """Stop the file's compressing threads (pages still in flight are dropped: call after the footer or on abort)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        self._in_flight.clear()

    def start_footer(self) -> None:
        self._drain_pages()
        self.finish_pages()
        if self._pending:
            raise tc.ThriftError(f"{len(self._pending)} bytes at offset {self._position} are not a whole parquet page")
        self._in_footer = True

    def close(self) -> None:
        self.stop_threads()
        if self.closed:
            return
        self.closed = True
        if self._in_footer and self._pending:
            self._emit(self._rewrite_footer(bytes(self._pending)))
            self._pending.clear()

    # -- pages
    def _emit(self, data: bytes) -> None:
        self.target.write(data)
        self._written += len(data)

    def _consume(self, n: int) -> None:
        del self._pending[:n]
        self._position += n

    def _drain_pages(self) -> None:
        if self._position == 0:
            if len(self._pending) < len(_MAGIC):
                return
            if bytes(self._pending[:4]) != _MAGIC:
                raise tc.ThriftError("not a parquet file (no PAR1 magic)")
            self._emit(_MAGIC)
            self._consume(len(_MAGIC))
        while self._pending:
            try:
                header, body_at = tc.read_struct(self._pending)
            except tc.ThriftError:
                return  # the rest of the header has not arrived yet
            size = tc.get(header, _PAGE_COMPRESSED_SIZE)
            if size is None or len(self._pending) < body_at + size:
                return
            kind = tc.get(header, _PAGE_TYPE)
            if kind not in (_DATA_PAGE, _DICTIONARY_PAGE):
                raise tc.ThriftError(f"page type {kind} at offset {self._position}: only v1 data and dictionary pages")
            raw = bytes(self._pending[body_at : body_at + size])
            future: Future[Any]
            if self.threads > 0:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="gzip-pages")
                future = self._pool.submit(self._gzip, raw, self.level)
            else:
                future = Future()
                future.set_result(self._gzip(raw, self.level))
            self._in_flight.append((self._position, header, body_at, body_at + size, future))
            self._consume(body_at + size)
            while len(self._in_flight) > max(1, self.threads) * _IN_FLIGHT_PER_THREAD or (
                    self._in_flight and self._in_flight[0][4].done()):  # fmt: skip
                self._emit_oldest()

    def _emit_oldest(self) -> None:
        """The oldest page handed out, compressed, with its header rewritten: written where the pages before it end."""
        position, header, body_at, length, future = self._in_flight.popleft()
        failure = future.exception()
        if failure is not None:  # raised here afresh: the pool's exception carries the other thread's frames
            raise RuntimeError(f"page at offset {position} could not be compressed: {failure!r}") from None
        body = future.result()
        tc.set_value(header, _PAGE_COMPRESSED_SIZE, len(body))
        if tc.get(header, _PAGE_CRC) is not None:  # the CRC covers the page as stored (compressed)
            tc.set_value(header, _PAGE_CRC, _signed32(zlib.crc32(body)))
        self._moved[position] = self._written
        self._header_growth[position] = self._growth
        new_header = tc.write_struct(header)
        self._emit(new_header + body)
        self._growth += len(new_header) - body_at
        self._moved[position + length] = self._written
        self._header_growth[position + length] = self._growth

    # -- footer
    def _rewrite_footer(self, tail: bytes) -> bytes:
        if len(tail) < 8 or tail[-4:] != _MAGIC:
            raise tc.ThriftError("parquet footer without PAR1 magic")
        (length,) = struct.unpack("<I", tail[-8:-4])
        if length != len(tail) - 8:
            raise tc.ThriftError(f"parquet footer of {length} bytes, {len(tail) - 8} arrived")
        meta, _ = tc.read_struct(tail[:-8])
        for row_group in tc.get(meta, _ROW_GROUPS, (tc.STRUCT, []))[1]:
            self._rewrite_row_group(row_group)
        out = tc.write_struct(meta)
        return out + struct.pack("<I", len(out)) + _MAGIC

    def _move(self, offset: int, what: str) -> int:
        if offset == 0:  # the magic is there, never a page: writers put 0 for "none" (an empty chunk's data page)
            return 0
        if offset not in self._moved:
            raise tc.ThriftError(f"{what} {offset} is not a page boundary of this file")
        return self._moved[offset]

    def _rewrite_row_group(self, row_group: list[tc.Field]) -> None:
        total = 0
        for chunk in tc.get(row_group, _RG_COLUMNS)[1]:
            if any(tc.get(chunk, f) is not None for f in _CC_PAGE_INDEX_FIELDS):
                raise tc.ThriftError("page indexes are not supported by GzipPageSink")
            meta = tc.get(chunk, _CC_META)
            if tc.get(meta, _CMD_BLOOM) is not None or tc.get(meta, _CMD_INDEX_PAGE) is not None:
                raise tc.ThriftError("parquet bloom filters and index pages are not supported by GzipPageSink")
            tc.set_value(meta, _CMD_CODEC, _GZIP)
            if not tc.get(meta, _CMD_COMPRESSED):  # no page at all (a column chunk of an empty row group)
                continue
            data_page = tc.get(meta, _CMD_DATA_PAGE)
            dict_page = tc.get(meta, _CMD_DICT_PAGE)
            first = dict_page if dict_page is not None else data_page
            end = first + tc.get(meta, _CMD_COMPRESSED)
            compressed = self._move(end, "column chunk end") - self._move(first, "column chunk start")
            tc.set_value(meta, _CMD_COMPRESSED, compressed)
            # the uncompressed size counts the page headers as written
            growth = self._header_growth[end] - self._header_growth[first]
            tc.set_value(meta, _CMD_UNCOMPRESSED, tc.get(meta, _CMD_UNCOMPRESSED) + growth)
            tc.set_value(meta, _CMD_DATA_PAGE, self._move(data_page, "data page offset"))
            if dict_page is not None:
                tc.set_value(meta, _CMD_DICT_PAGE, self._move(dict_page, "dictionary page offset"))
            offset = tc.get(chunk, _CC_FILE_OFFSET)
            if offset is not None:  # 0 (deprecated, as Arrow writes it), the first page, or the chunk's end
                tc.set_value(chunk, _CC_FILE_OFFSET, self._move(offset, "column chunk file_offset"))
            total += compressed
        if tc.get(row_group, _RG_FILE_OFFSET) is not None:
            tc.set_value(row_group, _RG_FILE_OFFSET, self._move(tc.get(row_group, _RG_FILE_OFFSET), "row group offset"))
        if tc.get(row_group, _RG_COMPRESSED) is not None:
            tc.set_value(row_group, _RG_COMPRESSED, total)


def _signed32(value: int) -> int:
    return value - (1 << 32) if value >= 1 << 31 else value


class GzipParquetWriter(pq.ParquetWriter):
    """``pq.ParquetWriter`` writing GZIP pages through libdeflate into ``target`` (see the module docstring);
    ``written_bytes()`` is the compressed size so far."""

    def __init__(self, target: Any, schema, *, compression_level: int = 6, **options: Any):
        # ``compress_threads``: the page compression threads of this file (default ``COMPRESS_THREADS``; 0 inline)
        self.page_sink = GzipPageSink(target, compression_level, options.pop("compress_threads", None))
        super().__init__(self.page_sink, schema, compression="none", **options)

    def write_table(self, table, row_group_size=None) -> None:
        """As ``pq.ParquetWriter.write_table``; every page Arrow has written is in ``target`` when it returns."""
        super().write_table(table, row_group_size)
        self.page_sink.finish_pages()

    def written_bytes(self) -> int:
        return self.page_sink.written_bytes()

    def close(self) -> None:
        if self.page_sink.failed:  # already raised from the write that failed
            self.abort()
        if self.is_open and not self.page_sink.closed:
            try:
                self.page_sink.start_footer()
            except BaseException:
                self.abort()  # and not again when the writer is collected
                raise
        super().close()
        self.page_sink.close()

    def abort(self) -> None:
        """Stop without a footer (the caller closes ``target``); a later ``close`` writes nothing."""
        self.is_open = False
        self.page_sink.closed = True
        self.page_sink.stop_threads()
