"""The columnar Avro encoder of our log blocks writes the very bytes fastavro writes, record by record, for every
type it handles (property test), and says so when it can't (nested types: the caller falls back to fastavro)."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json

import fastavro
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_cluster_core.write.avro_columns import encode_records
from hudi_cluster_core.write.avro_schema import arrow_to_avro_schema
from hudi_cluster_core.write.log_file import avro_data_block, writer_schema

UTC = dt.timezone.utc
COLUMNS = {
    "s": (pa.string(), st.text(max_size=40)),
    "i": (pa.int32(), st.integers(-(2**31), 2**31 - 1)),
    "l": (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
    "d": (pa.float64(), st.floats(allow_nan=False)),
    "b": (pa.bool_(), st.booleans()),
    "day": (pa.date32(), st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31))),
    "at": (pa.timestamp("us", tz="UTC"), st.datetimes(dt.datetime(1900, 1, 1), dt.datetime(2200, 1, 1)).map(lambda v: v.replace(tzinfo=UTC))),
    "amount": (pa.decimal128(10, 2), st.decimals(min_value=-(10**8) + 1, max_value=10**8 - 1, places=2)),
}  # fmt: skip


@st.composite
def tables(draw) -> pa.Table:
    names = draw(st.lists(st.sampled_from(sorted(COLUMNS)), min_size=1, max_size=len(COLUMNS), unique=True))
    n = draw(st.integers(1, 30))
    columns = {}
    for name in names:
        arrow, values = COLUMNS[name]
        column = draw(st.lists(st.one_of(st.none(), values), min_size=n, max_size=n))
        columns[name] = pa.array(column, arrow)
    return pa.table(columns)


def fastavro_records(table: pa.Table, schema: dict) -> list[bytes]:
    parsed = fastavro.parse_schema(schema)
    out = []
    for row in table.select([f["name"] for f in schema["fields"]]).to_pylist():
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, parsed, row)
        out.append(buffer.getvalue())
    return out


@settings(max_examples=150, deadline=None)
@given(tables())
def test_the_same_bytes_as_fastavro(table):
    schema = json.loads(arrow_to_avro_schema(table.schema, "t"))
    encoded = encode_records(table, schema["fields"])
    assert encoded is not None
    assert encoded.to_pylist() == fastavro_records(table, schema)


def test_a_block_reads_back_and_nested_types_fall_back():
    table = pa.table({"_hoodie_commit_time": ["1", None], "_hoodie_commit_seqno": ["a", "b"], "_hoodie_record_key": ["k1", "k2"],
                      "_hoodie_partition_path": ["", ""], "_hoodie_file_name": ["f", "f"], "v": [decimal.Decimal("1.50"), None]},
                     schema=pa.schema([*(pa.field(n, pa.string()) for n in ("_hoodie_commit_time", "_hoodie_commit_seqno",
                                       "_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name")), pa.field("v", pa.decimal128(6, 2))]))  # fmt: skip
    schema_json = writer_schema(arrow_to_avro_schema(table.select(["v"]).schema, "t"))
    block = avro_data_block("1", table, schema_json)
    parsed = fastavro.parse_schema(json.loads(schema_json))
    content = io.BytesIO(block.content)
    assert content.read(8) == b"\x00\x00\x00\x03\x00\x00\x00\x02"  # block version 3, two records
    rows = []
    for _ in range(2):
        size = int.from_bytes(content.read(4), "big")
        rows.append(fastavro.schemaless_reader(io.BytesIO(content.read(size)), parsed))
    assert [r["v"] for r in rows] == [decimal.Decimal("1.50"), None] and rows[0]["_hoodie_record_key"] == "k1"
    assert content.read() == b""
    nested = pa.table({"tags": pa.array([["a"], []], pa.list_(pa.string()))})
    fields = [{"name": "tags", "type": ["null", {"type": "array", "items": "string"}]}]
    assert encode_records(nested, fields) is None
