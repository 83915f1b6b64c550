"""Ordering a group: DIRECT equals the core's Hudi keys, SAMPLE is a curve on ranks; params validated."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hudi_cluster_core.errors import ConfigError, PlanError
from hudi_cluster_core.io.curves import hilbert_keys, sort_rows, zorder_keys

from hudi_cluster_space_curve import SpaceCurveExecutionStrategy, order_rows, params_for
from hudi_cluster_space_curve.execution import group_seed
from hudi_cluster_space_curve.params import params_for_task
from hudi_cluster_space_curve.sample import sample_sort_indices

COLUMNS = {"hoodie.clustering.plan.strategy.sort.columns": "x,y"}


def table_of(rows: int = 3000, seed: int = 11) -> pa.Table:
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1e3, rows)
    y = rng.integers(-500, 500, rows)
    return pa.table({
        "_hoodie_commit_time": pa.array(["1"] * rows),
        "_hoodie_record_key": pa.array([f"k{i:05d}" for i in range(rows)]),
        "x": pa.array(x, mask=rng.random(rows) < 0.02),
        "y": pa.array(y, mask=rng.random(rows) < 0.02),
        "name": pa.array([f"n{v % 97}" for v in range(rows)]),
    })  # fmt: skip


def keys_of(table: pa.Table) -> list[str]:
    return table.column("_hoodie_record_key").to_pylist()


@pytest.mark.parametrize("layout, core_keys", [("z-order", zorder_keys), ("ZORDER", zorder_keys), ("hilbert", hilbert_keys)])
def test_direct_order_is_sorting_by_the_core_keys(layout, core_keys):
    table = table_of()
    params = params_for(COLUMNS, {"hoodie.layout.optimize.strategy": layout})
    expected = table.take(pc.sort_indices(core_keys(table, ["x", "y"])))
    assert keys_of(order_rows(table, params)) == keys_of(expected)


def test_direct_three_columns_including_a_string():
    table = table_of(1500)
    params = params_for({"hoodie.clustering.plan.strategy.sort.columns": "name,y,x"}, {"hoodie.layout.optimize.strategy": "hilbert"})
    expected = table.take(pc.sort_indices(hilbert_keys(table, ["name", "y", "x"])))
    assert keys_of(order_rows(table, params)) == keys_of(expected)


def test_linear_and_single_column_are_plain_sorts():
    table = table_of(500)
    linear = order_rows(table, params_for(COLUMNS, {"hoodie.layout.optimize.strategy": "linear"}))
    assert keys_of(linear) == keys_of(table.sort_by([("x", "ascending", "at_start"), ("y", "ascending", "at_start")]))
    single = order_rows(table, params_for({"hoodie.clustering.plan.strategy.sort.columns": "y"},
                                          {"hoodie.layout.optimize.curve.build.method": "SAMPLE"}))  # fmt: skip
    assert keys_of(single) == keys_of(table.sort_by([("y", "ascending", "at_start")]))


def test_sample_order_uses_the_sample_keys_and_is_deterministic():
    table = table_of()
    settings = {"hoodie.layout.optimize.curve.build.method": "sample", "hoodie.layout.optimize.build.curve.sample.size": "400"}
    params = params_for(COLUMNS, settings)
    ordered = order_rows(table, params, seed=42)
    assert keys_of(ordered) == keys_of(table.take(sample_sort_indices(table, ["x", "y"], "z-order", sample_size=400, seed=42)))
    assert keys_of(ordered) == keys_of(order_rows(table, params, seed=42))
    assert sorted(keys_of(ordered)) == sorted(keys_of(table))


def files_opened(ordered: pa.Table, queries, width: float, height: float, files: int = 16) -> float:
    """Mean number of equal row chunks ("files") whose x-y bounding box meets a query rectangle."""
    x, y = ordered.column("x").to_numpy(), ordered.column("y").to_numpy()
    size = len(x) // files
    boxes = np.array([(x[i:i + size].min(), x[i:i + size].max(), y[i:i + size].min(), y[i:i + size].max())
                      for i in range(0, len(x), size)])  # fmt: skip
    hits = [np.sum((boxes[:, 1] >= qx) & (boxes[:, 0] <= qx + width) & (boxes[:, 3] >= qy) & (boxes[:, 2] <= qy + height))
            for qx, qy in queries]  # fmt: skip
    return float(np.mean(hits))


def test_sample_curve_skips_more_files_on_skewed_data():
    """DIRECT on doubles in [0, 1) and [0, 0.001) only sees a sliver of the byte space; SAMPLE's ranks spread
    both columns evenly, so its files answer a range query with far fewer opened."""
    rng = np.random.default_rng(3)
    table = pa.table({"x": rng.random(16_000), "y": rng.random(16_000) * 1e-3})
    queries = np.random.default_rng(0).random((200, 2)) * [0.9, 0.9e-3]
    for layout in ("z-order", "hilbert"):
        direct = params_for(COLUMNS, {"hoodie.layout.optimize.strategy": layout})
        sample = params_for(COLUMNS, {"hoodie.layout.optimize.strategy": layout, "hoodie.layout.optimize.curve.build.method": "SAMPLE"})
        opened = {name: files_opened(order_rows(table, p), queries, 0.1, 1e-4) for name, p in (("direct", direct), ("sample", sample))}
        assert opened["sample"] < 0.7 * opened["direct"], (layout, opened)


def test_missing_sort_column_names_the_table_columns():
    with pytest.raises(PlanError, match="zz not in the table; columns: x, y, name"):
        order_rows(table_of(10), params_for({"hoodie.clustering.plan.strategy.sort.columns": "x,zz"}, {}))


@pytest.mark.parametrize("value", ["spiral", "z order", "peano", ""])
def test_bad_layout_names_are_rejected_with_the_accepted_list(value):
    with pytest.raises(ConfigError) as error:
        params_for(COLUMNS, {"hoodie.layout.optimize.strategy": value})
    message = str(error.value)
    assert "hoodie.layout.optimize.strategy" in message and repr(value) in message
    assert "'LINEAR', 'ZORDER' or 'HILBERT'" in message


@pytest.mark.parametrize("key, value, accepted", [
    ("hoodie.layout.optimize.curve.build.method", "RANDOM", "'DIRECT' or 'SAMPLE'"),
    ("hoodie.layout.optimize.build.curve.sample.size", "0", ">= 1"),
    ("hoodie.layout.optimize.build.curve.sample.size", "many", "an integer"),
])  # fmt: skip
def test_bad_build_keys_are_rejected(key, value, accepted):
    with pytest.raises(ConfigError, match=accepted):
        params_for(COLUMNS, {key: value})


def test_sort_columns_required_and_distinct():
    with pytest.raises(ConfigError, match="missing param 'hoodie.clustering.plan.strategy.sort.columns'"):
        params_for({}, {})
    with pytest.raises(ConfigError, match="names x more than once"):
        params_for({"hoodie.clustering.plan.strategy.sort.columns": "x, y,x"}, {})
    with pytest.raises(ConfigError, match="an empty column name"):  # the core's one rule for sort columns
        params_for({"hoodie.clustering.plan.strategy.sort.columns": "x,,y"}, {})
    assert params_for({"hoodie.clustering.plan.strategy.sort.columns": " x, y,"}, {}).columns == ["x", "y"]


def test_layout_spellings_and_defaults():
    assert params_for(COLUMNS, {}).layout == "ZORDER" and params_for(COLUMNS, {}).build_method == "DIRECT"
    for spelling, canonical in [("z-order", "ZORDER"), ("zorder", "ZORDER"), ("Hilbert", "HILBERT"), (" linear ", "LINEAR")]:
        assert params_for(COLUMNS, {"hoodie.layout.optimize.strategy": spelling}).layout == canonical
    # the executing job's layout keys win over anything a plan may carry; other settings are ignored
    plan = {**COLUMNS, "hoodie.layout.optimize.strategy": "HILBERT"}
    params = params_for(plan, {"hoodie.layout.optimize.strategy": "LINEAR", "hoodie.clustering.async.enabled": "true"})
    assert params.layout == "LINEAR"


class FakeTask:
    def __init__(self, table, settings):
        self.table, self.written = table, None
        self.raw_params, self.settings = dict(COLUMNS), settings
        self.group = SimpleNamespace(file_ids=("f1", "f2"))
        self.num_output_file_groups = 3

    def read_arrow(self):
        return self.table

    def write(self, table, num_files=None):
        self.written = (table, num_files)
        return [{"path": "file0"}]

    def write_sorted(self, columns, layout, key=None):  # the core's bounded-memory path, in memory here
        order = key.order(self.table) if key is not None else None
        rows = self.table.take(order) if key is not None else sort_rows(self.table, list(columns), layout)
        self.written = (rows, (list(columns), layout, key))
        return [{"path": "file0"}]


def test_execute_group_reads_layout_from_the_job_settings_and_writes_rolled_files():
    table = table_of(800)
    task = FakeTask(table, {"hoodie.layout.optimize.strategy": "hilbert"})
    strategy = SpaceCurveExecutionStrategy()
    assert strategy.execute_group(task) == [{"path": "file0"}] and strategy.execution_splits_group(task)
    assert task.written[1] == (["x", "y"], "hilbert", None)  # DIRECT: sorted by the core, may spill and split
    assert keys_of(task.written[0]) == keys_of(table.take(pc.sort_indices(hilbert_keys(table, ["x", "y"]))))
    sample = FakeTask(table, {"hoodie.layout.optimize.strategy": "hilbert",
                              "hoodie.layout.optimize.curve.build.method": "SAMPLE"})  # fmt: skip
    strategy.execute_group(sample)
    assert sample.written[1][2] is not None and not strategy.execution_splits_group(sample)  # its own key, never split
    assert keys_of(sample.written[0]) == keys_of(order_rows(table, params_for_task(sample), seed=group_seed(["f1", "f2"])))
    with pytest.raises(ConfigError, match="accepted: 'LINEAR', 'ZORDER' or 'HILBERT'"):
        SpaceCurveExecutionStrategy().execute_group(FakeTask(table, {"hoodie.layout.optimize.strategy": "morton"}))
