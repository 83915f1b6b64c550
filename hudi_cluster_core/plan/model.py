"""Immutable models passed to strategy hooks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Literal, Mapping

from ..table import FileGroupId, FileSlice

if TYPE_CHECKING:
    from ..config import ClusteringConfig, StrategyParams
    from ..table import HudiTable


@dataclass(frozen=True)
class PlannedGroup:
    """One clustering group as a plan strategy proposes it."""

    slices: tuple[FileSlice, ...]
    num_output_file_groups: int = 1
    metrics: Mapping[str, float] = field(default_factory=dict)
    extra_metadata: Mapping[str, str] | None = None
    # the output file count is the target's rule (the packers'), not a count of the strategy's own: scheduling
    # replaces it with the estimate of what the group's rows become (plan/estimate.py)
    sized_by_target: bool = False

    @property
    def partition(self) -> str:
        return self.slices[0].partition if self.slices else ""

    @property
    def total_bytes(self) -> int:
        return sum(s.total_size for s in self.slices)


@dataclass(frozen=True)
class SliceStats:
    """Footer facts about a slice's base file: row count, record-key range, per-column (min, max)."""

    num_rows: int = 0
    min_record_key: str | None = None
    max_record_key: str | None = None
    columns: Mapping[str, tuple[Any, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class PlanContext:
    """What a plan strategy sees: the table, the validated config, and what is already pending.

    ``slice_stats(slice)`` reads a slice's footer statistics (cached; in a real plan the first call reads the
    footers of every slice offered to the hook at once, concurrently, and a plan that never calls it reads none:
    ``plan.footer_stats``); the conformance kit supplies generated ones, so groupers that need key ranges or
    column stats stay testable without files.
    """

    table: HudiTable | None  # a real small table in the conformance kit's generated cases; None in a hand-made one
    config: ClusteringConfig
    params: StrategyParams | None  # the strategy's validated params model instance
    instant_time: str
    pending_file_groups: Mapping[FileGroupId, str] = field(default_factory=dict)
    partitions: tuple[str, ...] = ()
    stats_provider: Callable[[FileSlice], SliceStats] | None = None

    def slice_stats(self, file_slice: FileSlice) -> SliceStats:
        if self.stats_provider is None:
            return SliceStats()
        return self.stats_provider(file_slice)


@dataclass(frozen=True)
class UpdateContext:
    """What an update strategy sees: the file groups a writer's records go to, and those under pending
    clustering (file group -> clustering instant)."""

    incoming_file_groups: frozenset[FileGroupId]
    pending_clustering: Mapping[FileGroupId, str]
    config: ClusteringConfig | None = None


@dataclass(frozen=True)
class UpdateDecision:
    """An update strategy's answer: ``reject`` (naming ``file_groups``), ``allow`` or ``duplicate``."""

    action: Literal["reject", "allow", "duplicate"]
    file_groups: frozenset[FileGroupId] = frozenset()
    message: str = ""
