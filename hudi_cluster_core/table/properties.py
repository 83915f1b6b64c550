"""``.hoodie/hoodie.properties``: the table's own configuration, as an immutable model."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from .. import javaprops
from ..errors import TableError
from ..io.storage import Storage

PROPERTIES_FILE = "hoodie.properties"
TABLE_TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")
SUPPORTED_VERSIONS = (6, 8, 9)


@dataclass(frozen=True)
class TableConfig:
    props: Mapping[str, str] = field(repr=False)

    @property
    def name(self) -> str:
        return self.props["hoodie.table.name"]

    @property
    def table_type(self) -> str:
        return self.props.get("hoodie.table.type", "COPY_ON_WRITE")

    @property
    def version(self) -> int:
        return int(self.props["hoodie.table.version"])

    @property
    def timeline_layout_version(self) -> int:
        default = "2" if self.version >= 8 else "1"
        return int(self.props.get("hoodie.timeline.layout.version", default))

    @property
    def timeline_dir(self) -> str:
        """Timeline folder relative to ``.hoodie``: ``""`` for layout 1."""
        if self.timeline_layout_version >= 2:
            return self.props.get("hoodie.timeline.path", "timeline")
        return ""

    @property
    def record_key_fields(self) -> tuple[str, ...]:
        return _split(self.props.get("hoodie.table.recordkey.fields", ""))

    @property
    def partition_fields(self) -> tuple[str, ...]:
        return _split(self.props.get("hoodie.table.partition.fields", ""))

    @property
    def ordering_fields(self) -> tuple[str, ...]:
        return _split(
            self.props.get("hoodie.table.ordering.fields") or self.props.get("hoodie.table.precombine.field", "")
        )

    @property
    def is_partitioned(self) -> bool:
        keygen = (
            self.props.get("hoodie.table.keygenerator.class", "") + self.props.get("hoodie.table.keygenerator.type", "")
        ).upper()
        return bool(self.partition_fields) and "NONPARTITIONED" not in keygen and "NON_PARTITION" not in keygen

    @property
    def base_file_extension(self) -> str:
        return "." + self.props.get("hoodie.table.base.file.format", "PARQUET").lower()

    @property
    def populate_meta_fields(self) -> bool:
        return self.props.get("hoodie.populate.meta.fields", "true").lower() == "true"

    @property
    def timeline_timezone(self) -> str:
        return self.props.get("hoodie.table.timeline.timezone", "LOCAL").upper()

    @property
    def metadata_partitions(self) -> tuple[str, ...]:
        return _split(self.props.get("hoodie.table.metadata.partitions", ""))

    @property
    def checksum(self) -> int:
        database = self.props.get("hoodie.database.name", "")
        return zlib.crc32(f"{database}.{self.name}".encode())


def _split(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def load_table_config(storage: Storage) -> TableConfig:
    hoodie_dir = storage.join(".hoodie")
    path = storage.join(".hoodie", PROPERTIES_FILE)
    if not storage.exists(hoodie_dir):
        if not storage.exists(storage.join()):  # a folder (local) or a prefix with objects under it (stores)
            raise TableError(f"{storage.base_uri} does not exist; give the base path of a Hudi table")
        raise TableError(f"{storage.base_uri} is not a Hudi table: it has no .hoodie/ folder")
    if not storage.exists(path):
        raise TableError(f"{path} is missing: a Hudi table keeps its configuration there")
    try:
        props = javaprops.parse(storage.read_bytes(path).decode("utf-8"))
    except (OSError, ValueError) as exc:  # ValueError: UnicodeDecodeError, or a malformed \uXXXX escape
        raise TableError(f"{path} cannot be read as a properties file: {exc}") from None
    for key in ("hoodie.table.name", "hoodie.table.version"):
        if not props.get(key):
            raise TableError(f"{path} is corrupt: required key '{key}' is missing")
    config = TableConfig(MappingProxyType(props))
    try:
        version = config.version
    except ValueError:
        raise TableError(
            f"{path}: hoodie.table.version={props['hoodie.table.version']!r} is not a number; "
            f"accepted: {', '.join(map(str, SUPPORTED_VERSIONS))}"
        ) from None
    if version not in SUPPORTED_VERSIONS:
        raise TableError(
            f"{path}: hoodie.table.version={version} is not supported; accepted: "
            f"{', '.join(map(str, SUPPORTED_VERSIONS))}"
        )
    if config.table_type not in TABLE_TYPES:
        raise TableError(f"{path}: hoodie.table.type={config.table_type!r}; accepted: {', '.join(TABLE_TYPES)}")
    stored = props.get("hoodie.table.checksum")
    if stored and stored.isdigit() and int(stored) != config.checksum:
        raise TableError(
            f"{path} is corrupt: hoodie.table.checksum={stored} does not match the table name "
            f"(expected {config.checksum})"
        )
    return config
