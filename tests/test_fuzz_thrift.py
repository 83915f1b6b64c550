"""Thrift compact structs (parquet's page headers and footers, rewritten by ``write.gzip_pages``) on any bytes:
a :class:`ThriftError` or fields that encode and decode back to themselves, in bounded time and stack."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given
from hypothesis import strategies as st

from hudi_cluster_core.io import thrift_compact as tc
from tests.support.fuzz import fuzz, outcome


def _footer() -> bytes:
    sink = io.BytesIO()
    table = pa.table({"id": list(range(50)), "name": [f"n{i}" for i in range(50)], "m": [{"a": [1.5]}] * 50})
    pq.write_table(table, sink, row_group_size=20)
    data = sink.getvalue()
    length = int.from_bytes(data[-8:-4], "little")
    return data[-8 - length : -8]


FOOTER = _footer()


def test_a_real_footer_reencodes_to_its_bytes():
    fields, end = tc.read_struct(FOOTER)
    assert end == len(FOOTER) and tc.write_struct(fields) == FOOTER


def test_deep_nesting_is_a_thrift_error_not_a_recursion_error():
    data = bytes([0x1C]) * 100_000  # field 1, type struct, again and again
    result = outcome(lambda: tc.read_struct(data), tc.ThriftError)
    assert isinstance(result, tc.ThriftError)


def _consistent(data: bytes) -> None:
    result = outcome(lambda: tc.read_struct(data), tc.ThriftError)
    if isinstance(result, tc.ThriftError):
        return
    fields, end = result
    assert 0 < end <= len(data)
    again, again_end = tc.read_struct(tc.write_struct(fields))
    assert again == fields


@fuzz
@given(st.binary(max_size=400))
def test_random_bytes_are_a_thrift_error_or_a_struct_that_round_trips(data):
    _consistent(data)


@fuzz
@given(st.data())
def test_a_damaged_footer_is_a_thrift_error_or_a_struct_that_round_trips(draw):
    at = draw.draw(st.integers(0, len(FOOTER) - 1))
    junk = draw.draw(st.binary(min_size=1, max_size=6))
    cut = draw.draw(st.integers(at, len(FOOTER)))
    _consistent((FOOTER[:at] + junk + FOOTER[at:])[:cut] if draw.draw(st.booleans()) else FOOTER[:at] + junk + FOOTER[at + len(junk) :])
