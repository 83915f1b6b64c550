"""The configuration catalogue is the one home of every key: the docs table and ``describe()`` come from it."""

from __future__ import annotations

import json

from hudi_cluster_core.config import ClusteringConfig, catalogue, describe, load_config
from hudi_cluster_core.config.docs import DOCS_FILE, markdown


def test_docs_configuration_md_is_generated_from_the_catalogue():
    """docs/configuration.md is exactly what the catalogue generates: after changing a key, run ``make docs``."""
    assert DOCS_FILE.read_text() == markdown(), "docs/configuration.md is stale: run `make docs`"


def test_the_docs_table_lists_every_key_and_alias_once():
    text = markdown()
    for spec in catalogue.ALL_KEYS:
        assert text.count(f"| `{spec.key}`") == 1, spec.key
        for alias in spec.aliases:
            assert f"alias `{alias}`" in text, alias


def test_describe_is_every_key_as_plain_data():
    described = describe()
    assert [d["key"] for d in described] == [spec.key for spec in catalogue.ALL_KEYS]
    assert json.loads(json.dumps(described)) == described  # JSON-ready, for `plugins --json`
    config = ClusteringConfig()
    for entry in described:
        assert set(entry) == {"key", "aliases", "type", "default", "doc", "accepted", "section", "field"}
        assert entry["doc"] and entry["accepted"], entry["key"]
        owner = config
        *parts, name = entry["field"].split(".")
        for part in parts:
            owner = getattr(owner, part)
        assert getattr(owner, name) == entry["default"], entry["key"]  # the typed field's default is the catalogue's
    sort = next(d for d in described if d["key"] == catalogue.SORT_COLUMNS)
    assert (sort["type"], sort["default"], sort["field"]) == ("columns", None, "sort_columns")
    verify = next(d for d in described if d["key"] == catalogue.TASK_VERIFY)
    assert verify["field"] == "task.verify" and verify["accepted"] == "true, full, false (any case)"
    inline = next(d for d in described if d["key"] == catalogue.INLINE)
    assert inline["aliases"] == ["hoodie.datasource.clustering.inline.enable"]


def test_every_key_is_read_by_name_alias_or_field():
    config = load_config(overrides={"hoodie.datasource.clustering.inline.enable": "true", "verify": "FULL",
                                    "hudi.cluster.task.memory.bytes": "4096"})  # fmt: skip
    assert config.inline is True and config.get(catalogue.INLINE) is True
    assert config.task.verify == "full" and config.get(catalogue.TASK_VERIFY) == "full"
    assert config.task.memory_bytes == 4096 and config.get("memory_bytes") == 4096
    assert catalogue.read(config.raw, catalogue.INLINE) is True  # a task's raw settings, alias included
    assert catalogue.read({}, catalogue.TASK_MEMORY_BYTES) == 1024**3
