"""Hypothesis strategies of Arrow schemas and rows as Hudi tables hold them, and a bit-exact view for comparing them.

Types (what Spark and Hudi's Avro schemas carry; ``write.avro_schema`` maps each of them):

* leaves: int32, int64, float32, float64, decimal128 (precision 1..38, scale 0..precision), timestamp[us, UTC],
  date32, bool, string, binary;
* nested: struct, list (``element`` items, as parquet and Spark name them) and map (string keys, as Avro's),
  nested up to ``max_depth``.

Values push every edge: integers at both bounds; NaN (with payloads, both signs), +-inf, -0.0 and subnormals;
decimals at +-(10^p - 1) and +-1 ulp; timestamps and dates from 1900-01-01 (earlier ones need Spark's rebase
settings) to 9999-12-31; strings of any Unicode scalar (NUL, supplementary planes, U+E000..U+FFFF), empty strings
and bytes; empty lists and maps; and a null at every depth (a column, a struct, a struct's field, a list, a list
element, a map, a map value), unless the field is non-nullable (some are, at every depth). float32 values come
from Python floats, so their NaNs are quiet ones (a signaling float32 NaN can't be built that way).

``exclude`` (a predicate on types) narrows a schema strategy, for a check that must leave out a type a reader
can't read (say why in a comment where you use it).

:func:`bit_exact` turns rows into plain Python values that compare equal only if the values are identical bit for
bit: floats as their IEEE bits (NaN payloads and -0.0 kept), timestamps and dates as their integers.
"""

from __future__ import annotations

import decimal
import math
import struct
from collections.abc import Callable
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

TypePredicate = Callable[[pa.DataType], bool]

MIN_TIMESTAMP_US = -2_208_988_800_000_000  # 1900-01-01T00:00:00Z
MAX_TIMESTAMP_US = 253_402_300_799_999_999  # 9999-12-31T23:59:59.999999Z
MIN_DATE = -25_567  # 1900-01-01
MAX_DATE = 2_932_896  # 9999-12-31
TIMESTAMP = pa.timestamp("us", tz="UTC")

LEAF_TYPES: tuple[pa.DataType, ...] = (
    pa.int32(), pa.int64(), pa.float32(), pa.float64(), TIMESTAMP, pa.date32(), pa.bool_(), pa.string(), pa.binary(),
)  # fmt: skip


def _never(_: pa.DataType) -> bool:
    return False


def contains(arrow: pa.DataType, predicate: TypePredicate) -> bool:
    """Whether ``arrow`` or a type nested in it satisfies ``predicate``."""
    if predicate(arrow):
        return True
    if pa.types.is_map(arrow):
        return contains(arrow.key_type, predicate) or contains(arrow.item_type, predicate)
    if pa.types.is_list(arrow) or pa.types.is_large_list(arrow):
        return contains(arrow.value_type, predicate)
    if pa.types.is_struct(arrow):
        return any(contains(arrow.field(i).type, predicate) for i in range(arrow.num_fields))
    return False


def names(min_size: int, max_size: int) -> st.SearchStrategy[list[str]]:
    """Field names valid in Avro, unique ignoring case (Spark and Hudi resolve columns case-insensitively), none
    of Hudi's ``_hoodie_*`` meta columns."""
    name = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)
    return st.lists(name, min_size=min_size, max_size=max_size, unique_by=str.lower)


@st.composite
def decimal_types(draw) -> pa.DataType:
    precision = draw(st.integers(1, 38))
    return pa.decimal128(precision, draw(st.integers(0, precision)))


def leaf_types(exclude: TypePredicate = _never) -> st.SearchStrategy[pa.DataType]:
    return st.one_of(st.sampled_from(LEAF_TYPES), decimal_types()).filter(lambda t: not exclude(t))


# Mostly nullable, as Spark's columns are; a non-nullable field is parquet's required, Avro's bare type (no union).
NULLABLE = st.sampled_from([True, True, False])


def arrow_types(max_depth: int = 2, exclude: TypePredicate = _never) -> st.SearchStrategy[pa.DataType]:
    """A leaf or a nested type (``max_depth`` levels of struct/list/map at most); types ``exclude`` accepts are
    never drawn, nested or not."""
    leaves = leaf_types(exclude)
    if max_depth <= 0:
        return leaves
    inner = arrow_types(max_depth - 1, exclude)

    @st.composite
    def structs(draw) -> pa.DataType:
        return pa.struct([pa.field(n, draw(inner), nullable=draw(NULLABLE)) for n in draw(names(1, 3))])

    @st.composite
    def lists(draw, items) -> pa.DataType:
        return pa.list_(pa.field("element", draw(items), nullable=draw(NULLABLE)))

    @st.composite
    def maps(draw) -> pa.DataType:
        return pa.map_(pa.string(), pa.field("value", draw(inner), nullable=draw(NULLABLE)))

    nested = st.one_of(structs(), lists(inner), lists(structs()), maps()).filter(lambda t: not exclude(t))
    return st.one_of(leaves, nested)


@st.composite
def arrow_schemas(draw, min_columns: int = 1, max_columns: int = 5, max_depth: int = 2,
                  exclude: TypePredicate = _never) -> pa.Schema:  # fmt: skip
    """A table's data columns."""
    column_names = draw(names(min_columns, max_columns))
    types = arrow_types(max_depth, exclude)
    return pa.schema([pa.field(n, draw(types), nullable=draw(NULLABLE)) for n in column_names])


# --------------------------------------------------------------------------------------------------- values


def _nan(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


FLOAT64_EDGES = (
    math.nan, -math.nan, _nan(0x7FF0_0000_0000_0001), _nan(0xFFF8_0000_DEAD_BEEF), math.inf, -math.inf, 0.0, -0.0,
    5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, -1.7976931348623157e308,
)  # fmt: skip
FLOAT32_EDGES = (
    math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-45, -1e-45, 1.1754943508222875e-38,
    3.4028234663852886e38, -3.4028234663852886e38,
)  # fmt: skip


def _floats(width: int) -> st.SearchStrategy[float]:
    edges = FLOAT32_EDGES if width == 32 else FLOAT64_EDGES
    return st.one_of(st.sampled_from(edges), st.floats(width=width, allow_subnormal=True))


def _decimals(arrow: pa.Decimal128Type) -> st.SearchStrategy[decimal.Decimal]:
    largest = 10**arrow.precision - 1
    unscaled = st.one_of(st.sampled_from((largest, -largest, 0, 1, -1, largest - 1, -largest + 1)),
                         st.integers(-largest, largest))  # fmt: skip
    exact = decimal.Context(prec=arrow.precision)  # the default context's 28 digits would round larger values
    return unscaled.map(lambda u: decimal.Decimal(u).scaleb(-arrow.scale, exact))


def _scalars(arrow: pa.DataType) -> st.SearchStrategy[Any]:
    if pa.types.is_int32(arrow):
        return st.integers(-(2**31), 2**31 - 1)
    if pa.types.is_int64(arrow):
        return st.integers(-(2**63), 2**63 - 1)
    if pa.types.is_float32(arrow):
        return _floats(32)
    if pa.types.is_float64(arrow):
        return _floats(64)
    if pa.types.is_decimal(arrow):
        return _decimals(arrow)
    if pa.types.is_timestamp(arrow):  # Arrow takes integers in the type's unit
        return st.one_of(st.sampled_from((MIN_TIMESTAMP_US, -1, 0, 1, MAX_TIMESTAMP_US)),
                         st.integers(MIN_TIMESTAMP_US, MAX_TIMESTAMP_US))  # fmt: skip
    if pa.types.is_date32(arrow):
        return st.one_of(st.sampled_from((MIN_DATE, -1, 0, MAX_DATE)), st.integers(MIN_DATE, MAX_DATE))
    if pa.types.is_boolean(arrow):
        return st.booleans()
    if pa.types.is_string(arrow):
        return st.text(st.characters(codec="utf-8"), max_size=12)
    if pa.types.is_binary(arrow):
        return st.binary(max_size=12)
    raise ValueError(f"no value strategy for {arrow}")


def values(arrow: pa.DataType, nullable: bool = True) -> st.SearchStrategy[Any]:
    """Python values of ``arrow`` as ``pa.array(..., type=arrow)`` takes them; null at any nullable depth."""
    if pa.types.is_struct(arrow):
        fields = [arrow.field(i) for i in range(arrow.num_fields)]
        value: st.SearchStrategy[Any] = st.fixed_dictionaries({f.name: values(f.type, f.nullable) for f in fields})
    elif pa.types.is_map(arrow):
        key = st.text(st.characters(codec="utf-8"), max_size=6)
        pair = st.tuples(key, values(arrow.item_type, arrow.item_field.nullable))
        value = st.lists(pair, max_size=3, unique_by=lambda kv: kv[0])  # Avro maps have unique string keys
    elif pa.types.is_list(arrow):
        value = st.lists(values(arrow.value_type, arrow.value_field.nullable), max_size=3)
    else:
        value = _scalars(arrow)
    return st.one_of(st.none(), value) if nullable else value


def columns(field: pa.Field, rows: int) -> st.SearchStrategy[pa.Array]:
    return st.lists(values(field.type, field.nullable), min_size=rows, max_size=rows).map(
        lambda column: pa.array(column, type=field.type))


@st.composite
def arrow_tables(draw, schema: pa.Schema | None = None, min_rows: int = 0, max_rows: int = 20,
                 **schema_options) -> pa.Table:  # fmt: skip
    """Rows of ``schema`` (drawn with ``arrow_schemas(**schema_options)`` when not given)."""
    schema = schema if schema is not None else draw(arrow_schemas(**schema_options))
    rows = draw(st.integers(min_rows, max_rows))
    return pa.Table.from_arrays([draw(columns(f, rows)) for f in schema], schema=schema)


def record_keys(rows: int) -> st.SearchStrategy[list[str]]:
    """Distinct non-empty record keys (Hudi refuses an empty key), mixing U+E000..U+FFFF with supplementary
    characters, where Java's String order (Hudi's min/max record key) differs from UTF-8 byte order."""
    alphabet = st.one_of(st.sampled_from("0aZ\x00\ue000\uffff\U00010000\U0010ffff"), st.characters(codec="utf-8"))
    return st.lists(st.text(alphabet, min_size=1, max_size=6), min_size=rows, max_size=rows, unique=True)


def examples(n: int) -> settings:
    """Settings of a property test that writes and reads files: ``n`` examples, no deadline (a loaded machine)."""
    return settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# -------------------------------------------------------------------------------------------- comparing


def _bit_type(arrow: pa.DataType) -> pa.DataType:
    """``arrow`` with every float as the unsigned integer of its bits, every timestamp and date as its integer:
    the same buffers, so ``Array.view`` gives them without a copy."""
    if pa.types.is_float32(arrow):
        return pa.uint32()
    if pa.types.is_float64(arrow):
        return pa.uint64()
    if pa.types.is_timestamp(arrow):
        return pa.int64()
    if pa.types.is_date32(arrow):
        return pa.int32()
    if pa.types.is_struct(arrow):
        return pa.struct([arrow.field(i).with_type(_bit_type(arrow.field(i).type)) for i in range(arrow.num_fields)])
    if pa.types.is_map(arrow):
        key, item = arrow.key_field, arrow.item_field
        return pa.map_(key.with_type(_bit_type(key.type)), item.with_type(_bit_type(item.type)))
    if pa.types.is_list(arrow):
        return pa.list_(arrow.value_field.with_type(_bit_type(arrow.value_type)))
    if pa.types.is_large_list(arrow):
        return pa.large_list(arrow.value_field.with_type(_bit_type(arrow.value_type)))
    return arrow


def plain_type(arrow: pa.DataType) -> pa.DataType:
    """``arrow`` without what readers name or flag differently and is no part of the values: the names of list
    items and map entries, and nullability."""
    if pa.types.is_struct(arrow):
        return pa.struct([(arrow.field(i).name, plain_type(arrow.field(i).type)) for i in range(arrow.num_fields)])
    if pa.types.is_map(arrow):
        return pa.map_(plain_type(arrow.key_type), plain_type(arrow.item_type))
    if pa.types.is_list(arrow) or pa.types.is_large_list(arrow):
        return pa.list_(plain_type(arrow.value_type))
    return arrow


def bit_exact(data: pa.Table | pa.ChunkedArray | pa.Array) -> Any:
    """Rows as Python values identical only if bit-identical; a table's as a dict of column name -> (its type,
    :func:`plain_type`, and its values), so a decimal's scale or a timestamp's unit and zone count too."""
    if isinstance(data, pa.Table):
        return {name: (plain_type(data.column(name).type), bit_exact(data.column(name))) for name in data.column_names}
    chunks = data.chunks if isinstance(data, pa.ChunkedArray) else [data]
    return [v for chunk in chunks for v in chunk.view(_bit_type(chunk.type)).to_pylist()]
