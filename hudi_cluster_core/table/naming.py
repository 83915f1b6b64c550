"""Hudi's file names: base files, log files, write tokens, file ids (docs/format.md#file-names)."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

BASE_FILE_RE = re.compile(r"^([a-zA-Z0-9-]+)_([a-zA-Z0-9-]+)_([0-9]+)(\.[a-zA-Z0-9]+)$")
LOG_FILE_RE = re.compile(r"^\.([^._]+)_([^.]*)\.(log|archive)\.(\d+)(_((\d+)-(\d+)-(\d+))(\.cdc)?)?$")


@dataclass(frozen=True)
class BaseFile:
    name: str
    file_id: str
    write_token: str
    instant: str
    size: int = 0


@dataclass(frozen=True)
class LogFile:
    name: str
    file_id: str
    instant: str  # v6: the slice's base instant; v8+: the deltacommit that wrote it
    version: int
    write_token: str
    size: int = 0


def parse_base_file(name: str, size: int = 0) -> BaseFile | None:
    match = BASE_FILE_RE.match(name)
    if not match:
        return None
    return BaseFile(name, match.group(1), match.group(2), match.group(3), size)


def parse_log_file(name: str, size: int = 0) -> LogFile | None:
    match = LOG_FILE_RE.match(name)
    if not match or match.group(3) != "log":
        return None
    return LogFile(name, match.group(1), match.group(2), int(match.group(4)), match.group(6) or "", size)


def make_base_file_name(file_id: str, write_token: str, instant: str, extension: str = ".parquet") -> str:
    return f"{file_id}_{write_token}_{instant}{extension}"


def make_write_token(task_partition_id: int, stage_id: int | str, task_attempt_id: int) -> str:
    return f"{task_partition_id}-{stage_id}-{task_attempt_id}"


def new_file_id(index: int = 0, prefix: str | None = None) -> str:
    """``<uuid>-<n>``: never reuse one, a replaced file id stays hidden forever."""
    return f"{prefix or uuid.uuid4()}-{index}"
