"""Slice statistics from parquet footers only (no data pages read): what key-range and curve groupers need."""

from __future__ import annotations

from functools import lru_cache

import pyarrow.parquet as pq

from ..io.storage import Storage
from ..table import FileSlice
from .model import SliceStats


def footer_stats_provider(storage: Storage):
    @lru_cache(maxsize=None)
    def read(file_slice: FileSlice) -> SliceStats:
        if file_slice.base_file is None:
            return SliceStats()
        path = storage.join(file_slice.partition, file_slice.base_file.name)
        with storage.fs.open_input_file(path) as handle:
            metadata = pq.ParquetFile(handle).metadata
        kv = {k.decode(): v.decode() for k, v in (metadata.metadata or {}).items()}
        columns: dict[str, tuple] = {}
        for group_index in range(metadata.num_row_groups):
            group = metadata.row_group(group_index)
            for column_index in range(group.num_columns):
                chunk = group.column(column_index)
                stats = chunk.statistics
                if stats is None or not stats.has_min_max or "." in chunk.path_in_schema:
                    continue
                name = chunk.path_in_schema
                low, high = columns.get(name, (stats.min, stats.max))
                columns[name] = (min(low, stats.min), max(high, stats.max))
        return SliceStats(
            metadata.num_rows, kv.get("hoodie_min_record_key"), kv.get("hoodie_max_record_key"), columns,
        )  # fmt: skip

    return read
