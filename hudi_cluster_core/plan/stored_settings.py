"""The job settings a plan carries in its strategy params, so that it executes as it was scheduled.

Apache Hudi executes a plan with the strategy params and ``numOutputFileGroups`` stored in it. The output file
size and the row order a plan was scheduled for are settings of the job, not params of the strategy, so they are
stored beside the params: ``target.file.max.bytes`` always (its value in effect when scheduled), the layout keys
(``hoodie.layout.optimize.*``) when the scheduling job set them (a strategy may have a default of its own, as
``space-curve`` has ZORDER). At execution the plan's values win; an executing job that sets one of them to
another value gets one warning line naming both, never a silent change. Apache Hudi ignores params its strategy
does not read, so such a plan stays executable by Hudi too.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..config import catalogue

ALWAYS_STORED = (catalogue.TARGET_FILE_MAX_BYTES,)
STORED_WHEN_SET = (
    catalogue.LAYOUT_STRATEGY, catalogue.LAYOUT_CURVE_BUILD_METHOD, catalogue.LAYOUT_BUILD_CURVE_SAMPLE_SIZE,
)  # fmt: skip
STORED_KEYS = ALWAYS_STORED + STORED_WHEN_SET


def _given(settings: Mapping[str, Any], key: str) -> str | None:
    """The value of ``key`` as given (under its name or an alias), or None."""
    spec = catalogue.BY_KEY[key]
    return next((str(settings[n]) for n in (spec.key, *spec.aliases) if n in settings), None)


def settings_to_store(raw: Mapping[str, Any]) -> dict[str, str]:
    """The job settings a plan stores, as strings: the target in effect, and the layout keys the job sets."""
    stored = {key: str(catalogue.read(raw, key)) for key in ALWAYS_STORED}
    for key in STORED_WHEN_SET:
        if _given(raw, key) is not None:
            stored[key] = str(catalogue.read(raw, key))
    return stored


def split_stored(plan_params: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """``(the strategy's own params, the job settings stored with them)`` of a plan's strategy params."""
    own = {k: v for k, v in plan_params.items() if k not in STORED_KEYS}
    stored = {k: v for k, v in plan_params.items() if k in STORED_KEYS}
    return own, stored


def settings_in_effect(stored: Mapping[str, str], raw: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    """The executing job's settings with the plan's stored ones in their place, and one warning per setting the
    job gives another value (compared as parsed: ``16777216`` and ``16777216 `` are one value)."""
    settings = {k: str(v) for k, v in raw.items()}
    warnings = []
    for key, planned in stored.items():
        spec = catalogue.BY_KEY[key]
        given = _given(raw, key)
        for name in (spec.key, *spec.aliases):
            settings.pop(name, None)
        settings[key] = planned
        if given is not None and _parsed(key, given) != _parsed(key, planned):
            warnings.append(f"{key}: the plan's {planned} is used, not this run's {given} (a plan executes with the "
                            "settings it was scheduled with)")  # fmt: skip
    return settings, warnings


def layout_in_effect(execution, settings: Mapping[str, Any]) -> str:
    """The layout ``execution`` (an execution strategy) would sort in: the job's setting, else its params model's
    default (e.g. ZORDER for space-curve), else Hudi's (LINEAR)."""
    key = catalogue.LAYOUT_STRATEGY
    if _given(settings, key) is not None:
        return str(catalogue.read(settings, key))
    model = getattr(execution, "params_model", None)
    for model_field in (model.model_fields.values() if model is not None else ()):
        if model_field.alias == key:
            return str(model_field.default)
    return str(catalogue.BY_KEY[key].default)


def _parsed(key: str, value: str) -> Any:
    try:
        return catalogue.BY_KEY[key].parse(value)
    except ValueError:
        return value
