"""Issue 12, items 1-2: bounded memory per task (spill to local disk, files rolled at the target size) and a
large group split by sort-key range across Spark tasks.

The spill path is forced with a tiny ``hudi.cluster.task.memory.bytes``, the split with a tiny
``hudi.cluster.task.split.min.bytes``, on tables Apache Hudi 1.1.1 wrote; Apache Hudi and hudi-rs must read the
same rows before and after, every file must be sorted, the files of a group contiguous runs of its order, and
each file a complete Hudi base file (bloom filter and min/max keys of exactly its rows)."""

from __future__ import annotations

import math
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hudi_cluster_core.api import cluster
from hudi_cluster_core.errors import ConfigError
from hudi_cluster_core.failpoints import FAIL_FIRST_ATTEMPT_ENV
from hudi_cluster_core.hashing.bloom_filter import BLOOM_FILTER_FOOTER_KEY, bloom_might_contain_many
from hudi_cluster_core.sort.curves import sort_key_table, sort_rows
from hudi_cluster_core.plan.avro_plan import InputSlice, PlanGroup
from hudi_cluster_core.sort import out_of_core, spill
from hudi_cluster_core.sort.key_ranges import choose_boundaries, range_of_rows, stride_positions
from hudi_cluster_core.run.task import GroupTask
from hudi_cluster_core.table.naming import parse_base_file
from hudi_cluster_core.write.base_file import ParquetOptions
from tests.support.apache_hudi import (
    assert_upsert_found_keys, hudi_upsert, make_small_file_table, make_updates, read_hudi_snapshot, small_file_rows,
    write_hudi_table,
)  # fmt: skip
from hudi_cluster_core.table import load_table
from tests.support.readers import assert_same_rows, hudi_rs_file_slices, read_hudi_rs
from hudi_cluster_core.writer.append import append
from tests.support.runs import cli_command, cli_env, table_problems

INSTANT = "20260101000000000"
SORT_KEY = "hoodie.clustering.plan.strategy.sort.columns"
TARGET_KEY = "hoodie.clustering.plan.strategy.target.file.max.bytes"


# ------------------------------------------------------------------------------ boundaries and ranges (hypothesis)


def _python_key(row: dict, names: list[str]) -> tuple:
    """A key row as Python compares it: validity flags before values; NaN above every number."""
    out = []
    for name in names:
        value = row[name]
        if isinstance(value, float) and math.isnan(value):
            out.append((1, 0.0))
        else:
            out.append((0, value) if value is not None else (0, 0))
    return tuple(out)


key_values = st.one_of(
    st.lists(st.one_of(st.none(), st.integers(-5, 5)), min_size=0, max_size=60).map(lambda v: pa.array(v, pa.int64())),
    st.lists(st.one_of(st.none(), st.just(float("nan")), st.floats(-3, 3)), max_size=60).map(
        lambda v: pa.array(v, pa.float64())
    ),
    st.lists(st.one_of(st.none(), st.text("abc", max_size=3)), max_size=60).map(lambda v: pa.array(v, pa.string())),
)


@settings(max_examples=80, deadline=None)
@given(first=key_values, second_seed=st.integers(0, 3), ranges=st.integers(1, 9), split=st.integers(0, 60))
def test_ranges_cover_every_row_in_key_order_and_never_split_equal_keys(first, second_seed, ranges, split):
    n = len(first)
    second = pa.array(np.random.default_rng(second_seed).integers(0, 3, n), pa.int64())
    table = pa.table({"a": first, "b": second})
    keys = sort_key_table(table, ["a", "b"], "linear")
    # boundaries from a sample (a prefix of the rows), applied to every row
    boundaries = choose_boundaries(keys.slice(0, min(split, n)), ranges)
    assert boundaries.num_rows <= max(0, ranges - 1)
    found = range_of_rows(keys, boundaries)
    assert found.shape == (n,) and (found >= 0).all() and (found <= boundaries.num_rows).all()
    names = keys.column_names
    bounds = [_python_key(r, names) for r in boundaries.to_pylist()]
    assert bounds == sorted(set(bounds)), "boundaries ascend and are distinct"
    for row, got in zip(keys.to_pylist(), found):
        key = _python_key(row, names)
        assert got == sum(b <= key for b in bounds), (row, got, bounds)


@settings(max_examples=30, deadline=None)
@given(values=st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=200), ranges=st.integers(2, 8),
       layout=st.sampled_from(["z-order", "hilbert"]))  # fmt: skip
def test_curve_ranges_follow_the_curve_order(values, ranges, layout):
    rng = np.random.default_rng(len(values))
    table = pa.table({"x": pa.array(values, pa.int64()), "y": pa.array(rng.normal(0, 9, len(values)))})
    keys = sort_key_table(table, ["x", "y"], layout)
    found = range_of_rows(keys, choose_boundaries(keys, ranges))
    ordered = sort_rows(table.append_column("range", pa.array(found)), ["x", "y"], layout)
    assert (np.diff(ordered.column("range").to_numpy()) >= 0).all(), "a later range holds an earlier curve key"


# ---------------------------------------------------------------------- the external sort in-process (no Spark)


def meta_rows(keys: list[str], values) -> pa.Table:
    n = len(keys)
    text = pa.string()
    return pa.table({
        "_hoodie_commit_time": pa.array(["20250101000000000"] * n, text),
        "_hoodie_commit_seqno": pa.array([f"s{i}" for i in range(n)], text),
        "_hoodie_record_key": pa.array(keys, text), "_hoodie_partition_path": pa.array(["p"] * n, text),
        "_hoodie_file_name": pa.array(["old"] * n, text),
        "v": pa.array(values, pa.float64()), "w": pa.array([len(k) % 3 for k in keys], pa.int32()),
    })  # fmt: skip


def group_over(tmp_path: Path, parts: list[pa.Table], **fields) -> GroupTask:
    slices = []
    (tmp_path / "p").mkdir(parents=True, exist_ok=True)
    for n, part in enumerate(parts):
        name = f"f{n}-0_0-1-1_20250101000000000.parquet"
        pq.write_table(part, tmp_path / "p" / name, row_group_size=17)
        slices.append(InputSlice("p", parse_base_file(name, 0).file_id, str(tmp_path / "p" / name)))
    group = PlanGroup(0, "p", tuple(slices), 1)
    fields.setdefault("options", ParquetOptions(compression="snappy"))
    return GroupTask(str(tmp_path), INSTANT, group, None, None, **fields)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.one_of(st.none(), st.just(float("nan")), st.floats(-50, 50)), min_size=0, max_size=400),
       units=st.integers(1, 3), files=st.integers(1, 4), layout=st.sampled_from(["linear", "z-order"]))  # fmt: skip
def test_spilled_units_together_hold_every_row_once_in_order(tmp_path_factory, values, units, files, layout):
    root = tmp_path_factory.mktemp("spill")
    keys = [f"k{i:04d}" for i in range(len(values))]
    rows = meta_rows(keys, values)
    cuts = np.linspace(0, len(values), files + 1).astype(int)
    parts = [rows.slice(a, b - a) for a, b in zip(cuts, cuts[1:])]
    columns = ["v", "w"]
    written = []
    for unit in range(units):
        # 1 KiB of budget: every unit cuts its share into several ranges spilled to disk
        task = group_over(root, parts, memory_budget=1024, unit=unit, units=units, write_token=f"{unit}-1-1",
                          target_file_max_bytes=2048, spill_dir=str(root))  # fmt: skip
        for stat in task.write_sorted(columns, layout):
            written.append(pq.read_table(root / stat["path"]))
    assert [p.name for p in root.iterdir() if p.name.startswith("hudi-cluster-spill-")] == [], "spill dir left"
    out = pa.concat_tables(written)
    assert sorted(out.column("_hoodie_record_key").to_pylist()) == keys
    got = sort_key_table(out, columns, layout).to_pylist()
    assert got == sort_key_table(sort_rows(out, columns, layout), columns, layout).to_pylist() or _nan_equal(
        got, sort_key_table(sort_rows(out, columns, layout), columns, layout).to_pylist()
    ), "files in unit order are not one sorted run"


def _nan_equal(a: list[dict], b: list[dict]) -> bool:
    def norm(row):
        return tuple("nan" if isinstance(v, float) and math.isnan(v) else v for v in row.values())

    return [norm(r) for r in a] == [norm(r) for r in b]


def test_rolled_files_are_near_the_target_with_their_own_footers(tmp_path):
    n = 6000
    rng = np.random.default_rng(5)
    rows = meta_rows([f"key-{i:06d}" for i in rng.permutation(n)], rng.normal(0, 1, n))
    target = 24 * 1024
    # a small bloom filter: at Hudi's sizes its text alone (~431 KB) is larger than this target
    options = ParquetOptions(compression="gzip", bloom_num_entries=200, bloom_dynamic_max_entries=400)
    task = group_over(tmp_path, [rows], target_file_max_bytes=target, options=options)
    stats = task.write(rows)
    assert len(stats) >= 4 and sum(s["numWrites"] for s in stats) == n
    for index, stat in enumerate(stats):
        path = tmp_path / stat["path"]
        size = path.stat().st_size
        assert size <= target, (index, size)  # the whole file, footer included, within the target
        if index < len(stats) - 1:  # all but the last fill it closely
            assert 0.85 * target <= size, (index, size, data_bytes(path))
        assert_footer_matches(path)


def data_bytes(path) -> int:
    meta = pq.read_metadata(path)
    return sum(meta.row_group(g).column(c).total_compressed_size
               for g in range(meta.num_row_groups) for c in range(meta.num_columns))  # fmt: skip


def assert_footer_matches(path) -> None:
    footer = {k.decode(): v.decode() for k, v in pq.read_metadata(path).metadata.items()}
    keys = pq.read_table(path, columns=["_hoodie_record_key"]).column(0).to_pylist()
    name = Path(path).name
    assert set(pq.read_table(path, columns=["_hoodie_file_name"]).column(0).to_pylist()) <= {name}
    if keys:
        assert footer["hoodie_min_record_key"] == min(keys) and footer["hoodie_max_record_key"] == max(keys)
        assert bloom_might_contain_many(footer[BLOOM_FILTER_FOOTER_KEY], keys).all()


def test_bad_memory_settings_are_one_clear_error_before_anything_is_written(tmp_path):
    with pytest.raises(ConfigError, match=r"^hudi.cluster.task.memory.bytes='1g' \(overrides\): not a whole number of "
                                          r"bytes; accepted: a whole number of bytes from 1024 to \d+ \(plain bytes"):
        cluster(tmp_path / "no-table", "scheduleAndExecute", {"hudi.cluster.task.memory.bytes": "1g"})
    with pytest.raises(ConfigError, match="hudi.cluster.task.split.min.bytes='12' .*out of range"):
        cluster(tmp_path / "no-table", "scheduleAndExecute", {"hudi.cluster.task.split.min.bytes": "12"})
    assert out_of_core.memory_budget({}, "1g") == 768 * 1024**2 < out_of_core.memory_budget({}) == 1024**3  # spark.executor.pyspark.memory caps it


# ------------------------------------------------------------------- end to end on Spark, tables by Apache Hudi


@pytest.fixture(scope="module")
def cow_table(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("cow") / "t"
    make_small_file_table(spark, str(base), batches=5, rows_per_batch=120, partitioned=False)
    return base


@pytest.fixture(scope="module")
def mor_table(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("mor") / "t"
    rows = make_small_file_table(spark, str(base), batches=4, rows_per_batch=100, partitioned=False,
                                 table_type="MERGE_ON_READ")  # fmt: skip
    hudi_upsert(spark, str(base), make_updates(rows.slice(0, 150)), table_type="MERGE_ON_READ", partition_field="")
    return base


def fresh_copy(source: Path, tmp_path: Path) -> str:
    target = tmp_path / "t"
    shutil.copytree(source, target)
    return str(target)


def new_files(base: str) -> list[Path]:
    return [Path(base) / s["base_file"] for s in hudi_rs_file_slices(base) if s.get("base_file")]


def assert_group_order(files: list[Path], columns: list[str], layout: str) -> None:
    """Every file sorted; the files (by first key) one run of the order, no two overlapping."""
    schema_names = pq.read_schema(files[0]).names
    runs = []
    for path in files:
        table = pq.read_table(path)
        keys = [tuple(r.values()) for r in sort_key_table(table, columns, layout, field_names=schema_names).to_pylist()]
        assert all(a <= b for a, b in zip(keys, keys[1:])), f"{path.name} is not sorted"
        if keys:
            runs.append((keys[0], keys[-1], path.name))
    runs.sort()
    for (_, last, first_name), (start, _, second_name) in zip(runs, runs[1:]):
        assert last <= start, f"{first_name} and {second_name} overlap in the {layout} order"


def tasks_of(files: list[Path]) -> set[str]:
    return {path.name.split("_")[1].split("-")[0] for path in files}  # the Spark partition of the write token


@pytest.mark.parametrize(("fixture", "columns", "layout"), [
    ("cow_table", ["c_int", "ts"], "linear"),
    ("mor_table", ["c_long", "c_double"], "z-order"),
])  # fmt: skip
def test_spilled_group_keeps_rows_order_file_sizes_and_footers(spark, request, tmp_path, fixture, columns, layout):
    base = fresh_copy(request.getfixturevalue(fixture), tmp_path)
    before = {"hudi": read_hudi_snapshot(spark, base), "hudi-rs": read_hudi_rs(base)}
    budget, target = 8192, 16 * 1024
    result = cluster(base, "scheduleAndExecute", {
        SORT_KEY: ",".join(columns), "hoodie.layout.optimize.strategy": layout, TARGET_KEY: str(target),
        "hudi.cluster.task.memory.bytes": str(budget),
        # a small bloom filter: at Hudi's sizes its text alone (~431 KB) is larger than this target
        "hoodie.index.bloom.num_entries": "200", "hoodie.bloom.index.filter.dynamic.max.entries": "400",
    }, spark=spark)  # fmt: skip
    assert result.completed_file and len(result.groups) == 1
    after = {"hudi": read_hudi_snapshot(spark, base), "hudi-rs": read_hudi_rs(base)}
    for reader in before:
        assert_same_rows(before[reader], after[reader], labels=(f"{reader} before", f"{reader} after"))
    files = new_files(base)
    assert sorted(str(f.relative_to(base)) for f in files) == sorted(result.groups[0]["output_files"])
    # the group's rows in memory are many budgets: it went through the spill path, several ranges
    assert result.groups[0]["input_bytes"] > budget // out_of_core.RANGE_SHARE
    assert_group_order(files, columns, layout)
    # whole files, footers included, within the target; files fill most of it (at a 16 KiB target the footer
    # reserve the writer keeps, statistics and row groups, is a third of a file), but for each task's last one and
    # at most one more per task (seen on the z-order MOR case since files keep within the target, footer included;
    # why that one file ends early is not yet known: the plan-holds work tracks it)
    sizes = [f.stat().st_size for f in files]
    assert len(files) >= 2 and sum(size < 0.6 * target for size in sizes) <= 2 * len(tasks_of(files)), sizes
    assert all(size <= target for size in sizes), sizes
    for path in files:
        assert_footer_matches(path)
    if fixture == "cow_table":  # Apache Hudi's bloom index finds every key through the new footers
        updates = make_updates(small_file_rows(0, 30))
        stats = hudi_upsert(spark, base, updates, partition_field="")
        assert_upsert_found_keys(spark, base, updates, stats, rows_before=before["hudi"].num_rows)


@pytest.mark.parametrize(("read_parallelism", "layout"), [(None, "linear"), (None, "hilbert"), ("1", "linear")])
def test_a_large_group_is_split_by_key_range_across_spark_tasks(spark, cow_table, tmp_path, read_parallelism, layout):
    base = fresh_copy(cow_table, tmp_path)
    before = read_hudi_rs(base)
    options = {
        SORT_KEY: "c_int,ts", "hoodie.layout.optimize.strategy": layout, TARGET_KEY: str(16 * 1024),
        "hudi.cluster.task.split.min.bytes": "1024",  # a small table counts as large
    }
    if read_parallelism:
        options["hoodie.clustering.group.read.parallelism"] = read_parallelism
    result = cluster(base, "scheduleAndExecute", options, spark=spark)
    assert result.completed_file and len(result.groups) == 1
    files = new_files(base)
    expected_tasks = int(spark.sparkContext.defaultParallelism) if read_parallelism is None else 1
    assert expected_tasks >= 2 or read_parallelism
    assert len(tasks_of(files)) == expected_tasks, [f.name for f in files]
    assert_group_order(files, ["c_int", "ts"], layout)
    assert_same_rows(before, read_hudi_rs(base), labels=("hudi-rs before", "hudi-rs after"))
    assert_same_rows(read_hudi_snapshot(spark, base), read_hudi_rs(base), labels=("hudi", "hudi-rs"))


def test_a_retried_range_task_leaves_no_stray_file(tmp_path):
    """Every split task fails once after its first file (Spark retries it, ``local[2,2]``): the commit deletes the
    failed attempts' files (they have markers, no write stat), and the rows are those before."""
    base = str(tmp_path / "t")
    for batch in range(4):  # one partition: one group, split in two
        append(base, small_file_rows(batch * 200, 200, seed=3), table_name="retry", record_key="id",
               precombine_field="ts", table_version=9)  # fmt: skip
    before = read_hudi_rs(base)
    env = {**cli_env(), FAIL_FIRST_ATTEMPT_ENV: "task-after-first-file"}
    command = cli_command(base, "--spark-master", "local[2,2]", "--hoodie-conf", "hudi.cluster.task.split.min.bytes=1024",
                          "--hoodie-conf", f"{TARGET_KEY}=8192", "--hoodie-conf", "hudi.cluster.task.memory.bytes=4096")  # fmt: skip
    run = subprocess.run(command, env=env, text=True, capture_output=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "written by a failed task attempt" in run.stderr  # the first attempts failed after a file
    assert table_problems(base) == []
    clustering = load_table(base).timeline.completed(("replacecommit",))[-1].time
    written = {p.name for p in Path(base).rglob(f"*_{clustering}.parquet") if ".hoodie" not in p.parts}
    committed = {s["base_file"] for s in hudi_rs_file_slices(base) if s["base_file"].endswith(f"_{clustering}.parquet")}
    assert written == committed and len(tasks_of([Path(n) for n in committed])) == 2, (written, committed)
    assert_same_rows(before, read_hudi_rs(base), labels=("hudi-rs before", "hudi-rs after"))


# ----------------------------------------------- whole-group paths of the plugins, through the bounded path


def spill_files_opened(monkeypatch) -> list[str]:
    """Records every spill file a :class:`RangeSpill` opens (in this process)."""
    opened: list[str] = []
    original = spill.RangeSpill._writer

    def counting(self, bucket):
        if bucket not in self.writers:
            opened.append(f"{self.prefix}-{bucket}")
        return original(self, bucket)

    monkeypatch.setattr(spill.RangeSpill, "_writer", counting)
    return opened


def shuffled_group(tmp_path: Path, n: int = 3000, files: int = 3, **fields) -> tuple[GroupTask, pa.Table]:
    rng = np.random.default_rng(11)
    rows = meta_rows([f"key-{i:05d}" for i in rng.permutation(n)], rng.normal(0, 1, n))
    cuts = np.linspace(0, n, files + 1).astype(int)
    return group_over(tmp_path, [rows.slice(a, b - a) for a, b in zip(cuts, cuts[1:])], **fields), rows


def test_single_file_sort_spills_past_the_budget_into_one_sorted_file(tmp_path, monkeypatch):
    from hudi_cluster_single_file_sort import SingleFileSortExecutionStrategy

    from hudi_cluster_core.sdk import SortAndSizeParams

    opened = spill_files_opened(monkeypatch)
    params = SortAndSizeParams.model_validate({SORT_KEY: "v,w"})
    # 16 KiB of budget for ~300 KiB of rows in Arrow, and a target the one file passes many times over
    task, rows = shuffled_group(tmp_path, memory_budget=16 * 1024, target_file_max_bytes=4096, spill_dir=str(tmp_path))
    task = replace(task, params=params)
    stats = SingleFileSortExecutionStrategy().execute_group(task)
    assert len(stats) == 1 and len(opened) >= 4, opened
    out = pq.read_table(tmp_path / stats[0]["path"])
    assert sorted(out.column("_hoodie_record_key").to_pylist()) == sorted(rows.column("_hoodie_record_key").to_pylist())
    assert out.column("v").to_pylist() == sort_rows(rows, ["v", "w"], "linear").column("v").to_pylist()
    assert_footer_matches(tmp_path / stats[0]["path"])
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("hudi-cluster-spill-")]


@pytest.mark.parametrize("curve", ["z-order", "hilbert"])
def test_sample_curve_spills_past_the_budget_in_the_order_of_its_sample(tmp_path, monkeypatch, curve):
    from hudi_cluster_space_curve import SpaceCurveExecutionStrategy
    from hudi_cluster_space_curve.sample import SampleCurveKey

    opened = spill_files_opened(monkeypatch)
    settings_ = {"hoodie.layout.optimize.strategy": curve, "hoodie.layout.optimize.curve.build.method": "SAMPLE",
                 "hoodie.layout.optimize.build.curve.sample.size": "500"}  # fmt: skip
    task, rows = shuffled_group(tmp_path, memory_budget=16 * 1024, raw_params={SORT_KEY: "v,w"}, settings=settings_,
                                target_file_max_bytes=8192, spill_dir=str(tmp_path))  # fmt: skip
    stats = SpaceCurveExecutionStrategy().execute_group(task)
    assert len(opened) >= 4 and len(stats) >= 3, (opened, stats)
    out = pa.concat_tables([pq.read_table(tmp_path / s["path"]) for s in stats])  # files in the order written
    assert sorted(out.column("_hoodie_record_key").to_pylist()) == sorted(rows.column("_hoodie_record_key").to_pylist())
    # the sample the out-of-core path draws: 500 rows evenly spaced over the base files, in slice order
    sample = rows.select(["v", "w"]).take(pa.array(stride_positions(rows.num_rows, 500)))
    key = SampleCurveKey(["v", "w"], curve, 500, 0).with_sample(sample)
    words = key.keys(out).to_pylist()
    assert [tuple(w.values()) for w in words] == sorted(tuple(w.values()) for w in words), "files out of curve order"
    assert len({tuple(w.values()) for w in words}) > 50  # the ranks spread the rows over many curve cells


@pytest.fixture(scope="module")
def mor_slice_table(spark, tmp_path_factory):
    """One file group by Apache Hudi: a base file of 3000 rows, then log files with 600 updates and 100 deletes."""
    base = str(tmp_path_factory.mktemp("mor-slice") / "t")
    rows = small_file_rows(0, 3000, seed=2)
    no_compaction = {"hoodie.compact.inline": "false"}
    for data, operation in ((rows, "insert"), (make_updates(rows.slice(0, 600)), "upsert"), (rows.slice(1000, 100), "delete")):
        write_hudi_table(spark, base, data, table_type="MERGE_ON_READ", partition_field="", operation=operation,
                         extra_options=no_compaction)  # fmt: skip
    return base


def test_a_mor_slice_streams_merged_never_whole(mor_slice_table, tmp_path, monkeypatch):
    """Apache Hudi's MOR slice (base file + log files with updates and deletes) goes through the spill path
    merged batch by batch by hudi-rs's streaming reader: never read whole, the same rows as the whole merge."""
    from hudi_cluster_core.run.slice_reader import SliceReader

    base = fresh_copy(Path(mor_slice_table), tmp_path)
    found = [s for s in hudi_rs_file_slices(base) if s["log_files"] and s["base_file"]]
    assert found, "the fixture has a base file with log files"
    mor = InputSlice("", found[0]["file_id"], str(Path(base) / found[0]["base_file"]),
                     tuple(str(Path(base) / name) for name in found[0]["log_files"]))  # fmt: skip
    task = GroupTask(base, "20990101000000000", PlanGroup(0, "", (mor,), 1), None, None, memory_budget=8192,
                     target_file_max_bytes=16 * 1024, spill_dir=str(tmp_path))  # fmt: skip
    whole = task.slice_reader().read(mor)  # the whole-slice merge, as a group in memory reads it
    opened = spill_files_opened(monkeypatch)
    monkeypatch.setattr(SliceReader, "read", lambda self, s: pytest.fail("a whole slice was merged"))
    stats = task.write_sorted(["c_long", "c_double"], "z-order")
    assert len(opened) >= 2 and len(stats) >= 2, (opened, stats)
    out = pa.concat_tables([pq.read_table(Path(base) / s["path"]) for s in stats])
    assert whole.num_rows == 2900 and sum(str(v).startswith("upd-") for v in whole.column("c_string").to_pylist()) == 600
    assert_same_rows(whole.drop_columns(["_hoodie_file_name"]), out.drop_columns(["_hoodie_file_name"]),
                     labels=("whole-slice merge", "streamed"))  # fmt: skip
    assert_group_order([Path(base) / s["path"] for s in stats], ["c_long", "c_double"], "z-order")


def test_consistent_bucket_children_spill_past_the_budget_each_one_sorted_file(tmp_path, monkeypatch):
    from hudi_cluster_consistent_bucket.execution import ConsistentBucketExecutionParams, write_children
    from hudi_cluster_consistent_bucket.hashing import REPLACE, Node, record_hash

    opened = spill_files_opened(monkeypatch)
    task, rows = shuffled_group(tmp_path, memory_budget=16 * 1024, spill_dir=str(tmp_path))
    task = replace(task, params=ConsistentBucketExecutionParams.model_validate({SORT_KEY: "v"}))
    children = [Node(2**30, "child-a", REPLACE), Node(2**31 - 1, "child-b", REPLACE)]
    stats = write_children(task, children, ["_hoodie_record_key"], None)
    assert len(opened) >= 4 and [s["fileId"] for s in stats] == ["child-a-0", "child-b-0"], (opened, stats)
    for stat, child in zip(stats, children):
        out = pq.read_table(tmp_path / stat["path"])
        keys = out.column("_hoodie_record_key").to_pylist()
        # the ring: a key goes to the first node at or above its hash, past the last node back to the first
        home = [k for k in rows.column("_hoodie_record_key").to_pylist()
                if (2**30 < record_hash(k, ["_hoodie_record_key"]) <= 2**31 - 1) == (child.file_id == "child-b-0")]  # fmt: skip
        assert sorted(keys) == sorted(home) and len(keys) > 500
        assert out.column("v").to_pylist() == sorted(out.column("v").to_pylist())
        assert_footer_matches(tmp_path / stat["path"])


@given(planned=st.integers(0, 40), units=st.integers(1, 8), buckets=st.integers(1, 5))
def test_split_tasks_share_the_planned_files_whole_and_their_ranges_in_key_order(planned, units, buckets):
    files = out_of_core.unit_files(planned, units)
    assert len(files) == units and sum(files) == planned and max(files) - min(files) <= 1
    shares = out_of_core.range_shares(files, buckets)
    if units == 1 or min(files) == 0:
        assert shares is None  # equal ranges
        return
    assert shares is not None and len(shares) == units * buckets - 1
    assert all(0 < a < b < 1 for a, b in zip(shares, shares[1:]))
    # every task's ranges end where its files' share of the rows ends
    ends = [shares[(unit + 1) * buckets - 1] for unit in range(units - 1)]
    assert ends == pytest.approx([sum(files[: unit + 1]) / planned for unit in range(units - 1)])
