"""One way to print a byte count: IEC units (powers of 1024, named KiB/MiB/GiB), the same in every output."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hudi_cluster_core.byte_units import UNITS, human_bytes, in_iec_units
from hudi_cluster_core.report.layout_report import LayoutReport, PartitionReport, report_text


def test_sizes_read_in_iec_units():
    assert [human_bytes(n) for n in (0, 512, 1023, 1024, 1536, 436_700, 5 * 2**20, 3 * 2**30, 2**41)] == [
        "0 B", "512 B", "1023 B", "1.0 KiB", "1.5 KiB", "426.5 KiB", "5.0 MiB", "3.0 GiB", "2.0 TiB",
    ]  # fmt: skip


def test_a_size_that_rounds_up_to_1024_takes_the_next_unit():
    assert human_bytes(2**20 - 1) == "1.0 MiB" and human_bytes(2**30 - 1) == "1.0 GiB"


def test_the_largest_unit_holds_any_size():
    assert in_iec_units(2**60) == (1024.0, "PiB") and human_bytes(2**60) == "1024.0 PiB"


@given(st.integers(0, 2**62))
def test_figure_and_unit_give_back_the_size(size):
    figure, unit = in_iec_units(size)
    assert figure * 1024 ** UNITS.index(unit) == pytest.approx(size, rel=1e-12)
    assert 1 <= figure < 1024 or (unit == "B" and figure < 1) or unit == UNITS[-1]
    shown, shown_unit = human_bytes(size).split()
    assert abs(float(shown) * 1024 ** UNITS.index(shown_unit) - size) <= 0.05 * 1024 ** UNITS.index(shown_unit)
    assert float(shown) < 1024 or shown_unit == UNITS[-1]


def test_the_layout_report_names_sizes_in_iec_units():
    sizes = (100 * 1024, 3 * 2**20)
    partition = PartitionReport("us", 2, (), sizes, 2, 2048)
    text = report_text(LayoutReport("t", "footers", (), (partition,), {}))
    assert "3.1 MiB in base files, 2.0 KiB in log files" in text, text
    assert "size 100.0 KiB -" in text and " KB" not in text and " MB" not in text, text
