"""Partition selection for every filter mode, against literal expected partitions (written out by hand from
Apache Hudi's documented semantics, not computed by the function under test)."""

from __future__ import annotations

import datetime as dt

import pytest

from hudi_cluster_core.config import load_config
from hudi_cluster_core.plan.eligibility import select_partitions

DAYS = ["2024/01/01", "2024/01/02", "2024/01/03", "2024/02/01", "2024/02/02", "2024/03/01"]
HIVE = ["dt=2024-01-01", "dt=2024-01-02", "dt=2024-01-03", "region=eu", "region=us"]
P = "hoodie.clustering.plan."
S = P + "strategy."
NOW = dt.datetime(2026, 1, 1, 5, 0, 0)


def select(partitions, now=NOW, **options):
    config = load_config(overrides={k.replace("__", "."): v for k, v in options.items()})
    result = select_partitions(list(partitions), config, now=now)
    return list(result.partitions), list(result.missing)


def opts(mode=None, **keys):
    out = {S + k: v for k, v in keys.items()}
    if mode:
        out[P + "partition.filter.mode"] = mode
    return out


@pytest.mark.parametrize("options, expected, missing", [
    (opts("NONE"), DAYS, []),
    (opts(), DAYS, []),
    # RECENT_DAYS: newest first, skip `skipfromlatest`, then take `lookback`
    (opts("RECENT_DAYS", **{"daybased.lookback.partitions": 2}), ["2024/03/01", "2024/02/02"], []),
    (opts("RECENT_DAYS", **{"daybased.lookback.partitions": 2, "daybased.skipfromlatest.partitions": 1}),
     ["2024/02/02", "2024/02/01"], ["2024/03/01"]),
    (opts("RECENT_DAYS", **{"daybased.lookback.partitions": 3, "daybased.skipfromlatest.partitions": 4}),
     ["2024/01/02", "2024/01/01"], ["2024/03/01", "2024/02/02", "2024/02/01", "2024/01/03"]),
    (opts("RECENT_DAYS", **{"daybased.lookback.partitions": 10}), ["2024/03/01", "2024/02/02", "2024/02/01",
                                                                   "2024/01/03", "2024/01/02", "2024/01/01"], []),
    # SELECTED_PARTITIONS: begin <= p <= end, both inclusive
    (opts("SELECTED_PARTITIONS", **{"cluster.begin.partition": "2024/01/02", "cluster.end.partition": "2024/02/01"}),
     ["2024/01/02", "2024/01/03", "2024/02/01"], []),
    (opts("SELECTED_PARTITIONS", **{"cluster.begin.partition": "2024/02/02"}), ["2024/02/02", "2024/03/01"], []),
    (opts("SELECTED_PARTITIONS", **{"cluster.end.partition": "2024/01/01"}), ["2024/01/01"], []),
    # regex: full match
    (opts(**{"partition.regex.pattern": "2024/01/.*"}), ["2024/01/01", "2024/01/02", "2024/01/03"], []),
    (opts(**{"partition.regex.pattern": "2024/0[23]/01"}), ["2024/02/01", "2024/03/01"], []),
    (opts(**{"partition.regex.pattern": "01"}), [], []),
    # regex, then the mode
    (opts("RECENT_DAYS", **{"partition.regex.pattern": "2024/01/.*", "daybased.lookback.partitions": 1}),
     ["2024/01/03"], []),
    # an explicit list wins over the regex
    (opts(**{"partition.selected": "2024/02/01,2024/01/01", "partition.regex.pattern": "2024/03/.*"}),
     ["2024/02/01", "2024/01/01"], []),
])  # fmt: skip
def test_day_partitions(options, expected, missing):
    assert select(DAYS, **options) == (expected, missing)


@pytest.mark.parametrize("hour, expected", [(0, ["2024/01/01"]), (3, ["2024/02/01"]), (5, ["2024/03/01"]), (6, []),
                                            (23, [])])  # fmt: skip
def test_day_rolling_takes_the_partitions_at_this_hour(hour, expected):
    assert select(DAYS, now=NOW.replace(hour=hour), **opts("DAY_ROLLING")) == (expected, [])


def test_day_rolling_wraps_every_24_partitions():
    many = [f"2024/01/{d:02d}" for d in range(1, 32)]
    assert select(many, now=NOW.replace(hour=2), **opts("DAY_ROLLING")) == (["2024/01/03", "2024/01/27"], [])


@pytest.mark.parametrize("options, expected", [
    (opts(**{"partition.regex.pattern": "region=.*"}), ["region=eu", "region=us"]),
    (opts(**{"partition.regex.pattern": "dt=2024-01-0[23]|region=us"}), ["dt=2024-01-02", "dt=2024-01-03", "region=us"]),
    (opts("SELECTED_PARTITIONS", **{"cluster.begin.partition": "dt=2024-01-03", "cluster.end.partition": "region=eu"}),
     ["dt=2024-01-03", "region=eu"]),
    (opts("RECENT_DAYS", **{"daybased.lookback.partitions": 2, "daybased.skipfromlatest.partitions": 2}),
     ["dt=2024-01-03", "dt=2024-01-02"]),
    (opts(**{"partition.selected": "region=us"}), ["region=us"]),
])  # fmt: skip
def test_hive_style_partitions(options, expected):
    assert select(HIVE, **options)[0] == expected


def test_mode_is_case_insensitive():
    assert select(DAYS, **opts("recent_days", **{"daybased.lookback.partitions": 1})) == (["2024/03/01"], [])
