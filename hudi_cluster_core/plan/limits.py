"""The size settings every size-aware plan strategy reads, in one typed object."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config import ClusteringConfig
    from ..table import FileSlice


@dataclass(frozen=True)
class SizeLimits:
    """``hoodie.clustering.plan.strategy.*`` size keys, and Hudi's two size rules (:meth:`slice_size`,
    :meth:`output_files`). ``SizeLimits.from_config(context.config)`` in a plan hook."""

    small_file_limit: int
    max_bytes_per_group: int
    target_file_max_bytes: int
    max_num_groups: int
    missing_base_size: int  # Hudi sizes a slice without a base file as a full parquet.max.file.size
    single_group_clustering: bool

    @classmethod
    def from_config(cls, config: ClusteringConfig) -> SizeLimits:
        return cls(
            config.small_file_limit, config.max_bytes_per_group, config.target_file_max_bytes, config.max_num_groups,
            config.writer.parquet_max_file_size, config.single_group_clustering_enabled,
        )  # fmt: skip

    def slice_size(self, file_slice: FileSlice) -> int:
        """A slice's size for packing, as Hudi counts it: its base file's size (log files are not counted), or
        ``parquet.max.file.size`` when it has no base file."""
        return file_slice.base_file_size if file_slice.base_file else self.missing_base_size

    def output_files(self, group_bytes: int) -> int:
        """Hudi's rule: ceil(group bytes / target file size), at least one."""
        return max(1, math.ceil(group_bytes / self.target_file_max_bytes))
