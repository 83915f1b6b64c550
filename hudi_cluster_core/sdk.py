"""The plugin SDK: everything a strategy plugin needs from the core, in one import.

Plugins import from here, never from another plugin, so this is the public, stable surface; the names are
re-exported from where they live in the core. ``docs/plugin-models.md`` describes the models, and
``hudi_cluster_core.hookspecs`` the hooks (which are required, and what the default of an optional one does).

Configuration:
    ``ClusteringConfig`` (``context.config``: one typed attribute per Hudi key, e.g. ``config.max_num_groups``,
    ``config.sort_columns``, ``config.writer.parquet_max_file_size``), ``keys`` (the configuration catalogue,
    :mod:`hudi_cluster_core.config.catalogue`: every key's name as a constant, e.g. ``keys.SORT_COLUMNS``),
    ``Layout`` and ``parse_layout`` / ``curve_name`` (the one layout-name parser).
Hooks and models:
    ``hookimpl``; ``FileSlice`` (with its ``BaseFile`` and ``LogFile``s), ``PlannedGroup``, ``PlanContext``, ``SliceStats``; ``StrategyParams`` (base of
    a params model), pydantic's ``Field`` (to declare its fields) and ``params_key`` (the rule naming a strategy's
    own keys).
The default plan hooks, to call from an override that does only part of the work:
    ``select_slices`` (= ``select_eligible_slices``), ``finalize_groups`` (keep ``max.num.groups``),
    ``execution_strategy`` and ``sort_columns_params`` (the sort-columns pass-through).
Size rules and packing:
    ``SizeLimits`` (the size keys; ``slice_size``, ``output_files`` = ``ceil(bytes / target)``),
    ``pack_by_size`` (Hudi's size-based packing), ``cut_in_order`` and ``GroupCutter`` (groups of consecutive
    slices under the cap), ``slices_by_partition``.
Execution:
    ``SortAndSizeParams`` (the sort-columns params model of sort-and-size style execution strategies).
Footer statistics:
    ``footer_stats_provider`` (what ``context.slice_stats`` reads in production).
"""

from __future__ import annotations

from pydantic import Field

from .config import ClusteringConfig, StrategyParams
from .config import catalogue as keys
from .hookspecs import hookimpl
from .plan.defaults import SortAndSizeParams, execution_strategy, finalize_groups, select_slices, sort_columns_params
from .plan.eligibility import select_eligible_slices
from .plan.footer_stats import footer_stats_provider
from .plan.limits import SizeLimits
from .layout import Layout, curve_name, parse_layout
from .plan.model import PlanContext, PlannedGroup, SliceStats
from .plan.packing import GroupCutter, cut_in_order, pack_by_size, slices_by_partition
from .table import FileSlice
from .table.naming import BaseFile, LogFile

PARAMS_KEY_PREFIX = keys.STRATEGY_PARAM_PREFIX
SORT_COLUMNS_KEY = keys.SORT_COLUMNS  # the name plugins written so far import


def params_key(strategy_name: str, setting: str) -> str:
    """The config key of a strategy's own setting: ``hoodie.clustering.plan.strategy.`` + the strategy's name
    with ``-`` turned into ``.`` + ``.`` + the setting. ``params_key("my-strategy", "min.slices")`` is
    ``hoodie.clustering.plan.strategy.my.strategy.min.slices``, as Hudi spells its own keys."""
    return f"{PARAMS_KEY_PREFIX}{strategy_name.replace('-', '.')}.{setting}"


__all__ = [
    "PARAMS_KEY_PREFIX", "SORT_COLUMNS_KEY", "BaseFile", "ClusteringConfig", "Field", "FileSlice", "GroupCutter",
    "Layout", "LogFile", "PlanContext", "PlannedGroup", "SizeLimits", "SliceStats", "SortAndSizeParams",
    "StrategyParams", "curve_name", "cut_in_order", "execution_strategy", "finalize_groups", "footer_stats_provider",
    "hookimpl", "keys", "pack_by_size", "params_key", "parse_layout", "select_eligible_slices", "select_slices",
    "slices_by_partition", "sort_columns_params",
]  # fmt: skip
