"""The sort columns (``hoodie.clustering.plan.strategy.sort.columns``): one parse, one "not in the table" check.

Whoever needs the columns as names calls :func:`parse_sort_columns` (the catalogue validates the key's value
with the same rule when the job's configuration is loaded); whoever holds the table's columns calls
:func:`check_sort_columns`: the scheduler and the driver against the table's schema, before anything is written
(:func:`hudi_cluster_core.table.schema.check_sort_columns_in_schema`), and a task against the rows it reads.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import ConfigError, HudiClusterError
from .catalogue import BY_KEY, SORT_COLUMNS, column_names

HUDI_META_PREFIX = "_hoodie_"  # Hudi's meta columns: in every table, so never listed as a hint


def parse_sort_columns(text: str | None, *, error: type[HudiClusterError] = ConfigError) -> tuple[str, ...]:
    """The column names of ``text`` (the key's value, or a plan's strategy param): comma-separated, trimmed;
    none when unset or blank. An empty name (``a,,b``) raises ``error`` naming the key, the value and what is
    accepted (``ConfigError`` for a job's setting; a plan's bad value is a ``PlanError``)."""
    if text is None or not str(text).strip():
        return ()
    try:
        return column_names(str(text))
    except ValueError as exc:
        raise error(BY_KEY[SORT_COLUMNS].problem(text, exc)) from None


def check_sort_columns(
    columns: Sequence[str], table_columns: Sequence[str], *, error: type[HudiClusterError] = ConfigError
) -> None:
    """Raise ``error`` when a sort column is not one of ``table_columns``: one line naming the missing ones and the
    table's columns (but Hudi's meta columns, which every table has)."""
    missing = [c for c in columns if c not in table_columns]
    if missing:
        listed = [c for c in table_columns if not c.startswith(HUDI_META_PREFIX)]
        raise error(f"{SORT_COLUMNS}={','.join(columns)}: {', '.join(missing)} not in the table; "
                    f"columns: {', '.join(listed)}")  # fmt: skip
