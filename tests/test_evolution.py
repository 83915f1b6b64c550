"""Rows of older files in the table's latest schema (``io/evolution.py``), as property tests: hypothesis draws
nested Arrow schemas and rows (nulls at every depth), evolves the schema as Hudi allows (fields added at any depth,
required ones inside nullable structs among them; int to long and double; float to double; string to bytes;
decimals to a larger precision; renames and drops by column id), and checks every value lands where it belongs,
changed only as Java would change it, and that the result writes as parquet and reads back the same."""

from __future__ import annotations

import io
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings, strategies as st

from hudi_cluster_core.avro.arrow_schema import arrow_schema
from hudi_cluster_core.io.evolution import SchemaMismatch, conform, renamed, same_values
from hudi_cluster_core.io.java_float import java_float_to_double

LEAVES = {
    "int": (pa.int32(), st.integers(-(2**31), 2**31 - 1)),
    "long": (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
    "float": (pa.float32(), st.floats(width=32)),
    "string": (pa.string(), st.text(max_size=5)),
    "decimal": (pa.decimal128(9, 2), st.decimals(min_value=-9999999, max_value=9999999, places=2, allow_nan=False)),
}
# what each leaf may widen to, and how one value changes
WIDENINGS = {
    "int": [(pa.int64(), int), (pa.float64(), float)],
    "long": [(pa.float64(), float)],
    "float": [(pa.float64(), java_float_to_double)],
    "string": [(pa.binary(), lambda v: v.encode())],
    "decimal": [(pa.decimal128(20, 2), Decimal)],
}


@st.composite
def shapes(draw, depth=0):
    """(old type, new type, a value strategy, a function from an old value to its new one)."""
    kinds = ["leaf"] * 3 + (["struct", "list", "map"] if depth < 3 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "leaf":
        name = draw(st.sampled_from(sorted(LEAVES)))
        old, values = LEAVES[name]
        new, change = draw(st.sampled_from([(old, lambda v: v), *WIDENINGS[name]]))
        return old, new, values, change
    if kind == "list":
        old, new, values, change = draw(shapes(depth + 1))
        return (pa.list_(old), pa.list_(pa.field("element", new)), st.lists(st.none() | values, max_size=3),
                lambda v: [None if x is None else change(x) for x in v])  # fmt: skip
    if kind == "map":
        old, new, values, change = draw(shapes(depth + 1))
        return (pa.map_(pa.string(), old), pa.map_(pa.string(), new),
                st.dictionaries(st.text(max_size=3), st.none() | values, max_size=3).map(lambda d: list(d.items())),
                lambda v: [(k, None if x is None else change(x)) for k, x in v])  # fmt: skip
    children = draw(st.lists(shapes(depth + 1), min_size=1, max_size=3))
    names = [f"f{i}" for i in range(len(children))]
    old = pa.struct([pa.field(n, c[0]) for n, c in zip(names, children)])
    # Hudi accepts only nullable additions; a struct added later may have required fields (null with it)
    added = draw(st.lists(st.sampled_from(sorted(LEAVES)), max_size=2))
    extra = [pa.field(f"added{i}", LEAVES[k][0]) for i, k in enumerate(added)]
    if draw(st.booleans()):
        extra.append(pa.field("added_struct", pa.struct([pa.field("req", pa.int32(), nullable=False)])))
    new_fields = [pa.field(n, c[1]) for n, c in zip(names, children)] + extra
    new = pa.struct(new_fields)
    values = st.fixed_dictionaries({n: st.none() | c[2] for n, c in zip(names, children)})

    def change(v):
        out = {n: None if v[n] is None else c[3](v[n]) for n, c in zip(names, children)}
        out.update({f.name: None for f in extra})
        return out

    return old, new, values, change


@st.composite
def evolutions(draw):
    columns = draw(st.lists(shapes(), min_size=1, max_size=4))
    old = pa.schema([pa.field(f"c{i}", c[0]) for i, c in enumerate(columns)])
    dropped = draw(st.sets(st.integers(0, len(columns) - 1), max_size=len(columns) - 1))
    kept = [i for i in range(len(columns)) if i not in dropped]
    new = pa.schema([pa.field(f"c{i}", columns[i][1]) for i in kept] + [pa.field("later", pa.int64())])
    rows = draw(st.lists(st.fixed_dictionaries({f"c{i}": st.none() | c[2] for i, c in enumerate(columns)}), max_size=8))
    expected = [{**{f"c{i}": None if r[f"c{i}"] is None else columns[i][3](r[f"c{i}"]) for i in kept}, "later": None}
                for r in rows]  # fmt: skip
    return pa.Table.from_pylist(rows, schema=old), new, expected


def _same(a, b) -> bool:
    """Equal, NaN equal to NaN, -0.0 told from 0.0 (the rewrite must not change a bit of a value)."""
    if isinstance(a, float) and isinstance(b, float):
        return (a != a and b != b) or (a == b and str(a)[0] == str(b)[0])
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


@settings(max_examples=150, deadline=None)
@given(evolutions())
def test_every_value_lands_in_the_latest_schema_as_java_reads_it(case):
    table, target, expected = case
    result = conform(table, target)
    assert result.schema == target
    result.validate(full=True)
    assert _same(result.to_pylist(), expected)
    sink = io.BytesIO()
    pq.write_table(result, sink)  # required fields inside null structs hold placeholders, as parquet needs
    assert _same(pq.read_table(sink).to_pylist(), expected)


@settings(max_examples=100, deadline=None)
@given(evolutions())
def test_conform_is_the_same_whatever_the_chunking(case):
    table, target, expected = case
    chunked = pa.concat_tables([table.slice(i, 1) for i in range(table.num_rows)]) if table.num_rows else table
    assert _same(conform(chunked, target).to_pylist(), expected)


def test_renames_by_column_id_reach_into_structs_and_lists():
    inner = pa.struct([("old_a", pa.int32()), ("gone", pa.string())])
    table = pa.table({"old": [1, 2], "s": [{"old_a": 1, "gone": "x"}, None], "l": [[{"old_a": 3, "gone": "y"}], None],
                      "dropped": ["a", "b"]},
                     schema=pa.schema([("old", pa.int64()), ("s", inner), ("l", pa.list_(inner)), ("dropped", pa.string())]))  # fmt: skip
    tree = {"old": ("new", {}), "s": ("s", {"old_a": ("a", {}), "gone": ("", {})}), "l": ("l", {"old_a": ("a", {})}),
            "dropped": ("", {})}  # fmt: skip
    result = renamed(table, tree)
    assert result.column_names == ["new", "s", "l"]
    assert result.to_pylist() == [
        {"new": 1, "s": {"a": 1}, "l": [{"a": 3, "gone": "y"}]},
        {"new": 2, "s": None, "l": None},
    ]


def test_a_required_field_older_rows_lack_is_named():
    table = pa.table({"s": pa.array([{"x": 1}], pa.struct([("x", pa.int64())]))})
    target = pa.schema([("s", pa.struct([("x", pa.int64()), pa.field("y", pa.int32(), nullable=False)]))])
    with pytest.raises(SchemaMismatch, match=r"column 's'\.y: a required field the older rows lack"):
        conform(table, target)


def test_a_narrowing_or_unrelated_change_is_named():
    table = pa.table({"n": pa.array([1], pa.int64()), "s": pa.array([{"x": 1.5}], pa.struct([("x", pa.float64())]))})
    with pytest.raises(SchemaMismatch, match=r"column 'n': values of type int64 cannot be read as the table's type int32"):
        conform(table, pa.schema([("n", pa.int32()), ("s", table.schema.field("s").type)]))
    with pytest.raises(SchemaMismatch, match=r"column 's'\.x: values of type double cannot be read as .* bool"):
        conform(table, pa.schema([("n", pa.int64()), ("s", pa.struct([("x", pa.bool_())]))]))


def test_the_avro_schema_hudi_records_maps_to_what_pyarrow_reads_from_hudis_files():
    avro = """{"type":"record","name":"r","fields":[
      {"name":"id","type":"string"},
      {"name":"d","type":["null",{"type":"fixed","name":"f","size":16,"logicalType":"decimal","precision":38,"scale":10}]},
      {"name":"t","type":["null",{"type":"long","logicalType":"timestamp-micros"}]},
      {"name":"day","type":["null",{"type":"int","logicalType":"date"}]},
      {"name":"z","type":["null",{"type":"record","name":"z","fields":[{"name":"z1","type":"int"}]}],"default":null},
      {"name":"a","type":["null",{"type":"array","items":["null","string"]}]},
      {"name":"m","type":["null",{"type":"map","values":["null","int"]}]}]}"""
    schema = arrow_schema(avro)
    assert schema.names[:5] == ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                                "_hoodie_partition_path", "_hoodie_file_name"]  # fmt: skip
    assert not schema.field("id").nullable and schema.field("d").type == pa.decimal128(38, 10)
    assert schema.field("t").type == pa.timestamp("us", tz="UTC") and schema.field("day").type == pa.date32()
    assert schema.field("z").type == pa.struct([pa.field("z1", pa.int32(), nullable=False)])
    # Hudi writes parquet's old two-level lists (pyarrow reads list<array: ... not null>): same values
    hudi_written = pa.schema([*schema][:5] + [
        pa.field("id", pa.string(), False), pa.field("d", pa.decimal128(38, 10)), pa.field("t", pa.timestamp("us", "UTC")),
        pa.field("day", pa.date32()), pa.field("z", pa.struct([pa.field("z1", pa.int32(), False)])),
        pa.field("a", pa.list_(pa.field("array", pa.string(), False))), pa.field("m", pa.map_(pa.string(), pa.int32())),
    ])  # fmt: skip
    assert same_values(hudi_written, schema)
