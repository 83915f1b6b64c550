"""Rows of older files read in the table's latest schema, value for value as Apache Hudi's readers give them.

A clustering rewrites file slices written under any earlier version of the table's schema into files of its
latest one (:func:`conform`), matching columns by name at every depth (renames under schema on read are
applied first, :func:`renamed`):

* **added** columns and struct fields are null (a non-nullable field inside a struct that is itself null gets a
  placeholder value under the null, as parquet requires);
* columns the latest schema no longer has are dropped;
* **widened** values: int to long, float and double; long to float and double (Java's nearest rounding, as
  numpy's); float to double through Java 17's decimal text (:mod:`.java_float`); decimals to a larger precision
  at the same scale; timestamps and times to another unit; integers, decimals and dates to strings; string to
  bytes (UTF-8) and bytes to string;
* anything else is an error that names the column and both types.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc

from .java_float import widen_float


class SchemaMismatch(ValueError):
    """A column whose values cannot be read in the table's type."""


def conform(table: pa.Table | pa.RecordBatch, target: pa.Schema, where: str = "") -> pa.Table:
    """``table``'s rows in ``target``: the target's columns in its order, each in its type."""
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    table = table.replace_schema_metadata(None)
    if table.schema == target:
        return table
    columns = []
    for field in target:
        index = table.schema.get_field_index(field.name)
        if index < 0:
            columns.append(pa.chunked_array([placeholder(field, table.num_rows)], field.type))
            continue
        column = table.column(index)
        path = f"{where}column '{field.name}'"
        columns.append(pa.chunked_array([conform_array(c, field, path) for c in column.chunks], field.type)
                       if column.type != field.type else column)  # fmt: skip
    return pa.Table.from_arrays(columns, schema=target)


def same_values(a: pa.Schema, b: pa.Schema) -> bool:
    """Whether rows of schema ``a`` hold the same values as in ``b``: the same columns and types, whatever the
    names of list elements and map entries, and nullability, say."""
    return [(f.name, _shape(f.type)) for f in a] == [(f.name, _shape(f.type)) for f in b]


def _shape(arrow_type: pa.DataType) -> object:
    if pa.types.is_struct(arrow_type):
        return tuple((f.name, _shape(f.type)) for f in arrow_type)
    if _is_list(arrow_type):
        return ("list", _shape(arrow_type.value_type))
    if pa.types.is_map(arrow_type):
        return ("map", _shape(arrow_type.key_type), _shape(arrow_type.item_type))
    return str(arrow_type)


def renamed(table: pa.Table, tree: Mapping[str, tuple[str, Mapping]]) -> pa.Table:
    """``table`` with columns renamed by a rename tree (old name -> (new name, renames inside it)); a column
    renamed to ``""`` is dropped. Renames inside structs (and lists or maps of structs) are applied too."""
    if not tree:
        return table
    names, columns = [], []
    for name, column in zip(table.column_names, table.columns):
        new_name, below = tree.get(name, (name, {}))
        if not new_name:
            continue
        names.append(new_name)
        columns.append(pa.chunked_array([_renamed_array(c, below) for c in column.chunks]) if below else column)
    return pa.Table.from_arrays(columns, names=names)


def _renamed_array(array: pa.Array, tree: Mapping[str, tuple[str, Mapping]]) -> pa.Array:
    if pa.types.is_struct(array.type):
        fields, children = [], []
        for index, child in enumerate(array.type):
            new_name, below = tree.get(child.name, (child.name, {}))
            if new_name:
                values = array.field(index)
                children.append(_renamed_array(values, below) if below else values)
                fields.append(pa.field(new_name, children[-1].type, child.nullable))
        return pa.StructArray.from_arrays(children, fields=fields, mask=_mask(array))
    if (_is_list(array.type) or pa.types.is_map(array.type)) and array.offset:
        array = pa.concat_arrays([array])
    if _is_list(array.type):
        values = _renamed_array(array.values, tree)
        return type(array).from_arrays(array.offsets, values, mask=_mask(array))
    if pa.types.is_map(array.type):
        return pa.MapArray.from_arrays(array.offsets, array.keys, _renamed_array(array.items, tree), mask=_mask(array))
    return array


def placeholder(field: pa.Field, length: int) -> pa.Array:
    """A column of ``length`` rows for a field the rows lack: nulls, or, where the field may not be null (a
    required field inside a struct that is null), zero values."""
    if not field.nullable:
        return _zeros(field.type, length)
    if pa.types.is_struct(field.type):
        children = [placeholder(f, length) for f in field.type]
        return pa.StructArray.from_arrays(children, fields=list(field.type), mask=pa.array([True] * length, pa.bool_()))
    return pa.nulls(length, field.type)


def _zeros(arrow_type: pa.DataType, length: int) -> pa.Array:
    if pa.types.is_struct(arrow_type):
        return pa.StructArray.from_arrays([placeholder(f, length) for f in arrow_type], fields=list(arrow_type))
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type) or pa.types.is_map(arrow_type):
        return pa.array([[]] * length, arrow_type)
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return pa.array([""] * length, arrow_type)
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        return pa.array([b""] * length, arrow_type)
    if pa.types.is_fixed_size_binary(arrow_type):
        return pa.array([bytes(arrow_type.byte_width)] * length, arrow_type)
    if pa.types.is_boolean(arrow_type):
        return pa.array([False] * length, arrow_type)
    if pa.types.is_decimal(arrow_type):
        return pa.array([Decimal(0)] * length, arrow_type)
    return pa.array([0] * length, arrow_type)  # numbers, dates, times, timestamps


def conform_array(array: pa.Array, field: pa.Field, path: str) -> pa.Array:
    """One array (a chunk) of a column in ``field``'s type; ``path`` names the column in errors."""
    source, target = array.type, field.type
    if source == target:
        return array
    if pa.types.is_dictionary(source):
        return conform_array(array.dictionary_decode(), field, path)
    if pa.types.is_null(source):
        return placeholder(field, len(array))
    if pa.types.is_struct(target) and pa.types.is_struct(source):
        return _struct(array, target, path)
    if (_is_list(target) or pa.types.is_map(target)) and array.offset:
        array = pa.concat_arrays([array])  # rebuilt from offsets with a null mask: unsliced, as Arrow needs it
    if _is_list(target) and _is_list(source):
        item = conform_array(array.values, target.value_field, f"{path}[]")
        return type(array).from_arrays(array.offsets, item, type=target, mask=_mask(array))
    if pa.types.is_map(target) and pa.types.is_map(source):
        keys = conform_array(array.keys, pa.field("key", target.key_type, nullable=False), f"{path} key")
        items = conform_array(array.items, target.item_field, f"{path} value")
        return pa.MapArray.from_arrays(array.offsets, keys, items, type=target, mask=_mask(array))
    widened = _widen(array, target)
    if widened is None:
        raise SchemaMismatch(f"{path}: values of type {source} cannot be read as the table's type {target}")
    return widened


def _struct(array: pa.StructArray, target: pa.StructType, path: str) -> pa.StructArray:
    children = []
    for child in target:
        index = array.type.get_field_index(child.name)
        if index < 0:
            if not child.nullable and array.null_count < len(array):
                raise SchemaMismatch(f"{path}.{child.name}: a required field the older rows lack")
            children.append(placeholder(child, len(array)))
        else:
            children.append(conform_array(array.field(index), child, f"{path}.{child.name}"))
    return pa.StructArray.from_arrays(children, fields=list(target), mask=_mask(array))


def _mask(array: pa.Array) -> pa.Array | None:
    return array.is_null() if array.null_count else None


def _is_list(arrow_type: pa.DataType) -> bool:
    return pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type)


def _widen(array: pa.Array, target: pa.DataType) -> pa.Array | None:
    """A primitive array in a wider (or otherwise allowed) type, or None when the change is not allowed."""
    source = array.type
    types = pa.types
    if types.is_floating(source) and types.is_float64(target):
        return widen_float(array) if types.is_float32(source) else array.cast(target)
    if types.is_integer(source) and (types.is_integer(target) or types.is_floating(target)) \
            and (not types.is_integer(target) or target.bit_width >= source.bit_width):  # fmt: skip
        return pc.cast(array, target, safe=False)
    if types.is_decimal(source) and types.is_decimal(target) and target.scale == source.scale \
            and target.precision >= source.precision:  # fmt: skip
        return array.cast(target)
    if (types.is_timestamp(source) and types.is_timestamp(target)) or (types.is_time(source) and types.is_time(target)):
        return array.cast(target)
    if (_is_text(target) or _is_bytes(target)) and (_is_text(source) or _is_bytes(source)):
        return array.cast(target)  # UTF-8 either way, as Avro resolves string and bytes
    if _is_text(target) and (types.is_integer(source) or types.is_decimal(source) or types.is_date(source)):
        return array.cast(target)
    return None


def _is_text(arrow_type: pa.DataType) -> bool:
    return pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)


def _is_bytes(arrow_type: pa.DataType) -> bool:
    return pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type)

