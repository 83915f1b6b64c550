"""Packing file slices into size-capped groups: the building blocks plan strategies share.

Every packer here sizes a slice as Hudi's plan strategies do (:meth:`SizeLimits.slice_size`: the base file's
size, or ``hoodie.parquet.max.file.size`` for a slice without a base file) and gives each group Hudi's number of
output file groups, ``ceil(group bytes / target.file.max.bytes)`` (:meth:`SizeLimits.output_files`), marked
``sized_by_target``: scheduling replaces it with the estimate of the files its rows become (``plan.estimate``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol, Sequence, TypeVar

from .limits import SizeLimits
from .model import PlannedGroup

if TYPE_CHECKING:
    from ..table import FileSlice


class _Ordered(Protocol):
    def __lt__(self, other: Any, /) -> bool: ...
    def __le__(self, other: Any, /) -> bool: ...


Item = TypeVar("Item")
Value = TypeVar("Value", bound=_Ordered)


def slices_by_partition(slices: Iterable[FileSlice]) -> dict[str, list[FileSlice]]:
    """The slices of each partition, partitions in sorted order, slices in the order given."""
    grouped: dict[str, list[FileSlice]] = {}
    for file_slice in slices:
        grouped.setdefault(file_slice.partition, []).append(file_slice)
    return {partition: grouped[partition] for partition in sorted(grouped)}


def overlapping_components(
    items: Iterable[Item], span: Callable[[Item], tuple[Value, Value] | None],
) -> list[list[Item]]:  # fmt: skip
    """The items whose spans overlap, transitively: the connected components of "ranges overlap".

    ``span(item)`` is the item's closed range ``(low, high)`` (e.g. a file's footer min/max on a column), or None
    when it has none. Two ranges overlap when they share a value, an end included: ``(1, 5)`` and ``(5, 9)`` do.
    Components come in order of their lowest value, each listing its items by ``(low, high)``, items of equal
    range in the order given (so give them in a stable order, e.g. by file id, for the same plan on the same
    input); items without a span come last, each a component of its own, in the order given. A sweep in value
    order: O(n log n), ``span`` called once per item.
    """
    spans = [(item, span(item)) for item in items]
    ranged = sorted(((item, found) for item, found in spans if found is not None), key=lambda pair: pair[1])
    components: list[list[Item]] = []
    reach: Value | None = None  # the highest value of the open component
    for item, (low, high) in ranged:
        if reach is not None and low <= reach:
            components[-1].append(item)
            if reach < high:
                reach = high
        else:
            components.append([item])
            reach = high
    return components + [[item] for item, found in spans if found is None]


class GroupCutter:
    """Collects slices, in the order added, into groups of at most ``max.bytes.per.group``.

    ``add`` closes the open group first when the slice would take it past the cap (a lone slice above the cap
    still makes a group of its own); ``close`` ends the open group; ``groups`` holds the closed ones.
    """

    def __init__(self, limits: SizeLimits):
        self.limits = limits
        self.groups: list[PlannedGroup] = []
        self.members: list[FileSlice] = []
        self.total = 0

    def would_pass_cap(self, size: int) -> bool:
        return bool(self.members) and self.total + size > self.limits.max_bytes_per_group

    def add(self, file_slice: FileSlice) -> None:
        size = self.limits.slice_size(file_slice)
        if self.would_pass_cap(size):
            self.close()
        self.members.append(file_slice)
        self.total += size

    def close(self) -> None:
        if self.members:
            self.groups.append(PlannedGroup(tuple(self.members), self.limits.output_files(self.total),
                                            sized_by_target=True))  # fmt: skip
        self.members, self.total = [], 0


def cut_in_order(
    ordered: Iterable[FileSlice], limits: SizeLimits,
    split_before: Callable[[Sequence[FileSlice], FileSlice], bool] | None = None,
) -> list[PlannedGroup]:  # fmt: skip
    """Groups of consecutive slices of ``ordered``, each cut before it would pass ``max.bytes.per.group``.

    ``split_before(members, next_slice)`` may end a non-empty group early for a reason of the strategy's own
    (e.g. a window of commits). Give it one partition's slices: it does not look at partitions.
    """
    cutter = GroupCutter(limits)
    for file_slice in ordered:
        if split_before is not None and cutter.members and split_before(cutter.members, file_slice):
            cutter.close()
        cutter.add(file_slice)
    cutter.close()
    return cutter.groups


def pack_by_size(slices: Iterable[FileSlice], limits: SizeLimits) -> list[PlannedGroup]:
    """Apache Hudi's size-based packing (``SparkSizeBasedClusteringPlanStrategy``), per partition.

    Slices largest first (ties by file id); a group closes before it would pass ``max.bytes.per.group``; a
    partition stops at ``max.num.groups`` groups. A partition's last group is kept only if it has 2+ slices or
    ``single.group.clustering.enabled`` is on.
    """
    groups: list[PlannedGroup] = []
    for members in slices_by_partition(slices).values():
        cutter = GroupCutter(limits)
        for file_slice in sorted(members, key=lambda s: (-limits.slice_size(s), s.file_id)):
            if cutter.would_pass_cap(limits.slice_size(file_slice)):
                cutter.close()
                if len(cutter.groups) >= limits.max_num_groups:
                    break
            cutter.add(file_slice)
        else:  # every slice taken: the open group is the partition's last
            if len(cutter.members) > 1 or limits.single_group_clustering:
                cutter.close()
        groups.extend(cutter.groups[: limits.max_num_groups])
    return groups
