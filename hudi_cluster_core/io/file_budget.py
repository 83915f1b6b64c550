"""How full a rolled base file gets, and what its bloom filter costs: the numbers the rolling writer fills files
by and the plan's estimate of what a group becomes (``plan.estimate``) share, so that both count alike."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..hashing.bloom_filter import bloom_sizing

# A file with less room than this share of the target is done: one more row group would be tiny.
ROLL_SLACK = 0.02
# Files are filled to this share of the target: the room left absorbs rows compressing worse than those before.
FILL = 0.97
_BLOOM_HEADER = 13  # InternalBloomFilter's header: version, hash count, hash type, bit size
_DYNAMIC_HEADER = 12  # DYNAMIC_V0: entries per row, keys in the current row, rows


@dataclass(frozen=True)
class BloomSizing:
    """The bloom filter settings that size a footer (``hoodie.parquet.bloom.filter.enabled``,
    ``hoodie.bloom.index.filter.type``, ``hoodie.index.bloom.num_entries``/``fpp``, ``...dynamic.max.entries``)."""

    enabled: bool = True
    filter_type: str = "DYNAMIC_V0"
    num_entries: int = 60000
    fpp: float = 1e-9
    dynamic_max_entries: int = 100000

    def text_bytes(self, n_keys: int) -> int:
        """The length of the base64 bloom filter text Hudi stores for a file of ``n_keys`` keys (0 when off): at
        the defaults ~431 KB a filter row, and a DYNAMIC_V0 filter adds a row per ``num_entries`` keys."""
        if not self.enabled:
            return 0
        bit_size, _ = bloom_sizing(self.num_entries, self.fpp)
        row = _BLOOM_HEADER + math.ceil(bit_size / 8)
        if self.filter_type == "SIMPLE":
            raw = row
        else:
            full_rows = max(1, -(-self.dynamic_max_entries // self.num_entries))
            rows = min(full_rows, max(1, -(-n_keys // self.num_entries)))
            raw = _BLOOM_HEADER + _DYNAMIC_HEADER + rows * row
        return 4 * math.ceil(raw / 3)
