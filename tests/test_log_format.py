"""The one reader of Hudi log-file framing (``io.log_format``): every offset bound-checked, damaged bytes give one
error naming the file, and ``skip_corrupt`` goes on at the next block as Hudi's reader does."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_cluster_core.io.log_format import MAGIC, LogFormatError, read_log_blocks
from hudi_cluster_core.mdt import log_block, records

BLOCK = log_block.encode_block(log_block.hfile_data_block("20250101000000000", records.files_records({"": {"f1.parquet": 10}})))


def test_blocks_are_framed_in_order_with_their_content():
    data = BLOCK + BLOCK
    blocks = list(read_log_blocks(data, "f.log"))
    assert [(b.offset, b.end) for b in blocks] == [(0, len(BLOCK)), (len(BLOCK), 2 * len(BLOCK))]
    assert blocks[1].content(data) == log_block.read_blocks(BLOCK)[0].content
    assert blocks[0].type == log_block.BlockType.HFILE_DATA and blocks[0].header[0] == "20250101000000000"


@pytest.mark.parametrize("damage", [
    lambda data: data + BLOCK[: len(BLOCK) // 2],             # a writer died mid-block
    lambda data: data + b"\x00garbage" + BLOCK,                # bytes that are not a block, then a good one
    lambda data: data + MAGIC + (10**12).to_bytes(8, "big"),  # a size past the end of the file
], ids=["truncated", "garbage", "huge-size"])  # fmt: skip
def test_a_damaged_block_is_one_error_naming_the_file_or_skipped_like_hudi(damage):
    data = damage(BLOCK)
    with pytest.raises(LogFormatError, match=r"^p/\.f\.log\.1: .*byte"):
        list(read_log_blocks(data, "p/.f.log.1"))
    good = [b.offset for b in read_log_blocks(data, "p/.f.log.1", skip_corrupt=True)]
    assert good[0] == 0 and all(data[at : at + len(BLOCK)] == BLOCK for at in good)
    assert len(good) == data.count(BLOCK)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(BLOCK) - 1), st.binary(min_size=1, max_size=8))
def test_any_overwritten_bytes_give_blocks_or_a_log_format_error_never_a_wrong_read(at, junk):
    data = bytearray(BLOCK + BLOCK)
    data[at : at + len(junk)] = junk
    try:
        blocks = list(read_log_blocks(bytes(data), "f.log"))
    except LogFormatError:
        return
    for block in blocks:  # what frames must lie inside the file, its parts in order
        assert 0 <= block.offset < block.content_start <= block.content_end < block.end <= len(data)
    skipped = list(read_log_blocks(bytes(data), "f.log", skip_corrupt=True))
    assert [b.offset for b in skipped] == [b.offset for b in blocks]
