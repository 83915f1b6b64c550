"""The metadata table (``.hoodie/metadata``) written the way Apache Hudi 1.1.1 reads it: HFile data blocks in
Hudi log files, ``HoodieMetadataRecord`` values, key routing, and one deltacommit (format notes section 14).

The clustering commit (``run.commit``) writes the partitions ``mdt.partitions`` has builders for; the others are
dropped alone (``table.metadata_table``).
"""
