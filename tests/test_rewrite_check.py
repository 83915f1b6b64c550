"""Issue 19.5, nothing is ever silently changed: the rewrite check (run/digest.py, io/row_hash.py).

Properties of the digest on generated Arrow tables of every type the tables have (nested structs, lists, maps,
decimals, timestamps, binary, floats with NaN and -0.0, nulls at every depth); then the check inside real group
tasks (in-process, armed as a Spark task arms it); then fault injection on the real path: a clustering run whose
task alters one row between read and write fails with one line naming the column and the key, its instant is
rolled back, and Apache Hudi and hudi-rs read the table unchanged.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import struct
import subprocess
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hudi_cluster_core import failpoints
from hudi_cluster_core.errors import RewriteMismatch
from hudi_cluster_core.io.row_hash import value_codes
from hudi_cluster_core.config.catalogue import TASK_VERIFY
from hudi_cluster_core.run import digest as rewrite_check
from hudi_cluster_core.run.digest import KEY, ColumnDigests, Digest
from hudi_cluster_core.run.task import GroupTask
from hudi_cluster_core.testing.execution import ExecutionInput, execution_table, group_task
from hudi_cluster_core.write.base_file import ParquetOptions
from tests.support.apache_hudi import read_hudi_snapshot
from tests.support.readers import assert_same_rows, read_hudi_rs
from tests.support.runs import cli_command, cli_env, error_lines, table_problems

# ------------------------------------------------------------------------------------------ generated tables

_LEAVES = [
    (pa.int8(), st.integers(-(2**7), 2**7 - 1)), (pa.int32(), st.integers(-(2**31), 2**31 - 1)),
    (pa.int64(), st.integers(-(2**63), 2**63 - 1)), (pa.uint16(), st.integers(0, 2**16 - 1)),
    (pa.uint64(), st.integers(0, 2**64 - 1)), (pa.bool_(), st.booleans()),
    (pa.float32(), st.floats(width=32)), (pa.float64(), st.floats() | st.sampled_from([0.0, -0.0, math.nan])),
    (pa.string(), st.text(max_size=20)), (pa.large_string(), st.text(max_size=40)),
    (pa.binary(), st.binary(max_size=30)), (pa.large_binary(), st.binary(max_size=9)),
    (pa.binary(3), st.binary(min_size=3, max_size=3)),
    (pa.decimal128(10, 2), st.decimals(-(10**8) + 1, 10**8 - 1, places=2)),
    (pa.decimal256(40, 5), st.decimals(-(10**30), 10**30, places=5)),
    (pa.date32(), st.dates()), (pa.date64(), st.dates()),
    (pa.timestamp("us", tz="UTC"), st.datetimes(dt.datetime(1900, 1, 1), dt.datetime(2200, 1, 1))),
    (pa.timestamp("ms"), st.datetimes(dt.datetime(1900, 1, 1)).map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))),
    (pa.time64("us"), st.times()), (pa.duration("s"), st.integers(-(2**40), 2**40).map(lambda s: dt.timedelta(seconds=s))),
    (pa.null(), st.none()),
]  # fmt: skip
NAMES = st.text("abcxyz", min_size=1, max_size=3)


def _nested(children):
    def struct_of(fields):
        return (pa.struct([pa.field(name, t) for name, (t, _) in fields]),
                st.fixed_dictionaries({name: st.none() | values for name, (_, values) in fields}))  # fmt: skip

    def list_of(item, kind):
        t, values = item
        elements = st.lists(st.none() | values, max_size=4)
        if kind == "fixed":
            return pa.list_(t, 2), st.lists(st.none() | values, min_size=2, max_size=2)
        return (pa.large_list(t) if kind == "large" else pa.list_(t)), elements

    def map_of(key, item):
        (kt, keys), (vt, values) = key, item
        return pa.map_(kt, vt), st.lists(st.tuples(keys, st.none() | values), max_size=3)

    hashable_keys = st.sampled_from([leaf for leaf in _LEAVES if leaf[0] in (pa.int32(), pa.string(), pa.int64())])
    return st.one_of(
        st.tuples(children, st.sampled_from(["list", "large", "fixed"])).map(lambda a: list_of(*a)),
        st.lists(st.tuples(NAMES, children), min_size=1, max_size=3, unique_by=lambda f: f[0]).map(struct_of),
        st.tuples(hashable_keys, children).map(lambda a: map_of(*a)),
    )


TYPES = st.recursive(st.sampled_from(_LEAVES), _nested, max_leaves=5)


def make_table(data, typed, min_rows=0, keyless=False) -> pa.Table:
    """A table of unique record keys (or null ones) and one column ``v`` of ``typed``, nulls included."""
    arrow_type, values = typed
    rows = data.draw(st.lists(st.none() | values, min_size=min_rows, max_size=25))
    keys = [None] * len(rows) if keyless else [f"k{i:03d}" for i in range(len(rows))]
    return pa.table({KEY: pa.array(keys, pa.string()), "v": pa.array(rows, arrow_type)})


@st.composite
def tables(draw, min_rows=0, keyless=False):
    class Data:  # make_table's draws through this composite
        @staticmethod
        def draw(strategy):
            return draw(strategy)

    return make_table(Data, draw(TYPES), min_rows, keyless)


def digest(table: pa.Table) -> ColumnDigests:
    """The check's digest of ``table`` (``total``: the whole-row sum a task compares) and, for the diagnosis after a
    mismatch, the per-column sums."""
    out = ColumnDigests()
    out.add(table, frozenset())
    fast = Digest()
    fast.add(table, frozenset())
    assert (fast.rows, fast.total) == (out.rows, out.total)
    return out


def same(a: ColumnDigests, b: ColumnDigests) -> bool:
    """Equal digests (a column no row reached counts as 0, as the check counts it)."""
    names = {*a.columns, *b.columns}
    return (a.rows, a.total) == (b.rows, b.total) and all(a.columns.get(n, 0) == b.columns.get(n, 0) for n in names)


def canon(value):
    """A value as written: floats by their bits (NaNs alike), containers recursively."""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else struct.pack("<d", value)
    if isinstance(value, dt.datetime) and value.tzinfo is not None:  # to_pylist of a UTC column
        return value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    if isinstance(value, dict):
        return tuple(sorted((k, canon(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(canon(v) for v in value)
    return value


def with_values(table: pa.Table, column: str, values: list) -> pa.Table:
    field = table.schema.field(column)
    return table.set_column(table.schema.get_field_index(column), field, pa.array(values, field.type))


def rechunked(table: pa.Table, cuts: list[int]) -> pa.Table:
    """The same rows in chunks cut at ``cuts`` (slices of a larger table: buffers with offsets)."""
    padded = pa.concat_tables([table.slice(0, 1), table, table.slice(0, 1)]).combine_chunks() if table.num_rows else table
    bounds = sorted({0, table.num_rows, *[c % (table.num_rows + 1) for c in cuts]})
    parts = [padded.slice(1 + a, b - a) for a, b in zip(bounds, bounds[1:])] if table.num_rows else [table]
    return pa.concat_tables(parts)


SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])  # fmt: skip


@SETTINGS
@given(table=tables(), seed=st.integers(0, 2**32 - 1), cuts=st.lists(st.integers(0, 30), max_size=4))
def test_the_digest_ignores_row_order_and_chunking(table, seed, cuts):
    expected = digest(table)
    order = np.random.default_rng(seed).permutation(table.num_rows)
    assert same(digest(table.take(pa.array(order, pa.int64()))), expected)
    assert same(digest(rechunked(table, cuts)), expected)
    split = Digest()
    for part in rechunked(table, cuts).to_batches():
        split.merge(digest(pa.Table.from_batches([part])))
    assert (split.rows, split.total) == (expected.rows, expected.total)


@SETTINGS
@given(data=st.data())
def test_any_changed_value_changes_its_column_alone(data):
    typed = data.draw(TYPES)
    table = make_table(data, typed, min_rows=1)
    rows = table.column("v").to_pylist()
    row = data.draw(st.integers(0, len(rows) - 1))
    replacement = data.draw(st.none() | typed[1])
    assume(canon(replacement) != canon(rows[row]))
    rows[row] = replacement
    before, after = digest(table), digest(with_values(table, "v", rows))
    assert before.total != after.total and before.columns["v"] != after.columns["v"], (rows, row)
    assert before.columns[KEY] == after.columns[KEY] and before.rows == after.rows


@SETTINGS
@given(table=tables(min_rows=2), pick=st.tuples(st.integers(0, 99), st.integers(0, 99)))
def test_a_value_moved_to_another_key_changes_its_column(table, pick):
    rows = table.column("v").to_pylist()
    a, b = pick[0] % len(rows), pick[1] % len(rows)
    assume(canon(rows[a]) != canon(rows[b]))
    rows[a], rows[b] = rows[b], rows[a]
    before, after = digest(table), digest(with_values(table, "v", rows))
    assert before.total != after.total and before.columns["v"] != after.columns["v"]


@SETTINGS
@given(table=tables(min_rows=1), pick=st.integers(0, 99), keyless=st.booleans())
def test_a_dropped_or_duplicated_row_changes_the_count_and_the_keys(table, pick, keyless):
    if keyless:
        table = with_values(table, KEY, [None] * table.num_rows)
    row = pick % table.num_rows
    before = digest(table)
    for changed in (pa.concat_tables([table.slice(0, row), table.slice(row + 1)]),
                    pa.concat_tables([table, table.slice(row, 1)])):  # fmt: skip
        after = digest(changed)
        assert after.rows != before.rows and after.total != before.total
        assert keyless or after.columns.get(KEY, 0) != before.columns.get(KEY, 0)


@SETTINGS
@given(table=tables(min_rows=2, keyless=True), pick=st.tuples(st.integers(0, 99), st.integers(0, 99)))
def test_without_record_keys_a_value_moved_between_rows_changes_the_digest(table, pick):
    rows = table.column("v").to_pylist()
    a, b = pick[0] % len(rows), pick[1] % len(rows)
    assume(canon(rows[a]) != canon(rows[b]))
    table = table.append_column("w", pa.array(range(len(rows)), pa.int64()))  # the rows differ elsewhere
    rows[a], rows[b] = rows[b], rows[a]
    moved = digest(with_values(table, "v", rows))
    assert moved.columns["v"] == digest(table).columns["v"]  # the same values, in other rows
    assert moved.total != digest(table).total


@SETTINGS
@given(values=st.lists(st.none() | st.binary(max_size=40), min_size=1, max_size=30), text=st.booleans())
def test_every_string_layout_gives_the_same_codes(values, text):
    """Strings are hashed one of three ways by their lengths in a block (all equal: a matrix in place; close: padded
    to the longest by ``ascii_rpad``; skewed: each padded to its own words by a join); all give the same codes."""
    if text:
        values = [v.decode("latin-1") if v is not None else None for v in values]  # non-ASCII UTF-8 too
    arrow_type = pa.string() if text else pa.binary()
    whole = value_codes(pa.array(values, arrow_type))[0]
    one_by_one = np.concatenate([value_codes(pa.array([v], arrow_type))[0] for v in values])
    long = ("x" * 5000) if text else b"x" * 5000  # makes the block skewed: the join path
    skewed = value_codes(pa.array(values + [long], arrow_type))[0][:-1]
    large = value_codes(pa.array(values, pa.large_string() if text else pa.large_binary()))[0]
    assert np.array_equal(whole, one_by_one) and np.array_equal(whole, skewed) and np.array_equal(whole, large)


def test_wide_rows_are_hashed_in_smaller_blocks_to_the_same_digest():
    """A block holds at most ~8 MiB of Arrow data (hashing copies a block's text a few times): 2,000 rows of
    20 KB take several blocks, and give what one row at a time gives."""
    rows = 2000
    table = pa.table({KEY: [f"k{i}" for i in range(rows)], "doc": [f"{i:05d}" * 4000 for i in range(rows)]})
    whole = Digest()
    whole.add(table, frozenset())
    one_by_one = Digest()
    for i in range(rows):
        one_by_one.add(table.slice(i, 1), frozenset())
    assert (whole.rows, whole.total) == (one_by_one.rows, one_by_one.total) == (rows, whole.total)


def test_promotions_between_read_and_write_are_no_change():
    """What the group's schema or ``concat_tables(promote_options="permissive")`` does to a column on its way:
    widened ints, ints to floats, float32 to float64, string to large_string and binary, decimal precision and
    scale, timestamp units, a struct field added as null, a dictionary decoded, a column added as null."""
    pairs = [
        (pa.array([1, None, -7], pa.int32()), pa.array([1, None, -7], pa.int64())),
        (pa.array([1, None, -7], pa.int32()), pa.array([1.0, None, -7.0], pa.float64())),
        (pa.array([1.5, -0.0, math.nan], pa.float32()), pa.array([1.5, -0.0, math.nan], pa.float64())),
        (pa.array(["a", None, "ü"]), pa.array(["a", None, "ü"], pa.large_string())),
        (pa.array(["a", None, "long enough to be out of line"]), pa.array(["a", None, "long enough to be out of line"], pa.string_view())),
        (pa.array(["a", None, "ü"]), pa.array([b"a", None, "ü".encode()], pa.binary())),
        (pa.array([Decimal("1.50"), None], pa.decimal128(10, 2)), pa.array([Decimal("1.500"), None], pa.decimal128(20, 3))),
        (pa.array([1_000, None], pa.timestamp("ms")), pa.array([1_000_000, None], pa.timestamp("us"))),
        (pa.array([{"a": 1}, None]), pa.array([{"a": 1, "b": None}, None], pa.struct([("a", pa.int64()), ("b", pa.string())]))),
        (pa.array(["x", "y", "x"]).dictionary_encode(), pa.array(["x", "y", "x"])),
        (pa.array([[1, None]], pa.list_(pa.int32())), pa.array([[1, None]], pa.large_list(pa.int64()))),
    ]  # fmt: skip
    for narrow, wide in pairs:
        assert np.array_equal(value_codes(narrow)[0], value_codes(wide)[0]), (narrow.type, wide.type)
    keys = pa.array(["k1", "k2"])
    assert same(digest(pa.table({KEY: keys})), digest(pa.table({KEY: keys, "extra": pa.nulls(2)})))


def test_values_the_writer_keeps_apart_hash_apart():
    """Equality is the value as written: -0.0 is not 0.0, NaN is not a number, an empty string or list is not
    null, a null inside a list counts, and a struct field's name is part of its value."""
    apart = [
        pa.array([0.0, -0.0, math.nan, 1.5]), pa.array(["", None, "\x00", "\x00\x00"]),
        pa.array([[], None, [None], [None, None]], pa.list_(pa.int64())),
        pa.array([{"a": 1, "b": None}, {"a": None, "b": 1}, {"a": None, "b": None}, None]),
    ]
    for array in apart:
        hashes, valid = value_codes(array)
        seen = [h for h, ok in zip(hashes.tolist(), valid if valid is not None else [True] * len(array)) if ok]
        assert len(set(seen)) == len(seen), array


# ------------------------------------------------------------------------------ inside real group tasks (in-process)


class ReadThenWrite:
    """A third-party style strategy: the group's rows through ``read_arrow``, sorted, out through ``write``."""

    def __init__(self, num_files=None, read_twice=False):
        self.num_files, self.read_twice = num_files, read_twice

    def execute_group(self, task: GroupTask):
        if self.read_twice:
            task.read_slices()
        rows = task.read_arrow()
        return task.write(rows.sort_by("x"), self.num_files)


def kit_task(tmp_path, **fields) -> GroupTask:
    """A group of 3 slices (rows with nulls, several types) over a small table the append writer wrote."""
    base, slices = execution_table(4, 3, 2, 40)
    chosen = tuple(s for s in slices if s.partition == "us")[:3]
    case = ExecutionInput(base, chosen, ("x",), "linear", 2, f"2028{abs(hash(str(tmp_path))) % 10**13:013d}")
    return replace(group_task(None, case), **fields)


def write_paths(task: GroupTask, how: str) -> list[GroupTask]:
    """The task(s) of ``how``, armed as ``run/spark.py`` arms them."""
    budget = {"spilled": 4096, "split": 4096, "unsorted": 4096}.get(how, task.memory_budget)
    units = 2 if how == "split" else 1
    preserve = how != "restamped"  # a plan's choice: rows get the clustering instant and fresh sequence numbers
    return [rewrite_check.armed(replace(task, memory_budget=budget, unit=u, units=units, write_token=f"{u}-1-1",
                                        preserve_hoodie_metadata=preserve))
            for u in range(units)]  # fmt: skip


def execute(task: GroupTask, how: str) -> list[dict]:
    if how in ("memory", "spilled", "split"):
        return task.write_sorted(["x", "n"], "linear")
    if how == "unsorted":
        return task.write_sorted([], "linear")
    if how == "restamped":
        return task.write_sorted(["x"], "linear")
    strategy = {"read-write": ReadThenWrite(), "three-files": ReadThenWrite(3), "read-twice": ReadThenWrite(read_twice=True)}[how]
    return strategy.execute_group(task)


PATHS = ["memory", "spilled", "split", "unsorted", "restamped", "read-write", "three-files", "read-twice"]


@pytest.mark.parametrize("how", PATHS)
def test_every_write_path_passes_the_check_unchanged(tmp_path, how):
    written = 0
    for task in write_paths(kit_task(tmp_path), how):
        stats = execute(task, how)
        rewrite_check.check(task, stats)
        assert task.digest is not None and task.digest.input_seen and task.digest.output.rows == sum(s["numWrites"] for s in stats)
        written += task.digest.output.rows
    assert written == kit_task(tmp_path).read_arrow().num_rows


@pytest.mark.parametrize("how", ["memory", "spilled", "split", "read-write", "three-files"])
@pytest.mark.parametrize("corruption", ["value:s", "value:x", "move:n", "drop", "duplicate"])
def test_a_row_altered_between_read_and_write_fails_the_group_naming_it(tmp_path, monkeypatch, how, corruption):
    rows = kit_task(tmp_path).read_arrow()
    victim = next(k for k, s, n in zip(*(rows.column(c).to_pylist() for c in (KEY, "s", "n"))) if s and n is not None)
    monkeypatch.setattr(failpoints, "_corrupted", False)
    monkeypatch.setenv(failpoints.CORRUPT_ENV, f"{corruption}@{victim}")
    failures = []
    for task in write_paths(kit_task(tmp_path), how):
        try:
            rewrite_check.check(task, execute(task, how))
        except RewriteMismatch as mismatch:
            failures.append(str(mismatch))
    assert len(failures) == 1, failures
    kind, _, column = corruption.partition(":")
    expected = {
        "value": rf"^group 0: column '{column}' changed in the rewrite \(e\.g\. key '{victim}'\)$",
        "move": rf"^group 0: column '{column}' changed in the rewrite \(e\.g\. key '[^']+'\)$",
        "drop": rf"^group 0: \d+ rows written for \d+ read in the rewrite \(e\.g\. key '{victim}' lost\)$",
        "duplicate": rf"^group 0: \d+ rows written for \d+ read in the rewrite \(e\.g\. key '{victim}' duplicated\)$",
    }[kind]
    assert re.match(expected, failures[0]), failures[0]


def evolved_group(tmp_path, keyless: bool = False) -> GroupTask:
    """A group of two base files from before and after a schema evolution: ``x`` widened from int32 to int64, a
    nested struct and a column ``extra`` added, rows with nulls at every depth."""
    from hudi_cluster_core.plan.avro_plan import InputSlice, PlanGroup

    def part(first: int, n: int, evolved: bool) -> pa.Table:
        keys = [f"k{first + i:04d}" for i in range(n)]
        columns = {
            "_hoodie_commit_time": ["20250101000000000"] * n, "_hoodie_commit_seqno": [f"s{first + i}" for i in range(n)],
            "_hoodie_record_key": pa.array([None] * n if keyless else keys, pa.string()),
            "_hoodie_partition_path": ["p"] * n, "_hoodie_file_name": ["old"] * n,
            "x": pa.array([(i * 7919) % 100 - 50 for i in range(n)], pa.int64() if evolved else pa.int32()),
            "s": pa.array([None if i % 5 == 0 else {"a": [i, None], "b": None if i % 3 else f"t{i}"} for i in range(n)]),
        }  # fmt: skip
        if evolved:
            columns["extra"] = pa.array([None if i % 4 else i / 3 for i in range(n)], pa.float64())
        return pa.table(columns)

    (tmp_path / "p").mkdir(parents=True, exist_ok=True)
    slices = []
    for index, table in enumerate([part(0, 300, False), part(300, 200, True)]):
        name = f"f{index}-0_0-1-1_20250101000000000.parquet"
        pq.write_table(table, tmp_path / "p" / name, row_group_size=64)
        slices.append(InputSlice("p", f"f{index}-0", str(tmp_path / "p" / name)))
    group = PlanGroup(0, "p", tuple(slices), 1)
    # keyless: no bloom filter (its footer needs keys; writing virtual-key tables is another piece of work)
    options = ParquetOptions(compression="snappy", bloom_enabled=not keyless)
    return GroupTask(str(tmp_path), "20260101000000000", group, None, None, settings={}, options=options)


@pytest.mark.parametrize("how", ["memory", "spilled", "split", "read-write"])
def test_rows_of_an_evolved_schema_pass_widened(tmp_path, how):
    """Slices from before and after a schema evolution reach the writer widened to the group's schema (by
    ``concat_tables(promote_options="permissive")`` or the slice reader's casts): that is no change."""
    written = 0
    for task in write_paths(evolved_group(tmp_path), how):
        stats = task.write_sorted(["x"], "linear") if how != "read-write" else ReadThenWrite().execute_group(task)
        rewrite_check.check(task, stats)
        written += task.digest.output.rows
    assert written == 500


@pytest.mark.parametrize(("corruption", "says"), [
    ("value:x@*", r"column 'x' changed in the rewrite \(no example: the rows have no record key\)"),
    ("move:x@*", r"values moved between rows in the rewrite \(every column holds the same values\)"),
    ("drop@*", r"499 rows written for 500 read in the rewrite \(no example: the rows have no record key\)"),
])  # fmt: skip
def test_without_record_keys_the_check_still_stops_a_change(tmp_path, monkeypatch, corruption, says):
    """Virtual keys (Hudi's meta columns null): no key to name, the same digests all the same."""
    monkeypatch.setattr(failpoints, "_corrupted", False)
    task = evolved_group(tmp_path, keyless=True)
    (armed,) = write_paths(task, "memory")
    rewrite_check.check(armed, armed.write_sorted(["x"], "linear"))  # unchanged: passes
    monkeypatch.setenv(failpoints.CORRUPT_ENV, corruption)
    (armed,) = write_paths(task, "memory")
    with pytest.raises(RewriteMismatch) as failed:
        rewrite_check.check(armed, armed.write_sorted(["x"], "linear"))
    assert re.fullmatch("group 0: " + says, str(failed.value)), str(failed.value)


def test_consistent_bucket_children_are_checked(tmp_path, monkeypatch):
    """The consistent-bucket execution notes every row it routes to a child bucket: unchanged rows pass, a
    changed one is named."""
    from hudi_cluster_consistent_bucket.execution import write_children
    from hudi_cluster_consistent_bucket.hashing import REPLACE, Node

    children = [Node(2**30, "child-a", REPLACE), Node(2**31 - 1, "child-b", REPLACE)]
    (task,) = write_paths(kit_task(tmp_path), "spilled")
    rewrite_check.check(task, write_children(task, children, [KEY], None))
    victim = kit_task(tmp_path).read_arrow().column(KEY)[7].as_py()
    monkeypatch.setattr(failpoints, "_corrupted", False)
    monkeypatch.setenv(failpoints.CORRUPT_ENV, f"value:y@{victim}")
    (task,) = write_paths(kit_task(tmp_path), "spilled")
    with pytest.raises(RewriteMismatch, match=rf"^group 0: column 'y' changed in the rewrite \(e\.g\. key '{victim}'\)$"):
        rewrite_check.check(task, write_children(task, children, [KEY], None))


@pytest.mark.parametrize("how", ["memory", "spilled", "three-files"])
def test_full_reads_the_written_files_back(tmp_path, how):
    """``hudi.cluster.task.verify=full`` also digests what landed on storage (through the writer and its gzip
    pages): unchanged files pass; a file that holds other values than were handed to the writer is named."""
    full = {TASK_VERIFY: "full"}
    (task,) = write_paths(kit_task(tmp_path, settings=full), how)
    stats = execute(task, how)
    assert task.digest is not None and task.digest.read_back
    rewrite_check.check(task, stats)
    path = task.storage.join(stats[0]["path"])
    landed = pq.read_table(path)
    victim = landed.column(KEY)[0].as_py()
    pq.write_table(with_values(landed, "y", [v + 1 if v is not None else 1 for v in landed.column("y").to_pylist()][:1]
                               + landed.column("y").to_pylist()[1:]), path)  # fmt: skip  (as a writer bug would)
    with pytest.raises(RewriteMismatch, match=rf"^group 0: the written files read back differ from the rows handed "
                                              rf"to the writer: column 'y' changed in the rewrite \(e\.g\. key '{victim}'\)$"):  # fmt: skip
        rewrite_check.check(task, stats)


def test_a_failure_of_the_check_itself_says_so_and_how_to_run_without_it(tmp_path, monkeypatch):
    from hudi_cluster_core.errors import RunFailed

    def broken(array):
        raise NotImplementedError("no hash for this type")

    monkeypatch.setattr(rewrite_check, "value_codes", broken)
    (task,) = write_paths(kit_task(tmp_path), "memory")
    with pytest.raises(RunFailed, match=r"^group 0: the rewrite check could not digest its rows \(NotImplementedError: "
                                         r"no hash for this type\); hudi.cluster.task.verify=false runs without it$"):  # fmt: skip
        execute(task, "memory")


def test_a_bad_verify_setting_is_one_clear_error_before_anything_is_written(tmp_path):
    from hudi_cluster_core.api import cluster
    from hudi_cluster_core.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^hudi.cluster.task.verify='yes' \(overrides\): not an accepted value; "
                                          r"accepted: true, full, false \(any case\)$"):
        cluster(tmp_path / "no-table", "scheduleAndExecute", {TASK_VERIFY: "yes"})
    assert rewrite_check.enabled({}) and rewrite_check.enabled({TASK_VERIFY: " TRUE "})
    assert not rewrite_check.enabled({TASK_VERIFY: "false"})


def test_a_strategy_reading_around_the_task_is_refused_unless_the_check_is_off(tmp_path):
    class ReadsFiles:
        def execute_group(self, task):
            import pyarrow.parquet as pq

            return task.write(pa.concat_tables([pq.read_table(s.base_file) for s in task.group.slices]))

    task = rewrite_check.armed(kit_task(tmp_path))
    with pytest.raises(RewriteMismatch, match="none read through GroupTask.read_slices/read_arrow"):
        rewrite_check.check(task, ReadsFiles().execute_group(task))
    off = rewrite_check.armed(kit_task(tmp_path, settings={TASK_VERIFY: "false"}))
    assert off.digest is None
    rewrite_check.check(off, ReadsFiles().execute_group(off))


# ------------------------------------------------------------------------------ fault injection on the real path


ONE_LINE = re.compile(r"^hudi-cluster: error: clustering task failed: group \d+: (.*); clustering (\d+) rolled back "
                      r"\(its plan dropped\)$")  # fmt: skip


def run_corrupted(base: str, corruption: str | None, *extra: str, mode: str = "execute"):
    env = cli_env()
    if corruption:
        env[failpoints.CORRUPT_ENV] = corruption
    return subprocess.run(cli_command(base, *extra, mode=mode), env=env, text=True, capture_output=True, timeout=600)


def scheduled_victim(base: str) -> str:
    """Schedule a clustering; a record key of its first group (a row hudi-rs reads from one of its file groups)."""
    scheduled = run_corrupted(base, None, "--json", mode="schedule")
    assert scheduled.returncode == 0, scheduled.stderr[-2000:]
    file_ids = json.loads(scheduled.stdout)["groups"][0]["input_file_ids"]
    rows = read_hudi_rs(base).to_pylist()
    return next(r[KEY] for r in rows[3:] if any(r["_hoodie_file_name"].startswith(f) for f in file_ids))


@pytest.mark.parametrize(("kind", "corruption", "says"), [
    ("cow_v9", "value:c_int", r"column 'c_int' changed in the rewrite \(e\.g\. key '{victim}'\)"),
    ("cow_v9", "move:c_string", r"column 'c_string' changed in the rewrite \(e\.g\. key 'k\d+'\)"),
    ("cow_v9", "drop", r"\d+ rows written for \d+ read in the rewrite \(e\.g\. key '{victim}' lost\)"),
    ("cow_v9", "duplicate", r"\d+ rows written for \d+ read in the rewrite \(e\.g\. key '{victim}' duplicated\)"),
    ("mor_v9", "value:c_decimal", r"column 'c_decimal' changed in the rewrite \(e\.g\. key '{victim}'\)"),
])  # fmt: skip
def test_a_row_altered_in_a_real_run_fails_it_with_one_line_and_the_table_reads_unchanged(spark, hudi_tables, request,
                                                                                         kind, corruption, says):  # fmt: skip
    base = hudi_tables.copy(kind, request.node.name)
    before_rs, before_hudi = read_hudi_rs(base), read_hudi_snapshot(spark, base)
    victim = scheduled_victim(base)
    failed = run_corrupted(base, f"{corruption}@{victim}")
    assert failed.returncode == 1, failed.stderr[-3000:]  # a failed task's exit code (RunFailed), as before
    lines = error_lines(failed.stderr)
    assert len(lines) == 1 and "Traceback" not in failed.stderr, failed.stderr[-3000:]
    found = ONE_LINE.match(lines[0])
    assert found and re.fullmatch(says.format(victim=victim), found.group(1)), lines[0]
    assert load_table_state(base, found.group(2)) == "gone"
    assert table_problems(base) == []
    assert_same_rows(before_rs, read_hudi_rs(base), labels=("before", "hudi-rs after the failed run"))
    assert_same_rows(before_hudi, read_hudi_snapshot(spark, base), labels=("before", "Apache Hudi after the failed run"))


def test_a_row_altered_in_one_task_of_a_split_group_is_named(spark, tmp_path):
    """In-group parallelism in a real run (one group, two Spark tasks by key range): the task holding the altered
    row reads its own key ranges again to name it."""
    from tests.support.apache_hudi import make_small_file_table

    base = str(tmp_path / "t")
    make_small_file_table(spark, base, batches=5, rows_per_batch=120, partitioned=False)
    before_rs = read_hudi_rs(base)
    victim = before_rs.column(KEY)[200].as_py()
    split = ("--spark-master", "local[2]", "--hoodie-conf", "hudi.cluster.task.split.min.bytes=1024",
             "--hoodie-conf", "hoodie.clustering.plan.strategy.target.file.max.bytes=16384")  # fmt: skip
    failed = run_corrupted(base, f"value:c_long@{victim}", *split, mode="scheduleAndExecute")
    assert failed.returncode == 1 and "1 group(s) in 2 task(s)" in failed.stderr, failed.stderr[-3000:]
    lines = error_lines(failed.stderr)
    assert len(lines) == 1 and ONE_LINE.match(lines[0]), failed.stderr[-3000:]
    assert ONE_LINE.match(lines[0]).group(1) == f"column 'c_long' changed in the rewrite (e.g. key '{victim}')"
    assert table_problems(base) == []
    assert_same_rows(before_rs, read_hudi_rs(base), labels=("before", "hudi-rs after the failed run"))


def test_with_the_check_off_the_same_corruption_is_committed(spark, hudi_tables, request):
    """The check is what stands between a bad rewrite and the table: switched off, the altered value lands."""
    base = hudi_tables.copy("cow_v9", request.node.name)
    victim = scheduled_victim(base)

    def c_int() -> int:
        return next(r["c_int"] for r in read_hudi_rs(base).to_pylist() if r[KEY] == victim)

    before = c_int()
    done = run_corrupted(base, f"value:c_int@{victim}", "--hoodie-conf", f"{TASK_VERIFY}=false")
    assert done.returncode == 0, done.stderr[-3000:]
    assert c_int() == before + 1


def load_table_state(base: str, instant: str) -> str:
    from hudi_cluster_core.table import load_table

    timeline = load_table(base).timeline
    found = timeline.get(instant)
    return "gone" if found is None else found.state.name
