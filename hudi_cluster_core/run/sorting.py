"""Ordering a group's rows in Arrow: linear (lexicographic), z-order or Hilbert, as Hudi lays them out."""

from __future__ import annotations

import pyarrow as pa

from ..errors import PlanError

LAYOUTS = {"linear": "linear", "z-order": "z-order", "zorder": "z-order", "hilbert": "hilbert"}


def canonical_layout(name: str) -> str:
    layout = LAYOUTS.get(str(name).strip().lower())
    if layout is None:
        raise PlanError(f"hoodie.layout.optimize.strategy={name!r}; accepted: linear, z-order, hilbert")
    return layout


def sort_rows(table: pa.Table, columns: list[str], layout: str = "linear") -> pa.Table:
    """``table`` ordered by ``columns``; unchanged when no columns are given."""
    if not columns or table.num_rows < 2:
        return table
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise PlanError(
            f"hoodie.clustering.plan.strategy.sort.columns names {missing}, not in the table; "
            f"columns: {', '.join(table.column_names)}"
        )
    layout = canonical_layout(layout)
    # one code path for every layout: Spark's order (nulls first, NaN last), Hudi's curve bytes
    from ..io.curves import curve_sort_indices

    return table.take(curve_sort_indices(table, columns, layout))
