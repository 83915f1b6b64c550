"""The table's schema as Hudi records it, checks of configured columns against it, and how a rewrite reads files
written under older versions of it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow as pa

from ..avro.arrow_schema import UnsupportedAvroType, arrow_schema
from ..config.sort_columns import check_sort_columns, parse_sort_columns
from ..errors import ConfigError, HudiClusterError, PlanError
from . import HudiTable

LATEST_SCHEMA_KEY = "latest_schema"  # the internal schema (column ids) of a table with schema on read
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


def schema_metadata(table: HudiTable) -> dict[str, str]:
    """The schema keys a commit of ours records, as Hudi's commits do: ``schema`` (Avro) and, on a table with
    schema on read, ``latest_schema`` (the internal schema with column ids), each from the newest commit having it."""
    found: dict[str, str] = {}
    for instant in reversed(table.timeline.completed()):
        extra = table.timeline.commit_metadata(instant).get("extraMetadata") or {}
        for key in ("schema", LATEST_SCHEMA_KEY):
            if extra.get(key) and key not in found:
                found[key] = extra[key]
        if "schema" in found:
            break  # the internal schema, if any, is recorded with it
    if "schema" not in found and table.config.props.get("hoodie.table.create.schema"):
        found["schema"] = table.config.props["hoodie.table.create.schema"]
    return found


def check_sort_columns_in_schema(
    table: HudiTable, sort_columns: str | None, *, error: type[HudiClusterError] = ConfigError
) -> None:
    """Fail before anything is written when a sort column is not a column of the table: Hudi's meta columns or a
    field of its schema (a table whose schema is unknown is not checked here; its tasks check the rows they read)."""
    columns = parse_sort_columns(sort_columns, error=error)
    schema = table_schema(table)
    if columns and schema:
        data_fields = [f["name"] for f in json.loads(schema).get("fields", [])]
        check_sort_columns(columns, (*META_FIELDS, *data_fields), error=error)


# ------------------------------------------------------------------------------------------ reading older files

SCHEMA_HISTORY_DIR = ".hoodie/.schema"
DROP_PARTITION_COLUMNS_KEY = "hoodie.datasource.write.drop.partition.columns"
# a rename tree: old name -> (latest name, or "" when the latest schema dropped it; the renames below it)
RenameTree = Mapping[str, "tuple[str, RenameTree]"]


@dataclass(frozen=True)
class ReadSchema:
    """How a rewrite reads the table's files: every row in ``target``, the table's latest schema (Arrow, meta
    columns first), matched by name; on a table with schema on read (``hoodie.schema.on.read.enable``), a file
    written under an older version of the schema has its columns renamed (and dropped) by column id first."""

    target: pa.Schema
    versions: tuple[tuple[int, dict], ...] = ()  # (version id, internal schema record), oldest first
    latest: dict | None = None  # the latest internal schema record

    def renames(self, instant_time: str) -> RenameTree:
        """The renames for a file written at ``instant_time`` (under the newest version not after it)."""
        if not self.versions or self.latest is None:
            return {}
        version = int(instant_time[:17].ljust(17, "0")) if instant_time.isdigit() else 0
        written = [record for vid, record in self.versions if vid <= version]
        if not written:
            return {}
        return _rename_tree(written[-1].get("fields", []), self.latest.get("fields", []))


def read_schema(table: HudiTable) -> ReadSchema | None:
    """The table's :class:`ReadSchema`, or None when no commit records a schema (the files' own are used)."""
    text = table_schema(table)
    if not text:
        return None
    drop: tuple[str, ...] = ()
    if table.config.props.get(DROP_PARTITION_COLUMNS_KEY, "false").lower() == "true":
        drop = tuple(f.split(":", 1)[0] for f in table.config.partition_fields)  # they live in the paths only
    try:
        target = arrow_schema(text, drop=drop)
    except UnsupportedAvroType as exc:
        raise PlanError(f"the table's schema: {exc}") from None
    versions = _schema_history(table)
    return ReadSchema(target, versions, versions[-1][1] if versions else None)


def _schema_history(table: HudiTable) -> tuple[tuple[int, dict], ...]:
    """Every version of the internal schema, from the newest completed ``.hoodie/.schema/*.schemacommit``."""
    directory = table.storage.join(SCHEMA_HISTORY_DIR)
    done = sorted(e.name for e in table.storage.list(directory) if e.name.endswith(".schemacommit") and not e.is_dir)
    if not done:
        return ()
    history = json.loads(table.storage.read_bytes(table.storage.join(SCHEMA_HISTORY_DIR, done[-1])))
    return tuple(sorted((int(s["version_id"]), s) for s in history.get("schemas", [])))


def _rename_tree(old_fields: list[dict], new_fields: list[dict]) -> dict:
    by_id = {f["id"]: f for f in new_fields}
    tree: dict = {}
    for field in old_fields:
        new = by_id.get(field["id"])
        if new is None:
            tree[field["name"]] = ("", {})
            continue
        below = _rename_tree(_record_fields(field["type"]), _record_fields(new["type"]))
        if new["name"] != field["name"] or below:
            tree[field["name"]] = (new["name"], below)
    return tree


def _record_fields(internal_type: object) -> list[dict]:
    """The fields of a record type, or of the record an array's element or a map's value is."""
    if not isinstance(internal_type, dict):
        return []
    if internal_type.get("type") == "record":
        return internal_type.get("fields", [])
    if internal_type.get("type") == "array":
        return _record_fields(internal_type.get("element"))
    if internal_type.get("type") == "map":
        return _record_fields(internal_type.get("value"))
    return []
