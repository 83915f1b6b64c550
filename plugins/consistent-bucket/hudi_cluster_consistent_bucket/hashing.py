"""Consistent-hashing bucket index: hashing metadata, the hash ring, and record -> bucket.

Facts (docs/format.md#consistent-hashing-bucket-index, Apache Hudi 1.1.1 classes ``HoodieConsistentHashingMetadata``,
``ConsistentHashingNode``, ``ConsistentBucketIdentifier``, ``ConsistentBucketIndexUtils``, ``KeyGenUtils``):

* Per partition ``<p>`` the metadata lives in ``.hoodie/.bucket_index/consistent_hashing_metadata/<p>/`` as
  ``<instant>.hashing_meta`` (JSON, Jackson's default pretty printer) plus empty ``<instant>.commit`` markers.
  The first one is ``00000000000000.hashing_meta``.
* A node is ``{value, fileIdPrefix, tag}``; a bucket owns the hashes in ``(previous value, value]`` of the ring
  (the first node also takes everything above the last value: the ring wraps). Its file group is
  ``<fileIdPrefix>-0``.
* Initial nodes: ``step = ceil(0x7fffffff / n)``, node ``i`` (1-based) at ``min(step * i, 0x7fffffff)``, prefix the
  type-3 UUID of ``BE int64 previous value ++ BE int64 value ++ UTF-8 partition`` (previous value 0 for node 1).
* Record -> bucket: the hash keys are taken from the record key (``KeyGenUtils.extractRecordKeysByFields``),
  joined with ``""`` (a null value reads ``"null"``, as Java's ``String.join``), hashed with xxHash32 seed 0 over
  the UTF-8 bytes, masked with ``0x7fffffff``; the bucket is the first node whose value is ``>=`` the hash.
* A hashing_meta counts when its instant is ``00000000000000``, has a ``.commit`` marker, is a completed
  commit/replacecommit, or (its instant no longer pending) one of its nodes names a latest base file's file group.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import uuid
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace
from typing import Iterable, Sequence

import xxhash

HASH_MASK = 0x7FFFFFFF
INIT_INSTANT = "00000000000000"
METADATA_DIR = ".hoodie/.bucket_index/consistent_hashing_metadata"
META_SUFFIX = ".hashing_meta"
COMMIT_SUFFIX = ".commit"
NORMAL, REPLACE, DELETE = "NORMAL", "REPLACE", "DELETE"
TAGS = (NORMAL, REPLACE, DELETE)
NULL_KEY_PLACEHOLDER = "__null__"
EMPTY_KEY_PLACEHOLDER = "__empty__"

# plan group extraMetadata keys (BaseConsistentHashingBucketClusteringPlanStrategy)
PARTITION_KEY = "clustering.group.partition"
CHILD_NODE_KEY = "clustering.group.child.node"
SEQUENCE_NO_KEY = "clustering.group.sequence.no"

_PREFIX_NAMESPACE = uuid.UUID("6f1c7a52-3d3e-4f5e-9b7e-0c2b8f4d9a10")


# ------------------------------------------------------------------------------------------------- nodes


@dataclass(frozen=True)
class Node:
    value: int
    file_id_prefix: str | None = None
    tag: str = NORMAL

    @property
    def file_id(self) -> str:
        """The bucket's file group id: ``<fileIdPrefix>-0`` (one file group per bucket)."""
        return f"{self.file_id_prefix}-0"

    def with_tag(self, tag: str) -> "Node":
        return replace(self, tag=tag)

    def to_json_obj(self) -> dict:
        return {"value": self.value, "fileIdPrefix": self.file_id_prefix, "tag": self.tag}

    @classmethod
    def from_json_obj(cls, obj: dict) -> "Node":
        tag = obj.get("tag") or NORMAL
        if tag not in TAGS:
            raise ValueError(f"consistent hashing node {obj!r}: unknown tag {tag!r}; accepted: {', '.join(TAGS)}")
        return cls(int(obj["value"]), obj.get("fileIdPrefix"), tag)


def nodes_to_json(nodes: Iterable[Node]) -> str:
    """A node list as Hudi writes it (``ConsistentHashingNode.toJsonString``)."""
    return jackson_pretty([n.to_json_obj() for n in nodes])


def nodes_from_json(text: str | None) -> list[Node]:
    if not text:
        return []
    return [Node.from_json_obj(o) for o in json.loads(text)]


def jackson_pretty(value, level: int = 0) -> str:
    """JSON in the layout of Jackson's ``DefaultPrettyPrinter`` (objects indented by 2, arrays inline)."""
    if isinstance(value, dict):
        if not value:
            return "{ }"
        pad = "  " * (level + 1)
        body = ",\n".join(f"{pad}{json.dumps(str(k), ensure_ascii=False)} : {jackson_pretty(v, level + 1)}"
                          for k, v in value.items())  # fmt: skip
        return "{\n" + body + "\n" + "  " * level + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[ ]"
        return "[ " + ", ".join(jackson_pretty(v, level) for v in value) + " ]"
    return json.dumps(value, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------- metadata


@dataclass(frozen=True)
class HashingMetadata:
    partition_path: str
    instant: str
    num_buckets: int
    seq_no: int
    nodes: tuple[Node, ...]
    version: int = 0

    @property
    def file_name(self) -> str:
        return self.instant + META_SUFFIX

    def to_json(self) -> str:
        return jackson_pretty({
            "version": self.version, "partitionPath": self.partition_path, "instant": self.instant,
            "numBuckets": self.num_buckets, "seqNo": self.seq_no, "nodes": [n.to_json_obj() for n in self.nodes],
        })  # fmt: skip

    def to_bytes(self) -> bytes:
        return self.to_json().encode("utf-8")

    @classmethod
    def from_bytes(cls, data: bytes, *, source: str = "hashing metadata") -> "HashingMetadata":
        try:
            obj = json.loads(data.decode("utf-8"))
            return cls(
                obj.get("partitionPath") or "", str(obj["instant"]), int(obj.get("numBuckets") or 0),
                int(obj.get("seqNo") or 0), tuple(Node.from_json_obj(n) for n in obj.get("nodes") or []),
                int(obj.get("version") or 0),
            )  # fmt: skip
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{source}: not a consistent hashing metadata file: {exc}") from None


def initial_file_id_prefix(partition: str, start: int, end: int) -> str:
    """``UUID.nameUUIDFromBytes(BE int64 start ++ BE int64 end ++ UTF-8 partition)`` (a type-3 UUID)."""
    data = start.to_bytes(8, "big", signed=True) + end.to_bytes(8, "big", signed=True) + partition.encode("utf-8")
    return str(uuid.UUID(bytes=hashlib.md5(data).digest(), version=3))


def initial_nodes(partition: str, num_buckets: int) -> tuple[Node, ...]:
    step = (HASH_MASK + num_buckets - 1) // num_buckets
    nodes, start = [], 0
    for index in range(1, num_buckets + 1):
        end = min(step * index, HASH_MASK)
        nodes.append(Node(end, initial_file_id_prefix(partition, start, end), NORMAL))
        start = end
    return tuple(nodes)


def initial_metadata(partition: str, num_buckets: int) -> HashingMetadata:
    return HashingMetadata(partition, INIT_INSTANT, num_buckets, 0, initial_nodes(partition, num_buckets))


def new_file_id_prefix(instant_time: str, partition: str, value: int, role: str) -> str:
    """A fresh bucket file-id prefix, a pure function of the clustering instant, partition, node value and role.

    Hudi draws random UUIDs; deriving them keeps a plan reproducible for equal input, and the clustering instant in
    the name keeps them distinct from every earlier prefix (a replaced file group id must never come back)."""
    return str(uuid.uuid5(_PREFIX_NAMESPACE, f"{instant_time}\x00{partition}\x00{value}\x00{role}"))


# ------------------------------------------------------------------------------------------ record -> hash


def extract_hash_keys(record_key: str, fields: Sequence[str]) -> list[str | None]:
    """``KeyGenUtils.extractRecordKeysByFields`` (Hudi 1.1): the values of ``fields`` in a record key.

    A key without both ``,`` and ``:`` is a plain value. Otherwise it is ``f1:v1,f2:v2`` (values may contain ``:``
    and ``,``; the value ends at the last ``,`` before the next ``field:``); ``__null__`` reads None and
    ``__empty__`` reads ``""``; values come in record-key order; no match gives the whole key."""
    key = record_key
    if "," not in key or ":" not in key:
        return [key]
    take_all = not fields or (len(fields) == 1 and fields[0] == "")
    values: list[str | None] = []
    processed, n = 0, len(key)
    while processed < n:
        sep1 = key.find(":", processed)
        if sep1 < 0:  # Java would fail here (malformed key); keep the rest as one value
            break
        name = key[processed:sep1]
        sep2 = key.find(":", sep1 + 1)
        if take_all or name in fields:
            if sep2 < 0:
                value, processed = key[sep1 + 1 :], n
            else:
                comma = key.rfind(",", 0, sep2 + 1)
                while comma < sep1 and sep2 > 0:
                    sep2 = key.find(":", sep2 + 1)
                    comma = key.rfind(",", 0, sep2 + 1) if sep2 >= 0 else -1
                if comma > 0:
                    value, processed = key[sep1 + 1 : comma], comma + 1
                else:
                    value, processed = key[sep1 + 1 :], n
            values.append(None if value == NULL_KEY_PLACEHOLDER else "" if value == EMPTY_KEY_PLACEHOLDER else value)
        elif sep2 < 0:
            processed = n
        else:
            comma = key.rfind(",", 0, sep2 + 1)
            while comma < sep1:
                sep2 = key.find(":", sep2 + 1)
                if sep2 < 0:
                    comma = -1
                    break
                comma = key.rfind(",", 0, sep2 + 1)
            processed = n if comma < 0 else comma + 1
    return values if values else [key]


def hash_value(text: str) -> int:
    """``HashID.getXXHash32(text, 0) & 0x7fffffff`` over the UTF-8 bytes (unpaired surrogates become ``?``)."""
    return xxhash.xxh32_intdigest(text.encode("utf-8", errors="replace"), seed=0) & HASH_MASK


def record_hash(record_key: str, fields: Sequence[str]) -> int:
    keys = extract_hash_keys(record_key, fields)
    return hash_value("".join("null" if k is None else k for k in keys))


def hash_fields(setting: str | None, record_key_fields: Sequence[str]) -> list[str]:
    """``hoodie.bucket.index.hash.field`` split on ``,`` as Hudi does (no trimming), else the record key fields."""
    if setting:
        return setting.split(",")
    return list(record_key_fields)


# ----------------------------------------------------------------------------------------------- the ring


class Ring:
    """The hash ring of one partition: ``ConsistentBucketIdentifier`` without the Java."""

    def __init__(self, nodes: Iterable[Node]):
        by_value: dict[int, Node] = {}
        for node in nodes:
            by_value[node.value] = node
        self._nodes: list[Node] = [by_value[v] for v in sorted(by_value)]
        self._values: list[int] = [n.value for n in self._nodes]
        self.by_file_id: dict[str, Node] = {n.file_id: n for n in self._nodes if n.file_id_prefix}

    @property
    def nodes(self) -> tuple[Node, ...]:
        return tuple(self._nodes)

    @property
    def values(self) -> list[int]:
        return list(self._values)

    def __len__(self) -> int:
        return len(self._nodes)

    def bucket(self, hash_value_: int) -> Node:
        index = bisect_left(self._values, hash_value_)
        return self._nodes[index if index < len(self._nodes) else 0]

    def bucket_of_key(self, record_key: str, fields: Sequence[str]) -> Node:
        return self.bucket(record_hash(record_key, fields))

    def former(self, value: int) -> Node:
        """The node before ``value`` on the ring (the last one if none is below)."""
        index = bisect_left(self._values, value)
        return self._nodes[index - 1] if index > 0 else self._nodes[-1]

    def latter(self, value: int) -> Node:
        """The node after ``value`` on the ring (the first one if none is above)."""
        index = bisect_right(self._values, value)
        return self._nodes[index] if index < len(self._nodes) else self._nodes[0]

    def split(self, node: Node, prefixes: tuple[str, str]) -> tuple[Node, Node] | None:
        """Children of ``node`` cut at the middle of its range, or None when the range cannot be cut."""
        former = self.former(node.value)
        mid = former.value + node.value + (0 if former.value < node.value else HASH_MASK + 1)
        mid = (mid >> 1) & HASH_MASK
        if mid in (former.value, node.value):
            return None
        return Node(mid, prefixes[0], REPLACE), Node(node.value, prefixes[1], REPLACE)

    def merge(self, nodes: Sequence[Node], prefix: str) -> list[Node]:
        """Children merging consecutive ``nodes`` (ring order): all but the last DELETE, the last REPLACE."""
        if len(nodes) < 2:
            raise ValueError("at least two buckets are needed for a merge")
        for before, after in zip(nodes, nodes[1:]):
            if self.former(after.value).value != before.value:
                raise ValueError(f"cannot merge discontinuous hash range: {before.value} then {after.value}")
        children = [Node(n.value, None, DELETE) for n in nodes[:-1]]
        children.append(Node(nodes[-1].value, prefix, REPLACE))
        return children

    def apply(self, children: Iterable[Node]) -> "Ring":
        """The ring after a resize: REPLACE children take (or add) their value, DELETE children drop theirs."""
        by_value = {n.value: n for n in self._nodes}
        for child in children:
            if child.tag == REPLACE:
                by_value[child.value] = child
            elif child.tag == DELETE:
                if child.value not in by_value:
                    raise ValueError(f"child node {child} deletes a value the ring does not have")
                del by_value[child.value]
            else:
                raise ValueError(f"child node {child} is tagged {child.tag}; accepted: REPLACE, DELETE")
        return Ring(by_value.values())


def covers(ring: Ring, low_exclusive: int, high_inclusive: int) -> list[Node]:
    """Nodes of ``ring`` with a value in ``(low, high]`` (ring order, wrapping when ``low >= high``)."""
    if low_exclusive < high_inclusive:
        return [n for n in ring.nodes if low_exclusive < n.value <= high_inclusive]
    return [n for n in ring.nodes if n.value > low_exclusive] + [n for n in ring.nodes if n.value <= high_inclusive]


# ------------------------------------------------------------------------------------------------ storage


def metadata_dir(storage, partition: str) -> str:
    return storage.join(METADATA_DIR, partition) if partition else storage.join(METADATA_DIR)


def _timestamp(name: str) -> str:
    return name.split(".")[0]  # HoodieConsistentHashingMetadata.getTimestampFromFile


@dataclass(frozen=True)
class MetadataFiles:
    hashing: tuple[str, ...]  # instants with a <instant>.hashing_meta, sorted
    committed: frozenset[str]  # instants with a <instant>.commit marker


def list_metadata_files(storage, partition: str) -> MetadataFiles:
    hashing, committed = set(), set()
    for entry in storage.list(metadata_dir(storage, partition)):
        if entry.is_dir:
            continue
        if entry.name.endswith(META_SUFFIX):
            hashing.add(_timestamp(entry.name))
        elif entry.name.endswith(COMMIT_SUFFIX):
            committed.add(_timestamp(entry.name))
    return MetadataFiles(tuple(sorted(hashing)), frozenset(committed))


def read_metadata(storage, partition: str, instant: str) -> HashingMetadata:
    path = posixpath.join(metadata_dir(storage, partition), instant + META_SUFFIX)
    return HashingMetadata.from_bytes(storage.read_bytes(path), source=path)


def load_valid_metadata(
    storage, partition: str, *, completed: Iterable[str], pending: Iterable[str] = (),
    latest_file_ids: Iterable[str] | None = None, exclude: Iterable[str] = (),
) -> HashingMetadata | None:  # fmt: skip
    """The metadata Hudi's writers use for ``partition`` (``ConsistentBucketIndexUtils.loadMetadata``), or None.

    The newest hashing_meta that counts: the initial one, one with a ``.commit`` marker, one whose instant is a
    completed commit/replacecommit (``completed``), or (instant not in ``pending``) one whose nodes name a file
    group in ``latest_file_ids``. ``exclude`` instants never count (the clustering being committed)."""
    files = list_metadata_files(storage, partition)
    completed, pending, excluded = set(completed), set(pending), set(exclude)
    latest_prefixes = None
    if latest_file_ids is not None:
        latest_prefixes = {f[:-2] if f.endswith("-0") else f for f in latest_file_ids}
    for instant in reversed(files.hashing):
        if instant in excluded:
            continue
        if instant == INIT_INSTANT or instant in files.committed or instant in completed:
            return read_metadata(storage, partition, instant)
        if latest_prefixes is not None and instant not in pending:
            candidate = read_metadata(storage, partition, instant)
            if any(n.file_id_prefix in latest_prefixes for n in candidate.nodes):
                return candidate
    return None


def write_metadata(storage, metadata: HashingMetadata) -> str:
    """Write ``<instant>.hashing_meta`` whole (temporary name without Hudi's suffixes, then rename); overwrites."""
    directory = metadata_dir(storage, metadata.partition_path)
    target = posixpath.join(directory, metadata.file_name)
    temp = posixpath.join(directory, f".hudi-cluster-{uuid.uuid4().hex}.tmp")
    storage.write_bytes(temp, metadata.to_bytes())
    try:
        storage.fs.move(temp, target)
    finally:
        storage.delete_file(temp)
    return target
