"""Reading Hudi tables without Spark (hudi-rs, the ``hudi`` 0.5.0 package) and comparing row sets.

``comparable_rows`` turns an Arrow table from *either* reader (hudi-rs, or Apache Hudi via Spark ->
Arrow) into a sorted list of plain, hashable Python tuples, so that the same data compares equal whatever
Arrow types each reader chose.  Normalisations, per Arrow type (applied recursively inside nested values):

* **columns**: matched by *name*; tuples follow the sorted column names (readers order columns
  differently, e.g. where a partition column goes).  ``drop`` removes columns first (default
  ``_hoodie_file_name``, which names the physical file and changes on every rewrite).
* **timestamps** (any unit, with or without zone) -> ``int`` microseconds since the epoch, UTC; a
  zone-less timestamp is taken as UTC wall-clock (both readers return ``timestamp[us, tz=UTC]`` for Hudi's
  ``timestamp-micros``; Spark's ``TimestampNTZ`` would come back zone-less).
* **dates** -> ISO string ``YYYY-MM-DD`` (date32 and date64 alike).
* **time** -> ``int`` microseconds since midnight.
* **decimals** -> canonical string of the value (``Decimal.normalize``, fixed-point, ``-0`` -> ``0``), so
  ``decimal(10,2)`` 1.50 and ``decimal(12,4)`` 1.5000 compare equal.
* **integers** of any width and signedness -> ``int`` (Hudi/Avro has no byte/short; a reader may widen).
* **floats**: float32 values are widened exactly to Python ``float``; ``NaN`` -> the string ``"NaN"``
  (NaN != NaN would break multiset equality); ``-0.0`` -> ``0.0``.
* **strings** (string/large_string/string_view) -> ``str``; **binary** (any) -> ``bytes``.
* **lists** (list/large_list/fixed-size) -> ``tuple`` of normalised elements, order kept.
* **maps** -> ``tuple`` of ``(key, value)`` pairs sorted by key (map order is not data).
* **structs** -> ``tuple`` of ``(field_name, value)`` pairs sorted by field name.
* **dictionary** arrays are decoded first; **null** stays ``None``.

Rows are sorted with a total order over these values (``None`` < bools < numbers < str < bytes < tuples),
so equal multisets give equal lists.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any, Iterable, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.types as pat

SORT_COLUMNS = ("_hoodie_partition_path", "_hoodie_record_key", "_hoodie_file_name", "_hoodie_commit_seqno")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)

__all__ = ["assert_same_rows", "comparable_rows", "hudi_rs_file_slices", "read_hudi_rs", "row_diff"]


def _uri(base_path) -> str:
    # hudi-rs needs an absolute path (or a file:// URI); relative paths fail with "relative URL without a base".
    text = str(base_path)
    return text if "://" in text else str(Path(text).resolve())


def read_hudi_rs(base_path, *, options: dict[str, str] | None = None) -> pa.Table:
    """hudi-rs snapshot read of the table: all columns incl. meta columns, ordered by partition path, record
    key, file name, sequence number.  An empty table (no completed commit) gives a zero-row table with the
    table's schema when hudi-rs can tell it, else with no columns."""
    from hudi import HudiTable

    table = HudiTable(_uri(base_path), dict(options or {}))
    batches = table.read()
    if batches:
        result = pa.Table.from_batches(batches)
    else:
        try:
            result = table.get_schema_with_meta_fields().empty_table()
        except Exception:  # no commit and no create schema: nothing to describe
            result = pa.table({})
    keys = [(c, "ascending") for c in SORT_COLUMNS if c in result.column_names]
    if keys and result.num_rows:
        result = result.take(pc.sort_indices(result, sort_keys=keys))
    return result


def hudi_rs_file_slices(base_path) -> list[dict]:
    """hudi-rs's latest file slices, sorted: ``{"partition", "file_id", "base_file", "log_files"}`` with
    ``base_file`` ``None`` for a log-only slice and ``log_files`` a sorted list of names."""
    from hudi import HudiTable

    slices = [
        {
            "partition": s.partition_path,
            "file_id": s.file_id,
            "base_file": s.base_file_name or None,
            "log_files": sorted(s.log_file_names),
        }
        for s in HudiTable(_uri(base_path)).get_file_slices()
    ]
    return sorted(slices, key=lambda s: (s["partition"], s["file_id"]))


# ------------------------------------------------------------------------------------ normalisation

def _norm_float(value):
    if value is None:
        return None
    value = float(value)
    if math.isnan(value):
        return "NaN"
    return 0.0 if value == 0 else value


def _norm_decimal(value):
    if value is None:
        return None
    text = format(Decimal(value).normalize(), "f")
    return "0" if text in ("-0", "0") else text


def _normaliser(arrow_type: pa.DataType):
    """A function mapping one Python value (as ``to_pylist`` gives it) of ``arrow_type`` to its canonical form."""
    if pat.is_dictionary(arrow_type):
        return _normaliser(arrow_type.value_type)
    if pat.is_timestamp(arrow_type):
        def ts(value):
            if value is None:
                return None
            if value.tzinfo is None:
                value = value.replace(tzinfo=dt.timezone.utc)
            delta = value - _EPOCH
            return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        return ts
    if pat.is_date(arrow_type):
        return lambda v: None if v is None else v.isoformat()
    if pat.is_time(arrow_type):
        return lambda v: None if v is None else ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
    if pat.is_decimal(arrow_type):
        return _norm_decimal
    if pat.is_floating(arrow_type):
        return _norm_float
    if pat.is_integer(arrow_type):
        return lambda v: None if v is None else int(v)
    if pat.is_boolean(arrow_type):
        return lambda v: None if v is None else bool(v)
    if pat.is_string(arrow_type) or pat.is_large_string(arrow_type) or getattr(pat, "is_string_view", lambda t: False)(arrow_type):
        return lambda v: v
    if pat.is_binary(arrow_type) or pat.is_large_binary(arrow_type) or pat.is_fixed_size_binary(arrow_type) or getattr(pat, "is_binary_view", lambda t: False)(arrow_type):
        return lambda v: None if v is None else bytes(v)
    if pat.is_map(arrow_type):
        key_norm, item_norm = _normaliser(arrow_type.key_type), _normaliser(arrow_type.item_type)

        def map_(value):
            if value is None:
                return None
            pairs = [(key_norm(k), item_norm(v)) for k, v in value]
            return tuple(sorted(pairs, key=lambda kv: _total_key(kv[0])))
        return map_
    if pat.is_list(arrow_type) or pat.is_large_list(arrow_type) or pat.is_fixed_size_list(arrow_type) or getattr(pat, "is_list_view", lambda t: False)(arrow_type):
        element = _normaliser(arrow_type.value_type)
        return lambda v: None if v is None else tuple(element(x) for x in v)
    if pat.is_struct(arrow_type):
        fields = sorted((arrow_type.field(i).name, _normaliser(arrow_type.field(i).type)) for i in range(arrow_type.num_fields))

        def struct(value):
            if value is None:
                return None
            return tuple((name, norm(value.get(name))) for name, norm in fields)
        return struct
    if pat.is_null(arrow_type):
        return lambda v: None
    return lambda v: v


_RANK = {type(None): 0, bool: 1, int: 2, float: 2, str: 3, bytes: 4, tuple: 5}


def _total_key(value):
    """A sort key that orders any mix of normalised values (``None`` < bool < numbers < str < bytes < tuple)."""
    rank = _RANK.get(type(value), 6)
    if rank == 5:
        return (rank, tuple(_total_key(v) for v in value))
    if rank == 0:
        return (0, 0)
    if rank == 6:
        return (rank, repr(value))
    return (rank, value)


def _columns(table: pa.Table, drop: Iterable[str]) -> list[str]:
    dropped = set(drop)
    return sorted(name for name in table.column_names if name not in dropped)


def comparable_rows(table: pa.Table, drop: Sequence[str] = ("_hoodie_file_name",), *, columns: Sequence[str] | None = None) -> list[tuple]:
    """The rows of ``table`` as a sorted list of normalised tuples, one value per column in sorted column-name
    order (or in ``columns`` order when given), ``drop`` columns left out.  See the module doc for the
    normalisation of each type."""
    names = list(columns) if columns is not None else _columns(table, drop)
    values = []
    for name in names:
        column = table.column(name)
        norm = _normaliser(column.type)
        values.append([norm(v) for v in column.to_pylist()])
    rows = list(zip(*values)) if values else [() for _ in range(table.num_rows)]
    return sorted(rows, key=_total_key)


def row_diff(a: pa.Table, b: pa.Table, drop: Sequence[str] = ("_hoodie_file_name",), *, labels=("a", "b"), key: str = "_hoodie_record_key", limit: int = 5) -> str | None:
    """``None`` when ``a`` and ``b`` hold the same multiset of rows (after normalisation), else a readable
    description: column differences, row counts, and the first differing keys with the columns that differ."""
    la, lb = labels
    cols_a, cols_b = _columns(a, drop), _columns(b, drop)
    if cols_a != cols_b:
        return (
            f"columns differ: only in {la}: {sorted(set(cols_a) - set(cols_b))}, "
            f"only in {lb}: {sorted(set(cols_b) - set(cols_a))} ({la} has {a.num_rows} rows, {lb} has {b.num_rows})"
        )
    rows_a, rows_b = comparable_rows(a, columns=cols_a), comparable_rows(b, columns=cols_a)
    if rows_a == rows_b:
        return None
    count_a, count_b = Counter(rows_a), Counter(rows_b)
    only_a, only_b = list((count_a - count_b).elements()), list((count_b - count_a).elements())
    lines = [
        f"rows differ: {la} has {len(rows_a)} rows, {lb} has {len(rows_b)}; "
        f"{len(only_a)} only in {la}, {len(only_b)} only in {lb}"
    ]
    key_index = cols_a.index(key) if key in cols_a else None
    if key_index is not None:
        by_key_b: dict[Any, list[tuple]] = {}
        for row in only_b:
            by_key_b.setdefault(row[key_index], []).append(row)
        keys = sorted({r[key_index] for r in only_a} | set(by_key_b), key=_total_key)
        lines.append(f"first differing keys ({key}): {keys[:limit]}")
        by_key_a: dict[Any, list[tuple]] = {}
        for row in only_a:
            by_key_a.setdefault(row[key_index], []).append(row)
        for k in keys[:limit]:
            ra, rb = by_key_a.get(k, []), by_key_b.get(k, [])
            if len(ra) == 1 and len(rb) == 1:
                diffs = {c: (x, y) for c, x, y in zip(cols_a, ra[0], rb[0]) if x != y}
                lines.append(f"  {k!r}: differing columns ({la}, {lb}): {diffs}")
            else:
                lines.append(f"  {k!r}: {len(ra)} row(s) only in {la}, {len(rb)} only in {lb}")
                for r in ra[:2]:
                    lines.append(f"    {la}: {dict(zip(cols_a, r))}")
                for r in rb[:2]:
                    lines.append(f"    {lb}: {dict(zip(cols_a, r))}")
    else:
        for r in only_a[:limit]:
            lines.append(f"  only in {la}: {dict(zip(cols_a, r))}")
        for r in only_b[:limit]:
            lines.append(f"  only in {lb}: {dict(zip(cols_a, r))}")
    return "\n".join(lines)


def assert_same_rows(a: pa.Table, b: pa.Table, drop: Sequence[str] = ("_hoodie_file_name",), *, labels=("a", "b"), key: str = "_hoodie_record_key") -> None:
    """Assert ``a`` and ``b`` hold the same multiset of rows (see :func:`comparable_rows`); the message lists
    column differences, counts and the first differing keys.  ``key`` picks the column to report by (falls
    back to listing whole rows if absent)."""
    message = row_diff(a, b, drop, labels=labels, key=key)
    assert message is None, message
