"""The consistent-bucket plan: Hudi's split / merge rules, as properties over generated rings and slices."""

from __future__ import annotations

import uuid

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hudi_cluster_consistent_bucket.hashing import (
    CHILD_NODE_KEY, DELETE, HASH_MASK, PARTITION_KEY, REPLACE, SEQUENCE_NO_KEY, HashingMetadata, Node, Ring, covers,
    initial_metadata, nodes_from_json,
)  # fmt: skip
from hudi_cluster_consistent_bucket.plan import (
    REWRITE_KEY, ConsistentBucketPlanStrategy, bucket_limits, plan_partition,
)  # fmt: skip
from hudi_cluster_core.config import load_config
from hudi_cluster_core.table import FileSlice
from hudi_cluster_core.table.naming import BaseFile, LogFile
from hudi_cluster_core.testing import check_plan_strategy, planning_inputs

KB = 1024
INSTANT = "20270101000000000"


def slice_for(node: Node, size: int, partition: str = "p", log_only: bool = False) -> FileSlice:
    fid = node.file_id
    if log_only:
        return FileSlice(partition, fid, "1", None, (LogFile(f".{fid}_1.log.1_0-1-1", fid, "1", 1, "0-1-1", size),))
    return FileSlice(partition, fid, "1", BaseFile(f"{fid}_0-1-1_1.parquet", fid, "0-1-1", "1", size))


@st.composite
def rings(draw, partition: str = "p"):
    """Hashing metadata with 1..12 nodes at distinct values (the last often at the top of the hash range)."""
    count = draw(st.integers(1, 12))
    values = draw(st.lists(st.integers(0, HASH_MASK), min_size=count, max_size=count, unique=True))
    if draw(st.booleans()):
        values[-1] = HASH_MASK
        values = list(dict.fromkeys(values))
    ids = draw(st.lists(st.integers(0, 2**128 - 1), min_size=len(values), max_size=len(values), unique=True))
    nodes = tuple(Node(v, str(uuid.UUID(int=i)), "NORMAL") for v, i in zip(sorted(values), ids))
    return HashingMetadata(partition, INSTANT[:-3], len(nodes), draw(st.integers(0, 5)), nodes)


@st.composite
def situations(draw):
    metadata = draw(rings())
    ring = Ring(metadata.nodes)
    sizes = st.one_of(st.integers(0, 8 * KB), st.integers(0, 400 * KB))
    slices = []
    for node in ring.nodes:
        if draw(st.integers(0, 5)) == 0:
            continue  # an empty bucket: no file group yet
        slices.append(slice_for(node, draw(sizes), log_only=draw(st.booleans())))
    if draw(st.booleans()):
        slices.append(slice_for(Node(1, str(uuid.uuid4())), 500 * KB))  # a file group that is no bucket
    max_file = draw(st.sampled_from([10 * KB, 100 * KB]))
    split_threshold = draw(st.sampled_from([0.5, 1.0, 2.0]))
    merge_threshold = draw(st.sampled_from([0.0, 0.2, 1.0, 3.0]))
    n = len(ring)
    knobs = {
        "split_size": int(max_file * split_threshold),
        "merge_size": int(max_file * merge_threshold),
        "max_buckets": draw(st.integers(max(1, n - 2), n + 8)),
        "min_buckets": draw(st.integers(1, n + 2)),
        "rewrite_unchanged": draw(st.booleans()),
    }
    return metadata, draw(st.permutations(slices)), knobs


def kind(group) -> str:
    children = nodes_from_json(group.extra_metadata[CHILD_NODE_KEY])
    if len(children) == 2 and all(c.tag == REPLACE for c in children) and len(group.slices) == 1:
        return "split"
    if any(c.tag == DELETE for c in children):
        return "merge"
    return "rewrite"


@settings(max_examples=400, deadline=None)
@given(situations())
def test_split_and_merge_rules(situation):
    metadata, slices, knobs = situation
    ring = Ring(metadata.nodes)
    groups = plan_partition(metadata, list(slices), instant_time=INSTANT, **knobs)
    known = [s for s in slices if s.file_id in ring.by_file_id]
    size = {s.file_id: s.total_size for s in slices}
    seen = set()
    splits = merged_away = 0
    new_prefixes = []
    for group in groups:
        meta = group.extra_metadata
        assert meta[PARTITION_KEY] == "p" and meta[SEQUENCE_NO_KEY] == str(metadata.seq_no)
        children = nodes_from_json(meta[CHILD_NODE_KEY])
        members = [ring.by_file_id[s.file_id] for s in group.slices]  # only buckets are grouped
        for s in group.slices:
            assert s.file_id not in seen
            seen.add(s.file_id)
        replace = [c for c in children if c.tag == REPLACE]
        assert group.num_output_file_groups == len(replace)
        new_prefixes += [c.file_id_prefix for c in replace]
        low = ring.former(members[0].value).value
        high = members[-1].value
        # the children own exactly the hash range the group's buckets owned
        after = ring.apply(children)
        assert covers(after, low, high) == sorted(replace, key=lambda c: (c.value <= low if low >= high else 0, c.value))
        if kind(group) == "split":
            splits += 1
            (parent,) = members
            assert size[parent.file_id] > knobs["split_size"]
            assert children[1].value == parent.value and children[0].value != parent.value
        elif kind(group) == "merge":
            merged_away += len(members) - 1
            assert len(members) >= 2
            for before, nxt in zip(members, members[1:]):  # consecutive ring neighbours
                assert ring.latter(before.value) == nxt
            assert all(size[m.file_id] <= knobs["merge_size"] for m in members)
            total = sum(size[m.file_id] for m in members)
            assert min(total - size[members[0].file_id], total - size[members[-1].file_id]) <= knobs["merge_size"]
            assert [c.tag for c in children] == [DELETE] * (len(members) - 1) + [REPLACE]
            assert [c.value for c in children] == [m.value for m in members]
        else:
            assert len(members) == 1 and [c.value for c in children] == [members[0].value]
            assert knobs["rewrite_unchanged"]
    assert len(set(new_prefixes)) == len(new_prefixes)
    assert not set(new_prefixes) & {n.file_id_prefix for n in ring.nodes}
    # bucket-count bounds: never split past max nor merge below min (room is never negative)
    assert splits <= max(0, knobs["max_buckets"] - len(ring))
    assert merged_away <= max(0, len(ring) - knobs["min_buckets"] + splits)
    # a bucket above the split size is split while there is room and its range can be cut
    unsplit = [s for s in known if s.total_size > knobs["split_size"] and s.file_id not in
               {g.slices[0].file_id for g in groups if kind(g) == "split"}]  # fmt: skip
    if splits < max(0, knobs["max_buckets"] - len(ring)):
        for s in unsplit:
            assert ring.split(ring.by_file_id[s.file_id], ("a", "b")) is None
    if knobs["rewrite_unchanged"]:
        assert seen == {s.file_id for s in known}
    # untouched ranges keep their bucket after the plan's children are applied
    everything = [c for g in groups for c in nodes_from_json(g.extra_metadata[CHILD_NODE_KEY])]
    after = ring.apply(everything)
    grouped = {ring.by_file_id[f].value for f in seen}
    for h in [0, 1, HASH_MASK, *(n.value for n in ring.nodes), *(n.value + 1 for n in ring.nodes if n.value < HASH_MASK)]:
        old = ring.bucket(h)
        if old.value not in grouped:
            assert after.bucket(h) == old


@settings(max_examples=100, deadline=None)
@given(situations())
def test_plan_is_a_pure_function_of_its_input(situation):
    metadata, slices, knobs = situation
    first = plan_partition(metadata, list(slices), instant_time=INSTANT, **knobs)
    again = plan_partition(metadata, list(reversed(slices)), instant_time=INSTANT, **knobs)
    assert first == again
    other = plan_partition(metadata, list(slices), instant_time="20270101000000001", **knobs)
    assert [g.slices for g in other] == [g.slices for g in first]


def test_two_oversized_buckets_split_as_hudi_did():
    metadata = initial_metadata("us", 2)
    slices = [slice_for(n, 174 * KB, "us", log_only=True) for n in metadata.nodes]
    groups = plan_partition(metadata, slices, split_size=40 * KB, merge_size=4 * KB, max_buckets=8, min_buckets=1,
                            instant_time=INSTANT)  # fmt: skip
    assert [[c.value for c in nodes_from_json(g.extra_metadata[CHILD_NODE_KEY])] for g in groups] == [
        [536870911, 1073741824], [1610612735, 2147483647]]
    assert [g.num_output_file_groups for g in groups] == [2, 2]


def test_no_room_means_no_split_and_unset_max_means_num_buckets():
    config = load_config(overrides={"hoodie.bucket.index.num.buckets": "2"})
    assert bucket_limits(config, 2) == (2, 2)
    config = load_config(overrides={"hoodie.bucket.index.num.buckets": "4", "hoodie.bucket.index.max.num.buckets": "3",
                                    "hoodie.bucket.index.min.num.buckets": "2"})  # fmt: skip
    assert bucket_limits(config, 2) == (4, 2)  # a max below num.buckets is raised to it
    config = load_config(overrides={"hoodie.bucket.index.num.buckets": "4", "hoodie.bucket.index.max.num.buckets": "9",
                                    "hoodie.bucket.index.min.num.buckets": "6"})  # fmt: skip
    assert bucket_limits(config, 2) == (9, 4)  # a min above num.buckets is lowered to it
    metadata = initial_metadata("us", 2)
    slices = [slice_for(n, 174 * KB, "us") for n in metadata.nodes]
    groups = plan_partition(metadata, slices, split_size=40 * KB, merge_size=0, max_buckets=2, min_buckets=2,
                            instant_time=INSTANT, rewrite_unchanged=False)  # fmt: skip
    assert groups == []


def test_small_neighbours_merge_around_the_ring():
    metadata = initial_metadata("p", 4)
    sizes = [1 * KB, 50 * KB, 1 * KB, 1 * KB]
    slices = [slice_for(n, s) for n, s in zip(metadata.nodes, sizes)]
    groups = plan_partition(metadata, slices, split_size=10**9, merge_size=10 * KB, max_buckets=4, min_buckets=1,
                            instant_time=INSTANT, rewrite_unchanged=False)  # fmt: skip
    # bucket 0 looks backward first: bucket 3 is its ring neighbour (wrapping), then 2; bucket 1 is too big
    assert [[s.file_id for s in g.slices] for g in groups] == [[slices[2].file_id, slices[3].file_id, slices[0].file_id]]
    children = nodes_from_json(groups[0].extra_metadata[CHILD_NODE_KEY])
    assert [c.tag for c in children] == [DELETE, DELETE, REPLACE] and children[-1].value == metadata.nodes[0].value


# --------------------------------------------------------------------------------------- conformance kit


def synthetic_metadata(context, partition, slices):
    """A ring whose buckets are the kit's generated file groups (their ids are ``<uuid>-0``)."""
    ids = sorted(s.file_id for s in slices if s.file_id.endswith("-0"))
    if not ids:
        return None
    step = HASH_MASK // len(ids)
    nodes = tuple(Node(min(step * (i + 1), HASH_MASK) if i < len(ids) - 1 else HASH_MASK, f[:-2]) for i, f in enumerate(ids))
    return HashingMetadata(partition, "00000000000000", len(nodes), 3, nodes)


BUCKET_OPTIONS = st.fixed_dictionaries({
    "hoodie.index.type": st.just("BUCKET"),
    "hoodie.index.bucket.engine": st.just("CONSISTENT_HASHING"),
    "hoodie.bucket.index.num.buckets": st.integers(1, 40).map(str),
    "hoodie.bucket.index.max.num.buckets": st.integers(1, 80).map(str),
    "hoodie.bucket.index.min.num.buckets": st.integers(1, 10).map(str),
    "hoodie.parquet.max.file.size": st.sampled_from([str(MB) for MB in (1 << 20, 100 << 20, 1 << 30)]),
    REWRITE_KEY: st.sampled_from(["true", "false"]),
})  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(planning_inputs(with_logs=True), BUCKET_OPTIONS)
def test_consistent_bucket_conforms(case, bucket):
    assume(int(bucket["hoodie.bucket.index.min.num.buckets"]) <= int(bucket["hoodie.bucket.index.max.num.buckets"]))
    strategy = ConsistentBucketPlanStrategy(metadata_loader=synthetic_metadata)
    outcome = check_plan_strategy(strategy, case, size_rule=False, honours_small_file_limit=False,
                                  honours_max_bytes=False, extra_options=bucket)  # fmt: skip
    max_groups = int(case.options["hoodie.clustering.plan.strategy.max.num.groups"])
    assert len(outcome.groups) <= max_groups
    pending_partitions = {g.partition for g in case.pending}
    for group in outcome.groups:
        assert group.partition not in pending_partitions  # a partition with a pending plan is left alone
        assert group.extra_metadata[SEQUENCE_NO_KEY] == "3"
        assert {s.partition for s in group.slices} == {group.extra_metadata[PARTITION_KEY]}
    if outcome.record is not None:
        strategy_record = outcome.record["clusteringPlan"]["strategy"]
        assert strategy_record["strategyClassName"] == load_config(overrides={**case.options, **bucket}).get(
            "hoodie.clustering.execution.strategy.class")
