"""The space-curve params: sort columns (from the plan) and Hudi's layout keys (from the job's settings).

Hudi keeps ``hoodie.layout.optimize.*`` out of the clustering plan: ``SparkSortAndSizeExecutionStrategy`` reads
them from the write config of the job that executes the plan. So does :func:`params_for_task`: the plan supplies
the sort columns, ``task.settings`` the layout keys, and the one model validates both.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Mapping

from hudi_cluster_core.sdk import (
    SORT_COLUMNS_KEY, Layout, StrategyParams, column_names, curve_name, keys, parse_layout, validate_strategy_params,
)  # fmt: skip
from pydantic import BeforeValidator, Field, field_validator

LAYOUT_KEY = keys.LAYOUT_STRATEGY
BUILD_METHOD_KEY = keys.LAYOUT_CURVE_BUILD_METHOD
SAMPLE_SIZE_KEY = keys.LAYOUT_BUILD_CURVE_SAMPLE_SIZE
LAYOUT_SETTING_KEYS = (LAYOUT_KEY, BUILD_METHOD_KEY, SAMPLE_SIZE_KEY)


def _canonical_layout(value: Any) -> Any:
    """The core's layout parser (Hudi's spellings, any case); unknown names pass through unchanged so the
    Literal check rejects them, listing the accepted names."""
    try:
        return parse_layout(value)
    except ValueError:
        return value


def _upper(value: Any) -> Any:
    return value.strip().upper() if isinstance(value, str) else value


class SpaceCurveParams(StrategyParams):
    sort_columns: str = Field(
        alias=SORT_COLUMNS_KEY,
        description="Comma-separated distinct columns to build the curve on (two or more; one is a plain sort).",
    )
    layout: Annotated[Layout, BeforeValidator(_canonical_layout)] = Field(
        "ZORDER", alias=LAYOUT_KEY,
        description="LINEAR, ZORDER or HILBERT (any case; also z-order). Unset: ZORDER, this strategy's point.",
    )  # fmt: skip
    build_method: Annotated[Literal["DIRECT", "SAMPLE"], BeforeValidator(_upper)] = Field(
        "DIRECT", alias=BUILD_METHOD_KEY,
        description="DIRECT (curve on the values' bytes) or SAMPLE (curve on sampled range-boundary ranks), any case.",
    )  # fmt: skip
    sample_size: int = Field(
        200000, ge=1, le=2**31 - 1, alias=SAMPLE_SIZE_KEY,
        description="SAMPLE method: rows sampled per group, which is also the most range boundaries per column.",
    )  # fmt: skip

    @field_validator("sort_columns")
    @classmethod
    def _columns_named_once(cls, value: str) -> str:
        columns = column_names(value)  # the core's one rule: trimmed, no empty name, at least one
        repeated = sorted({c for c in columns if columns.count(c) > 1})
        if repeated:  # Hudi's Collectors.toMap fails on a repeated sort column
            raise ValueError(f"names {', '.join(repeated)} more than once")
        return ",".join(columns)

    @property
    def columns(self) -> list[str]:
        return self.sort_columns.split(",")

    @property
    def curve(self) -> str:
        """The layout as the core's sorting helpers name it: linear, z-order or hilbert."""
        return curve_name(self.layout)


def params_for(plan_params: Mapping[str, str], settings: Mapping[str, str], *, strategy: str = "space-curve"):
    """The plan's params plus the layout keys of the executing job (the job wins, as in Hudi)."""
    layout = {k: settings[k] for k in LAYOUT_SETTING_KEYS if k in settings}
    wanted = {k: v for k, v in plan_params.items() if k in (SORT_COLUMNS_KEY, *LAYOUT_SETTING_KEYS)}
    return validate_strategy_params(SpaceCurveParams, {**wanted, **layout}, strategy=strategy)


def params_for_task(task) -> SpaceCurveParams:
    return params_for(task.raw_params, task.settings)
