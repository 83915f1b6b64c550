"""Thrift's compact protocol, generically: a struct decoded to its fields and encoded back to the same bytes.

Parquet's page headers and footer (``FileMetaData``) are Thrift compact structs. Recompressing a file's pages
(:mod:`hudi_cluster_core.write.gzip_pages`) changes a handful of integer fields (page sizes, offsets, the codec)
and must keep every other field, including ones this code has no name for. So a struct is kept as an ordered
list of :class:`Field` (id, compact type, value), never as a schema-bound object: what is not touched is written
back as it was read. Re-encoding an unchanged struct gives its original bytes (field ids as deltas when they fit
a nibble, as every writer does).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

# compact type ids (the low nibble of a field header)
BOOL_TRUE, BOOL_FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT, UUID = range(1, 14)


@dataclass
class Field:
    id: int
    type: int
    value: Any  # int, float, bytes, bool, list[Field] (struct), (element type, [values]) (list/set), map tuple


class ThriftError(ValueError):
    """Bytes that are not a well-formed compact struct (or end before it does)."""


MAX_DEPTH = 64  # parquet's deepest struct nests a handful of levels; bad bytes must not exhaust Python's stack


class _Reader:
    def __init__(self, data: bytes | bytearray | memoryview, pos: int = 0):
        self.data, self.pos, self.depth = memoryview(data), pos, 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise ThriftError("truncated compact struct")
        value = self.data[self.pos]
        self.pos += 1
        return value

    def varint(self) -> int:
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
            if shift > 70:
                raise ThriftError("varint too long")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ThriftError("truncated compact struct")
        out = bytes(self.data[self.pos : self.pos + n])
        self.pos += n
        return out

    def value(self, ctype: int) -> Any:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise ThriftError(f"compact struct nested deeper than {MAX_DEPTH} levels")
            return self._value(ctype)
        finally:
            self.depth -= 1

    def _value(self, ctype: int) -> Any:
        if ctype in (BOOL_TRUE, BOOL_FALSE):  # inside a container a bool is a byte of its own
            return self.byte()
        if ctype == BYTE:
            return self.byte()
        if ctype in (I16, I32, I64):
            return self.zigzag()
        if ctype == DOUBLE:
            return struct.unpack("<d", self.take(8))[0]
        if ctype == BINARY:
            return self.take(self.varint())
        if ctype == UUID:
            return self.take(16)
        if ctype in (LIST, SET):
            header = self.byte()
            size, element = header >> 4, header & 0x0F
            if size == 15:
                size = self.varint()
            return element, [self.value(element) for _ in range(size)]
        if ctype == MAP:
            size = self.varint()
            if size == 0:
                return 0, 0, []
            types = self.byte()
            key, val = types >> 4, types & 0x0F
            return key, val, [(self.value(key), self.value(val)) for _ in range(size)]
        if ctype == STRUCT:
            return self.struct()
        raise ThriftError(f"unknown compact type {ctype}")

    def struct(self) -> list[Field]:
        fields: list[Field] = []
        last = 0
        while True:
            header = self.byte()
            if header == 0:
                return fields
            delta, ctype = header >> 4, header & 0x0F
            field_id = last + delta if delta else self.zigzag()
            if ctype in (BOOL_TRUE, BOOL_FALSE):
                value: Any = ctype == BOOL_TRUE
            else:
                value = self.value(ctype)
            fields.append(Field(field_id, ctype, value))
            last = field_id


def read_struct(data: bytes | bytearray | memoryview, pos: int = 0) -> tuple[list[Field], int]:
    """The struct starting at ``pos``, and the position just after it."""
    reader = _Reader(data, pos)
    try:
        return reader.struct(), reader.pos
    finally:
        reader.data.release()  # a bytearray can be resized again once no view of it is left


def _varint(n: int, out: bytearray) -> None:
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _zigzag(n: int, out: bytearray) -> None:
    _varint((n << 1) ^ (n >> 63), out)


def _write_value(ctype: int, value: Any, out: bytearray) -> None:
    if ctype in (BOOL_TRUE, BOOL_FALSE, BYTE):
        out.append(value & 0xFF)
    elif ctype in (I16, I32, I64):
        _zigzag(value, out)
    elif ctype == DOUBLE:
        out += struct.pack("<d", value)
    elif ctype == BINARY:
        _varint(len(value), out)
        out += value
    elif ctype == UUID:
        out += value
    elif ctype in (LIST, SET):
        element, items = value
        if len(items) < 15:
            out.append((len(items) << 4) | element)
        else:
            out.append(0xF0 | element)
            _varint(len(items), out)
        for item in items:
            _write_value(element, item, out)
    elif ctype == MAP:
        key, val, pairs = value
        _varint(len(pairs), out)
        if pairs:
            out.append((key << 4) | val)
            for k, v in pairs:
                _write_value(key, k, out)
                _write_value(val, v, out)
    elif ctype == STRUCT:
        _write_struct(value, out)
    else:
        raise ThriftError(f"unknown compact type {ctype}")


def _write_struct(fields: list[Field], out: bytearray) -> None:
    last = 0
    for f in fields:
        ctype = (BOOL_TRUE if f.value else BOOL_FALSE) if f.type in (BOOL_TRUE, BOOL_FALSE) else f.type
        delta = f.id - last
        if 0 < delta <= 15:
            out.append((delta << 4) | ctype)
        else:
            out.append(ctype)
            _zigzag(f.id, out)
        if ctype not in (BOOL_TRUE, BOOL_FALSE):
            _write_value(ctype, f.value, out)
        last = f.id
    out.append(0)


def write_struct(fields: list[Field]) -> bytes:
    out = bytearray()
    _write_struct(fields, out)
    return bytes(out)


def get(fields: list[Field], field_id: int, default: Any = None) -> Any:
    for f in fields:
        if f.id == field_id:
            return f.value
    return default


def set_value(fields: list[Field], field_id: int, value: Any) -> None:
    """Change an existing field's value (its type stays)."""
    for f in fields:
        if f.id == field_id:
            f.value = value
            return
    raise ThriftError(f"no field {field_id} to set")
