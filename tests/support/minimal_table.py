"""The smallest real Hudi table for property tests: ``hoodie.properties`` written by our append writer's
``create_table`` (v9, non-partitioned, metadata table off), and commits through ``writer.instant`` as our writers
make them, so hudi-rs reads it as any table: through its timeline, file listing and commit metadata.

Rows are the writers' rows: Hudi's five meta columns, then the record key column ``_key``, then the data columns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa

from hudi_cluster_core import javaprops
from hudi_cluster_core.io.storage import Storage
from hudi_cluster_core.table import load_table
from hudi_cluster_core.writer.append import create_table, with_meta_columns
from hudi_cluster_core.write.avro_schema import arrow_to_avro_schema
from hudi_cluster_core.writer.instant import complete_commit, writing

KEY = "_key"  # never a name arrow_strategies.names draws
TABLE_NAME = "props"


class MinimalTable:
    def __init__(self, base: str, data_schema: pa.Schema, table_type: str = "COPY_ON_WRITE"):
        """``data_schema``: the record key ``KEY`` (string) and the data columns."""
        self.storage = Storage(base)
        create_table(self.storage, data_schema, table_name=TABLE_NAME, record_key=KEY, partition_field=None,
                     precombine_field=None)  # fmt: skip
        if table_type != "COPY_ON_WRITE":  # create_table writes COW tables; the rest of the properties hold for MOR
            path = self.storage.join(".hoodie", "hoodie.properties")
            props = javaprops.parse(self.storage.read_bytes(path).decode("utf-8"))
            props["hoodie.table.type"] = table_type
            self.storage.write_atomic(path, javaprops.dump(props).encode("utf-8"))
        self.action = "deltacommit" if table_type == "MERGE_ON_READ" else "commit"
        self.avro_schema = arrow_to_avro_schema(data_schema, TABLE_NAME)  # data fields, as commits record it

    def begin(self):
        """``with table.begin() as instant:`` a write instant of ours (undone if the body raises)."""
        return writing(load_table(self.storage.base_uri), "UPSERT", action=self.action)

    def complete(self, instant: str, stats: Sequence[Mapping]) -> None:
        # one writer, so no conflict check (the default one is a COW rewrite's, which a log-only slice's log fails)
        complete_commit(load_table(self.storage.base_uri), instant, {"": [dict(s) for s in stats]}, operation="UPSERT",
                        schema=self.avro_schema, metadata_enable=False, action=self.action,
                        check=lambda *_: None)  # fmt: skip


def with_meta(rows: pa.Table, instant: str, file_name: str = "") -> pa.Table:
    """``rows`` (``KEY`` and data columns) with Hudi's meta columns in front, as our writers stamp them."""
    full = with_meta_columns(rows, instant, KEY, pa.array([""] * rows.num_rows, pa.string()))
    seqno = pa.array([f"{instant}_0_{i}" for i in range(rows.num_rows)], pa.string())
    full = full.set_column(1, "_hoodie_commit_seqno", seqno)
    return full.set_column(4, "_hoodie_file_name", pa.array([file_name] * rows.num_rows, pa.string()))
