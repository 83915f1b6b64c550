"""The table's schema as Hudi records it, and checks of configured columns against it."""

from __future__ import annotations

import json

from ..errors import ConfigError
from . import HudiTable

SORT_COLUMNS_KEY = "hoodie.clustering.plan.strategy.sort.columns"
META_FIELDS = (
    "_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
    "_hoodie_file_name",
)  # fmt: skip


def table_schema(table: HudiTable) -> str | None:
    """The table's Avro schema (data fields only) as Hudi records it in every commit's extraMetadata; the newest
    commit that has one wins, else ``hoodie.table.create.schema``."""
    for instant in reversed(table.timeline.completed()):
        schema = (table.timeline.commit_metadata(instant).get("extraMetadata") or {}).get("schema")
        if schema:
            return schema
    return table.config.props.get("hoodie.table.create.schema")


def check_sort_columns(table: HudiTable, sort_columns: str | None) -> None:
    """Fail before anything is written when a sort column is not a column of the table (unknown schema: no check)."""
    columns = [c.strip() for c in (sort_columns or "").split(",") if c.strip()]
    schema = table_schema(table)
    if not columns or not schema:
        return
    data_fields = [f["name"] for f in json.loads(schema).get("fields", [])]
    missing = [c for c in columns if c not in (*META_FIELDS, *data_fields)]
    if missing:
        raise ConfigError(
            f"{SORT_COLUMNS_KEY}={sort_columns}: {', '.join(missing)} not in the table; "
            f"columns: {', '.join(data_fields)}"
        )
