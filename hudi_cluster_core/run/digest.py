"""The rewrite check: nothing a clustering writes differs from what it read, or the group fails before the commit.

Each Spark task keeps a :class:`GroupDigest` of the rows it is responsible for as they are read (in the group's
schema, only its own key ranges when a group is split) and of the rows it hands to the parquet writer, and
compares them when ``execute_group`` returns: the row counts, and an order-independent digest, the sum mod 2^64
over the rows of a 64-bit hash of the whole row (record key and values). A row's hash mixes ``fmix`` over a sum of
its columns' value codes (:mod:`hudi_cluster_core.io.row_hash`, every Arrow type), each offset and multiplied by
constants of the column's name; a null adds nothing, so a column added as null is no change. Sorting,
re-partitioning and file rolling leave the digest alone; a value changed, moved to another row or column, lost or
duplicated does not. The written files' footers must hold the rows their write stats say.

Left out: ``_hoodie_file_name`` (set per output file) and, when a plan does not preserve Hudi's metadata (rows
restamped with the clustering instant), ``_hoodie_commit_time`` and ``_hoodie_commit_seqno``.

On a mismatch (only then) the task finds what changed: it reads its input again and its written files back and
digests them per column (:class:`ColumnDigests`: the sum of a hash of (record key, value) per column), takes the
first differing column (the key column when rows were lost or duplicated), sums its terms per key-hash bucket on
both sides and compares the keys of one differing bucket for an example. The task fails with
:class:`~hudi_cluster_core.errors.RewriteMismatch`, one line; the run rolls its instant back.
``hudi.cluster.task.verify``: ``true`` (default), ``full`` (the written files are also read back and digested:
what landed on storage, through the parquet writer and its gzip pages) or ``false`` (no check).
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Protocol, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..config import catalogue
from ..errors import RewriteMismatch, RunFailed
from ..io.row_hash import U64, fmix, name_seed, value_codes

if TYPE_CHECKING:
    from ..io.storage import Storage
    from ..plan.avro_plan import PlanGroup

KEY = "_hoodie_record_key"
ALWAYS_SKIPPED = ("_hoodie_file_name",)
RESTAMPED = ("_hoodie_commit_time", "_hoodie_commit_seqno")
# Rows hashed at a time: a block's uint64 arrays (120 KiB) stay under glibc's mmap threshold (128 KiB), so numpy
# gets them from the heap, not as fresh pages from the OS to fault in on every call (2-3x slower).
BLOCK_ROWS = 15 * 1024
BLOCK_BYTES = 8 * 1024**2  # and at most about this much of Arrow data a block
BUCKET_BITS = 12  # key-hash buckets of the example search: one differing bucket holds ~1/4096 of the rows
_VALUE, _ROW = U64(0xD6E8FEB86659FD93), U64(0xA0761D6478BD642F)
MASK = (1 << 64) - 1

Select = Callable[[pa.Table], np.ndarray]  # which rows of a group batch a task writes (a split group's key ranges)
T = TypeVar("T", bound="Checked")


class Checked(Protocol):
    """What the check uses of the task it checks, a :class:`~hudi_cluster_core.run.task.GroupTask` (which holds
    its digest, so this module does not import it)."""

    @property
    def settings(self) -> Mapping[str, str]: ...
    @property
    def preserve_hoodie_metadata(self) -> bool: ...
    @property
    def group(self) -> PlanGroup: ...
    @property
    def storage(self) -> Storage: ...
    @property
    def digest(self) -> GroupDigest | None: ...
    def with_digest(self: T, digest: GroupDigest) -> T: ...
    def input_batches(self) -> Iterator[pa.Table]: ...  # the task's input again: the group's rows, its schema


def level(settings: Mapping[str, str]) -> str:
    """``hudi.cluster.task.verify``: ``true`` (the default: the rows handed to the writer, and the files' footers),
    ``full`` (also every written file read back and digested: what landed on storage, through the writer and its
    gzip pages, at the cost of a read) or ``false``."""
    verify: str = catalogue.read(settings, catalogue.TASK_VERIFY)
    return verify


def enabled(settings: Mapping[str, str]) -> bool:
    return level(settings) != "false"


def armed(task: T) -> T:
    """``task`` with a fresh :class:`GroupDigest` (inside its Spark task), unless the check is switched off."""
    if not enabled(task.settings):
        return task
    skipped = ALWAYS_SKIPPED + (() if task.preserve_hoodie_metadata else RESTAMPED)
    return task.with_digest(GroupDigest(task.group.index, frozenset(skipped), level(task.settings) == "full"))


def check(task: Checked, stats: list[dict]) -> None:
    """Raise :class:`RewriteMismatch` unless the task wrote exactly what it read (no-op when not armed)."""
    if task.digest is not None:
        task.digest.check(task, stats)


@dataclass
class Digest:
    """The rows of one side: how many, and the sum mod 2^64 of each row's hash."""

    rows: int = 0
    total: int = 0

    def add(self, table: pa.Table, skipped: frozenset[str]) -> None:
        # fewer rows a block when rows are wide: hashing copies a block's text a few times (padded, its words)
        per_row = table.nbytes / table.num_rows if table.num_rows else 1
        rows = max(64, min(BLOCK_ROWS, int(BLOCK_BYTES // max(per_row, 1))))
        for start in range(0, table.num_rows, rows):
            block = table.slice(start, rows)
            if block.num_columns and block.column(0).num_chunks > 1:  # one call per column per block costs less
                block = block.combine_chunks()  # than one per chunk (the copy is ~10% of the hashing)
            self._add_block(block, skipped)

    def _add_block(self, block: pa.Table, skipped: frozenset[str]) -> None:
        row_codes = np.zeros(block.num_rows, U64)
        for name in block.column_names:
            if name not in skipped:
                codes, valid = value_codes(block.column(name))
                offset, factor = _column_constants(name)
                codes += offset  # a value's code is never the null's 0 (save by a 2^-64 chance)
                codes *= factor  # odd: a changed code always changes the row's sum
                if valid is not None:
                    codes[~valid] = 0
                row_codes += codes
        row_codes ^= _ROW
        self.total = (self.total + int(fmix(row_codes).sum(dtype=U64))) & MASK
        self.rows += block.num_rows

    def merge(self, other: "Digest") -> None:
        self.rows += other.rows
        self.total = (self.total + other.total) & MASK


@dataclass
class ColumnDigests(Digest):
    """A side digested per column for a diagnosis: each column's sum of a hash of (record key, value)."""

    columns: dict[str, int] = field(default_factory=dict)

    def _add_block(self, block: pa.Table, skipped: frozenset[str]) -> None:
        super()._add_block(block, skipped)
        keys, valid = key_codes(block)
        for name in block.column_names:
            if name not in skipped:
                terms = column_terms(block, name, keys, (keys, valid) if name == KEY else None)
                self.columns[name] = (self.columns.get(name, 0) + int(terms.sum(dtype=U64))) & MASK


@lru_cache(maxsize=4096)
def _column_constants(name: str) -> tuple[np.uint64, np.uint64]:
    return name_seed(name), name_seed("x " + name) | U64(1)


def key_codes(table: pa.Table) -> tuple[np.ndarray, np.ndarray | None]:
    """Each row's record-key code (and validity); 0 where the key is null or the table has no key column (then a
    column's terms are its values alone)."""
    if KEY not in table.column_names:
        return np.zeros(table.num_rows, U64), None
    return value_codes(table.column(KEY))


def column_terms(table: pa.Table, name: str, keys: np.ndarray,
                 codes: tuple[np.ndarray, np.ndarray | None] | None = None) -> np.ndarray:  # fmt: skip
    """Each row's term of column ``name``: a hash of (key, value); 0 for a null value. ``codes``: the column's
    value codes and validity when the caller has them (the key column's are the keys)."""
    hashes, valid = value_codes(table.column(name)) if codes is None else (codes[0].copy(), codes[1])
    hashes *= _VALUE
    hashes += keys
    hashes += name_seed(name)
    terms = fmix(hashes)
    if valid is not None:
        terms[~valid] = 0
    return terms


class GroupDigest:
    """What one Spark task read (``input``) and handed to the parquet writer (``output``) for one group."""

    def __init__(self, group_index: int, skipped: frozenset[str], read_back: bool = False):
        self.group_index = group_index
        self.skipped = skipped
        self.read_back = read_back  # digest the written files too (hudi.cluster.task.verify=full)
        self.input = Digest()
        self.output = Digest()
        self.input_seen = False
        self.select: Select | None = None  # set when the task keeps only its key ranges of the group's rows
        self._slices: set[tuple] = set()
        self._lock = threading.Lock()  # a strategy may read or write from threads of its own

    def note_slices(self, slices: list[tuple[Any, pa.Table]]) -> None:
        """Slices' rows as ``GroupTask.read_slices`` read them; a slice read again is not counted again."""
        fresh = []
        with self._lock:
            for input_slice, rows in slices:
                identity = (input_slice.partition, input_slice.file_id, input_slice.base_file,
                            tuple(input_slice.log_files))  # fmt: skip
                if identity not in self._slices:
                    self._slices.add(identity)
                    fresh.append(rows)
        alike: list[list[pa.Table]] = []  # slices of one schema in one go (fewer, larger blocks to hash)
        for rows in fresh:
            group = next((g for g in alike if g[0].schema.equals(rows.schema)), None)
            alike.append([rows]) if group is None else group.append(rows)
        for group in alike:
            self.note_input(pa.concat_tables([rows.replace_schema_metadata(None) for rows in group]))
        if not fresh:
            with self._lock:
                self.input_seen = True

    def note_input(self, rows: pa.Table, mine: np.ndarray | None = None, select: Select | None = None) -> None:
        """Rows the task read to write; ``mine``: the ones it writes (the rest are other tasks' key ranges), as
        ``select`` picks them (kept to read the input again for an example key)."""
        if mine is not None and not mine.all():
            rows = rows.filter(pa.array(mine))
        self._add(self.input, rows)
        with self._lock:
            self.input_seen = True
            if select is not None:
                self.select = select

    def note_output(self, rows: pa.Table) -> None:
        """Rows handed to the parquet writer."""
        self._add(self.output, rows)

    def _add(self, total: Digest, rows: pa.Table) -> None:
        part = Digest()
        try:
            part.add(rows, self.skipped)
        except Exception as exc:  # noqa: BLE001 - the check's own failure, said as such (not the data's)
            raise RunFailed(f"group {self.group_index}: the rewrite check could not digest its rows "
                            f"({type(exc).__name__}: {exc}); {catalogue.TASK_VERIFY}=false runs without it") from exc  # fmt: skip
        with self._lock:
            total.merge(part)

    def check(self, task: Checked, stats: list[dict]) -> None:
        problem = self._files_problem(task, stats) or self._problem(task, stats) or self._landed_problem(task, stats)
        if problem:
            raise RewriteMismatch(f"group {self.group_index}: {problem}")

    def _files_problem(self, task: Checked, stats: list[dict]) -> str | None:
        """The files as they landed: each footer holds the rows its write stat says, and they add up."""
        storage = task.storage
        for stat in stats:
            footer_rows = pq.read_metadata(storage.join(stat["path"]), filesystem=storage.fs).num_rows
            if footer_rows != stat["numWrites"]:
                return f"file {stat['path']} holds {footer_rows} rows, its write stat says {stat['numWrites']}"
        written = sum(stat["numWrites"] for stat in stats)
        if written != self.output.rows:
            return f"the write stats count {written} rows, {self.output.rows} were written"
        return None

    def _landed_problem(self, task: Checked, stats: list[dict]) -> str | None:
        """With ``full``: the written files read back hold what was handed to the writer."""
        if not self.read_back:
            return None
        landed = Digest()
        for batch in _written(task, stats, None):
            landed.add(batch, self.skipped)
        if (landed.rows, landed.total) == (self.output.rows, self.output.total):
            return None
        return "the written files read back differ from the rows handed to the writer: " + self._diagnosis(task, stats)

    def _problem(self, task: Checked, stats: list[dict]) -> str | None:
        read, written = self.input, self.output
        if written.rows and not self.input_seen:
            return (f"{written.rows} rows written, none read through GroupTask.read_slices/read_arrow or noted with "
                    f"GroupTask.note_input; set {catalogue.TASK_VERIFY}=false to run this strategy unchecked")  # fmt: skip
        if (read.rows, read.total) == (written.rows, written.total):
            return None
        return self._diagnosis(task, stats)

    def _diagnosis(self, task: Checked, stats: list[dict]) -> str:
        """What differs, from a second read of the input and of the written files, digested per column."""
        read, written = ColumnDigests(), ColumnDigests()
        for batch in _input_again(task, self.select):
            read.add(batch, self.skipped)
        for batch in _written(task, stats, None):
            written.add(batch, self.skipped)
        names = list(dict.fromkeys([*written.columns, *read.columns]))
        changed = [n for n in names if read.columns.get(n, 0) != written.columns.get(n, 0)]
        if read.rows != written.rows or KEY in changed:
            how = {"lost": "lost", "more": "duplicated", "new": "never read"}
            kind, key = _example(task, self.select, KEY, stats)
            counts = f"{written.rows} rows written for {read.rows} read"
            if read.rows == written.rows:
                return f"column {KEY!r} changed in the rewrite ({counts}; {_naming(key, kind, how)})"
            return f"{counts} in the rewrite ({_naming(key, kind, how)})"
        if changed:
            kind, key = _example(task, self.select, changed[0], stats)
            return f"column {changed[0]!r} changed in the rewrite ({_naming(key, kind, {})})"
        if read.total != written.total:
            return "values moved between rows in the rewrite (every column holds the same values)"
        return ("the rows written differ from the rows read, but a second read of the input and of the written "
                "files finds no difference (the data changed in memory on its way, or in storage since)")  # fmt: skip


def _naming(key: Any, kind: str | None, how: Mapping[str, str]) -> str:
    if kind == "keyless":
        return "no example: the rows have no record key"
    if kind is None:
        return "no example found"
    return f"e.g. key {key!r}" + (f" {how[kind]}" if kind in how else "")


def _example(task: Checked, select: Select | None, column: str, stats: list[dict]) -> tuple[str | None, Any]:
    """``(kind, key)`` of a row whose ``column`` differs: ``changed``, ``lost`` (fewer rows of the key written
    than read), ``more`` (more written) or ``new`` (a key never read); ``keyless`` when the differing rows have
    no record key, ``(None, None)`` when no row can be named."""
    def sides() -> tuple[Iterator[pa.Table], Iterator[pa.Table]]:
        return _input_again(task, select), _written(task, stats, column)

    reread, written = sides()
    (sums_before, keyless), (sums_after, _) = _bucket_sums(reread, column), _bucket_sums(written, column)
    differing = np.flatnonzero(sums_before != sums_after)
    if not len(differing):  # rows without a key all sum into one bucket, so a keyless difference can cancel there
        return ("keyless", None) if keyless else (None, None)
    reread, written = sides()
    bucket = int(differing[0])
    (before, keyless), (after, _) = _bucket_rows(reread, column, bucket), _bucket_rows(written, column, bucket)
    keys_before, keys_after = Counter(k for k, _ in before.elements()), Counter(k for k, _ in after.elements())
    for key in sorted({k for k, _ in (before - after) + (after - before)}, key=repr):
        if keys_before[key] == keys_after[key]:
            return "changed", key
        return ("lost" if keys_before[key] > keys_after[key] else "more" if keys_before[key] else "new"), key
    return ("keyless", None) if keyless else (None, None)


def _input_again(task: Checked, select: Select | None) -> Iterator[pa.Table]:
    """The task's input rows, read again: the group's slices in its schema, its own key ranges only."""
    for batch in task.input_batches():
        yield batch.filter(pa.array(select(batch))) if select is not None else batch


def _written(task: Checked, stats: list[dict], column: str | None) -> Iterator[pa.Table]:
    """The written files read back (``column`` and the key column only, when given)."""
    storage = task.storage
    for stat in stats:
        source = pq.ParquetFile(storage.join(stat["path"]), filesystem=storage.fs)
        names = source.schema_arrow.names
        wanted = [c for c in dict.fromkeys([KEY, column]) if c in names] if column is not None else None
        for batch in source.iter_batches(batch_size=BLOCK_ROWS, columns=wanted):
            yield pa.Table.from_batches([batch])


def _terms(batch: pa.Table, column: str) -> tuple[np.ndarray, np.ndarray]:
    keys = key_codes(batch)[0]
    terms = column_terms(batch, column, keys) if column in batch.column_names else np.zeros(batch.num_rows, U64)
    return keys >> U64(64 - BUCKET_BITS), terms


def _bucket_sums(batches: Iterator[pa.Table], column: str) -> tuple[np.ndarray, int]:
    """The column's terms summed per key-hash bucket; and how many rows had no record key."""
    sums = np.zeros(1 << BUCKET_BITS, U64)
    keyless = 0
    for batch in batches:
        buckets, terms = _terms(batch, column)
        np.add.at(sums, buckets.astype(np.intp), terms)
        keyless += batch.column(KEY).null_count if KEY in batch.column_names else batch.num_rows
    return sums, keyless


def _bucket_rows(batches: Iterator[pa.Table], column: str, bucket: int) -> tuple[Counter, int]:
    """``(key, term)`` of the rows with a record key in ``bucket``, counted; and how many rows had none."""
    rows: Counter = Counter()
    keyless = 0
    for batch in batches:
        buckets, terms = _terms(batch, column)
        picked = np.flatnonzero(buckets == bucket)
        has_keys = KEY in batch.column_names
        keys = batch.column(KEY).take(pa.array(picked)).to_pylist() if has_keys else [None] * len(picked)
        keyless += sum(key is None for key in keys)
        rows.update((key, term) for key, term in zip(keys, terms[picked].tolist()) if key is not None)
    return rows, keyless
