"""Metadata-table log files on damaged bytes: framing (``io.log_format``), blocks (``mdt.log_block``) and the
HFile inside each data block end in LogFormatError or HFileError, or the blocks as written, in bounded time."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hudi_cluster_core.io.log_format import LogFormatError
from hudi_cluster_core.mdt.hfile import HFileError, read_hfile
from hudi_cluster_core.mdt.log_block import BlockType, LogBlock, encode_block, read_blocks
from tests.support.fuzz import fuzz, outcome
from tests.test_fuzz_hfile import ENTRIES, GZ

BLOCKS = [LogBlock(BlockType.HFILE_DATA, {}, GZ, {}), LogBlock(BlockType.DELETE, {}, b"\x00\x01", {})]
FILE = b"".join(encode_block(block) for block in BLOCKS)


def _read(data: bytes, skip_corrupt: bool):
    blocks = read_blocks(data, "f.log", skip_corrupt=skip_corrupt)
    return blocks, [read_hfile(b.content).entries for b in blocks if b.type is BlockType.HFILE_DATA]


def test_the_input_reads_back():
    blocks, hfiles = _read(FILE, False)
    assert [b.type for b in blocks] == [BlockType.HFILE_DATA, BlockType.DELETE] and hfiles == [ENTRIES]


@fuzz
@given(st.data(), st.booleans())
def test_damaged_log_files_are_named_errors_or_their_blocks(draw, skip_corrupt):
    at = draw.draw(st.integers(0, len(FILE) - 1))
    junk = draw.draw(st.binary(min_size=1, max_size=8))
    data = FILE[:at] + junk + FILE[at + len(junk) :]
    result = outcome(lambda: _read(data, skip_corrupt), LogFormatError, HFileError)
    if isinstance(result, BaseException):
        return
    blocks, hfiles = result
    assert all(entries == ENTRIES for entries in hfiles)  # gzip's CRC guards the HFile's blocks
    assert len(blocks) <= len(BLOCKS)


@fuzz
@given(st.binary(max_size=300), st.booleans())
def test_random_bytes_are_a_log_format_error_or_no_blocks(data, skip_corrupt):
    result = outcome(lambda: _read(b"#HUDI#" + data, skip_corrupt), LogFormatError, HFileError)
    assert isinstance(result, BaseException) or all(b.type in BlockType for b in result[0])
