"""Configuration: every key hudi-cluster reads, how a job's configuration is loaded, and a strategy's params.

- :mod:`.catalogue`: every key once (name, aliases, type, default, doc, accepted values) and the one way a value is
  parsed and a bad one reported; the name constants (``catalogue.SORT_COLUMNS``, ``sdk.keys`` for plugins).
- :mod:`.clustering_config`: the typed, frozen :class:`ClusteringConfig` built from the catalogue.
- :mod:`.load`: :func:`load_config`, Hudi's layers and precedence, unknown keys, checks across keys.
- :mod:`.properties_file`: Hudi's properties-file format (``--props``, ``hudi-defaults.conf``).
- :mod:`.sort_columns`: the one parse of the sort columns and the one "column not in the table" check.
- :mod:`.strategy_params`: a strategy's own params model (:class:`StrategyParams`), validated from strings.
- :mod:`.docs`: the configuration table of ``docs/configuration.md``, generated from the catalogue.
"""

from .catalogue import describe
from .clustering_config import ClusteringConfig, TaskSettings, WriterSettings
from .load import load_config
from .properties_file import CONF_DIR_ENV, DEFAULT_CONF_DIR, DEFAULTS_FILE_NAME
from .strategy_params import StrategyParams, strategy_params, validate_strategy_params

__all__ = [
    "CONF_DIR_ENV", "DEFAULTS_FILE_NAME", "DEFAULT_CONF_DIR", "ClusteringConfig", "StrategyParams", "TaskSettings",
    "WriterSettings", "describe", "load_config", "strategy_params", "validate_strategy_params",
]  # fmt: skip
