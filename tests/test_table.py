"""The table layer against every real fixture, with hudi-rs as the reference reader."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest
from hudi import HudiTable

from hudi_cluster_core.cli import main
from hudi_cluster_core.errors import TableError
from hudi_cluster_core.table import load_table
from hudi_cluster_core.table.timeline import State, parse_instant_file

FIXTURES = Path(__file__).resolve().parent / "fixtures"  # tests/fixtures/README.md
MANIFEST = json.loads((FIXTURES / "MANIFEST.json").read_text())
TABLES = sorted(MANIFEST)


def writable_copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(FIXTURES / name, target)
    for path in [target, *target.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return target


@pytest.mark.parametrize("name", TABLES)
def test_latest_file_slices_equal_hudi_rs(name):
    base = str(FIXTURES / name)
    ours = sorted(
        (s.partition, s.file_id, s.base_file.name if s.base_file else None, tuple(l.name for l in s.log_files))
        for s in load_table(base).view().latest_file_slices()
    )
    theirs = sorted(
        (s.partition_path, s.file_id, s.base_file_name or None, tuple(s.log_file_names))
        for s in HudiTable(base).get_file_slices()
    )
    assert ours == theirs
    assert len(ours) == MANIFEST[name]["file_slices"]


@pytest.mark.parametrize("name", TABLES)
def test_version_and_type_as_properties_say(name):
    table = load_table(FIXTURES / name)
    assert table.config.version == MANIFEST[name]["table_version"]
    assert table.config.table_type == MANIFEST[name]["table_type"]
    assert table.config.checksum == int(table.config.props.get("hoodie.table.checksum", table.config.checksum))


@pytest.mark.parametrize("name", TABLES)
def test_show_json_is_the_contract(name, capsys):
    assert main(["show", str(FIXTURES / name), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert list(shown) == [
        "table_name", "table_type", "table_version", "file_slices", "pending_clustering", "completed_clustering",
    ]  # fmt: skip
    assert shown["table_version"] == MANIFEST[name]["table_version"]
    for file_slice in shown["file_slices"]:
        assert list(file_slice) == ["partition", "file_id", "base_instant", "base_file", "log_files"]
    assert shown["completed_clustering"] == MANIFEST[name]["clustering_instants"]
    assert shown["pending_clustering"] == []


def test_show_summary_names_partitions_and_services(capsys):
    assert main(["show", str(FIXTURES / "mor_v6_trips_8i1u")]) == 0
    out = capsys.readouterr().out
    assert "city=chennai" in out and "MERGE_ON_READ" in out and "1 with log files" in out
    assert "pending table services: none" in out


def test_v9_timeline_states_and_completion_times():
    timeline = load_table(FIXTURES / "mor_v9_txns_nonpart_nometa").timeline
    clustering = timeline.get("20260307135937430")
    assert (clustering.action, clustering.state, clustering.completion_time) == (
        "replacecommit", State.COMPLETED, "20260307135937805",
    )  # fmt: skip
    assert timeline.get("20260307135936824").action == "commit"  # a compaction completes as a commit
    assert [i.time for i in timeline.completed_clustering] == ["20260307135937430"]
    plan = timeline.clustering_plan("20260307135937430")
    assert plan["operationType"] == "CLUSTER" and len(plan["clusteringPlan"]["inputGroups"][0]["slices"]) == 4


def test_insert_overwrite_is_not_clustering():
    timeline = load_table(FIXTURES / "cow_v9_txns_simple_overwrite").timeline
    assert timeline.completed(("replacecommit",)) and timeline.completed_clustering == []
    assert timeline.clustering_plan("20260403184001282") is None


@pytest.mark.parametrize(
    "name, expected",
    [
        ("20240418173550988.commit", ("20240418173550988", "commit", State.COMPLETED, None)),
        ("20240418173550988.inflight", ("20240418173550988", "commit", State.INFLIGHT, None)),
        ("20240418173550988.commit.requested", ("20240418173550988", "commit", State.REQUESTED, None)),
        ("20260307135937430.clustering.inflight", ("20260307135937430", "clustering", State.INFLIGHT, None)),
        ("20260307135937430_20260307135937805.replacecommit",
         ("20260307135937430", "replacecommit", State.COMPLETED, "20260307135937805")),
        ("hoodie.properties", None), (".20240418173550988.commit.crc", None), ("20240418173550988.bogus", None),
    ],
)  # fmt: skip
def test_instant_file_names(name, expected):
    instant = parse_instant_file(name)
    assert (instant and (instant.time, instant.action, instant.state, instant.completion_time)) == expected


@pytest.mark.parametrize("name", ["cow_v6_nonpartitioned", "mor_v9_txns_nonpart_nometa"])
def test_new_instant_time_is_after_everything(name):
    timeline = load_table(FIXTURES / name).timeline
    new = timeline.new_instant_time()
    assert len(new) == 17 and new > timeline.max_timestamp()


def test_new_instant_time_when_the_clock_is_behind(tmp_path):
    table_dir = writable_copy("cow_v6_nonpartitioned", tmp_path)
    (table_dir / ".hoodie" / "29991231235959999.commit.requested").write_bytes(b"")
    assert load_table(table_dir).timeline.new_instant_time() == "30000101000000000"


def test_a_missing_path_is_said_to_not_exist(tmp_path, capsys):
    missing = tmp_path / "no" / "such" / "table"
    assert main(["show", str(missing)]) == 2
    err = capsys.readouterr().err
    assert f"{missing} does not exist" in err and "not a Hudi table" not in err and "Traceback" not in err
    assert not missing.parent.exists()


def test_not_a_hudi_table(tmp_path, capsys):
    assert main(["show", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is not a Hudi table" in err and str(tmp_path) in err and "Traceback" not in err


def test_missing_properties(tmp_path, capsys):
    table_dir = writable_copy("cow_v6_nonpartitioned", tmp_path)
    (table_dir / ".hoodie" / "hoodie.properties").unlink()
    assert main(["show", str(table_dir)]) == 2
    assert "hoodie.properties is missing" in capsys.readouterr().err


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda t: t.replace("hoodie.table.version=6", "hoodie.table.version=5"), "hoodie.table.version=5 is not supported"),
        (lambda t: t.replace("hoodie.table.version=6", "hoodie.table.version=x"), "is not a number"),
        (lambda t: t.replace("hoodie.table.name=v6_nonpartitioned", "hoodie.table.name=other"), "checksum"),
        (lambda t: "\n".join(l for l in t.splitlines() if not l.startswith("hoodie.table.name")), "'hoodie.table.name' is missing"),
    ],
)  # fmt: skip
def test_corrupt_properties(tmp_path, edit, message):
    table_dir = writable_copy("cow_v6_nonpartitioned", tmp_path)
    props = table_dir / ".hoodie" / "hoodie.properties"
    props.write_text(edit(props.read_text()))
    with pytest.raises(TableError, match=message):
        load_table(table_dir)


def test_unreadable_timeline_file_is_named(tmp_path, capsys):
    table_dir = writable_copy("mor_v9_txns_nonpart_nometa", tmp_path)
    plan = table_dir / ".hoodie" / "timeline" / "20260307135937430.clustering.requested"
    plan.write_bytes(plan.read_bytes()[:100])
    (table_dir / ".hoodie" / "timeline" / "20260307135937430_20260307135937805.replacecommit").unlink()
    assert main(["show", str(table_dir), "--json"]) == 2
    err = capsys.readouterr().err
    assert "20260307135937430.clustering.requested" in err and "Traceback" not in err
