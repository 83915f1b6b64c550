"""The layout report's overlap figures equal Apache Hudi 1.1.1's ``show_metadata_column_stats_overlap``, on a table
Hudi wrote with the metadata table's column stats; footers and the index give the same figures."""

from __future__ import annotations

import json
import shutil

import pytest

from hudi_cluster_core.cli import main
from hudi_cluster_core.report.layout_report import build_report
from hudi_cluster_core.table import load_table
from tests.support.apache_hudi import make_small_file_table

# Hudi's procedure compares values by the Spark type's name; these are the types it orders (it throws on decimals)
COLUMNS = ("c_int", "c_long", "c_double", "c_string", "c_bool", "c_date", "c_timestamp", "id", "ts")


@pytest.fixture(scope="module")
def hudi_table(spark, tmp_path_factory):
    """(path, Hudi's procedure rows): a COW table of 4 small commits, metadata table and column stats on.

    Non-partitioned: on a partitioned table Hudi 1.1.1's procedure returns no row at all (observed; its file-system
    view is built from a listing of ``<base path>/**``, which finds the partition directories, not their files)."""
    base = str(tmp_path_factory.mktemp("layout_report") / "t")
    make_small_file_table(spark, base, batches=4, rows_per_batch=15, metadata_enable=True,
                          partitioned=False, extra_options={"hoodie.metadata.index.column.stats.enable": "true"})  # fmt: skip
    name = "layout_report_overlap"
    spark.sql(f"create table {name} using hudi location '{base}'")
    try:
        rows = spark.sql(f"call show_metadata_column_stats_overlap(table => '{name}', "
                         f"targetColumns => '{','.join(COLUMNS)}')").collect()  # fmt: skip
    finally:
        spark.sql(f"drop table if exists {name}")
    return base, [r.asDict() for r in rows]


def _ours(base: str, source: str) -> dict[tuple[str, str], tuple]:
    report = build_report(load_table(base), list(COLUMNS), source)
    assert report.source == source
    return {(p.partition, c.column): (c.average_overlap, c.max_overlap, p.files, c.p50, c.p75, c.p95, c.p99)
            for p in report.partitions for c in p.columns}  # fmt: skip


def test_overlap_figures_equal_apache_hudis_procedure(hudi_table):
    base, rows = hudi_table
    hudis = {(r["Partition path"], r["Field name"]): (r["Average overlap"], r["Maximum file overlap"],
                                                      r["Total file number"], r["50% overlap"], r["75% overlap"],
                                                      r["95% overlap"], r["99% overlap"]) for r in rows}  # fmt: skip
    assert {c for _, c in hudis} == set(COLUMNS) and {p for p, _ in hudis} == {""}
    assert any(figures[1] > 1 for figures in hudis.values()), "the table should have overlapping files"
    for source in ("metadata", "footers"):
        ours = _ours(base, source)
        assert set(ours) == set(hudis)
        for key, figures in hudis.items():
            assert ours[key][0] == pytest.approx(figures[0], abs=1e-12), (source, key)
            assert ours[key][1:] == figures[1:], (source, key)


def test_json_output_has_exactly_the_documented_fields(hudi_table, capsys, tmp_path):
    base, _ = hudi_table
    copy = tmp_path / "t"
    shutil.copytree(base, copy)
    assert main(["report", str(copy), "--columns", "c_int,c_string", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert list(printed) == ["partitions"]
    for partition in printed["partitions"]:
        assert list(partition) == ["partition", "files", "columns"] and partition["files"] == 4
        assert [c["column"] for c in partition["columns"]] == ["c_int", "c_string"]
        for column in partition["columns"]:
            assert list(column) == ["column", "average_overlap", "max_overlap", "p50", "p75", "p95", "p99",
                                    "point_query_files", "range_query_files"]  # fmt: skip
            assert 1.0 <= column["point_query_files"] <= column["range_query_files"] <= partition["files"]


TARGET = "hoodie.clustering.plan.strategy.target.file.max.bytes"


def test_files_per_query_predicted_by_a_dry_run_match_the_run(hudi_table, spark, tmp_path):
    """On a copy of the Hudi-written table: the dry run predicts files per query on the sort column before -> after;
    the run then measures the new files' footers, and the measured figures agree with the prediction."""
    from hudi_cluster_core.api import cluster

    base, _ = hudi_table
    copy = str(tmp_path / "t")
    shutil.copytree(base, copy)
    # a small bloom filter, so that a target a third of the rows' bytes is larger than a file's footer; the target
    # from the output estimate of one file (its rows and one footer), so that the plan writes several files
    options = {"hoodie.clustering.plan.strategy.sort.columns": "c_int", "hoodie.index.bloom.num_entries": "100",
               "hoodie.bloom.index.filter.dynamic.max.entries": "200"}  # fmt: skip
    whole = cluster(copy, "scheduleAndExecute", {**options, TARGET: str(1 << 30)}, dry_run=True)
    options[TARGET] = str(sum(g["predicted_output_bytes"] for g in whole.groups) // 3 + 1)
    planned = cluster(copy, "scheduleAndExecute", options, dry_run=True)
    [predicted] = planned.to_dict()["files_per_query"]
    assert predicted["column"] == "c_int" and planned.output_files >= 3, planned.output_files
    before, after = predicted["point_query_files"]
    assert before > 2.5 and after < 1.2, predicted  # 4 overlapping files -> 3 files of contiguous ranges
    done = cluster(copy, "scheduleAndExecute", options, spark=spark)
    [measured] = done.to_dict()["files_per_query"]
    assert measured["point_query_files"][0] == before
    assert measured["point_query_files"][1] == pytest.approx(after, abs=0.25), (measured, predicted)
    assert measured["range_query_files"][1] == pytest.approx(predicted["range_query_files"][1], abs=0.25)
