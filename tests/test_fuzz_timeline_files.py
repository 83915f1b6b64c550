"""Timeline files on damaged or arbitrary bytes: commit metadata (Avro and Jackson JSON), clustering plans and
``hoodie.properties`` end in one named error (TableError, PlanError) or a read of the expected shape, in bounded
time; never a traceback of another kind, never a hang."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from hudi_cluster_core.avro import decode_avro, decode_commit_metadata, encode_avro, encode_commit_metadata
from hudi_cluster_core.errors import PlanError, TableError
from hudi_cluster_core.io.storage import Storage
from hudi_cluster_core.plan.avro_plan import StoredPlan, read_plan
from hudi_cluster_core.table.properties import SUPPORTED_VERSIONS, TABLE_TYPES, load_table_config
from tests.support.fuzz import fuzz, outcome

STAT = {"fileId": "f1", "path": "p1/f1_0-1-1_001.parquet", "numWrites": 10, "numInserts": 10, "fileSizeInBytes": 99,
        "totalWriteBytes": 99, "partitionPath": "p1", "prevCommit": "null"}  # fmt: skip
COMMIT = {"partitionToWriteStats": {"p1": [STAT]}, "extraMetadata": {"schema": "{}"}, "operationType": "INSERT"}
AVRO_COMMIT = encode_commit_metadata(COMMIT, layout_version=2, replace=False)
JSON_COMMIT = encode_commit_metadata(COMMIT, layout_version=1, replace=False)
PLAN = {"operationType": "CLUSTER", "extraMetadata": {}, "version": 1, "clusteringPlan": {
    "inputGroups": [{"slices": [{"dataFilePath": "p1/f1_0-1-1_001.parquet", "deltaFilePaths": [".f1_001.log.1_0-1-1"],
                                 "fileId": "f1", "partitionPath": "p1", "bootstrapFilePath": "", "version": 1}],
                     "metrics": {"TOTAL_IO": 1.0}, "numOutputFileGroups": 1, "extraMetadata": None, "version": 1}],
    "strategy": {"strategyClassName": "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy",
                 "strategyParams": {"k": "v"}, "version": 1},
    "extraMetadata": {}, "version": 1, "preserveHoodieMetadata": True}}  # fmt: skip
AVRO_PLAN = encode_avro(PLAN, "HoodieRequestedReplaceMetadata")
NAMED = (TableError, PlanError)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
commit_keys = st.sampled_from(["partitionToWriteStats", "partitionToReplaceFileIds", "compacted", "extraMetadata",
                               "operationType"])  # fmt: skip


def _damaged(original: bytes, draw) -> bytes:
    at = draw.draw(st.integers(0, len(original) - 1))
    junk = draw.draw(st.binary(min_size=1, max_size=8))
    if draw.draw(st.booleans()):
        return original[:at] + junk + original[at + len(junk) :]
    return original[: draw.draw(st.integers(0, len(original)))]


def _commit_shape(result) -> None:
    if isinstance(result, BaseException) or result == {}:  # an empty file is empty metadata, as Hudi reads it
        return
    assert set(result) >= {"partitionToWriteStats", "extraMetadata", "operationType"}
    assert all(isinstance(stats, list) for stats in result["partitionToWriteStats"].values())


def test_the_inputs_read_back():
    assert decode_commit_metadata(AVRO_COMMIT, layout_version=2)["partitionToWriteStats"]["p1"][0]["fileId"] == "f1"
    assert decode_commit_metadata(JSON_COMMIT, layout_version=1)["operationType"] == "INSERT"
    plan = read_plan(Storage("/t"), "001", decode_avro(AVRO_PLAN), source="plan")
    assert plan.groups[0].slices[0].file_id == "f1"


@fuzz
@given(st.sampled_from([(AVRO_COMMIT, 2), (JSON_COMMIT, 1)]), st.data())
def test_damaged_commit_metadata_is_a_table_error_or_commit_metadata(original, draw):
    data, layout = original
    _commit_shape(outcome(lambda: decode_commit_metadata(_damaged(data, draw), layout_version=layout), *NAMED))


@fuzz
@given(st.dictionaries(commit_keys, json_values, max_size=5) | json_values)
def test_any_json_is_a_table_error_or_commit_metadata(value):
    data = json.dumps(value).encode()
    _commit_shape(outcome(lambda: decode_commit_metadata(data, layout_version=1), *NAMED))


@fuzz
@given(st.data())
def test_a_damaged_plan_is_a_named_error_or_a_plan(draw):
    data = _damaged(AVRO_PLAN, draw)

    def read() -> StoredPlan:
        return read_plan(Storage("/t"), "001", decode_avro(data, source="plan"), source="plan")

    result = outcome(read, *NAMED)
    if not isinstance(result, BaseException):
        assert result.groups and all(group.slices for group in result.groups)


@fuzz
@given(st.lists(st.sampled_from(["hoodie.table.name=t", "hoodie.table.version=6", "hoodie.table.version=x",
                                 "hoodie.table.type=MERGE_ON_READ", "hoodie.table.checksum=1", "#c", "a\\", "\\u12",
                                 "hoodie.table.name", " = ", "\\uZZZZ"]) | st.text(max_size=20), max_size=8))  # fmt: skip
def test_any_hoodie_properties_is_a_table_error_or_a_table_config(tmp_path_factory, lines):
    base = tmp_path_factory.mktemp("t")
    (base / ".hoodie").mkdir()
    (base / ".hoodie" / "hoodie.properties").write_text("\n".join(lines), encoding="utf-8")
    result = outcome(lambda: load_table_config(Storage(str(base))), TableError)
    if not isinstance(result, BaseException):
        assert result.version in SUPPORTED_VERSIONS and result.table_type in TABLE_TYPES
