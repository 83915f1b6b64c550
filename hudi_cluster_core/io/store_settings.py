"""What every object store's settings module does alike: read the job's keys, tell a map shipped from the driver
from one to resolve here, check its timeouts and retries, and read them back from the resolved map.

Each store (:mod:`.azure_settings`, :mod:`.gcs_settings`, :mod:`.s3_settings`) keeps its own keys, sources and
credential chain; only these rules, the same for all, live here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Mapping

from ..errors import ConfigError
from .store import RESOLVED


def job_keys(conf: Mapping[str, str]) -> dict[str, str]:
    """The job's keys as Hadoop names them (a ``spark.hadoop.`` prefix dropped), values trimmed."""
    return {k.removeprefix("spark.hadoop."): str(v).strip() for k, v in conf.items()}


def shipped(given: Mapping[str, str]) -> bool:
    """Whether ``given`` was resolved on the driver and shipped here: then it is used as it is, nothing looked up."""
    return given.get(RESOLVED) == "true"


def whole_number(key: str, value: str, minimum: int) -> str:
    """``value`` of ``key`` as a whole number of at least ``minimum``, or one line naming the key and what is accepted."""
    try:
        number = int(value.strip())
    except ValueError:
        number = minimum - 1
    if number < minimum:
        raise ConfigError(f"{key}={value!r}: accepted: a whole number >= {minimum}")
    return str(number)


def timeouts_and_retries(given: Mapping[str, str], defaults: Mapping[str, str], retries_key: str) -> dict[str, str]:
    """Each key of ``defaults`` (the timeouts and the retries) from ``given`` or its default, checked: a timeout is at
    least 1 ms, the retries at least 0."""
    return {key: whole_number(key, given.get(key) or default, 0 if key == retries_key else 1)
            for key, default in defaults.items()}  # fmt: skip


@dataclass(frozen=True)
class ResolvedSettings:
    """A resolved map; a store's subclass names its timeout, retry and credential keys and translates the map for
    each client."""

    options: Mapping[str, str]
    CONNECT_TIMEOUT_KEY: ClassVar[str]
    READ_TIMEOUT_KEY: ClassVar[str]
    RETRIES_KEY: ClassVar[str]
    CREDENTIAL_KEY: ClassVar[str]

    @property
    def credential(self) -> str:
        return self.options[self.CREDENTIAL_KEY]

    def attempts(self) -> int:
        return int(self.options[self.RETRIES_KEY]) + 1

    def timeouts_ms(self) -> tuple[int, int]:
        return int(self.options[self.CONNECT_TIMEOUT_KEY]), int(self.options[self.READ_TIMEOUT_KEY])
