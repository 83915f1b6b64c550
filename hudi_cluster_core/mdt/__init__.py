"""The metadata table (``.hoodie/metadata``) written the way Apache Hudi 1.1.1 reads it: HFile data blocks in
Hudi log files, ``HoodieMetadataRecord`` values, key routing, and one deltacommit (format notes section 14).

Foundation for keeping the metadata table in a clustering commit (issue 11); clustering runs do not use it yet
and still drop the metadata table (``table.metadata_table``).
"""
