"""The initial table's metadata table, as Apache Hudi's first write on an empty table leaves it: its own
``hoodie.properties`` (a MOR table of HFiles, timeline layout 2), the ``files`` partition with one file group, and
the initialising deltacommit ``00000000000000010`` (no data partition yet); the data table's properties name the
partition as built. Every commit after that keeps it through the core's own code (``mdt.commit``).
"""

from __future__ import annotations

import zlib

from hudi_cluster_core import javaprops
from hudi_cluster_core.io.storage import Storage
from hudi_cluster_core.mdt import deltacommit
from hudi_cluster_core.mdt.log_block import encode_block, hfile_data_block, log_file_name
from hudi_cluster_core.mdt.records import ALL_PARTITIONS_KEY, MetadataRecord, RecordType
from hudi_cluster_core.table.naming import make_write_token
from hudi_cluster_core.table.properties import PROPERTIES_FILE

INIT = "00000000000000010"  # Hudi's instant for a metadata partition's initialisation
FILES_GROUP = "files-0000-0"


def add_metadata_table(storage: Storage, table_name: str) -> None:
    mdt = deltacommit.metadata_storage(storage)
    name = f"{table_name}_metadata"
    props = {
        "hoodie.table.name": name, "hoodie.table.type": "MERGE_ON_READ", "hoodie.table.version": "9",
        "hoodie.timeline.layout.version": "2", "hoodie.table.base.file.format": "HFILE",
        "hoodie.table.recordkey.fields": "key", "hoodie.populate.meta.fields": "false",
        "hoodie.table.keygenerator.class": "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator",
        "hoodie.timeline.path": "timeline", "hoodie.table.checksum": str(zlib.crc32(f".{name}".encode())),
    }  # fmt: skip
    mdt.write_atomic(mdt.join(".hoodie", PROPERTIES_FILE), javaprops.dump(props).encode())
    deltacommit.begin(storage, INIT)
    empty = MetadataRecord(ALL_PARTITIONS_KEY, RecordType.ALL_PARTITIONS, {"filesystemMetadata": {}})
    log_name = log_file_name(FILES_GROUP, INIT, make_write_token(0, 0, 0))
    data = encode_block(hfile_data_block(INIT, [empty]))
    mdt.write_atomic(mdt.join("files", log_name), data)
    stat = {"fileId": FILES_GROUP, "path": f"files/{log_name}", "prevCommit": INIT, "numWrites": 1, "numDeletes": 0,
            "numUpdateWrites": 0, "numInserts": 1, "totalWriteBytes": len(data), "totalWriteErrors": 0,
            "partitionPath": "files", "fileSizeInBytes": len(data)}  # fmt: skip
    deltacommit.complete(storage, INIT, [stat], completion_time="00000000000000011")
    path = storage.join(".hoodie", PROPERTIES_FILE)
    table_props = javaprops.parse(storage.read_bytes(path).decode("utf-8"))
    table_props["hoodie.table.metadata.partitions"] = "files"
    storage.write_atomic(path, javaprops.dump(table_props).encode())
