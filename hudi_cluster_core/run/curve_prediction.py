"""The layout's own curve for the files-per-query prediction of a plan: sample values put in the order the writer's
sort keys put rows (Hudi's DIRECT z-order or Hilbert bits), so a curve's prediction cuts where the run will.

It lives here, not beside the prediction: the report (what plans score groups with) does not depend on the sort
engine; the driver, which knows both, hands the curve in.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..layout import parse_layout
from ..plan.avro_plan import StoredPlan
from ..report.predict import CurveOrder
from ..sort.curves import sort_key_table
from ..table import HudiTable


def _record_schema(table: HudiTable, plan: StoredPlan) -> pa.Schema | None:
    """The schema of the plan's first base file (the record schema the group's rows are sorted with)."""
    for group in plan.groups:
        for file_slice in group.slices:
            if file_slice.base_file:
                with table.storage.fs.open_input_file(file_slice.base_file) as handle:
                    return pq.read_schema(handle)
    return None


def curve_order(table: HudiTable, plan: StoredPlan, layout: str) -> CurveOrder | None:
    """The z-order or Hilbert order of sample values of the plan's sort columns; None for a linear layout or a
    plan without base files (the prediction then ranks the samples)."""
    if parse_layout(layout) == "LINEAR":
        return None
    schema = _record_schema(table, plan)
    if schema is None:
        return None
    names = list(schema.names)

    def order(samples: Mapping[str, np.ndarray]) -> np.ndarray:
        columns = list(samples)
        # each column as the files store it: an int32's curve bits are not an int64's
        rows = pa.table({c: pa.array(samples[c]).cast(schema.field(c).type, safe=False) for c in columns})
        keys = sort_key_table(rows, columns, layout, field_names=names)
        return pc.sort_indices(keys, sort_keys=[(k, "ascending") for k in keys.column_names]).to_numpy()

    return order
