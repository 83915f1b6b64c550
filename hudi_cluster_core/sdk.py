"""The plugin SDK: everything a strategy plugin needs from the core, in one import.

Plugins import from here, never from another plugin, so this is the public, stable surface; the names are
re-exported from where they live in the core. ``docs/plugin-models.md`` describes the models, and
``hudi_cluster_core.hookspecs`` the hooks (which are required, and what the default of an optional one does).

Configuration:
    ``ClusteringConfig`` (``context.config``: one typed attribute per Hudi key, e.g. ``config.max_num_groups``,
    ``config.sort_columns``, ``config.writer.parquet_max_file_size``), ``keys`` (the configuration catalogue,
    :mod:`hudi_cluster_core.config.catalogue`: every key's name as a constant, e.g. ``keys.SORT_COLUMNS``),
    ``Layout`` and ``parse_layout`` / ``curve_name`` (the one layout-name parser), ``parse_sort_columns`` /
    ``column_names`` (the one sort-columns parser) and ``check_sort_columns`` (the one "not in the table" check),
    ``validate_strategy_params`` (a params model validated from strings).
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
    slices under the cap), ``slices_by_partition``, ``overlapping_components`` (items whose [min, max] ranges
    overlap, transitively, e.g. files by their footer ranges on a column).
Execution:
    ``GroupTask`` (what ``execute_group`` receives), ``SortAndSizeParams`` (the sort-columns params model of
    sort-and-size style execution strategies), ``ONE_FILE`` (a target size no file reaches: the writer never rolls).
    Out of core, for a strategy that streams a group itself (the consistent-bucket execution): ``group_schema``,
    ``slice_batches`` (the group's rows, slice by slice in batches), ``range_allowance``, ``spill_directory``,
    ``RangeSpill`` (rows routed to runs held in memory or spilled), ``ColumnsKey``/``SortKey`` and ``write_run``.
    Row order: ``sort_rows`` (linear, z-order, Hilbert) and ``hilbert_transposed``.
Update strategies:
    ``UpdateContext`` and ``UpdateDecision``.
Plans and tables:
    ``read_plan`` (a stored clustering plan), ``group_metrics``, ``load_table_config`` (``hoodie.properties``).
Interfaces, checked by mypy when a strategy subclasses its kind's:
    ``PlanStrategy``, ``ExecutionStrategy``, ``UpdateStrategy`` (:mod:`hudi_cluster_core.protocols`).
Errors:
    ``ConfigError``, ``PlanError``, ``TimelineChanged``.
Footer statistics:
    ``footer_stats_provider`` (what ``context.slice_stats`` reads in production).
Layout figures (docs/layout-report.md):
    ``overlap_figures`` (Hudi's column-stats overlap), ``expected_files`` and ``positions`` (files a query opens),
    ``predict_files_per_query`` with ``FileRanges``/``PlannedRewrite``/``QueryFiles`` (before -> after a plan).
"""

from __future__ import annotations

from pydantic import Field

from .config import ClusteringConfig, StrategyParams, validate_strategy_params
from .config import catalogue as keys
from .config.catalogue import column_names
from .config.sort_columns import check_sort_columns, parse_sort_columns
from .errors import ConfigError, PlanError, TimelineChanged
from .hookspecs import hookimpl
from .sort.curve_bits import hilbert_transposed
from .sort.curves import sort_rows
from .plan.defaults import SortAndSizeParams, execution_strategy, finalize_groups, select_slices, sort_columns_params
from .plan.eligibility import select_eligible_slices
from .plan.footer_stats import footer_stats_provider
from .plan.limits import SizeLimits
from .layout import Layout, curve_name, parse_layout
from .plan.avro_plan import group_metrics, read_plan
from .plan.model import PlanContext, PlannedGroup, SliceStats, UpdateContext, UpdateDecision
from .plan.packing import GroupCutter, cut_in_order, overlapping_components, pack_by_size, slices_by_partition
from .protocols import ExecutionStrategy, PlanStrategy, UpdateStrategy
from .report.overlap import RANGE_QUERY_FRACTION, expected_files, overlap_figures, positions
from .report.predict import FileRanges, PlannedRewrite, QueryFiles, predict_files_per_query
from .sort.out_of_core import group_schema, range_allowance, slice_batches, spill_directory
from .sort.spill import ColumnsKey, RangeSpill, SortKey, write_run
from .run.task import ONE_FILE, GroupTask
from .table import FileSlice
from .table.naming import BaseFile, LogFile
from .table.properties import load_table_config

PARAMS_KEY_PREFIX = keys.STRATEGY_PARAM_PREFIX
SORT_COLUMNS_KEY = keys.SORT_COLUMNS  # the name plugins written so far import


def params_key(strategy_name: str, setting: str) -> str:
    """The config key of a strategy's own setting: ``hoodie.clustering.plan.strategy.`` + the strategy's name
    with ``-`` turned into ``.`` + ``.`` + the setting. ``params_key("my-strategy", "min.slices")`` is
    ``hoodie.clustering.plan.strategy.my.strategy.min.slices``, as Hudi spells its own keys."""
    return f"{PARAMS_KEY_PREFIX}{strategy_name.replace('-', '.')}.{setting}"


__all__ = [
    "ONE_FILE", "PARAMS_KEY_PREFIX", "RANGE_QUERY_FRACTION", "SORT_COLUMNS_KEY", "BaseFile", "FileRanges",
    "PlannedRewrite", "QueryFiles", "expected_files", "overlap_figures", "positions", "predict_files_per_query", "ClusteringConfig", "ColumnsKey", "ConfigError",
    "ExecutionStrategy", "Field", "FileSlice", "GroupCutter", "GroupTask", "Layout", "LogFile", "PlanContext",
    "PlanError", "PlanStrategy", "PlannedGroup", "RangeSpill", "SizeLimits", "SliceStats", "SortAndSizeParams",
    "SortKey", "StrategyParams", "TimelineChanged", "UpdateContext", "UpdateDecision", "UpdateStrategy", "curve_name",
    "check_sort_columns", "column_names",
    "cut_in_order", "execution_strategy", "finalize_groups", "footer_stats_provider", "group_metrics", "group_schema",
    "hilbert_transposed", "hookimpl", "keys", "load_table_config", "overlapping_components", "pack_by_size", "params_key", "parse_layout", "parse_sort_columns",
    "range_allowance", "read_plan", "select_eligible_slices", "select_slices", "slice_batches", "slices_by_partition",
    "sort_columns_params", "sort_rows", "spill_directory", "validate_strategy_params", "write_run",
]  # fmt: skip
