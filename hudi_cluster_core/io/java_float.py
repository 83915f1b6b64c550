"""Java 17's text of floats and doubles, and a float widened to double the way Apache Hudi's readers widen it:
``Double.parseDouble(Float.toString(f))``.

Hudi reads a ``float`` column that the table's schema later widened to ``double`` through the float's decimal
text (so ``0.33333334f`` reads as ``0.33333334``, not as ``0.3333333432674408``, the float's exact value).
The text is Java's ``Float.toString``, and on Java 8-18 (Spark 3.5 runs on 8, 11 and 17) that is not always the
shortest text that reads back as the float: ``jdk.internal.math.FloatingDecimal`` prints at least two
significant digits in its E-form (``1.4E-45``, where the shortest is ``1e-45``) and, above about 10^7, often
more digits than needed (``8.9999995E9`` for the float nearest 9e9). Java 19 and later print the shortest text
(with the same two-digit minimum).

So :func:`widen_float` does what Java 17 does:

* **from 2^-9 to 2^23** (0.00195... to 8388608, and their negatives), Java's text is the shortest one, which is
  what Arrow's float-to-string cast writes; checked for every one of the 268 million floats in that range
  against Java 17 (``tests/test_java_float.py`` keeps a sample of it and the edges);
* elsewhere (large and tiny magnitudes), the digits come from the same digit generation as Java's
  ``FloatingDecimal.dtoa`` for floats, re-implemented here on Python integers, including the 32- and 64-bit
  arithmetic and the overflow guard of its fast paths, which decide where it stops.

NaN, infinities and signed zeros keep their value. :func:`java_to_string` is ``Float.toString`` and
``Double.toString`` themselves (Hudi's key generators print key parts with them), from the same digits.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# Arrow's shortest text equals Java 17's for every float whose binary exponent is in this range (checked)
_FAST_LOW, _FAST_HIGH = 2.0**-9, 2.0**23
_DOUBLE_EXP_SHIFT = 52  # Java's FloatingDecimal works on the double layout
_SINGLE_EXP_SHIFT = 23
_MIN_SMALL_BIN_EXP, _MAX_SMALL_BIN_EXP = -(63 // 3), 62
# about ceil(log2(5**i)), as Java's table has it (it decides which arithmetic a conversion uses)
_N_5_BITS = (0, 3, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28, 31, 33, 35, 38, 40, 42, 45, 47, 49, 52, 54, 56, 59, 61)
_INSIGNIFICANT_FOR_POW2 = (
    0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10,
    11, 11, 11, 12, 12, 12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15, 15, 16, 16, 16, 17, 17, 17, 18, 18, 18, 19,
)  # fmt: skip
_LONG_5_POW_COUNT = 27  # Java keeps 5^0 .. 5^26 as longs


def widen_float(values: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """A float32 Arrow array as float64, each value as Java 17's ``Double.parseDouble(Float.toString(f))``."""
    if isinstance(values, pa.ChunkedArray):
        return pa.chunked_array([widen_float(c) for c in values.chunks], pa.float64())
    widened = pc.cast(pc.cast(values, pa.string()), pa.float64())  # the shortest text, read back
    floats = values.to_numpy(zero_copy_only=False)
    magnitude = np.abs(floats.astype(np.float64))
    slow = np.flatnonzero(np.isfinite(magnitude) & (magnitude != 0) & ((magnitude < _FAST_LOW) | (magnitude >= _FAST_HIGH)))
    if not len(slow):
        return widened
    result = widened.to_numpy(zero_copy_only=False).copy()
    for index in slow:
        result[index] = java_float_to_double(float(floats[index]))
    mask = values.is_null().to_numpy(zero_copy_only=False) if values.null_count else None
    return pa.array(result, pa.float64(), mask=mask)


def java_float_to_double(value: float) -> float:
    """``Double.parseDouble(Float.toString(value))`` for one float value (given as a Python float) on Java 17."""
    if value != value or value in (float("inf"), float("-inf")) or value == 0:
        return value
    digits, exponent = java_float_digits(abs(value))
    widened = float(f"0.{digits}e{exponent}")
    return -widened if value < 0 else widened


def java_float_digits(value: float) -> tuple[str, int]:
    """The digits Java 17's ``Float.toString`` prints for a positive, finite float, and the decimal exponent
    ``e`` such that the value printed is ``0.<digits> * 10^e``."""
    bin_exp, fract, significant = _unpack(int(np.float32(value).view(np.uint32)), 32, _SINGLE_EXP_SHIFT, 127)
    return _dtoa(bin_exp, fract << (_DOUBLE_EXP_SHIFT - _SINGLE_EXP_SHIFT), significant)


def java_double_digits(value: float) -> tuple[str, int]:
    """:func:`java_float_digits` for a double (``Double.toString``)."""
    return _dtoa(*_unpack(int(np.float64(value).view(np.uint64)), 64, _DOUBLE_EXP_SHIFT, 1023))


def _unpack(bits: int, width: int, exp_shift: int, bias: int) -> tuple[int, int, int]:
    """(unbiased binary exponent, significand with its leading bit, significant bits) of a positive value's
    IEEE bits; a subnormal is normalised, as Java does."""
    fract = bits & ((1 << exp_shift) - 1)
    bin_exp = (bits >> exp_shift) & ((1 << (width - 1 - exp_shift)) - 1)
    if bin_exp == 0:
        leading = width - fract.bit_length()
        shift = leading - (width - 1 - exp_shift)
        return 1 - shift - bias, fract << shift, width - leading
    return bin_exp - bias, fract | (1 << exp_shift), exp_shift + 1


def java_to_string(value: float, single: bool = False) -> str:
    """``Double.toString(value)``, or ``Float.toString`` of the float ``value`` is when ``single``, on Java 17."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    sign = "-" if np.signbit(value) else ""
    if value == 0:
        return sign + "0.0"
    digits, exponent = java_float_digits(abs(value)) if single else java_double_digits(abs(value))
    if 0 < exponent < 8:  # plain, at least one digit after the point
        return f"{sign}{digits[:exponent].ljust(exponent, '0')}.{digits[exponent:] or '0'}"
    if -3 < exponent <= 0:
        return f"{sign}0.{'0' * -exponent}{digits}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent - 1}"


def _wrap(value: int, bits: int) -> int:
    """``value`` in Java's two's-complement ``int`` (32) or ``long`` (64) arithmetic."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _dtoa(bin_exp: int, fract_bits: int, significant: int) -> tuple[str, int]:
    tail_zeros = (fract_bits & -fract_bits).bit_length() - 1
    n_fract_bits = _DOUBLE_EXP_SHIFT + 1 - tail_zeros
    n_tiny_bits = max(0, n_fract_bits - bin_exp - 1)
    if _MIN_SMALL_BIN_EXP <= bin_exp <= _MAX_SMALL_BIN_EXP and n_tiny_bits == 0 \
            and n_tiny_bits < _LONG_5_POW_COUNT and n_fract_bits + _N_5_BITS[n_tiny_bits] < 64:  # fmt: skip
        # an integer: its digits, with the ones below the float's precision rounded away
        insignificant = 0
        if bin_exp > significant:
            p2 = bin_exp - significant - 1
            insignificant = _INSIGNIFICANT_FOR_POW2[p2] if 1 < p2 < len(_INSIGNIFICANT_FOR_POW2) else 0
        whole = fract_bits << (bin_exp - _DOUBLE_EXP_SHIFT) if bin_exp >= _DOUBLE_EXP_SHIFT \
            else fract_bits >> (_DOUBLE_EXP_SHIFT - bin_exp)  # fmt: skip
        return _long_digits(whole, insignificant)
    dec_exp = _estimate_dec_exp(fract_bits, bin_exp)
    b5 = max(0, -dec_exp)
    b2 = b5 + n_tiny_bits + bin_exp
    s5 = max(0, dec_exp)
    s2 = s5 + n_tiny_bits
    m5, m2 = b5, b2 - significant
    fract_bits >>= tail_zeros
    b2 -= n_fract_bits - 1
    common = min(b2, s2)
    b2, s2, m2 = b2 - common, s2 - common, m2 - common
    if n_fract_bits == 1:  # an exact power of two: Java halves the margin below it
        m2 -= 1
    if m2 < 0:
        b2, s2, m2 = b2 - m2, s2 - m2, 0
    b_bits = n_fract_bits + b2 + (_N_5_BITS[b5] if b5 < len(_N_5_BITS) else b5 * 3)
    ten_s_bits = s2 + 1 + (_N_5_BITS[s5 + 1] if s5 + 1 < len(_N_5_BITS) else (s5 + 1) * 3)
    b, s, m = fract_bits * 5**b5 << b2, 5**s5 << s2, 5**m5 << m2
    if b_bits < 64 and ten_s_bits < 64:
        width = 32 if b_bits < 32 and ten_s_bits < 32 else 64  # Java's int or long arithmetic
        digits, dec_exp, low, high, difference = _digits_fixed(b, s, m, dec_exp, width)
    else:
        digits, dec_exp, low, high, difference = _digits_big(b, s, m, dec_exp)
    exponent = dec_exp + 1
    if high and (not low or difference > 0 or (difference == 0 and int(digits[-1]) % 2)):
        digits, exponent = _round_up(digits, exponent)
    return "".join(digits), exponent


def _digits_fixed(b: int, s: int, m: int, dec_exp: int, width: int) -> tuple[list[str], int, bool, bool, int]:
    """Java's digit loop in ``int`` or ``long`` arithmetic (values fit, but the margin may overflow)."""
    w = lambda v: _wrap(v, width)  # noqa: E731
    b, s, m = w(b), w(s), w(m)
    tens = w(s * 10)
    digits: list[str] = []
    q, b, m = b // s, w(10 * (b % s)), w(m * 10)
    low, high = b < m, w(b + m) > tens
    if q == 0 and not high:
        dec_exp -= 1  # the exponent estimate was one too high
    else:
        digits.append(str(q))
    if dec_exp < -3 or dec_exp >= 8:  # E-form: at least one digit after the point
        low = high = False
    while not low and not high:
        q, b, m = b // s, w(10 * (b % s)), w(m * 10)
        if m > 0:
            low, high = b < m, w(b + m) > tens
        else:  # the margin overflowed: Java stops here
            low = high = True
        digits.append(str(q))
    return digits, dec_exp, low, high, w(w(b << 1) - tens)


def _digits_big(b: int, s: int, m: int, dec_exp: int) -> tuple[list[str], int, bool, bool, int]:
    """Java's digit loop in big-integer arithmetic (``FDBigInteger``): its high test is ``>=``."""
    tens = s * 10
    digits: list[str] = []
    q, b, m = b // s, 10 * (b % s), m * 10
    low, high = b < m, b + m >= tens
    if q == 0 and not high:
        dec_exp -= 1
    else:
        digits.append(str(q))
    if dec_exp < -3 or dec_exp >= 8:
        low = high = False
    while not low and not high:
        q, b, m = b // s, 10 * (b % s), m * 10
        low, high = b < m, b + m >= tens
        digits.append(str(q))
    difference = (b << 1) - tens if high and low else 0
    return digits, dec_exp, low, high, difference


def _long_digits(value: int, insignificant: int) -> tuple[str, int]:
    exponent = 0
    if insignificant:
        pow10 = 10**insignificant
        value, residue = divmod(value, pow10)
        exponent += insignificant
        if residue >= pow10 >> 1:
            value += 1
    text = str(value)
    stripped = text.rstrip("0")
    return stripped, exponent + len(text)


def _round_up(digits: list[str], exponent: int) -> tuple[list[str], int]:
    index = len(digits) - 1
    while index > 0 and digits[index] == "9":
        digits[index] = "0"
        index -= 1
    if digits[index] == "9":  # carried out of the first digit
        digits[0] = "1"
        return digits, exponent + 1
    digits[index] = str(int(digits[index]) + 1)
    return digits, exponent


def _estimate_dec_exp(fract_bits: int, bin_exp: int) -> int:
    """Java's estimate of floor(log10(value)), computed in doubles as it computes it."""
    d2 = float(np.uint64((0x3FF << 52) | (fract_bits & ((1 << 52) - 1))).view(np.float64))
    d = (d2 - 1.5) * 0.289529654 + 0.176091259 + float(bin_exp) * 0.301029995663981
    bits = int(np.float64(d).view(np.uint64))
    exponent = ((bits >> 52) & 0x7FF) - 1023
    negative = bool(bits >> 63)
    if 0 <= exponent < 52:
        mask = ((1 << 52) - 1) >> exponent
        r = (((bits & ((1 << 52) - 1)) | (1 << 52)) >> (52 - exponent))
        if negative:
            return -r if (mask & bits) == 0 else -r - 1
        return r
    if exponent < 0:
        return 0 if (bits & ~(1 << 63)) == 0 else (-1 if negative else 0)
    return int(d)
