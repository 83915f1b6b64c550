"""The ``bloom_filters`` records of a clustering commit, as Apache Hudi 1.1.1 writes them.

Hudi builds this partition only when the table enabled it (``hoodie.metadata.index.bloom.filter.enable=true``).
For a commit, ``HoodieTableMetadataUtil.convertMetadataToBloomFilterRecords`` writes one record per new **base**
file (log files get none): key = partition id + file id (:mod:`.index_keys`), ``BloomFilterMetadata`` =
{``type``: the bloom filter type code, ``timestamp``: the commit's instant, ``bloomFilter``: the UTF-8 bytes of the
serialised filter string that is stored in the file's footer (``org.apache.hudi.bloomfilter``), ``isDeleted``:
false}. A file without a filter in its footer (``hoodie.parquet.bloom.filter.enabled=false``) gets no record, as
in Hudi, which logs and skips it. Replaced files keep their records until a clean marks them deleted.
"""

from __future__ import annotations

import posixpath

from ..io.bloom import BLOOM_FILTER_FOOTER_KEY as FOOTER_KEY
from ..io.bloom import BLOOM_FILTER_TYPE_CODE_FOOTER_KEY as TYPE_CODE_KEY
from . import index_keys
from .column_stats import footer_of
from .commit_files import CommitFiles
from .records import MetadataRecord, RecordType

BLOOM_FILTERS_PARTITION = "bloom_filters"
DEFAULT_TYPE_CODE = "DYNAMIC_V0"


def bloom_filter_records(commit: CommitFiles) -> list[MetadataRecord]:
    records = []
    for partition, stats in commit.write_stats.items():
        for stat in stats:
            footer = footer_of(commit, stat).metadata or {}
            serialized = footer.get(FOOTER_KEY.encode("utf-8"))
            if not serialized:
                continue
            type_code = footer.get(TYPE_CODE_KEY.encode("utf-8"), DEFAULT_TYPE_CODE.encode("utf-8")).decode("utf-8")
            name = posixpath.basename(stat["path"])
            content = {"type": type_code, "timestamp": commit.instant_time, "bloomFilter": serialized,
                       "isDeleted": False}  # fmt: skip
            records.append(MetadataRecord(index_keys.bloom_filter_key(partition, name), RecordType.BLOOM_FILTER,
                                          {"BloomFilterMetadata": content}))  # fmt: skip
    return records
