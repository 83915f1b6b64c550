"""The size settings every size-aware plan strategy reads, in one typed object."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class SizeLimits:
    small_file_limit: int
    max_bytes_per_group: int
    target_file_max_bytes: int
    max_num_groups: int
    missing_base_size: int  # Hudi sizes a slice without a base file as a full parquet.max.file.size
    single_group_clustering: bool

    @classmethod
    def from_config(cls, config) -> "SizeLimits":
        prefix = "hoodie.clustering.plan.strategy."
        return cls(
            int(config.get(prefix + "small.file.limit")), int(config.get(prefix + "max.bytes.per.group")),
            int(config.get(prefix + "target.file.max.bytes")), int(config.get(prefix + "max.num.groups")),
            int(config.get("hoodie.parquet.max.file.size")), bool(config.get(prefix + "single.group.clustering.enabled")),
        )  # fmt: skip

    def slice_size(self, file_slice) -> int:
        return file_slice.base_file_size if file_slice.base_file else self.missing_base_size

    def output_files(self, group_bytes: int) -> int:
        """Hudi's rule: ceil(group bytes / target file size), at least one."""
        return max(1, math.ceil(group_bytes / self.target_file_max_bytes))
