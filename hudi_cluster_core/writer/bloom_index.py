"""Hudi's BLOOM index over our files and Hudi's alike: which incoming keys already live in which file group.

As the seeds' implementation doc describes (and Hudi's ``HoodieBloomIndex`` does, non-global: a key is looked up
in its own partition only):

1. **prune by key range**: each latest base file's footer carries its min and max record key
   (``hoodie_min_record_key``/``hoodie_max_record_key``); a key outside a file's range is not in it;
2. **prune by bloom filter**: the footer's bloom filter (``org.apache.hudi.bloomfilter``, bit-exact with Hudi's,
   ``hashing.bloom_filter``) is tested against the remaining keys, all at once;
3. **confirm**: the candidate file's ``_hoodie_record_key`` column is read and the exact keys kept (a bloom filter
   has false positives). Confirming is the expensive step: each candidate file is one unit of work, run where the
   caller says (``run_units``: in this process, or as Spark tasks).

Range pruning compares in byte order, which is Java's ``String.compareTo`` order (how the bounds were chosen) for
every key without characters above U+FFFF or in U+E000..U+FFFF; when any key or bound has such characters the
range step is skipped for that file (the bloom filter still prunes), so no key is ever wrongly pruned.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..hashing.bloom_filter import BLOOM_FILTER_FOOTER_KEY, MAX_RECORD_KEY_FOOTER_KEY, MIN_RECORD_KEY_FOOTER_KEY, bloom_might_contain_many
from ..io.storage import Storage
from ..table import FileSlice

RECORD_KEY_COLUMN = "_hoodie_record_key"
RunUnits = Callable[[Sequence[Callable[[], object]]], list]


def run_in_process(units: Sequence[Callable[[], object]]) -> list:
    """The default way to run units of work: one after the other, here."""
    return [unit() for unit in units]


@dataclass(frozen=True)
class ConfirmKeys:
    """One unit of work: which of ``candidates`` the base file at ``relative`` really holds."""

    base_uri: str
    storage_options: tuple[tuple[str, str], ...]
    relative: str
    candidates: pa.Array

    def __call__(self) -> pa.Array:
        storage = Storage(self.base_uri, dict(self.storage_options))
        with storage.fs.open_input_file(storage.join(self.relative)) as handle:
            keys = pq.read_table(handle, columns=[RECORD_KEY_COLUMN]).column(0).combine_chunks()
        return self.candidates.filter(pc.is_in(self.candidates, value_set=keys))


def _high_or_astral(values: pa.Array) -> bool:
    """Whether byte order may differ from Java's UTF-16 order for these strings (module docstring)."""
    data = np.frombuffer(values.buffers()[2], np.uint8) if len(values) and values.buffers()[2] is not None else np.zeros(0, np.uint8)
    return bool((data >= 0xEE).any())


def _footer_candidates(storage: Storage, relative: str, keys: pa.Array, risky_keys: bool) -> pa.Array:
    """The keys of ``keys`` the file's footer (key range, then bloom filter) does not rule out."""
    with storage.fs.open_input_file(storage.join(relative)) as handle:
        footer = pq.ParquetFile(handle).metadata.metadata or {}
    low = footer.get(MIN_RECORD_KEY_FOOTER_KEY.encode())
    high = footer.get(MAX_RECORD_KEY_FOOTER_KEY.encode())
    if low is not None and high is not None:
        bounds = pa.array([low.decode("utf-8"), high.decode("utf-8")], pa.string())
        if not risky_keys and not _high_or_astral(bounds):
            in_range = pc.and_(pc.greater_equal(keys, bounds[0]), pc.less_equal(keys, bounds[1]))
            keys = keys.filter(in_range)
    bloom = footer.get(BLOOM_FILTER_FOOTER_KEY.encode())
    if bloom and len(keys):
        keys = keys.filter(pa.array(bloom_might_contain_many(bloom.decode("utf-8"), keys)))
    return keys


def locate_keys(
    storage: Storage, keys_by_partition: dict[str, pa.Array], slices_by_partition: dict[str, list[FileSlice]],
    run_units: RunUnits = run_in_process, storage_options: dict[str, str] | None = None,
) -> dict[str, dict[str, pa.Array]]:  # fmt: skip
    """partition -> file id -> the incoming keys that file group's latest base file holds (keys found nowhere are
    inserts). ``keys_by_partition`` holds unique string keys."""
    units: list[tuple[str, str, ConfirmKeys]] = []
    options = tuple(sorted((storage_options or {}).items()))
    for partition, keys in keys_by_partition.items():
        risky = _high_or_astral(keys)
        for file_slice in slices_by_partition.get(partition, []):
            if file_slice.base_file is None:
                continue
            relative = file_slice.relative_path(file_slice.base_file.name)
            candidates = _footer_candidates(storage, relative, keys, risky)
            if len(candidates):
                units.append((partition, file_slice.file_id, ConfirmKeys(storage.base_uri, options, relative, candidates)))
    found: dict[str, dict[str, pa.Array]] = {}
    for (partition, file_id, _), keys in zip(units, run_units([unit for _, _, unit in units])):
        if len(keys):
            found.setdefault(partition, {})[file_id] = keys
    return found
