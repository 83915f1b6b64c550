"""Sorting by ``_hoodie_record_key`` on a table without meta fields: by the keys its key generator makes.

In such a table the column is null in every row, so a plan sorting by it (the ``key-range`` strategy does, and a
user may name it in ``hoodie.clustering.plan.strategy.sort.columns``) would leave the rows unsorted. The record
key Hudi means is the key generator's (the same text our footers' bloom filters and key ranges hold), so the
column is replaced by those keys wherever the sort reads it; the column written stays null.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from ..table.keygen import KeyGenerator
from ..sort.spill import ColumnsKey

RECORD_KEY = "_hoodie_record_key"


@dataclass(frozen=True)
class GeneratedRecordKeySort:
    """The sort columns in their layout, ``_hoodie_record_key`` being each row's generated key."""

    generator: KeyGenerator
    sort: ColumnsKey
    sample_size: int = 0

    @property
    def columns(self) -> list[str]:
        """The other sort columns and the key fields (what a sample of the group must hold)."""
        others = [c for c in self.sort.columns if c != RECORD_KEY]
        return list(dict.fromkeys([*others, *self.generator.columns]))

    def with_sample(self, rows: pa.Table) -> "GeneratedRecordKeySort":
        return self

    def keys(self, table: pa.Table) -> pa.Table:
        return self.sort.keys(self._with_keys(table))

    def order(self, table: pa.Table) -> pa.Array:
        return self.sort.order(self._with_keys(table))

    def _with_keys(self, table: pa.Table) -> pa.Table:
        keys = pa.chunked_array([self.generator.record_keys(table)], pa.string())
        index = table.schema.get_field_index(RECORD_KEY)
        if index < 0:  # a sample of the key fields: the meta column comes before every data column, as in the file
            return table.add_column(0, RECORD_KEY, keys)
        return table.set_column(index, pa.field(RECORD_KEY, pa.string()), keys)


def record_key_sort(generator: KeyGenerator | None, columns: list[str], layout: str) -> GeneratedRecordKeySort | None:
    """The sort of ``columns`` by generated keys, when the table has virtual keys and the sort names the key."""
    if generator is None or RECORD_KEY not in columns:
        return None
    return GeneratedRecordKeySort(generator, ColumnsKey(columns, layout))
