"""Hudi's Avro and JSON timeline records against every real fixture file, plus property tests."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hudi_cluster_core.avro import (
    DATA_SCHEMA_NAMES,
    SCHEMA_NAMES,
    decode_avro,
    decode_commit_metadata,
    encode_avro,
    encode_commit_metadata,
    encode_container,
    record_fields,
    schema,
    schema_json,
    to_jackson_json,
)
from hudi_cluster_core.avro.codec import MAGIC
from hudi_cluster_core.errors import PlanError, TableError

FIXTURES = Path(__file__).resolve().parent / "fixtures"  # tests/fixtures/README.md
SCHEMA_DIR = Path(__file__).resolve().parents[1] / "hudi_cluster_core" / "avro" / "schemas"


def _write_stat(**fields) -> dict:
    """A HoodieWriteStat with all of its fields (None unless given), in Avro field order."""
    return {**dict.fromkeys(f["name"] for f in record_fields("HoodieCommitMetadata", "HoodieWriteStat")), **fields}


def _non_empty_files(in_dir) -> list[Path]:
    # os.walk, unlike glob, enters hidden directories such as .hoodie/metadata/.hoodie/timeline.
    return sorted(
        Path(root) / name
        for root, _, names in os.walk(FIXTURES)
        if in_dir(Path(root))
        for name in names
        if (Path(root) / name).stat().st_size > 0
    )


AVRO_FILES = _non_empty_files(lambda d: d.name == "timeline")
V6_JSON_FILES = [p for p in _non_empty_files(lambda d: d.name == ".hoodie") if p.name != "hoodie.properties"]


def _rel(path: Path) -> str:
    return str(path.relative_to(FIXTURES))


def _header(data: bytes) -> tuple[str, bytes, dict]:
    """Writer schema text, sync marker (a one-block file ends with it) and header metadata."""
    metadata = fastavro.reader(io.BytesIO(data)).metadata
    return metadata["avro.schema"], data[-16:], metadata


def _record_name(data: bytes) -> str:
    return json.loads(_header(data)[0])["name"]


def test_fixture_inventory():
    """Guards the parametrisations below against silently shrinking."""
    assert len(AVRO_FILES) == 60
    assert sum("/metadata/" in str(p) for p in AVRO_FILES) == 19
    assert len(V6_JSON_FILES) == 12
    names = {_record_name(p.read_bytes()) for p in AVRO_FILES}
    assert names == set(SCHEMA_NAMES)


# ------------------------------------------------------------------------------------------ Avro fixtures


@pytest.mark.parametrize("path", AVRO_FILES, ids=_rel)
def test_avro_file_decodes_and_reencodes_byte_identical_with_its_header_schema_and_sync(path):
    data = path.read_bytes()
    schema_text, sync, metadata = _header(data)
    record = decode_avro(data, source=str(path))
    assert list(metadata) == ["avro.schema"]  # Hudi writes no avro.codec key
    assert encode_container(record, schema_text, sync) == data


@pytest.mark.parametrize("path", AVRO_FILES, ids=_rel)
def test_avro_file_reencoded_with_our_avsc_equal_decoded_value_and_identical_bytes(path):
    """Equal decoded value is the contract; bytes are identical too because our .avsc serialises to
    exactly Java's Schema.toString() text, so only the random sync marker differs."""
    data = path.read_bytes()
    record = decode_avro(data)
    name = _record_name(data)
    ours = encode_avro(record, name)
    assert decode_avro(ours) == record
    assert list(_header(ours)[2]) == ["avro.schema"]
    assert encode_container(record, schema_json(name), _header(data)[1]) == data


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_our_avsc_equals_hudi_1_1_1_writer_schema_in_v9_fixtures(name):
    headers = {_header(p.read_bytes())[0] for p in AVRO_FILES if _record_name(p.read_bytes()) == name}
    assert len(headers) == 1  # one writer schema per record across v8, v9 and MDT timelines
    (header,) = headers
    # Field names, order, types, defaults, union order, namespaces and Java attributes, all at once.
    assert json.loads((SCHEMA_DIR / f"{name}.avsc").read_text()) == json.loads(header)
    assert schema_json(name) == header
    assert schema(name)["name"] == f"org.apache.hudi.avro.model.{name}"


def test_schema_files_are_exactly_the_named_records():
    assert sorted(p.stem for p in SCHEMA_DIR.glob("*.avsc")) == sorted(SCHEMA_NAMES + DATA_SCHEMA_NAMES)
    assert len(record_fields("HoodieCommitMetadata", "HoodieWriteStat")) == 31
    assert [f["name"] for f in record_fields("HoodieRequestedReplaceMetadata", "HoodieClusteringPlan")] == [
        "inputGroups", "strategy", "extraMetadata", "version", "preserveHoodieMetadata", "missingSchedulePartitions",
    ]  # fmt: skip
    with pytest.raises(ValueError):
        schema("HoodieCleanerPlan")


def test_decoded_clustering_plan_has_hudi_shape():
    path = FIXTURES / "mor_v9_txns_nonpart_nometa/.hoodie/timeline/20260307135937430.clustering.requested"
    record = decode_avro(path.read_bytes())
    plan = record["clusteringPlan"]
    assert record["operationType"] == "CLUSTER"
    assert plan["strategy"]["strategyClassName"].endswith("SparkSortAndSizeExecutionStrategy")
    assert [len(g["slices"]) for g in plan["inputGroups"]] == [4]
    assert plan["inputGroups"][0]["slices"][0]["dataFilePath"].startswith("file:/")


# ------------------------------------------------------------------------------------ commit metadata


@pytest.mark.parametrize("path", V6_JSON_FILES, ids=_rel)
def test_v6_json_commit_and_inflight_all_reencode_byte_identical(path):
    """All 12 v6 files (0.14/0.15 Jackson output, COW and MOR, completed and inflight) are byte-identical:
    key order, ' : ', [ { ... } ], { }, nulls and numbers are reproduced, so none needs an equal-value fallback."""
    data = path.read_bytes()
    meta = decode_commit_metadata(data, layout_version=1, source=str(path))
    assert set(meta) == {"partitionToWriteStats", "partitionToReplaceFileIds", "compacted", "extraMetadata", "operationType"}
    stats = [s for group in meta["partitionToWriteStats"].values() for s in group]
    assert stats and all(set(_write_stat()) <= set(s) for s in stats)
    assert encode_commit_metadata(meta, layout_version=1, replace=False) == data


AVRO_COMMITS = [p for p in AVRO_FILES if _record_name(p.read_bytes()) in ("HoodieCommitMetadata", "HoodieReplaceCommitMetadata")]


@pytest.mark.parametrize("path", AVRO_COMMITS, ids=_rel)
def test_avro_commit_metadata_roundtrip_identical_bytes_but_random_sync(path):
    data = path.read_bytes()
    name = _record_name(data)
    meta = decode_commit_metadata(data, layout_version=2, source=str(path))
    assert meta["compacted"] == (meta["operationType"] == "COMPACT")
    ours = encode_commit_metadata(meta, layout_version=2, replace=name == "HoodieReplaceCommitMetadata")
    assert encode_container(decode_avro(ours), schema_json(name), _header(data)[1]) == data


@pytest.mark.parametrize("path", AVRO_COMMITS, ids=_rel)
def test_avro_commit_metadata_as_v6_json_equal_decoded_value(path):
    """No Hudi JSON original exists for these, so the JSON rendering can only compare by value."""
    data = path.read_bytes()
    meta = decode_commit_metadata(data, layout_version=2)
    replace = _record_name(data) == "HoodieReplaceCommitMetadata"
    as_json = encode_commit_metadata(meta, layout_version=1, replace=replace)
    assert decode_commit_metadata(as_json, layout_version=1) == meta


def test_replacecommit_json_puts_replaced_ids_last_and_clustering_stats_print_jackson_numbers():
    stat = {"fileId": "f1", "path": "p/f1_0-1-2_T.parquet", "prevCommit": "null", "numWrites": 3,
            "partitionPath": "p", "numUpdates": 0, "runtimeStats": {"totalCreateTime": 7}}  # fmt: skip
    meta = {"partitionToWriteStats": {"p": [stat]}, "partitionToReplaceFileIds": {"p": ["a", "b"]},
            "compacted": False, "extraMetadata": {}, "operationType": "CLUSTER"}  # fmt: skip
    text = encode_commit_metadata(meta, layout_version=1, replace=True).decode()
    keys = [line.split('"')[1] for line in text.splitlines() if line.startswith('  "')]
    assert keys == ["partitionToWriteStats", "compacted", "extraMetadata", "operationType", "partitionToReplaceFileIds"]
    assert '"p" : [ "a", "b" ]' in text and '"extraMetadata" : { }' in text and not text.endswith("\n")
    # A Java long is never null in Jackson output: unset counters print 0, unset objects print null.
    assert '      "totalLogBlocks" : 0,\n' in text and '      "tempPath" : null,\n' in text
    assert '"totalScanTime" : 0,\n        "totalUpsertTime" : 0,\n        "totalCreateTime" : 7\n' in text
    assert text.index('"runtimeStats"') < text.index('"numUpdates" : 0')
    decoded = decode_commit_metadata(text.encode(), layout_version=1)
    assert decoded["partitionToReplaceFileIds"] == {"p": ["a", "b"]}
    assert decoded["partitionToWriteStats"]["p"][0]["numWrites"] == 3


def test_jackson_escapes_and_doubles():
    assert to_jackson_json({"k": "a\x01\x1f\t\"\\/é😀"}) == '{\n  "k" : "a\\u0001\\u001F\\t\\"\\\\/é😀"\n}'
    assert to_jackson_json([]) == "[ ]" and to_jackson_json({}) == "{ }"
    doubles = [1.0, 0.001, 1e-4, 1234567.0, 1e7, -2.5e-10, 100.0, float("nan")]
    assert to_jackson_json(doubles) == '[ 1.0, 0.001, 1.0E-4, 1234567.0, 1.0E7, -2.5E-10, 100.0, "NaN" ]'


def test_empty_commit_metadata_is_empty_dict():
    assert decode_commit_metadata(b"", layout_version=1) == {}
    assert decode_commit_metadata(b"", layout_version=2) == {}


# ------------------------------------------------------------------------------------------- properties


def _avro_values(typ, names: dict):
    """A strategy for any value valid under Avro type ``typ`` (the types Hudi's schemas use)."""
    if isinstance(typ, list):
        return st.one_of([_avro_values(t, names) for t in typ])
    if isinstance(typ, str):
        if typ in names:
            return _avro_values(names[typ], names)
        return {
            "null": st.none(), "boolean": st.booleans(), "string": st.text(max_size=12),
            "int": st.integers(-(2**31), 2**31 - 1), "long": st.integers(-(2**63), 2**63 - 1),
            "double": st.floats(allow_nan=False),
        }[typ]  # fmt: skip
    kind = typ["type"]
    if kind == "record":
        names[typ["name"]] = typ
        return st.fixed_dictionaries({f["name"]: st.deferred(lambda t=f["type"]: _avro_values(t, names)) for f in typ["fields"]})
    if kind == "array":
        return st.lists(_avro_values(typ["items"], names), max_size=3)
    if kind == "map":
        return st.dictionaries(st.text(max_size=8), _avro_values(typ["values"], names), max_size=3)
    return _avro_values(kind, names)


def _record_values(schema_name: str, record_name: str | None = None):
    fields = record_fields(schema_name, record_name)
    return _avro_values({"type": "record", "name": record_name or schema_name, "fields": fields}, {})


PLANS = st.builds(
    lambda record, plan: {**record, "clusteringPlan": plan},
    _record_values("HoodieRequestedReplaceMetadata"),
    _record_values("HoodieRequestedReplaceMetadata", "HoodieClusteringPlan"),
)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(PLANS)
def test_property_requested_replace_metadata_roundtrips_equal(record):
    assert decode_avro(encode_avro(record, "HoodieRequestedReplaceMetadata")) == record


@SETTINGS
@given(st.sampled_from(SCHEMA_NAMES).flatmap(lambda name: st.tuples(st.just(name), _record_values(name))))
def test_property_every_schema_roundtrips_equal(named):
    name, record = named
    assert decode_avro(encode_avro(record, name)) == record


# Fields HoodieWriteStat declares as Java `long` (never null in Jackson output), per the fixture JSON.
JAVA_LONGS = (
    "numWrites", "numDeletes", "numUpdateWrites", "numInserts", "totalWriteBytes", "totalWriteErrors",
    "totalLogRecords", "totalLogFilesCompacted", "totalLogSizeCompacted", "totalUpdatedRecordsCompacted",
    "totalLogBlocks", "totalCorruptLogBlock", "totalRollbackBlocks", "fileSizeInBytes",
)  # fmt: skip
LONGS = st.integers(-(2**63), 2**63 - 1)


def _commit_metadata(replace: bool, jackson: bool):
    stat = _record_values("HoodieCommitMetadata", "HoodieWriteStat")
    if jackson:
        runtime = st.none() | st.fixed_dictionaries({k: LONGS for k in ("totalScanTime", "totalCreateTime", "totalUpsertTime")})
        stat = st.builds(lambda s, longs, rt: {**s, **longs, "runtimeStats": rt},
                         stat, st.fixed_dictionaries({k: LONGS for k in JAVA_LONGS}), runtime)  # fmt: skip
    text = st.text(max_size=10)
    replaced = st.dictionaries(text, st.lists(text, max_size=3), max_size=3) if replace else st.just({})
    return st.fixed_dictionaries({
        "partitionToWriteStats": st.dictionaries(text, st.lists(stat, max_size=2), max_size=2),
        "partitionToReplaceFileIds": replaced,
        "compacted": st.booleans(),
        "extraMetadata": st.dictionaries(text, text, max_size=3),
        "operationType": st.none() | text,
    })  # fmt: skip


@SETTINGS
@given(st.booleans().flatmap(lambda r: st.tuples(st.just(r), _commit_metadata(r, jackson=False))))
def test_property_commit_metadata_roundtrips_equal_layout_2(case):
    replace, meta = case
    assert decode_commit_metadata(encode_commit_metadata(meta, layout_version=2, replace=replace), layout_version=2) == meta


@SETTINGS
@given(st.booleans().flatmap(lambda r: st.tuples(st.just(r), _commit_metadata(r, jackson=True))))
def test_property_commit_metadata_roundtrips_equal_layout_1(case):
    replace, meta = case
    data = encode_commit_metadata(meta, layout_version=1, replace=replace)
    assert decode_commit_metadata(data, layout_version=1) == meta
    assert encode_commit_metadata(decode_commit_metadata(data, layout_version=1), layout_version=1, replace=replace) == data


# ------------------------------------------------------------------------------------------- bad input

PLAN_FILE = FIXTURES / "mor_v9_txns_nonpart_nometa/.hoodie/timeline/20260307135937430.clustering.requested"


@pytest.mark.parametrize("cut", [4, 40, 1000, -200, -17, -1])
def test_truncated_avro_is_table_error_naming_source(cut):
    data = PLAN_FILE.read_bytes()[:cut]
    with pytest.raises(TableError, match=r"^/x/T\.clustering\.requested: .*expected an Avro object container") as err:
        decode_avro(data, source="/x/T.clustering.requested")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("data", [b"", b"hello", (FIXTURES / "cow_v6_nonpartitioned/.hoodie/20240418173551906.commit").read_bytes()])
def test_non_avro_bytes_are_table_error_naming_source(data):
    with pytest.raises(TableError, match=r"^/x/f: .*expected an Avro object container"):
        decode_avro(data, source="/x/f")


@pytest.mark.parametrize("count", [0, 2])
def test_container_without_exactly_one_record_is_table_error(count):
    out = io.BytesIO()
    record = decode_avro(PLAN_FILE.read_bytes())
    fastavro.writer(out, schema("HoodieRequestedReplaceMetadata"), [record] * count)
    with pytest.raises(TableError, match=rf"^/x/f: Avro container holds {count} records"):
        decode_avro(out.getvalue(), source="/x/f")


def test_commit_metadata_in_wrong_format_is_table_error():
    json_commit = (FIXTURES / "cow_v6_nonpartitioned/.hoodie/20240418173551906.commit").read_bytes()
    with pytest.raises(TableError, match=r"^/x/c: not an Avro file .*layout 2"):
        decode_commit_metadata(json_commit, layout_version=2, source="/x/c")
    for junk in (b"{not json", b"[1, 2]", b'{"partitionToWriteStats": {"": 3}}', b"\xff\xfe"):
        with pytest.raises(TableError, match=r"^/x/c: "):
            decode_commit_metadata(junk, layout_version=1, source="/x/c")
    # Like Hudi 1.x, layout 1 also accepts Avro content (its reader tries Avro first).
    avro_commit = AVRO_COMMITS[0].read_bytes()
    assert decode_commit_metadata(avro_commit, layout_version=1) == decode_commit_metadata(avro_commit, layout_version=2)


def _plan() -> dict:
    return decode_avro(PLAN_FILE.read_bytes())


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda r: r["clusteringPlan"]["inputGroups"][0].update(numOutputFileGroups="x"),
         r"field clusteringPlan\.inputGroups\[0\]\.numOutputFileGroups is 'x' \(str\); accepted: int or null"),
        (lambda r: r["clusteringPlan"]["inputGroups"][0]["slices"][2].update(fileId=7),
         r"field clusteringPlan\.inputGroups\[0\]\.slices\[2\]\.fileId is 7 \(int\); accepted: null or string"),
        (lambda r: r["clusteringPlan"]["inputGroups"][0]["metrics"].update(TOTAL_IO_MB="2"),
         r"field clusteringPlan\.inputGroups\[0\]\.metrics\['TOTAL_IO_MB'\] is '2' \(str\); accepted: double"),
        (lambda r: r["clusteringPlan"].update(preserveHoodieMetadata=1),
         r"field clusteringPlan\.preserveHoodieMetadata is 1 \(int\); accepted: null or boolean"),
        (lambda r: r["clusteringPlan"]["strategy"].update(strategyParam={}),
         r"field clusteringPlan\.strategy has unknown key 'strategyParam'; HoodieClusteringStrategy fields: "),
        (lambda r: r.update(version=True), r"field version is True \(bool\); accepted: int or null"),
        (lambda r: r.update(clusteringPlan=[]), r"field clusteringPlan is \[\] \(list\); accepted: null or record HoodieClusteringPlan"),
    ],
)  # fmt: skip
def test_plan_that_does_not_fit_schema_is_plan_error_naming_field(edit, message):
    record = _plan()
    edit(record)
    with pytest.raises(PlanError, match=r"^HoodieRequestedReplaceMetadata: " + message) as err:
        encode_avro(record, "HoodieRequestedReplaceMetadata")
    assert "\n" not in str(err.value)


def test_missing_required_field_is_plan_error():
    rollback = {"timeTakenInMillis": 1, "totalFilesDeleted": 0, "commitsRollback": [], "partitionMetadata": {}}
    with pytest.raises(PlanError, match=r"^HoodieRollbackMetadata: field startRollbackTime is missing; accepted: string"):
        encode_avro(rollback, "HoodieRollbackMetadata")
    with pytest.raises(PlanError, match=r"field timeTakenInMillis is 1180591620717411303424 \(int\); accepted: long$"):
        encode_avro({**rollback, "startRollbackTime": "1", "timeTakenInMillis": 2**70}, "HoodieRollbackMetadata")


def test_what_fastavro_would_let_through_is_a_plan_error_too():
    """fastavro decides the primitive types; codec.validate adds what fastavro's validation does not check."""
    from fastavro.validation import validate as fastavro_validate

    cases = [  # (edit, message): each record fastavro accepts, and encode_avro refuses
        (lambda r: r["clusteringPlan"]["strategy"].update(strategyParam={}), r"has unknown key 'strategyParam'"),
        (lambda r: r["clusteringPlan"]["inputGroups"][0]["slices"][0].update(fileId="f\ud800"),
         r"slices\[0\]\.fileId is 'f\\ud800' \(str\); accepted: null or string"),
        (lambda r: r["clusteringPlan"]["inputGroups"][0].update(slices=b""), r"inputGroups\[0\]\.slices is b'' \(bytes\)"),
        (lambda r: r["clusteringPlan"]["inputGroups"][0]["metrics"].update({"x\udc00": 1.0}), r"metrics is "),
    ]  # fmt: skip
    for edit, message in cases:
        record = _plan()
        edit(record)
        assert fastavro_validate(record, schema("HoodieRequestedReplaceMetadata"), raise_errors=False)
        with pytest.raises(PlanError, match=message):
            encode_avro(record, "HoodieRequestedReplaceMetadata")


def test_a_nullable_field_without_default_must_be_there_as_fastavro_strict_and_javas_builders_say():
    from fastavro.validation import validate as fastavro_validate

    record = _plan()
    del record["clusteringPlan"]["inputGroups"][0]["slices"][0]["fileId"]  # ["null", string], no default
    assert not fastavro_validate(record, schema("HoodieRequestedReplaceMetadata"), raise_errors=False, strict=True)
    with pytest.raises(PlanError, match=r"slices\[0\]\.fileId is missing; accepted: null or string$"):
        encode_avro(record, "HoodieRequestedReplaceMetadata")


@pytest.mark.parametrize("layout", [1, 2])
def test_bad_commit_metadata_is_plan_error_naming_field(layout):
    stat = _write_stat(fileId="f", numWrites="3")
    meta = {"partitionToWriteStats": {"p": [stat]}, "compacted": False, "extraMetadata": {}, "operationType": "CLUSTER"}
    with pytest.raises(PlanError, match=r"field partitionToWriteStats\['p'\]\[0\]\.numWrites is '3' \(str\); accepted: null or long"):
        encode_commit_metadata(meta, layout_version=layout, replace=False)
    with pytest.raises(PlanError, match="partitionToReplaceFileIds but replace=False"):
        encode_commit_metadata({"partitionToReplaceFileIds": {"p": ["f"]}}, layout_version=layout, replace=False)
    with pytest.raises(PlanError, match="unknown key 'partitionToWriteStat'"):
        encode_commit_metadata({"partitionToWriteStat": {}}, layout_version=layout, replace=True)
