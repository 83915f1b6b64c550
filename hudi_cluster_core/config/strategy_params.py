"""A strategy's own params: the pydantic model a plugin declares (``params_model``), read from Hudi-style keys.

Values arrive as strings (a job's properties, a plan's ``strategyParams``) and are converted as Hudi converts
them; every problem is reported at once, each naming the key, the value and what is accepted.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Mapping
from typing import Annotated, Any, Callable

import pydantic
from pydantic import BaseModel, ConfigDict

from ..errors import ConfigError
from .catalogue import Key, Kind, join_problems

PLUGIN_KEYS: dict[str, str] = {}  # Hudi key -> StrategyParams subclass declaring it
_KEY_SOURCES: list[Callable[[], object]] = []


def add_key_source(load: Callable[[], object]) -> None:
    """``load`` imports modules that may declare keys: ``hudi_cluster_core.plugins`` adds its loader of the
    installed plugins when it is imported (config cannot import it: plugins are built on config), as every entry
    point (the CLI, ``api``, ``ingest``) does before it loads a job's configuration."""
    _KEY_SOURCES.append(load)


def plugin_declares(key: str) -> bool:
    """Whether a strategy's params model declares ``key``, once the key sources have loaded what they know."""
    for load in _KEY_SOURCES if key not in PLUGIN_KEYS else ():
        try:
            load()
        except Exception:  # noqa: BLE001 - a broken plugin is reported when the registry is built for the run
            pass
    return key in PLUGIN_KEYS


def strategy_params(strategy: Any, raw: Mapping[str, Any]) -> "StrategyParams | None":
    """The params ``strategy`` declares (its ``params_model``), validated from the keys of ``raw`` it names.

    ``raw`` is the job's configuration or a plan's ``strategyParams``; keys the model does not declare are ignored.
    None when the strategy declares no params."""
    model = getattr(strategy, "params_model", None)
    if model is None:
        return None
    known = {info.alias or name for name, info in model.model_fields.items()}
    params = validate_strategy_params(model, {k: v for k, v in raw.items() if k in known}, strategy=strategy.name)
    return typing.cast("StrategyParams", params)


class StrategyParams(BaseModel):
    """Base of a strategy's params model: fields aliased to Hudi keys, values given as strings.

    Frozen, unknown params rejected, populated by alias or field name; strings are trimmed and converted as Hudi
    does (``true``/``false`` any case, Java integers and doubles) by :func:`validate_strategy_params`. The aliases
    of every subclass become known keys, so ``hoodie.clustering.plan.strategy.<own-key>`` loads without error.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, str_strip_whitespace=True)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        for name, info in cls.model_fields.items():
            PLUGIN_KEYS.setdefault(info.alias or name, f"{cls.__module__}.{cls.__qualname__}")


def validate_strategy_params(model: type[BaseModel], params: Mapping[str, Any], *, strategy: str) -> BaseModel:
    """``params`` (a plan's ``strategyParams``: strings) validated by ``model``; one ConfigError for all problems.

    A rejected value's message ends with the field's ``description``: what the setting means is what the user
    needs to pick a value."""
    by_key = {(info.alias or name): (name, info) for name, info in model.model_fields.items()}
    by_key.update({name: (name, info) for name, info in model.model_fields.items() if name not in by_key})
    problems, data, given = [], {}, {}

    def meaning(key: str) -> str:
        info = by_key[key][1] if key in by_key else None
        return f" ({info.description.rstrip('.')})" if info is not None and info.description else ""

    for key, value in params.items():
        if key not in by_key:
            close = difflib.get_close_matches(key, list(by_key), n=1, cutoff=0.6)
            hint = f"did you mean '{close[0]}'?" if close else f"accepted: {', '.join(sorted(by_key)) or 'no params'}"
            problems.append(f"strategy '{strategy}': unknown param '{key}'; {hint}")
            continue
        name, info = by_key[key]
        given[info.alias or name] = value
        try:
            data[info.alias or name] = _coerce(info.annotation, value)
        except ValueError as exc:
            accepted = _accepted_for(info.annotation)
            problems.append(f"strategy '{strategy}': {key}={value!r}: {exc}; accepted: {accepted}{meaning(key)}")
    if not problems:
        try:
            return model.model_validate(data)
        except pydantic.ValidationError as exc:
            for err in exc.errors():
                key = str(err["loc"][0]) if err["loc"] else "(params)"
                shown = f"missing param '{key}'" if err["type"] == "missing" else f"{key}={given.get(key, err['input'])!r}"
                problems.append(
                    f"strategy '{strategy}': {shown}: {err['msg']}; accepted: {_accepted(err, model, key)}{meaning(key)}"
                )
    raise ConfigError(join_problems(problems))


def _base_type(annotation: Any) -> Any:
    """``bool`` for ``bool``, ``Optional[bool]``, ``Annotated[bool | None, ...]``; else the annotation itself."""
    while typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation


def _coerce(annotation: Any, value: Any) -> Any:
    base = _base_type(annotation)
    if not isinstance(value, str) or base not in (bool, int, float):
        return value
    kinds: dict[Any, Kind] = {bool: "bool", int: "long", float: "double"}
    kind = kinds[base]
    spec = Key("param", "param", kind, None, "", lo=float("-inf") if kind == "long" else None,
               hi=float("inf") if kind == "long" else None)  # fmt: skip
    return spec.parse(value)


def _accepted_for(annotation: Any) -> str:
    base = _base_type(annotation)
    return {bool: "true or false (any case)", int: "an integer", float: "a number"}.get(base, "text")


def _accepted(err: Mapping[str, Any], model: type[BaseModel], key: str) -> str:
    ctx = err.get("ctx") or {}
    bounds = {"greater_than_equal": ">= {ge}", "greater_than": "> {gt}", "less_than_equal": "<= {le}",
              "less_than": "< {lt}", "literal_error": "{expected}", "enum": "{expected}",
              "string_pattern_mismatch": "text matching {pattern}", "string_too_short": "at least {min_length} chars",
              "string_too_long": "at most {max_length} chars"}  # fmt: skip
    if err["type"] in bounds:
        return bounds[err["type"]].format(**ctx)
    info = next((f for n, f in model.model_fields.items() if key in (n, f.alias)), None)
    if info is not None and info.description:
        return info.description
    return _accepted_for(info.annotation) if info is not None else "see the strategy's documentation"


def describe_params(model: type[BaseModel] | None) -> tuple[dict[str, Any], ...]:
    """Each key a params model declares: ``key``, ``type`` (bool, long, double, str or ``enum: A, B``), ``default``
    (None when there is none), ``required`` and ``description``; for ``hudi-cluster plugins``."""
    if model is None:
        return ()
    def shown(default: Any) -> Any:  # JSON as it is, anything else as text
        return default if isinstance(default, (str, int, float, bool, type(None))) else str(default)

    return tuple(
        {"key": info.alias or name, "type": _type_name(info.annotation), "required": info.is_required(),
         "default": None if info.is_required() else shown(info.get_default(call_default_factory=True)),
         "description": info.description or ""}
        for name, info in model.model_fields.items()
    )  # fmt: skip


def _type_name(annotation: Any) -> str:
    base = _base_type(annotation)
    if typing.get_origin(base) is typing.Literal:
        return "enum: " + ", ".join(str(v) for v in typing.get_args(base))
    return {bool: "bool", int: "long", float: "double", str: "str"}.get(base, str(base))
