"""Configuration: Hudi 1.1 keys and defaults, Hudi's precedence and file format, one clear error for bad input."""

from __future__ import annotations

import logging
import math
import tempfile
import types
import typing
from pathlib import Path
from typing import Literal, Optional

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import Field

from hudi_cluster_core.config import (
    CONF_DIR_ENV,
    ClusteringConfig,
    StrategyParams,
    TaskSettings,
    WriterSettings,
    load_config,
    validate_strategy_params,
)
from hudi_cluster_core.config import catalogue as ck
from hudi_cluster_core.errors import ConfigError

CS = "hoodie.clustering.plan.strategy."

# Apache Hudi 1.1.1 defaults, from apache/hudi:
#   hudi-client/hudi-client-common/src/main/java/org/apache/hudi/config/HoodieClusteringConfig.java (clustering, layout)
#   hudi-common/src/main/java/org/apache/hudi/common/config/HoodieStorageConfig.java (parquet, bloom)
#   hudi-client/hudi-client-common/src/main/java/org/apache/hudi/config/HoodieCompactionConfig.java
#     (hoodie.parquet.small.file.limit)
#   hudi-client/hudi-client-common/src/main/java/org/apache/hudi/config/HoodieIndexConfig.java (index, bucket)
#   hudi-common/src/main/java/org/apache/hudi/common/config/HoodieMetadataConfig.java (metadata.enable)
#   hudi-client/hudi-client-common/src/main/java/org/apache/hudi/config/HoodieWriteConfig.java (write.markers.type)
# cross-checked with website/versioned_docs/version-1.1.1/configurations.md and basic_configurations.md
# keys in Hudi's namespace that are ours alone (their docs say so): no Hudi default to compare with
OUR_HOODIE_KEYS = {"hoodie.clustering.partial.progress.max.groups"}
HUDI_1_1_DEFAULTS = {
    "hoodie.clustering.inline": "false",
    "hoodie.clustering.inline.max.commits": "4",
    "hoodie.clustering.async.enabled": "false",
    "hoodie.clustering.async.max.commits": "4",
    "hoodie.clustering.schedule.inline": "false",
    CS + "class": "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy",
    "hoodie.clustering.execution.strategy.class":
        "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy",
    "hoodie.clustering.updates.strategy": "org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy",
    CS + "small.file.limit": "314572800",
    CS + "max.bytes.per.group": "2147483648",
    CS + "max.num.groups": "30",
    CS + "target.file.max.bytes": "1073741824",
    CS + "sort.columns": None,
    CS + "partition.selected": None,
    CS + "partition.regex.pattern": None,
    "hoodie.clustering.plan.partition.filter.mode": "NONE",
    CS + "daybased.lookback.partitions": "2",
    CS + "daybased.skipfromlatest.partitions": "0",
    CS + "cluster.begin.partition": None,
    CS + "cluster.end.partition": None,
    CS + "single.group.clustering.enabled": "true",
    "hoodie.clustering.group.read.parallelism": "20",
    "hoodie.clustering.max.parallelism": "15",
    "hoodie.clustering.rollback.pending.replacecommit.on.conflict": "false",
    CS + "binary.copy.schema.evolution.enable": "false",
    "hoodie.layout.optimize.strategy": "LINEAR",
    "hoodie.layout.optimize.curve.build.method": "DIRECT",
    "hoodie.layout.optimize.build.curve.sample.size": "200000",
    "hoodie.layout.optimize.data.skipping.enable": "true",
    "hoodie.layout.optimize.enable": "false",
    "hoodie.parquet.max.file.size": "125829120",
    "hoodie.parquet.small.file.limit": "104857600",
    "hoodie.parquet.compression.codec": "gzip",
    "hoodie.parquet.block.size": "125829120",
    "hoodie.parquet.page.size": "1048576",
    "hoodie.parquet.bloom.filter.enabled": "true",
    "hoodie.index.bloom.num_entries": "60000",
    "hoodie.index.bloom.fpp": "0.000000001",
    "hoodie.bloom.index.filter.type": "DYNAMIC_V0",
    "hoodie.bloom.index.filter.dynamic.max.entries": "100000",
    "hoodie.metadata.enable": "true",
    "hoodie.client.heartbeat.interval_in_ms": "60000",
    "hoodie.client.heartbeat.tolerable.misses": "2",
    "hoodie.write.lock.wait_time_ms": "60000",
    "hoodie.write.markers.type": "TIMELINE_SERVER_BASED",
    "hoodie.index.type": None,
    "hoodie.index.bucket.engine": "SIMPLE",
    "hoodie.bucket.index.num.buckets": "256",
    "hoodie.bucket.index.max.num.buckets": None,
    "hoodie.bucket.index.min.num.buckets": None,
    "hoodie.bucket.index.split.threshold": "2.0",
    "hoodie.bucket.index.merge.threshold": "0.2",
    "hoodie.bucket.index.hash.field": None,
}


@pytest.fixture(autouse=True)
def _no_hudi_conf_dir(monkeypatch):
    monkeypatch.delenv(CONF_DIR_ENV, raising=False)


def _err(**kwargs) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(**kwargs)
    return str(info.value)


# ------------------------------------------------------------------------------------------- defaults, model


def test_defaults_are_hudi_1_1_defaults():
    config = load_config()
    assert set(HUDI_1_1_DEFAULTS) == {k for k in ck.BY_KEY if k.startswith("hoodie.")} - OUR_HOODIE_KEYS
    for key, hudi_text in HUDI_1_1_DEFAULTS.items():
        value = config.get(key)
        if hudi_text is None:
            assert value is None, key
        else:
            assert value == ck.BY_KEY[key].parse(hudi_text), key
            assert ck.BY_KEY[key].to_hoodie(value) == hudi_text or float(hudi_text) == value, key
    assert config.to_hoodie_map() == {}
    assert config == ClusteringConfig()


def test_every_field_has_its_hudi_key_as_alias_and_a_description():
    for model in (ClusteringConfig, WriterSettings, TaskSettings):
        for name, info in model.model_fields.items():
            if name in ("writer", "task"):
                continue
            assert info.alias in ck.BY_KEY and ck.BY_KEY[info.alias].field == name
            assert info.description and info.alias in info.description
    namespaced = {info.alias for info in ClusteringConfig.model_fields.values() if info.alias}
    assert all(ck.in_namespace(k) for k in namespaced)
    assert {k for k in ck.BY_KEY if ck.in_namespace(k)} == namespaced


def _shape(annotation):
    """An annotation in a comparable form: ``int | None``, ``Optional[int]`` and ``Union[int, None]`` alike."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return frozenset(_shape(a) for a in typing.get_args(annotation))
    if typing.get_origin(annotation) is Literal:
        return ("Literal", typing.get_args(annotation))
    return annotation


def _catalogue_type(spec: ck.Key):
    kinds = {"bool": bool, "double": float, "str": str, "columns": str}
    base = Literal[spec.choices] if spec.kind == "enum" else kinds.get(spec.kind, int)
    return Optional[base] if spec.optional else base  # noqa: UP045


def test_static_fields_and_the_catalogue_stay_in_sync():
    """Every catalogue key has exactly one typed field (ClusteringConfig, WriterSettings for the writer keys,
    TaskSettings for our own), named as the catalogue names it, with the catalogue's type and default (taken from
    the catalogue: written once), and a constant in the catalogue."""
    fields: dict[str, list[tuple[type, str]]] = {}
    for model in (ClusteringConfig, WriterSettings, TaskSettings):
        for name, info in model.model_fields.items():
            if name not in ("writer", "task"):
                fields.setdefault(info.alias, []).append((model, name))
    assert set(fields) == set(ck.BY_KEY), "a field without a catalogue key, or a catalogue key without a field"
    for key, found in fields.items():
        spec = ck.BY_KEY[key]
        assert len(found) == 1, (key, found)
        model, name = found[0]
        info = model.model_fields[name]
        assert name == spec.field, key
        assert model is {"": ClusteringConfig, "writer": WriterSettings, "task": TaskSettings}[ck.MODEL_OF[key]], key
        assert _shape(info.annotation) == _shape(_catalogue_type(spec)) == _shape(spec.python_type), key
        assert info.default == spec.default and type(info.default) is type(spec.default), (key, info.default)
        assert ClusteringConfig().get(key) == spec.default or spec.default is None, key
    constants = {v for n, v in vars(ck).items() if n.isupper() and isinstance(v, str) and v in ck.BY_KEY}
    assert set(ck.BY_KEY) == constants, set(ck.BY_KEY) - constants


def test_typed_fields_hold_typed_values():
    config = load_config(hoodie_conf=[f"{CS}max.num.groups=7", "hoodie.layout.optimize.strategy=z-order",
                                      "hoodie.index.bloom.fpp=1e-3", f"{CS}single.group.clustering.enabled=FALSE"])
    assert config.max_num_groups == 7 and type(config.max_num_groups) is int
    assert config.layout_optimize_strategy == "ZORDER"
    assert config.writer.bloom_fpp == 0.001 and type(config.writer.bloom_fpp) is float
    assert config.single_group_clustering_enabled is False
    assert config.get(ck.MAX_NUM_GROUPS) == 7 and config.raw[ck.MAX_NUM_GROUPS] == "7"
    assert ClusteringConfig(max_num_groups="5").max_num_groups == 5  # Hudi's text, parsed by the catalogue
    assert ClusteringConfig.model_validate({ck.LAYOUT_STRATEGY: "Hilbert"}).layout_optimize_strategy == "HILBERT"
    with pytest.raises(pydantic.ValidationError, match="out of range"):
        ClusteringConfig(max_num_groups=-1)


def test_config_is_frozen_and_maps_are_read_only():
    config = load_config(overrides={"hoodie.table.name": "t"})
    with pytest.raises(pydantic.ValidationError):
        config.max_num_groups = 3
    with pytest.raises(TypeError):
        config.extra["hoodie.table.name"] = "u"
    with pytest.raises(TypeError):
        config.raw["x"] = "y"


def test_get_by_key_alternative_field_name_and_raw():
    config = load_config(overrides={"hoodie.datasource.clustering.async.enable": "true", "hoodie.table.name": "t"})
    assert config.get("hoodie.clustering.async.enabled") is True
    assert config.get("hoodie.datasource.clustering.async.enable") is True
    assert config.get("async_enabled") is True and config.async_enabled is True
    assert config.get("hoodie.table.name") == "t"
    assert config.get("hoodie.not.given", "d") == "d"
    assert config.get(CS + "sort.columns", "") == ""
    assert config.get("hoodie.parquet.max.file.size") == 125829120 == config.writer.parquet_max_file_size


# ------------------------------------------------------------------------------------------------ precedence


def test_precedence_defaults_file_props_hoodie_conf_overrides(tmp_path, monkeypatch):
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    (conf_dir / "hudi-defaults.conf").write_text(
        f"{CS}max.num.groups 1\n{CS}small.file.limit 1\n{CS}sort.columns a\nhoodie.clustering.max.parallelism 1\n"
    )
    monkeypatch.setenv(CONF_DIR_ENV, str(conf_dir))
    props = tmp_path / "clusteringjob.properties"
    props.write_text(f"{CS}small.file.limit=2\n{CS}sort.columns=b\nhoodie.clustering.max.parallelism=2\n")
    config = load_config(
        props, [f"{CS}sort.columns=c", "hoodie.clustering.max.parallelism=3"], {"max_parallelism": 4}
    )
    got = (config.max_num_groups, config.small_file_limit, config.sort_columns, config.max_parallelism)
    assert got == (1, 2, "c", 4)
    assert config.raw[f"{CS}small.file.limit"] == "2" and config.raw["hoodie.clustering.max.parallelism"] == "4"


def test_hudi_conf_dir_without_defaults_file_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv(CONF_DIR_ENV, str(tmp_path))
    assert _err() == f"{CONF_DIR_ENV}={tmp_path} {tmp_path}/hudi-defaults.conf: properties file does not exist"


def test_later_lines_win_and_main_key_beats_alternative(tmp_path):
    props = tmp_path / "p.properties"
    props.write_text(
        "hoodie.clustering.inline=false\nhoodie.datasource.clustering.inline.enable=true\n"
        "hoodie.datasource.clustering.async.enable=true\n"
        f"{CS}max.num.groups=5\n{CS}max.num.groups=6\n"
    )
    config = load_config(props)
    assert config.inline is False  # main key present: the alternative is ignored, as in HoodieConfig
    assert config.async_enabled is True  # only the alternative given
    assert config.max_num_groups == 6
    assert config.extra == {}


def test_overrides_take_snake_case_names_and_python_values():
    config = load_config(overrides={
        "max_num_groups": 7, "single_group_clustering_enabled": False, "bloom_fpp": 0.01,
        "hoodie.layout.optimize.strategy": "hilbert", "sort_columns": None, "parquet_max_file_size": 1024,
    })  # fmt: skip
    assert config.max_num_groups == 7 and config.single_group_clustering_enabled is False
    assert config.writer.bloom_fpp == 0.01 and config.writer.parquet_max_file_size == 1024
    assert config.layout_optimize_strategy == "HILBERT" and config.sort_columns is None
    assert config.raw[f"{CS}single.group.clustering.enabled"] == "false"


def test_hoodie_conf_splits_at_first_equals_and_trims():
    config = load_config(hoodie_conf=[f" {CS}partition.regex.pattern = region=(us|eu) ", "hoodie.table.name=t"])
    assert config.partition_regex_pattern == "region=(us|eu)"
    assert config.extra == {"hoodie.table.name": "t"}


# --------------------------------------------------------------------------------- properties file format

DOCS_CLUSTERINGJOB_PROPERTIES = """\
# clusteringjob.properties, shaped like the sample in the Hudi 1.1.1 clustering docs
hoodie.clustering.async.enabled=true
hoodie.clustering.async.max.commits=4
hoodie.clustering.plan.strategy.target.file.max.bytes=1073741824
hoodie.clustering.plan.strategy.small.file.limit=629145600
hoodie.clustering.execution.strategy.class=org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy
hoodie.clustering.plan.strategy.sort.columns=column1,column2

# multi-writer and table keys the clustering job does not model
hoodie.write.concurrency.mode=optimistic_concurrency_control
hoodie.write.lock.provider=org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider
hoodie.write.lock.zookeeper.url=zk1:2181,zk2:2181
hoodie.table.name=hudi_table_schedule_clustering
hoodie.datasource.write.recordkey.field=uuid
hoodie.datasource.write.partitionpath.field=partitionpath
hoodie.parquet.small.file.limit=0
"""


def test_docs_clusteringjob_properties_loads_unchanged(tmp_path):
    props = tmp_path / "clusteringjob.properties"
    props.write_text(DOCS_CLUSTERINGJOB_PROPERTIES)
    config = load_config(props)
    lines = [line for line in DOCS_CLUSTERINGJOB_PROPERTIES.splitlines() if line and not line.startswith("#")]
    assert dict(config.raw) == dict(line.split("=", 1) for line in lines)
    assert config.async_enabled is True and config.async_max_commits == 4
    assert config.small_file_limit == 629145600 and config.target_file_max_bytes == 1073741824
    assert config.sort_columns == "column1,column2"
    assert config.writer.parquet_small_file_limit == 0
    assert dict(config.extra) == {k: v for k, v in config.raw.items() if k not in ck.BY_KEY}
    assert config.extra["hoodie.write.lock.zookeeper.url"] == "zk1:2181,zk2:2181"
    assert config.to_hoodie_map() == {
        "hoodie.clustering.async.enabled": "true",
        CS + "small.file.limit": "629145600",
        CS + "sort.columns": "column1,column2",
        "hoodie.parquet.small.file.limit": "0",
    }


def test_props_format_is_hudis_not_java_properties(tmp_path):
    (tmp_path / "common.properties").write_text(f"{CS}max.num.groups=9\nhoodie.table.name=from_include\n")
    props = tmp_path / "p.properties"
    props.write_text(
        "#comment\n\n"
        f"{CS}sort.columns   a,b   \n"  # whitespace separator, trailing whitespace trimmed
        f"{CS}partition.selected = p1\\:x \n"  # no backslash escapes
        "hoodie.custom.value=${HOME}/x   y\n"  # no ${} substitution; whitespace runs collapse
        "hoodie.clustering.inline=TRUE\n"  # booleans in any case
        "include=common.properties\n"
        "hoodie.table.name=after_include\n"
    )
    config = load_config(props)
    assert config.sort_columns == "a,b"
    assert config.partition_selected == "p1\\:x"
    assert config.extra["hoodie.custom.value"] == "${HOME}/x y"
    assert config.inline is True and config.raw["hoodie.clustering.inline"] == "TRUE"
    assert config.max_num_groups == 9 and config.extra["hoodie.table.name"] == "after_include"


def test_include_loop_is_an_error(tmp_path):
    (tmp_path / "a.properties").write_text("include=b.properties\n")
    (tmp_path / "b.properties").write_text("include=a.properties\n")
    message = _err(props_file=tmp_path / "a.properties")
    assert message == (
        f"{tmp_path}/b.properties:1 include {tmp_path}/a.properties: include loop; the file is already being read"
    )


@pytest.mark.parametrize(
    ("given", "canonical"),
    [("linear", "LINEAR"), ("Linear", "LINEAR"), ("z-order", "ZORDER"), ("Z-Order", "ZORDER"), ("zorder", "ZORDER"),
     ("ZORDER", "ZORDER"), ("hilbert", "HILBERT"), (" HILBERT ", "HILBERT")],
)  # fmt: skip
def test_layout_strategy_spellings(given, canonical):
    config = load_config(hoodie_conf=[f"hoodie.layout.optimize.strategy={given}"])
    assert config.layout_optimize_strategy == canonical
    assert config.to_hoodie_map() == ({} if canonical == "LINEAR" else {"hoodie.layout.optimize.strategy": canonical})


def test_other_enum_spellings_are_case_insensitive():
    config = load_config(overrides={
        "hoodie.clustering.plan.partition.filter.mode": "recent_days", "hoodie.layout.optimize.curve.build.method":
        "Sample", "hoodie.parquet.compression.codec": "ZSTD", "hoodie.write.markers.type": "direct",
        "hoodie.bloom.index.filter.type": "simple",
    })  # fmt: skip
    assert config.partition_filter_mode == "RECENT_DAYS" and config.layout_curve_build_method == "SAMPLE"
    assert (config.writer.parquet_compression_codec, config.writer.write_markers_type) == ("zstd", "DIRECT")
    assert config.writer.bloom_filter_type == "SIMPLE"


def test_consistent_hashing_changes_default_strategies_like_hudi():
    config = load_config(overrides={"hoodie.index.type": "BUCKET", "hoodie.index.bucket.engine": "CONSISTENT_HASHING"})
    assert config.plan_strategy_class == ck.SPARK_CONSISTENT_BUCKET_PLAN
    assert config.execution_strategy_class == ck.SINGLE_SPARK_JOB_CONSISTENT_HASHING_EXECUTION
    assert config.to_hoodie_map() == {"hoodie.index.type": "BUCKET", "hoodie.index.bucket.engine": "CONSISTENT_HASHING"}


def test_removed_key_is_kept_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="hudi_cluster_core.config"):
        config = load_config(hoodie_conf=["hoodie.clustering.preserve.commit.metadata=true"])
    assert config.extra == {"hoodie.clustering.preserve.commit.metadata": "true"}
    assert "no effect" in caplog.text


def test_keys_outside_the_clustering_namespaces_are_never_rejected():
    config = load_config(overrides={"hoodie.foo.bar": "x", "spark.executor.memory": "2g", "hoodie.datasource.x": "1"})
    assert dict(config.extra) == {"hoodie.foo.bar": "x", "spark.executor.memory": "2g", "hoodie.datasource.x": "1"}


# ----------------------------------------------------------------------------------------------------- errors


def test_unknown_key_suggests_the_close_one(tmp_path):
    props = tmp_path / "job.properties"
    props.write_text(f"{CS}small.file.limt=100\n")
    assert _err(props_file=props) == (
        f"unknown key '{CS}small.file.limt' ({props}:1): not a Hudi 1.1 clustering or layout-optimisation key; "
        f"did you mean '{CS}small.file.limit'?"
    )
    assert _err(overrides={"hoodie.layout.optimize.stratgy": "linear"}).endswith(
        "did you mean 'hoodie.layout.optimize.strategy'?"
    )


def test_unknown_key_far_from_any_key():
    assert _err(hoodie_conf=["hoodie.clustering.zzz=1"]) == (
        "unknown key 'hoodie.clustering.zzz' (--hoodie-conf): not a Hudi 1.1 clustering or layout-optimisation key; "
        "accepted: a key Hudi 1.1 defines (hudi.apache.org/docs/configurations#Clustering-Configs) or one a "
        "strategy's params model declares"
    )


def test_out_of_range_names_the_range():
    assert _err(hoodie_conf=[f"{CS}max.num.groups=-1"]) == (
        f"{CS}max.num.groups='-1' (--hoodie-conf): out of range; accepted: an integer from 0 to 2147483647"
    )
    assert _err(overrides={"bloom_fpp": 1.5}) == (
        "hoodie.index.bloom.fpp='1.5' (overrides): out of range; accepted: a number > 0 and < 1"
    )
    assert "from 0 to 2147483647" in _err(overrides={"max_num_groups": 2**31})


def test_bad_enum_lists_the_accepted_values():
    assert _err(overrides={"hoodie.clustering.plan.partition.filter.mode": "FOO"}) == (
        "hoodie.clustering.plan.partition.filter.mode='FOO' (overrides): not an accepted value; "
        "accepted: NONE, RECENT_DAYS, SELECTED_PARTITIONS, DAY_ROLLING (any case)"
    )
    assert _err(overrides={"hoodie.layout.optimize.strategy": "spiral"}).endswith(
        "accepted: LINEAR, ZORDER, HILBERT (any case; also z-order)"
    )


@pytest.mark.parametrize("bad", ["300MB", "3e8", "1_000", "12.5", "", "0x10"])
def test_sizes_are_plain_integer_bytes(bad):
    assert _err(overrides={f"{CS}small.file.limit": bad}) == (
        f"{CS}small.file.limit={bad!r} (overrides): not a whole number of bytes; "
        "accepted: a whole number of bytes from 0 to 9223372036854775807 (plain bytes, no units)"
    )


@pytest.mark.parametrize("bad", ["yes", "1", "on", ""])
def test_booleans_are_true_or_false(bad):
    assert _err(hoodie_conf=[f"hoodie.clustering.inline={bad}"]) == (
        f"hoodie.clustering.inline={bad!r} (--hoodie-conf): not a boolean; accepted: true or false (any case)"
    )


def test_empty_strategy_class_is_reported():
    assert _err(hoodie_conf=[f"{CS}class="]) == (
        f"{CS}class='' (--hoodie-conf): empty; accepted: non-empty text"
    )


def test_bad_regex_is_reported():
    message = _err(overrides={f"{CS}partition.regex.pattern": "(unclosed"})
    assert message.startswith(f"{CS}partition.regex.pattern='(unclosed' (overrides): not a valid regular expression")
    assert message.endswith("accepted: a Java regular expression")


def test_missing_or_unreadable_props_file_names_the_file(tmp_path):
    missing = tmp_path / "nope.properties"
    assert _err(props_file=missing) == f"--props {missing}: properties file does not exist"
    assert _err(props_file=tmp_path) == f"--props {tmp_path}: properties file cannot be read: Is a directory"
    binary = tmp_path / "binary.properties"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    assert _err(props_file=binary).startswith(f"--props {binary}: properties file cannot be read: ")


def test_hoodie_conf_without_equals_names_the_entry():
    assert _err(hoodie_conf=["hoodie.clustering.inline"]) == (
        "--hoodie-conf 'hoodie.clustering.inline': not key=value; accepted: --hoodie-conf hoodie.some.key=value"
    )
    assert "--hoodie-conf '=true'" in _err(hoodie_conf=["=true"])


def test_line_without_value_names_file_and_line(tmp_path):
    props = tmp_path / "p.properties"
    props.write_text("hoodie.clustering.inline=true\nhoodie.clustering.async.enabled\n")
    assert _err(props_file=props) == (
        f"{props}:2: 'hoodie.clustering.async.enabled' has no value; accepted: key=value or key value"
    )


def test_several_problems_are_one_error_one_line_each(tmp_path):
    props = tmp_path / "p.properties"
    props.write_text(
        f"{CS}max.num.groups=-1\n{CS}small.file.limt=1\nhoodie.clustering.plan.partition.filter.mode=FOO\n"
    )
    message = _err(props_file=props, hoodie_conf=["broken", f"{CS}target.file.max.bytes=1GB"])
    lines = message.splitlines()
    assert lines[0] == "5 configuration problems:"
    assert len(lines) == 6
    assert lines[1] == "  --hoodie-conf 'broken': not key=value; accepted: --hoodie-conf hoodie.some.key=value"
    assert lines[2].startswith(f"  {CS}max.num.groups='-1' ({props}:1): out of range")
    assert lines[3].startswith(f"  unknown key '{CS}small.file.limt' ({props}:2)")
    assert lines[4].startswith(f"  hoodie.clustering.plan.partition.filter.mode='FOO' ({props}:3)")
    assert lines[5].startswith(f"  {CS}target.file.max.bytes='1GB' (--hoodie-conf): not a whole number of bytes")


def test_cross_key_checks():
    assert _err(overrides={"inline": True, "schedule_inline": True}) == (
        "hoodie.clustering.inline=true and hoodie.clustering.schedule.inline=true: only one of them may be true "
        "(inline both schedules and executes)"
    )
    assert "accepted: min <= max" in _err(overrides={"bucket_min_num_buckets": 8, "bucket_max_num_buckets": 4})
    bucket = {"hoodie.index.type": "BUCKET", "hoodie.index.bucket.engine": "CONSISTENT_HASHING"}
    message = _err(overrides={**bucket, "plan_strategy_class": ck.SPARK_SIZE_BASED_PLAN})
    assert message.endswith(f"accepted: {ck.SPARK_CONSISTENT_BUCKET_PLAN}")


# -------------------------------------------------------------------------------------------- round trip

_TEXT = st.text(st.sampled_from("abcXYZ019_-,/:=$%{}\\ "), min_size=1, max_size=12).map(str.strip).filter(
    lambda s: s and "  " not in s
)


def _value(spec: ck.Key):
    if spec.kind == "bool":
        return st.sampled_from([True, False, "true", "false", "TRUE", "False"])
    if spec.kind in ("int", "long", "bytes"):
        lo, hi = ck._bounds(spec)
        spelled = lambda n: st.sampled_from([n, str(n), f"+{n}" if n >= 0 else str(n)])  # noqa: E731
        return st.integers(int(lo), int(hi)).flatmap(spelled)
    if spec.kind == "double":
        lo, hi = ck._bounds(spec)
        floats = st.floats(lo if not math.isinf(lo) else -1e12, hi if not math.isinf(hi) else 1e12,
                           exclude_min=spec.lo_open, exclude_max=spec.hi_open, allow_nan=False)  # fmt: skip
        return floats.flatmap(lambda x: st.sampled_from([x, repr(x)]))
    if spec.kind == "enum":
        return st.sampled_from(sorted({*spec.choices, *spec.spellings})).flatmap(
            lambda v: st.sampled_from([v, v.lower(), v.upper(), f" {v} "])
        )
    if spec.regex:
        return st.sampled_from([".*", "2024/.*", "region=(us|eu)", "[a-z]+"])
    if spec.kind == "columns":
        names = _TEXT.filter(lambda s: "," not in s)
        return st.lists(names, min_size=1, max_size=3).map(",".join)
    return _TEXT.filter(lambda s: "." not in s) if spec.field.endswith("strategy_class") else _TEXT


@st.composite
def valid_maps(draw):
    given = draw(st.fixed_dictionaries({}, optional={spec.key: _value(spec) for spec in ck.ALL_KEYS}))
    if ck.BY_KEY["hoodie.clustering.inline"].parse(given.get("hoodie.clustering.inline", False)):
        given.pop("hoodie.clustering.schedule.inline", None)
    lo, hi = "hoodie.bucket.index.min.num.buckets", "hoodie.bucket.index.max.num.buckets"
    if lo in given and hi in given and int(given[lo]) > int(given[hi]):
        given[lo], given[hi] = given[hi], given[lo]
    return given


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_maps())
def test_round_trip_through_to_hoodie_map(given_map):
    config = load_config(overrides=given_map)
    as_hudi = config.to_hoodie_map()
    again = load_config(overrides=as_hudi)
    assert again == config and again.to_hoodie_map() == as_hudi
    with tempfile.TemporaryDirectory() as tmp:
        props = Path(tmp) / "clusteringjob.properties"
        props.write_text("".join(f"{k}={v}\n" for k, v in as_hudi.items()))
        assert load_config(props) == config
        assert load_config(hoodie_conf=[f"{k}={v}" for k, v in as_hudi.items()]) == config


# -------------------------------------------------------------------------------------------- sort columns


@pytest.mark.parametrize(("given", "columns"), [
    ("a", ("a",)), (" a , b ", ("a", "b")), ("a,b,", ("a", "b")), ("a,b,,", ("a", "b")),
    ("_hoodie_record_key", ("_hoodie_record_key",)),
])  # fmt: skip
def test_sort_columns_are_parsed_once_as_hudi_splits_them(given, columns):
    """Split at ``,`` and trimmed; trailing empty names dropped, as Java's ``String.split`` drops them."""
    from hudi_cluster_core.config.sort_columns import parse_sort_columns

    config = load_config(hoodie_conf=[f"{CS}sort.columns={given}"])
    assert config.sort_columns == given.strip()  # kept as given: the plan carries Hudi's text
    assert parse_sort_columns(config.sort_columns) == columns
    assert parse_sort_columns(None) == parse_sort_columns(" ") == ()


@pytest.mark.parametrize(("bad", "reason"), [("a,,b", "an empty column name"), (",a", "an empty column name"),
                                             ("a, ,b", "an empty column name"), (",", "names no column")])  # fmt: skip
def test_an_empty_sort_column_is_one_clear_error(bad, reason):
    from hudi_cluster_core.config.sort_columns import parse_sort_columns
    from hudi_cluster_core.errors import PlanError

    line = f"{CS}sort.columns={bad!r}: {reason}; accepted: column names separated by commas, none empty"
    assert _err(hoodie_conf=[f"{CS}sort.columns={bad}"]) == line.replace(": ", " (--hoodie-conf): ", 1)
    with pytest.raises(PlanError) as info:  # a plan's value: the same rule, the same line
        parse_sort_columns(bad, error=PlanError)
    assert str(info.value) == line


def test_one_column_not_in_the_table_check():
    from hudi_cluster_core.config.sort_columns import check_sort_columns
    from hudi_cluster_core.errors import PlanError

    check_sort_columns(("a", "_hoodie_record_key"), ("_hoodie_record_key", "a", "b"))
    with pytest.raises(ConfigError) as info:
        check_sort_columns(("a", "x", "y"), ("_hoodie_commit_time", "a", "b"))
    assert str(info.value) == f"{CS}sort.columns=a,x,y: x, y not in the table; columns: a, b"
    with pytest.raises(PlanError, match="x not in the table"):
        check_sort_columns(("x",), ("a",), error=PlanError)


# ----------------------------------------------------------------------------------------- strategy params


class _Params(StrategyParams):
    sort_columns: str | None = Field(None, alias=CS + "sort.columns")
    count: int = Field(2, ge=1, alias=CS + "test.count", description="groups per partition, at least 1")
    strict: bool = Field(False, alias=CS + "test.strict")
    ratio: float = Field(0.5, alias=CS + "test.ratio")


def test_strategy_params_from_strings():
    params = validate_strategy_params(
        _Params, {CS + "sort.columns": " a,b ", CS + "test.count": "5", CS + "test.strict": "TRUE",
                  CS + "test.ratio": "1e-3"}, strategy="tester",
    )  # fmt: skip
    assert (params.sort_columns, params.count, params.strict, params.ratio) == ("a,b", 5, True, 0.001)
    assert validate_strategy_params(_Params, {}, strategy="tester") == _Params()
    with pytest.raises(pydantic.ValidationError):
        params.count = 3
    with pytest.raises(pydantic.ValidationError):
        _Params(unknown=1)


def test_strategy_params_errors_name_strategy_key_value_and_accepted():
    def err(params):
        with pytest.raises(ConfigError) as info:
            validate_strategy_params(_Params, params, strategy="tester")
        return str(info.value)

    assert err({CS + "sort.colums": "a"}) == (
        f"strategy 'tester': unknown param '{CS}sort.colums'; did you mean '{CS}sort.columns'?"
    )
    assert err({CS + "test.strict": "yes"}) == (
        f"strategy 'tester': {CS}test.strict='yes': not a boolean; accepted: true or false (any case)"
    )
    assert err({CS + "test.count": "many"}) == (
        f"strategy 'tester': {CS}test.count='many': not a whole number; accepted: an integer"
        " (groups per partition, at least 1)"  # the field's description
    )
    assert err({CS + "test.count": "0"}) == (
        f"strategy 'tester': {CS}test.count='0': Input should be greater than or equal to 1; accepted: >= 1"
        " (groups per partition, at least 1)"
    )
    message = err({CS + "test.count": "x", CS + "test.ratio": "half", "zzz": "1"})
    assert message.splitlines()[0] == "3 configuration problems:"
    assert message.splitlines()[3].startswith("  strategy 'tester': unknown param 'zzz'; accepted: ")


def test_keys_declared_by_strategy_params_load_without_error():
    config = load_config(overrides={CS + "test.count": "3"})
    assert config.extra == {CS + "test.count": "3"}


# ------------------------------------------------------------------------------------------- layout names


@pytest.mark.parametrize("name", ["linear", "LINEAR", "z-order", "Z-Order", "zorder", "ZORDER", " hilbert ", "Hilbert",
                                  "Z_ORDER", "z order", "spiral", "", "curve"])  # fmt: skip
def test_one_layout_parser_for_the_config_and_the_curve_sort(name):
    """The config key and the curve sort accept exactly the spellings parse_layout accepts."""
    import pyarrow as pa

    from hudi_cluster_core.sort.curves import curve_sort_indices
    from hudi_cluster_core.layout import curve_name, parse_layout

    try:
        canonical = parse_layout(name)
    except ValueError as exc:
        assert "accepted: LINEAR, ZORDER, HILBERT (any case; also z-order)" in str(exc)
        assert "not an accepted value" in _err(overrides={ck.LAYOUT_STRATEGY: name or " "})
        with pytest.raises(ValueError):
            curve_sort_indices(pa.table({"a": [2, 1], "b": [1, 2]}), ["a", "b"], name)
        return
    assert load_config(overrides={ck.LAYOUT_STRATEGY: name}).layout_optimize_strategy == canonical
    assert curve_name(name) == {"LINEAR": "linear", "ZORDER": "z-order", "HILBERT": "hilbert"}[canonical]
    assert sorted(curve_sort_indices(pa.table({"a": [2, 1], "b": [1, 2]}), ["a", "b"], name).to_pylist()) == [0, 1]
