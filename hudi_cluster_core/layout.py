"""The one parser of layout names (``hoodie.layout.optimize.strategy``): LINEAR, ZORDER or HILBERT.

Hudi 1.1 reads the key as its ``LayoutOptimizationStrategy`` enum by name in any case; Hudi's own docs and
blog also spell the curve ``z-order``, which is accepted too. The config catalogue, the curve sort
(:mod:`hudi_cluster_core.sort.curves`) and the strategies' params models all parse a layout name with
:func:`parse_layout`, so they accept and reject the same spellings.
"""

from __future__ import annotations

from typing import Final, Literal, Mapping

Layout = Literal["LINEAR", "ZORDER", "HILBERT"]
Curve = Literal["linear", "z-order", "hilbert"]  # the name the curve-sorting helpers use

LAYOUTS: Final[tuple[Layout, ...]] = ("LINEAR", "ZORDER", "HILBERT")
# accepted spelling (lower case, trimmed) -> canonical name
LAYOUT_SPELLINGS: Final[Mapping[str, Layout]] = {
    "linear": "LINEAR", "zorder": "ZORDER", "z-order": "ZORDER", "hilbert": "HILBERT",
}  # fmt: skip
ACCEPTED: Final = "LINEAR, ZORDER, HILBERT (any case; also z-order)"
_CURVES: Final[Mapping[Layout, Curve]] = {"LINEAR": "linear", "ZORDER": "z-order", "HILBERT": "hilbert"}


def parse_layout(name: object) -> Layout:
    """``name`` (any accepted spelling, surrounding whitespace ignored) as LINEAR, ZORDER or HILBERT.

    Raises ValueError naming the value and the accepted spellings."""
    layout = LAYOUT_SPELLINGS.get(name.strip().lower()) if isinstance(name, str) else None
    if layout is None:
        raise ValueError(f"unknown layout {name!r}; accepted: {ACCEPTED}")
    return layout


def curve_name(name: object) -> Curve:
    """The curve-sorting name (``linear``, ``z-order``, ``hilbert``) of a layout name in any accepted spelling."""
    return _CURVES[parse_layout(name)]
