"""GroupTask's one data path, without Spark: reading every slice shape, writing with chosen file ids."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_cluster_core.errors import PlanError
from hudi_cluster_core.plan.avro_plan import InputSlice, PlanGroup
from hudi_cluster_core.run.task import GroupTask
from hudi_cluster_core.table.naming import parse_base_file
from hudi_cluster_core.write.base_file import META_COLUMNS

INSTANT = "20260101000000000"


def rows(n: int, commit: str = "20250101000000000") -> pa.Table:
    return pa.table({
        "_hoodie_commit_time": [commit] * n, "_hoodie_commit_seqno": [f"{commit}_0_{i}" for i in range(n)],
        "_hoodie_record_key": [f"k{i:03d}" for i in range(n)], "_hoodie_partition_path": ["p"] * n,
        "_hoodie_file_name": ["old.parquet"] * n, "value": list(range(n)),
    })  # fmt: skip


def make_task(tmp_path, slices=(), *, outputs: int = 2, preserve: bool = True) -> GroupTask:
    (tmp_path / "p").mkdir(exist_ok=True)
    group = PlanGroup(0, "p", tuple(slices), outputs)
    return GroupTask(str(tmp_path), INSTANT, group, None, None, preserve_hoodie_metadata=preserve,
                     write_token="3-1-1")  # fmt: skip


def base_slice(tmp_path, name: str, table: pa.Table) -> InputSlice:
    path = tmp_path / "p" / name
    path.parent.mkdir(exist_ok=True)
    pq.write_table(table, path)
    return InputSlice("p", parse_base_file(name, 0).file_id, str(path))


def test_base_only_slices_are_read_per_slice_and_together(tmp_path):
    first = base_slice(tmp_path, "f1-0_0-1-1_20250101000000000.parquet", rows(3))
    second = base_slice(tmp_path, "f2-0_0-1-1_20250101000000000.parquet", rows(2))
    task = make_task(tmp_path, [first, second])
    slices = task.read_slices()
    assert [(s.file_id, t.num_rows) for s, t in slices] == [("f1-0", 3), ("f2-0", 2)]
    assert task.read_arrow(slices).num_rows == 5 == task.read_arrow().num_rows


def test_a_slice_without_files_and_input_without_meta_columns_fail_with_one_line(tmp_path):
    with pytest.raises(PlanError, match="p/f9-0 has no base file and no log files"):
        make_task(tmp_path, [InputSlice("p", "f9-0", None)]).read_slices()
    bare = base_slice(tmp_path, "f3-0_0-1-1_20250101000000000.parquet", pa.table({"value": [1]}))
    with pytest.raises(PlanError, match="lack Hudi meta columns"):
        make_task(tmp_path, [bare]).read_arrow()


def test_write_with_file_ids_names_each_file_and_splits_contiguously(tmp_path):
    task = make_task(tmp_path)
    stats = task.write(rows(5), file_ids=["aaaa-0", "bbbb-0"])
    assert [s["fileId"] for s in stats] == ["aaaa-0", "bbbb-0"] and [s["numWrites"] for s in stats] == [3, 2]
    for stat in stats:
        assert stat["path"].startswith(f"p/{stat['fileId']}_3-1-1_{INSTANT}")
        written = pq.read_table(tmp_path / stat["path"])
        assert set(written.column("_hoodie_file_name").to_pylist()) == {stat["path"].split("/")[-1]}
        assert written.column_names[: len(META_COLUMNS)] == list(META_COLUMNS)
        assert (tmp_path / ".hoodie/.temp" / INSTANT / (stat["path"] + ".marker.CREATE")).exists()
    # fewer rows than ids: the later ids get no file
    assert [s["fileId"] for s in task.write(rows(1), file_ids=["cccc-0", "dddd-0"])] == ["cccc-0"]


def test_write_with_a_file_count_splits_equally_and_restamps_when_asked(tmp_path):
    stats = make_task(tmp_path, outputs=3, preserve=False).write(rows(4), 2)
    assert len(stats) == 2 and len({s["fileId"] for s in stats}) == 2
    written = pq.read_table(tmp_path / stats[0]["path"])
    assert set(written.column("_hoodie_commit_time").to_pylist()) == {INSTANT}
    assert written.column("_hoodie_commit_seqno").to_pylist() == [f"{INSTANT}_3_0", f"{INSTANT}_3_1"]


@pytest.mark.parametrize(
    ("file_ids", "num_files", "message"),
    [
        ([], None, "names no output file"),
        (["a_b"], None, "output file id 'a_b'"),
        (["a.b"], None, "output file id 'a.b'"),
        (["x-0", "x-0"], None, "repeat"),
        (["x-0"], 2, "num_files=2"),
    ],
)
def test_bad_file_ids_are_rejected_before_anything_is_written(tmp_path, file_ids, num_files, message):
    with pytest.raises(PlanError, match=message):
        make_task(tmp_path).write(rows(2), num_files, file_ids=file_ids)
    assert not list((tmp_path / "p").iterdir())


@pytest.mark.parametrize(("tasks", "cores", "threads"), [(1, 2, 2), (2, 2, 1), (3, 2, 1), (1, 4, 4), (3, 8, 2)])
def test_tasks_with_cores_to_themselves_get_them_as_arrow_threads(tmp_path, tasks, cores, threads):
    from hudi_cluster_core.run.execute import split_groups

    group_tasks = [make_task(tmp_path) for _ in range(tasks)]  # small groups: never split
    units = split_groups(group_tasks, [1024] * tasks, cores=cores, read_parallelism=20)
    assert [(u.units, u.cpu_threads) for u in units] == [(1, threads)] * tasks


def test_a_task_runs_arrow_and_page_compression_on_its_threads_and_gives_them_back(tmp_path):
    import os

    from hudi_cluster_core.run.unit_work import task_threads
    from hudi_cluster_core.write import gzip_pages

    arrow_before, compress_before = pa.cpu_count(), gzip_pages.COMPRESS_THREADS
    table = rows(3000)
    pq.write_table(table, tmp_path / "f.parquet", row_group_size=500)
    for threads in (0, 1, 2, 64):
        with task_threads(threads):
            assert pa.cpu_count() == (arrow_before if threads == 0 else min(threads, os.cpu_count() or 1))
            assert gzip_pages.COMPRESS_THREADS == (compress_before if threads == 0 else min(threads, 4))
            assert pq.read_table(tmp_path / "f.parquet").equals(table)  # the same rows, in the same order
        assert (pa.cpu_count(), gzip_pages.COMPRESS_THREADS) == (arrow_before, compress_before)


def test_two_executions_of_one_plan_name_a_plan_named_file_apart(tmp_path):
    """A second Spark application numbers its tasks as the first did; the salt each execution draws
    (``build_tasks``) keeps two runs of one plan from writing, or deleting, each other's files of a named file id."""
    from dataclasses import replace

    names = []
    for salt in (0, 7_654_321):
        task = replace(make_task(tmp_path), token_salt=salt)
        task = task.with_write_token(task.write_token_for(3, 1, 1))
        (stat,) = task.write(rows(2), file_ids=["bucket-0"])
        names.append(stat["path"])
    assert names[0] != names[1] and all((tmp_path / n).is_file() for n in names)
    assert [parse_base_file(n.split("/")[-1], 0).write_token for n in names] == ["3-1-1", "3-1-7654322"]
