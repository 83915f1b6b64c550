"""Metadata-table records already encoded as HFile (row, value) pairs, held columnar, and routed in bulk.

A partition with one record per data-table key (the record index: every key of every replaced file group, so
millions per clustering) can't afford a Python object and an Avro encoding per record. Here the rows (MDT keys)
stay an Arrow binary array and the values are a short list of distinct encoded values plus one small int per
row: every key of one new base file has the same record-index value (the value does not hold the key,
docs/format.md#hfile-entries), so a clustering encodes one value per new file.

Routing (docs/format.md#mdt-key-routing) computes Java's ``String.hashCode`` for all rows at once with numpy;
rows that are not pure ASCII (UTF-16 code units differ from bytes) go through the scalar
:func:`java_string_hash`, which ``log_block`` routes single records with.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .hfile import (
    ENTRY_KEY_SUFFIX, ENTRY_SUFFIX, MAX_BLOCK_BYTES, Compression, EntrySummary, HFileError, assemble_hfile,
)  # fmt: skip


@dataclass(frozen=True)
class EncodedRecords:
    """``rows[i]`` is the HFile row (UTF-8 MDT key) of record ``i``; its value is ``values[value_ids[i]]``."""

    rows: pa.Array  # binary
    value_ids: np.ndarray  # int32, one per row
    values: Sequence[bytes]

    def __post_init__(self) -> None:
        if len(self.rows) != len(self.value_ids):
            raise ValueError(f"{len(self.rows)} rows but {len(self.value_ids)} value ids")

    def __len__(self) -> int:
        return len(self.rows)

    @classmethod
    def concat(cls, rows: Sequence[pa.Array], value_ids: Sequence[np.ndarray], values: Sequence[bytes]) -> EncodedRecords:
        binary = [chunk.cast(pa.binary()) for chunk in rows]
        joined = pa.concat_arrays(binary) if binary else pa.array([], pa.binary())
        ids = np.concatenate(value_ids).astype(np.int32) if value_ids else np.zeros(0, np.int32)
        return cls(joined, ids, list(values))

    def take(self, indices: np.ndarray) -> EncodedRecords:
        return EncodedRecords(self.rows.take(pa.array(indices)), self.value_ids[indices], self.values)

    def last_per_key(self) -> EncodedRecords:
        """One record per key, the last one given (Hudi merges one MDT batch's records by key); sorted."""
        order = np.asarray(pc.sort_indices(self.rows))  # stable: equal keys keep their given order
        if len(order) < 2:
            return self.take(order)
        ordered = self.rows.take(pa.array(order))
        same_as_next = pc.equal(ordered.slice(0, len(order) - 1), ordered.slice(1)).to_numpy(zero_copy_only=False)
        keep = ~np.append(same_as_next.astype(bool), False)
        return self.take(order[keep])

    def sorted(self) -> EncodedRecords:
        """By row bytes, the order HFile needs (Arrow compares binary as unsigned bytes)."""
        return self.take(np.asarray(pc.sort_indices(self.rows)))

    def hfile(self, *, file_info: Sequence[tuple[bytes, bytes]] = (), create_time_ms: int = 0,
              codec: Compression = Compression.GZ, block_size: int = MAX_BLOCK_BYTES) -> bytes:
        """The HFile of these records, byte for byte what ``hfile.write_hfile`` makes of ``entries()``, built in
        bulk: every entry is assembled by Arrow in one buffer, and a data block is a slice of it."""
        ordered = self.sorted()
        rows = ordered.rows.cast(pa.large_binary())
        if len(rows) > 1 and pc.any(pc.equal(rows.slice(1), rows.slice(0, len(rows) - 1))).as_py():
            raise HFileError("duplicate HFile key in the records")
        values = pa.array(ordered.values, pa.large_binary()).take(pa.array(ordered.value_ids))
        row_offsets, _ = _offsets_and_data(rows)
        value_offsets, _ = _offsets_and_data(values)
        row_lengths, value_lengths = np.diff(row_offsets), np.diff(value_offsets)
        prefix = np.empty(len(rows), dtype=[("key", ">i4"), ("value", ">i4"), ("row", ">i2")])
        prefix["key"], prefix["value"], prefix["row"] = row_lengths + 12, value_lengths, row_lengths
        prefixes = pa.FixedSizeBinaryArray.from_buffers(pa.binary(10), len(rows), [None, pa.py_buffer(prefix.tobytes())])
        entries = pc.binary_join_element_wise(
            prefixes.cast(pa.large_binary()), rows, pa.scalar(ENTRY_KEY_SUFFIX, pa.large_binary()), values,
            pa.scalar(ENTRY_SUFFIX, pa.large_binary()), pa.scalar(b"", pa.large_binary()))  # fmt: skip
        entry_offsets, data = _offsets_and_data(entries)
        # Hudi's rule (write_hfile): a block takes entries while their sizes stay within block_size, at least one
        ends = entry_offsets[1:]
        blocks = []
        first = 0
        while first < len(rows):
            last = int(np.searchsorted(ends, entry_offsets[first] + block_size, side="right")) - 1
            last = max(last, first)
            payload = data[entry_offsets[first] : entry_offsets[last + 1]].tobytes()
            blocks.append((rows[first].as_py(), payload))
            first = last + 1
        summary = EntrySummary(len(rows), rows[len(rows) - 1].as_py() if len(rows) else b"", int(row_lengths.sum()),
                               int(value_lengths.sum()))  # fmt: skip
        return assemble_hfile(blocks, summary, file_info=file_info, create_time_ms=create_time_ms, codec=codec)

    def entries(self) -> Iterator[tuple[bytes, bytes]]:
        """(row, value) pairs in the current order, for ``hfile.write_hfile``."""
        values = self.values
        for row, value_id in zip(self.rows.to_pylist(), self.value_ids.tolist()):
            yield row, values[value_id]


def _offsets_and_data(rows: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The ``len(rows) + 1`` offsets (int64 positions in the data buffer) and the data buffer of a binary array,
    without copying the bytes."""
    offsets_buf, data_buf = rows.buffers()[1], rows.buffers()[2]
    width = np.int64 if pa.types.is_large_binary(rows.type) else np.int32
    offsets = np.frombuffer(offsets_buf, dtype=width, count=rows.offset + len(rows) + 1)[rows.offset :].astype(np.int64)
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    return offsets, data


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode``: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units, as a signed int32."""
    units = text.encode("utf-16-be")
    value = 0
    for i in range(0, len(units), 2):
        value = (31 * value + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def java_string_hashes(rows: pa.Array) -> np.ndarray:
    """Java ``String.hashCode`` of every row (UTF-8 bytes of a Java string) as int64 holding the signed int32.

    Horner's rule over byte positions, the rows sorted by length (longest first) so position ``p`` updates a
    prefix of them; uint32 arithmetic wraps like Java's int. Valid for ASCII rows (a UTF-16 code unit per byte);
    the others are redone one by one."""
    rows = rows.cast(pa.binary())
    if rows.null_count:
        raise ValueError("an MDT key is null")
    count = len(rows)
    if count == 0:
        return np.zeros(0, dtype=np.int64)
    offsets, data = _offsets_and_data(rows)
    starts, lengths = offsets[:-1], np.diff(offsets)
    order = np.argsort(-lengths, kind="stable")
    sorted_starts, descending = starts[order], -lengths[order]
    hashes = np.zeros(count, dtype=np.uint32)
    multiplier = np.uint32(31)
    for position in range(int(lengths.max())):
        live = int(np.searchsorted(descending, -position, side="left"))  # rows longer than ``position``
        hashes[:live] = hashes[:live] * multiplier + data[sorted_starts[:live] + position]
    signed = np.empty(count, dtype=np.int64)
    signed[order] = hashes.astype(np.int64)
    signed[signed >= 1 << 31] -= 1 << 32
    ascii_rows = pc.string_is_ascii(rows.cast(pa.string()))
    for index in np.nonzero(~np.asarray(ascii_rows.to_numpy(zero_copy_only=False), dtype=bool))[0].tolist():
        signed[index] = java_string_hash(rows[index].as_py().decode("utf-8"))
    return signed


def file_group_indices(rows: pa.Array, file_group_count: int) -> np.ndarray:
    """Per row, the index of its MDT file group: ``abs(abs(hashCode) % n)`` as Hudi computes it."""
    if file_group_count <= 0:
        raise ValueError(f"an MDT partition has at least one file group, not {file_group_count}")
    # Java's abs(Integer.MIN_VALUE) stays negative, but then % n and abs again give what int64 abs gives here
    return np.abs(java_string_hashes(rows)) % file_group_count


def route_encoded(records: EncodedRecords, file_ids: Sequence[str]) -> dict[str, EncodedRecords]:
    """``records`` split by the file id of the MDT file group each row belongs to (only groups that get rows)."""
    ordered = sorted(file_ids)
    groups = file_group_indices(records.rows, len(ordered))
    routed = {}
    for index in np.unique(groups).tolist():
        routed[ordered[index]] = records.take(np.nonzero(groups == index)[0])
    return routed
