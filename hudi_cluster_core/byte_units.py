"""Byte counts for people to read, in IEC units (powers of 1024: KiB, MiB, GiB, TiB, PiB).

Every size the core prints (a run's summary, ``show``, the progress line, the layout report, a dry run's plan
line, the configuration reference) goes through here, so one size reads the same everywhere: the unit is named
by its base, never ``KB`` for 1,024 bytes.
"""

from __future__ import annotations

UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
"""Each unit is 1,024 of the one before; a size takes the largest unit it has at least one of (PiB at most)."""


def in_iec_units(size: float) -> tuple[float, str]:
    """``size`` bytes as (figure, unit) with ``figure < 1024`` unless the unit is the last: ``(1.5, "MiB")``.

    A negative size (a difference of sizes) scales by its magnitude and keeps its sign."""
    figure = float(size)
    for unit in UNITS[:-1]:
        if abs(figure) < 1024:
            return figure, unit
        figure /= 1024
    return figure, UNITS[-1]


def human_bytes(size: float) -> str:
    """``size`` bytes as one short figure: whole bytes below 1 KiB (``"512 B"``), one decimal above
    (``"1.5 MiB"``, ``"426.5 KiB"``)."""
    figure, unit = in_iec_units(size)
    digits = 0 if unit == "B" else 1
    if abs(round(figure, digits)) >= 1024 and unit != UNITS[-1]:  # 1,048,575 bytes is "1.0 MiB", not "1024.0 KiB"
        figure, unit, digits = figure / 1024, UNITS[UNITS.index(unit) + 1], 1
    return f"{figure:.{digits}f} {unit}"
