"""Bit interleaving and the Hilbert transform over numpy columns: a curve's words -> its index bytes.

z-order's key is ``BinaryUtil.interleaving`` of the words' bits; Hilbert's is davidmoten's
``HilbertCurve.bits(63)`` index of the point (Skilling's transform, then the same interleaving), written as
``HilbertCurveUtils.indexBytes`` pads it: 63 bytes.
"""

from __future__ import annotations

import functools

import numpy as np

HILBERT_BITS = 63
HILBERT_INDEX_BYTES = 63


def _interleave_bits(words: np.ndarray, bits_per_word: int) -> np.ndarray:
    """(rows, dims) uint64 -> (rows, dims*bits) uint8 bits, MSB first: bit k of every dim, then k-1, ...
    Generic (one byte per bit); `interleave_bytes` is the fast path."""
    big_endian = words.astype(">u8").view(np.uint8).reshape(len(words), words.shape[1], 8)
    bits = np.unpackbits(big_endian, axis=2)[:, :, 64 - bits_per_word :]
    return bits.transpose(0, 2, 1).reshape(len(words), -1)


@functools.lru_cache(maxsize=None)
def _spread_table(dims: int) -> np.ndarray:
    """table[byte]: the byte's bits (MSB first) placed `dims` apart from the top of an 8*dims-bit block."""
    table = np.zeros(256, np.uint64)
    for value in range(256):
        spread = 0
        for b in range(8):
            if (value >> (7 - b)) & 1:
                spread |= 1 << (8 * dims - 1 - b * dims)
        table[value] = spread
    return table


def interleave_bytes(words: np.ndarray) -> np.ndarray:
    """`BinaryUtil.interleaving` of the words' 8 big-endian bytes: (rows, dims) uint64 -> (rows, 8*dims)
    bytes. Byte k of every dim only feeds output bytes [k*dims, (k+1)*dims), so each byte level is one
    8*dims-bit block built from per-byte lookup tables (dims <= 8 keeps a block in a uint64)."""
    rows, dims = words.shape
    if dims > 8:
        return np.packbits(_interleave_bits(words, 64), axis=1)
    table = _spread_table(dims)
    big_endian = words.astype(">u8").view(np.uint8).reshape(rows, dims, 8)  # byte k of dim j: [:, j, k]
    out = np.empty((rows, 8, dims), np.uint8)
    block = np.empty(rows, np.uint64)
    for k in range(8):
        np.take(table, big_endian[:, 0, k], out=block)
        for j in range(1, dims):
            block |= np.take(table, big_endian[:, j, k]) >> np.uint64(j)
        out[:, k, :] = block.astype(">u8").view(np.uint8).reshape(rows, 8)[:, 8 - dims :]
    return out.reshape(rows, 8 * dims)


def hilbert_transposed(axes: list[np.ndarray], bits: int) -> list[np.ndarray]:
    """Skilling's AxesToTranspose (as in davidmoten's `HilbertCurve.transposedIndex`) over numpy columns.

    `axes` are uint64 arrays, one per dimension, already reduced to their low `bits` bits (the Java code
    never lets higher bits reach the index). Returns new arrays; the index interleaves their bits.
    """
    x = [a.copy() for a in axes]
    n = len(x)
    is_set = np.empty_like(x[0])
    flip = np.empty_like(x[0])
    t = np.empty_like(x[0])
    for level in range(bits - 1, 0, -1):  # q = 2^level from M = 2^(bits-1) down to 2
        p = np.uint64((1 << level) - 1)
        to_top = np.uint64(63 - level)
        for i in range(n):
            # is_set = all ones where bit `level` of x[i] is 1: move it to the sign bit, then an arithmetic
            # shift smears it (a branch-free per-row if/else).
            np.left_shift(x[i], to_top, out=is_set)
            np.right_shift(is_set.view(np.int64), 63, out=is_set.view(np.int64))
            # bit set: invert the low bits of x[0]
            np.bitwise_and(is_set, p, out=flip)
            np.bitwise_xor(x[0], flip, out=x[0])
            if i:
                # bit clear: exchange the low bits of x[0] and x[i] (mask p & ~is_set == p ^ flip)
                np.bitwise_xor(x[0], x[i], out=t)
                np.bitwise_xor(flip, p, out=flip)
                np.bitwise_and(t, flip, out=t)
                np.bitwise_xor(x[0], t, out=x[0])
                np.bitwise_xor(x[i], t, out=x[i])
    for i in range(1, n):  # Gray encode
        np.bitwise_xor(x[i], x[i - 1], out=x[i])
    # t ^= q - 1 for every set bit q > 1 of x[n-1]: bit j of t is the parity of x[n-1]'s bits above j,
    # a suffix-XOR computed by doubling.
    suffix = x[n - 1].copy()
    for step in (1, 2, 4, 8, 16, 32):
        suffix ^= suffix >> np.uint64(step)
    t = suffix >> np.uint64(1)
    for i in range(n):
        x[i] ^= t
    return x


_BIT_LENGTH = np.array([int(v).bit_length() for v in range(256)], np.int64)


def hilbert_index_bytes(longs: np.ndarray) -> np.ndarray:
    """(rows, dims) Java longs -> (rows, 63) bytes of `HilbertCurveUtils.indexBytes(curve, point, 63)`."""
    rows, dims = longs.shape
    mask = np.uint64((1 << HILBERT_BITS) - 1)
    transposed = hilbert_transposed([longs[:, d] & mask for d in range(dims)], HILBERT_BITS)
    if dims <= 7:
        # The 63*dims-bit index fits 8*dims <= 56 bytes, so toByteArray never exceeds 63 bytes and Hudi's
        # padding is plain left-padding. Interleave the 63 bits as the top of 64-bit words, then drop the
        # `dims` trailing zero bits with a right shift of the whole byte string.
        interleaved = interleave_bytes(np.stack([t << np.uint64(1) for t in transposed], axis=1))
        shifted = interleaved >> np.uint8(dims)
        shifted[:, 1:] |= interleaved[:, :-1] << np.uint8(8 - dims)
        out = np.zeros((rows, HILBERT_INDEX_BYTES), np.uint8)
        out[:, HILBERT_INDEX_BYTES - 8 * dims :] = shifted
        return out
    index_bits = _interleave_bits(np.stack(transposed, axis=1), HILBERT_BITS)
    total_bits = dims * HILBERT_BITS
    width = -(-total_bits // 8)
    padded_bits = np.zeros((rows, 8 * width), np.uint8)
    padded_bits[:, 8 * width - total_bits :] = index_bits
    magnitude = np.packbits(padded_bits, axis=1)  # (rows, width) big-endian, non-negative
    # BigInteger.toByteArray: minimal two's complement, bitLength // 8 + 1 bytes (a 0x00 sign byte when the
    # top bit is set). paddingToNByte then left-pads to 63 bytes, or keeps the FIRST 63 bytes when longer
    # (only possible from 8 dimensions up; it is what Hudi does, so we do it too).
    nonzero = magnitude != 0
    first = nonzero.argmax(axis=1)
    top = magnitude[np.arange(rows), first]
    bit_length = np.where(nonzero.any(axis=1), (width - first - 1) * 8 + _BIT_LENGTH[top], 0)
    length = bit_length // 8 + 1
    full_width = max(width + 1, HILBERT_INDEX_BYTES)
    framed = np.zeros((rows, full_width), np.uint8)
    framed[:, full_width - width :] = magnitude
    start = full_width - np.maximum(length, HILBERT_INDEX_BYTES)
    return np.take_along_axis(framed, start[:, None] + np.arange(HILBERT_INDEX_BYTES), axis=1)
