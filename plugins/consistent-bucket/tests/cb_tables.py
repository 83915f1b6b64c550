"""Writing consistent-hashing bucket MOR tables with Apache Hudi 1.1.1, for the tests of this plugin."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from hudi_cluster_consistent_bucket.hashing import HashingMetadata, list_metadata_files, metadata_dir
from hudi_cluster_core.io.storage import Storage
from tests.support.apache_hudi import write_hudi_table

KB = 1024


def bucket_options(num_buckets: int = 2, max_file_size: int = 20 * KB, **more) -> dict[str, str]:
    """Index and size settings shared by Hudi's writers and our clustering run."""
    options = {
        "hoodie.index.type": "BUCKET",
        "hoodie.index.bucket.engine": "CONSISTENT_HASHING",
        "hoodie.bucket.index.num.buckets": str(num_buckets),
        "hoodie.parquet.max.file.size": str(max_file_size),
    }
    options.update({k: str(v) for k, v in more.items()})
    return options


def write_bucket_table(spark, base, rows: pa.Table, *, options: dict, record_key: str = "id",
                       partitioned: bool = True) -> str:  # fmt: skip
    """One Apache Hudi upsert into a MERGE_ON_READ consistent-hashing bucket table; returns the instant."""
    return write_hudi_table(
        spark, base, rows, table_type="MERGE_ON_READ", index_type="BUCKET", operation="upsert",
        partition_field="region" if partitioned else "", record_key=record_key, extra_options=options,
    )  # fmt: skip


def hashing_metadata(base, partition: str, instant: str | None = None) -> HashingMetadata:
    """The partition's newest hashing_meta on disk (or the one of ``instant``)."""
    storage = Storage(str(Path(base).resolve()))
    files = list_metadata_files(storage, partition)
    instant = instant or files.hashing[-1]
    path = f"{metadata_dir(storage, partition)}/{instant}.hashing_meta"
    return HashingMetadata.from_bytes(storage.read_bytes(path), source=path)


def file_id_of(file_name: str) -> str:
    """``_hoodie_file_name`` -> file group id (base files carry the file name, log records the file id)."""
    return file_name.split("_", 1)[0] if file_name.endswith(".parquet") else file_name


def file_ids(table: pa.Table) -> list[str]:
    return [file_id_of(n) for n in table.column("_hoodie_file_name").to_pylist()]


def rows_by_key(table: pa.Table) -> dict[str, dict]:
    return {r["_hoodie_record_key"]: r for r in table.to_pylist()}


def only_keys(table: pa.Table, keys) -> pa.Table:
    return table.filter(pc.is_in(table.column("_hoodie_record_key"), value_set=pa.array(sorted(keys))))
