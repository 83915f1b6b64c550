"""A float widened to double as Apache Hudi widens it: ``Double.parseDouble(Float.toString(f))`` on Java 17.

The oracle is the JVM itself: a one-file Java program (run with ``java``, Java 11+ runs a source file directly)
prints Java's answer for a sample of floats (every magnitude, the subnormals, the edges of the range where the
text is the shortest one, and the neighbours of powers of ten, where Java 17 prints more digits than needed),
and :func:`~hudi_cluster_core.io.java_float.widen_float` must give the same doubles, bit for bit. The range
where Arrow's shortest text is taken as Java's (2^-9 to 2^23) was checked once for all its 268 million floats
the same way; the sample keeps its edges.
"""

from __future__ import annotations

import math
import re
import subprocess
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

from hudi_cluster_core.io.java_float import java_float_to_double, widen_float

ORACLE = """
import java.nio.file.*;
public class WidenOracle {
  public static void main(String[] args) throws Exception {
    StringBuilder out = new StringBuilder();
    for (String line : Files.readAllLines(Path.of(args[0]))) {
      float f = Float.intBitsToFloat((int) Long.parseLong(line.trim()));
      out.append(Long.toString(Double.doubleToRawLongBits(Double.parseDouble(Float.toString(f))))).append('\\n');
    }
    Files.writeString(Path.of(args[1]), out.toString());
  }
}
"""


def _java_major() -> int:
    text = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    match = re.search(r'version "(\d+)', text)
    return int(match.group(1)) if match else 0


def _sample() -> np.ndarray:
    rng = np.random.default_rng(19)
    bits = [rng.integers(1, 0x7F800000, 60_000, dtype=np.int64)]  # every magnitude
    bits.append(np.arange(1, 3000))  # the smallest subnormals
    for edge in (2.0**-9, 2.0**23, 1e7, 1e-3, 2.0**-126, 3.4028234663852886e38):
        center = int(np.float32(edge).view(np.uint32))
        bits.append(np.arange(center - 200, center + 200))
    for exponent in range(-45, 39):
        for digit in range(1, 10):
            with np.errstate(over="ignore"):
                value = np.float32(float(f"{digit}e{exponent}"))
            if np.isfinite(value) and value > 0:
                center = int(value.view(np.uint32))
                bits.append(np.arange(center - 2, center + 3))
    every = np.unique(np.concatenate(bits))
    return every[(every > 0) & (every < 0x7F800000)].astype(np.uint32)


@pytest.fixture(scope="module")
def java_answers(tmp_path_factory):
    if _java_major() >= 19:
        pytest.skip("this JVM prints floats as Java 19+ does; the emulation is of Java 8-18, which Spark 3.5 runs on")
    root = tmp_path_factory.mktemp("java-float")
    bits = _sample()
    (root / "in.txt").write_text("\n".join(map(str, bits.tolist())))
    (root / "WidenOracle.java").write_text(ORACLE)
    subprocess.run(["java", str(root / "WidenOracle.java"), str(root / "in.txt"), str(root / "out.txt")], check=True,
                   timeout=300)  # fmt: skip
    answers = np.array([int(v) for v in (root / "out.txt").read_text().split()], dtype=np.int64).view(np.float64)
    return bits.view(np.float32), answers


def test_widening_is_java_17s_for_every_magnitude(java_answers):
    floats, java = java_answers
    ours = widen_float(pa.array(np.concatenate([floats, -floats]))).to_numpy()
    expected = np.concatenate([java, -java])
    wrong = np.flatnonzero(ours.view(np.uint64) != expected.view(np.uint64))
    assert not len(wrong), [(float(np.concatenate([floats, -floats])[i]), ours[i], expected[i]) for i in wrong[:10]]


def test_the_cases_where_java_17_is_not_the_shortest_text():
    # Float.toString(Float.MIN_VALUE) is "1.4E-45" (two digits in E-form), and the float nearest 9e9 prints as
    # "8.9999995E9"; the shortest texts would be 1e-45 and 9e9
    assert java_float_to_double(float(np.float32(1.4e-45))) == 1.4e-45
    assert java_float_to_double(float(np.float32(9e9))) == 8.9999995e9
    assert java_float_to_double(float(np.float32(1 / 3))) == 0.33333334
    widened = widen_float(pa.array([None, math.nan, math.inf, -math.inf, -0.0, 0.1], pa.float32())).to_pylist()
    assert widened[0] is None and math.isnan(widened[1]) and widened[2:4] == [math.inf, -math.inf]
    assert math.copysign(1, widened[4]) == -1 and widened[5] == 0.1


@settings(max_examples=400, deadline=None)
@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_the_widened_value_reads_back_as_the_float(value):
    """Java's text always reads back as the float it printed, so the double rounds back to it; and the per-value
    path and the vectorised one agree."""
    widened = java_float_to_double(value)
    assert np.float32(widened) == np.float32(value)
    assert widen_float(pa.array([value], pa.float32())).to_pylist() == [widened]
