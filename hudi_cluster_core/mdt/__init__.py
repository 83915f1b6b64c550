"""The metadata table (``.hoodie/metadata``) written the way Apache Hudi 1.1.1 reads it: HFile data blocks in
Hudi log files, ``HoodieMetadataRecord`` values, key routing, and one deltacommit (docs/format.md#metadata-table).

Every data commit of ours (the clustering's, ``run.commit``, and our writers', ``write.instant``) keeps the MDT
through ``mdt.commit``, which writes the partitions ``mdt.partitions`` has builders for: ``files``
(``records``), ``column_stats`` and ``partition_stats`` (``column_stats``, from the new files' footers and, for
partition stats, the ``column_stats`` records of the partition's other files read back by ``partition_reader``),
``bloom_filters`` (``bloom_filters``); keys by ``index_keys``, values by ``column_ranges`` (V1 and V2 stats),
footers read by ``footers``, stats of one type turned into another by ``value_types``. The others are dropped
alone (``table.metadata_table``).
"""
