"""Property tests of our base-file writer (``write.base_file``, ``write.rolling``) on any Arrow schema a Hudi table
holds (``tests/support/arrow_strategies.py``: nested types, nulls at every depth, extreme decimals, timestamps,
NaN...): pyarrow reads back every value bit for bit, every file carries Hudi's footer for exactly its rows, and
hudi-rs reads the same rows from those files as a Hudi table (``tests/support/minimal_table.py``)."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given
from hypothesis import strategies as st

from hudi_cluster_core.hashing.bloom_filter import (
    BLOOM_FILTER_FOOTER_KEY, BLOOM_FILTER_TYPE_CODE_FOOTER_KEY, MAX_RECORD_KEY_FOOTER_KEY, MIN_RECORD_KEY_FOOTER_KEY,
    bloom_might_contain_many,
)  # fmt: skip
from hudi_cluster_core.io.storage import Storage
from hudi_cluster_core.write.base_file import ParquetOptions, WriteContext, write_base_file
from hudi_cluster_core.write.rolling import MEASURE_IN_MEMORY_BYTES, RollingWriter
from tests.support.arrow_strategies import arrow_schemas, arrow_tables, bit_exact, examples, record_keys
from tests.support.minimal_table import KEY, MinimalTable, with_meta

SCHEMAS = arrow_schemas(min_columns=1, max_columns=4, max_depth=2)


def keyed(schema: pa.Schema) -> pa.Schema:
    return pa.schema([pa.field(KEY, pa.string(), nullable=False), *schema])


@st.composite
def keyed_batches(draw, batches: int = 1, max_rows: int = 16) -> list[pa.Table]:
    """``batches`` tables of one schema (the record key ``KEY`` first), their keys distinct across all of them."""
    schema = draw(SCHEMAS)
    tables = [draw(arrow_tables(schema, 0, max_rows)) for _ in range(batches)]
    keys = iter(draw(record_keys(sum(t.num_rows for t in tables))))
    return [t.add_column(0, keyed(schema).field(0), pa.array([next(keys) for _ in range(t.num_rows)], pa.string()))
            for t in tables]  # fmt: skip


# Through Hudi's keys, as a job's config gives them: every codec Hudi names that Arrow writes (lzo: Arrow has none),
# spelled as Hudi's docs do. Tiny pages and row groups put many of each in one file (the gzip page writer
# rewrites every page header and the footer's offsets); small bloom sizes make dynamic filters grow rows.
parquet_options = st.fixed_dictionaries({
    "hoodie.parquet.compression.codec": st.sampled_from(["gzip", "GZIP", "snappy", "zstd", "lz4", "uncompressed"]),
    "hoodie.bloom.index.filter.type": st.sampled_from(["DYNAMIC_V0", "SIMPLE"]),
    "hoodie.index.bloom.num_entries": st.sampled_from(["1", "3", "60000"]),
    "hoodie.bloom.index.filter.dynamic.max.entries": st.sampled_from(["4", "100000"]),
    "hoodie.parquet.block.size": st.sampled_from(["1", "300", str(120 * 1024 * 1024)]),
    # Not below 8 bytes: with a data page size of 4 bytes or less, pyarrow 26 writes an empty data page before
    # the first one, and its own reader then drops a row group's only row when that row has no leaf value (an
    # empty or null list or map): "expected length 1 but got length 0". hudi-rs (arrow-rs) reads those files
    # right. No Hudi config comes near it (hoodie.parquet.page.size defaults to 1 MiB).
    "hoodie.parquet.page.size": st.sampled_from(["8", "200", str(1024 * 1024)]),
}).map(ParquetOptions.from_hoodie)  # fmt: skip


@dataclass(frozen=True)
class Rolled:
    """Base files a :class:`RollingWriter` wrote in one completed instant of a Hudi table at ``base``."""

    base: str
    storage: Storage
    stats: list[dict]
    written: pa.Table  # the rows given to the writer (meta columns set), without _hoodie_file_name

    def path(self, stat: dict) -> str:
        return self.storage.join(stat["path"])


@contextmanager
def rolled_files(batches: list[pa.Table], options: ParquetOptions, target: int,
                 expect: int | None = None) -> Iterator[Rolled]:  # fmt: skip
    """``batches`` (meta columns added) written in order through one :class:`RollingWriter` rolling at ``target``,
    told to expect their rows as ``expect`` files when given, in a fresh table (deleted on exit)."""
    with tempfile.TemporaryDirectory() as base:
        table = MinimalTable(base, batches[0].schema)
        with table.begin() as instant:
            context = WriteContext(table.storage.base_uri, instant, "", "0-1-0", options)
            writer = RollingWriter(table.storage, context, target)
            if expect is not None:
                writer.expect(sum(batch.num_rows for batch in batches), expect)
            written = []
            for batch in batches:
                full = with_meta(batch, instant)
                writer.write(full)
                written.append(full)
            stats = writer.close()
            table.complete(instant, stats)
        yield Rolled(base, table.storage, stats, pa.concat_tables(written).drop_columns(["_hoodie_file_name"]))


def java_order(key: str) -> bytes:
    """Java's ``String.compareTo`` order (UTF-16 code units), the order of Hudi's min/max record key."""
    return key.encode("utf-16-be")


def check_footer(path: str, options: ParquetOptions) -> pa.Table:
    """The file's rows, once its footer is checked to be Hudi's for exactly those rows."""
    parquet = pq.ParquetFile(path)
    footer = {k.decode(): v.decode() for k, v in (parquet.metadata.metadata or {}).items()}
    rows = parquet.read()
    keys = rows.column("_hoodie_record_key").to_pylist()
    assert "ARROW:schema" not in footer  # Hudi's files carry none
    assert bloom_might_contain_many(footer[BLOOM_FILTER_FOOTER_KEY], keys).all()
    dynamic = options.bloom_filter_type == "DYNAMIC_V0"
    assert footer.get(BLOOM_FILTER_TYPE_CODE_FOOTER_KEY) == ("DYNAMIC_V0" if dynamic else None)  # as Hudi writes it
    if keys:
        assert (footer[MIN_RECORD_KEY_FOOTER_KEY], footer[MAX_RECORD_KEY_FOOTER_KEY]) == \
            (min(keys, key=java_order), max(keys, key=java_order))
    else:  # as Hudi: no range for a file without keys
        assert MIN_RECORD_KEY_FOOTER_KEY not in footer and MAX_RECORD_KEY_FOOTER_KEY not in footer
    for codec in {parquet.metadata.row_group(g).column(c).compression for g in range(parquet.num_row_groups)
                  for c in range(parquet.metadata.num_columns)}:  # fmt: skip
        assert codec.lower() == options.compression  # Arrow's "lz4" is parquet's LZ4 (Hadoop framing), as Hudi's
    return rows


def hudi_rs_rows(base: str) -> pa.Table:
    """hudi-rs's snapshot of the table, by record key (through its timeline, file listing and commit schema)."""
    from hudi import HudiTable

    batches = HudiTable(base).read()
    return pa.Table.from_batches(batches).sort_by("_hoodie_record_key") if batches else pa.table({})


def same_rows(actual: pa.Table, expected: pa.Table) -> None:
    assert actual.num_rows == expected.num_rows
    if expected.num_rows:
        assert bit_exact(actual.select(expected.column_names)) == bit_exact(expected)


@examples(150)
@given(keyed_batches(), parquet_options)
def test_write_base_file_keeps_every_value_and_hudis_footer(batches, options):
    [rows] = batches
    with tempfile.TemporaryDirectory() as base:
        table = MinimalTable(base, rows.schema)
        with table.begin() as instant:
            full = with_meta(rows, instant)
            context = WriteContext(table.storage.base_uri, instant, "", "0-1-0", options)
            stat = write_base_file(table.storage, context, full)
            table.complete(instant, [stat])
        name = stat["path"]
        back = check_footer(table.storage.join(name), options)
        assert back.column("_hoodie_file_name").to_pylist() == [name] * rows.num_rows
        same_rows(back, full.drop_columns(["_hoodie_file_name"]))
        assert stat["numWrites"] == rows.num_rows
        same_rows(hudi_rs_rows(base), back.sort_by("_hoodie_record_key"))
        from hudi import HudiTable  # and as the clustering reads a slice: by its files' paths

        reader = HudiTable(base).create_file_group_reader_with_options()
        same_rows(pa.Table.from_batches([reader.read_file_slice_from_paths(name, [])]), back)


@examples(80)
@given(st.integers(1, 4).flatmap(lambda n: keyed_batches(batches=n, max_rows=20)), parquet_options,
       st.integers(1, 6000))  # fmt: skip
def test_rolling_writer_rolls_files_each_holding_exactly_its_rows(batches, options, target):
    with rolled_files(batches, options, target) as rolled:
        stats = rolled.stats
        files = []
        for number, stat in enumerate(stats):
            path = rolled.path(stat)
            back = check_footer(path, options)
            assert back.column("_hoodie_file_name").to_pylist() == [stat["path"]] * back.num_rows
            assert stat["numWrites"] == back.num_rows
            # no whole file (footer included) over the target, but one holding a single row (or none) larger than it
            assert os.path.getsize(path) <= target or back.num_rows <= 1, (os.path.getsize(path), target)
            # a file rolls once full: its rows took at least half the room it had (the writer gathers small writes
            # into one row group, whose fixed chunk bytes and footer entries it reserves once)
            if number < len(stats) - 1:
                assert back.num_rows and (back.num_rows == 1 or os.path.getsize(path) >= target / 2)
            files.append(back)
        same_rows(pa.concat_tables(files), rolled.written)  # in order: the files hold the rows as they were written
        same_rows(hudi_rs_rows(rolled.base), pa.concat_tables(files).sort_by("_hoodie_record_key"))


@examples(40)
@given(st.integers(1, 4).flatmap(lambda n: keyed_batches(batches=n, max_rows=20)), parquet_options,
       st.integers(1, 6), st.sampled_from([1 << 40, 3000]))  # fmt: skip
def test_rolling_writer_told_the_plan_writes_its_files_of_equal_rows(batches, options, planned, target):
    """``expect(rows, files)``: the planned files, of equal rows (within one), when they fit the target; files
    still keep within a target that binds (then more files than planned), and every row is written once, in order."""
    rows = sum(b.num_rows for b in batches)
    with rolled_files(batches, options, target, expect=planned) as rolled:
        stats = rolled.stats
        counts = [stat["numWrites"] for stat in stats]
        sizes = [os.path.getsize(rolled.path(stat)) for stat in stats]
        if target > 1 << 30:  # nothing binds but the plan
            assert len(stats) == max(1, min(planned, rows)), counts
            assert max(counts) - min(counts) <= 1, counts
        else:
            assert all(size <= target or count <= 1 for size, count in zip(sizes, counts)), (sizes, counts)
            assert len(stats) >= min(planned, rows)
        back = pa.concat_tables([pq.read_table(rolled.path(s)) for s in stats])
        same_rows(back.drop_columns(["_hoodie_file_name"]), rolled.written)


def plain_rows(n: int, start: int = 0) -> pa.Table:
    """``n`` rows of distinct keys from ``start`` on, and random numbers and hex strings (hardly compressible)."""
    rng = np.random.default_rng(start)
    schema = pa.schema([pa.field(KEY, pa.string(), nullable=False), pa.field("v", pa.int64()),
                        pa.field("s", pa.string())])  # fmt: skip
    return pa.table([pa.array([f"key-{i:08d}" for i in range(start, start + n)]), pa.array(rng.integers(0, 1 << 40, n)),
                     pa.array([f"{x:016x}" for x in rng.integers(0, 1 << 62, n)])], schema=schema)  # fmt: skip


def read_back(rolled: Rolled) -> pa.Table:
    """The rows of every file, in the order written, without ``_hoodie_file_name``."""
    return pa.concat_tables([pq.read_table(rolled.path(s)) for s in rolled.stats]).drop_columns(["_hoodie_file_name"])


def row_groups(path: str) -> list[int]:
    metadata = pq.read_metadata(path)
    return [metadata.row_group(g).num_rows for g in range(metadata.num_row_groups)]


def test_rolling_writer_gathers_small_writes_into_row_groups_of_at_least_100_rows():
    """Rows of many small writes go out together, a row group being at least 100 rows (as parquet-mr's, Hudi's
    writer) even when ``hoodie.parquet.block.size`` is less; rows keep their order."""
    batches = [plain_rows(3, 3 * i) for i in range(60)]
    options = ParquetOptions.from_hoodie({"hoodie.parquet.block.size": "1",
                                          "hoodie.parquet.bloom.filter.enabled": "false"})  # fmt: skip
    with rolled_files(batches, options, 1 << 40) as rolled:
        [stat] = rolled.stats
        assert row_groups(rolled.path(stat)) == [100, 80]
        same_rows(read_back(rolled), rolled.written)


def test_rolling_writer_files_of_small_writes_are_one_row_group_each_and_fill_the_target():
    """1,000 rows in writes of 5 at an 8 KB target: every file one row group (the rows measured in memory first),
    none over the target, every one but the last at least half full."""
    options = ParquetOptions(bloom_enabled=False)
    with rolled_files([plain_rows(5, 5 * i) for i in range(200)], options, 8_000) as rolled:
        sizes = [os.path.getsize(rolled.path(stat)) for stat in rolled.stats]
        assert len(rolled.stats) > 2 and all(len(row_groups(rolled.path(stat))) == 1 for stat in rolled.stats)
        assert max(sizes) <= 8_000 and min(sizes[:-1]) >= 4_000, sizes
        same_rows(read_back(rolled), rolled.written)


def test_rolling_writer_measures_a_first_quarter_of_a_large_file_in_the_file():
    """Rows that fit a file take more than ``MEASURE_IN_MEMORY_BYTES`` in memory: a quarter of them is the file's
    first row group, measured before the rest fills the file; no file over the target, all but the last half full."""
    rows = plain_rows(60_000)
    options = ParquetOptions(bloom_enabled=False)
    assert rows.nbytes > 2 * MEASURE_IN_MEMORY_BYTES
    with rolled_files([rows], options, 1_200_000) as rolled:
        sizes = [os.path.getsize(rolled.path(stat)) for stat in rolled.stats]
        first = row_groups(rolled.path(rolled.stats[0]))
        assert len(first) == 2 and first[0] < first[1], first
        assert len(sizes) > 1 and max(sizes) <= 1_200_000 and min(sizes[:-1]) >= 600_000, sizes
        same_rows(read_back(rolled), rolled.written)
