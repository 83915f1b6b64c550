"""Hudi's properties files, read as ``DFSPropertiesConfiguration`` reads them (``HoodieClusteringJob --props``).

Not ``java.util.Properties``: ``key=value`` or ``key value``, ``#`` comments, whitespace runs collapsed to one
space, key and value trimmed, no backslash escapes, no ``${...}`` substitution, ``include=other.properties``
relative to the including file (on the same store). ``hudi-defaults.conf`` is read from ``/etc/hudi/conf`` (if
present), then from ``$HUDI_CONF_DIR`` (if set; it must exist). Every entry is ``(key, value, source)``, the
source naming the file and line for messages; problems are collected, never raised, so that
:func:`~hudi_cluster_core.config.load_config` reports them all at once.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from ..io.registry import is_local, local_path, scheme_of

DEFAULTS_FILE_NAME = "hudi-defaults.conf"
DEFAULT_CONF_DIR = Path("/etc/hudi/conf")
CONF_DIR_ENV = "HUDI_CONF_DIR"
Entry = tuple[str, str, str]  # (key, value, source)

_JAVA_WS = re.compile(r"[ \t\n\x0b\f\r]+")
_JAVA_TRIM = "".join(chr(c) for c in range(0x21))


def global_defaults(problems: list[str]) -> list[Entry]:
    """The entries of ``hudi-defaults.conf`` (``/etc/hudi/conf``, then ``$HUDI_CONF_DIR``), lowest precedence first."""
    entries: list[Entry] = []
    default = DEFAULT_CONF_DIR / DEFAULTS_FILE_NAME
    if default.is_file():
        entries += read_props(default, problems, set(), "hudi-defaults.conf")
    conf_dir = os.environ.get(CONF_DIR_ENV)
    if conf_dir:
        path = Path(local_path(str(conf_dir))) / DEFAULTS_FILE_NAME
        if path != default:
            entries += read_props(path, problems, set(), f"{CONF_DIR_ENV}={conf_dir}")
    return entries


def _read_remote_props(
    uri: str, problems: list[str], seen: set[str], via: str, storage_keys: Mapping[str, str]
) -> list[Entry]:
    """A properties file on an object store (``s3a://bucket/conf/job.properties``); includes relative to it."""
    from ..errors import HudiClusterError
    from ..io.storage import Storage

    if uri in seen:
        problems.append(f"{via} {uri}: include loop; the file is already being read")
        return []
    try:
        storage = Storage(uri.rsplit("/", 1)[0], storage_keys)
        data = storage.read_bytes(storage.strip_scheme(uri))
        text = data.decode("utf-8-sig")
    except FileNotFoundError:
        problems.append(f"{via} {uri}: properties file does not exist")
        return []
    except HudiClusterError as exc:
        problems.append(f"{via} {uri}: {exc}")
        return []
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{via} {uri}: properties file cannot be read: {' '.join(str(exc).split())[:300]}")
        return []
    return _parse_props(text, uri, problems, seen | {uri}, storage_keys)


def read_props(
    path: str | Path, problems: list[str], seen: set[str], via: str, storage_keys: Mapping[str, str] | None = None
) -> list[Entry]:
    """``DFSPropertiesConfiguration`` semantics: entries (key, value, "file:line") in file order, includes inline."""
    if not is_local(str(path)):
        return _read_remote_props(str(path), problems, seen, via, storage_keys or {})
    local = Path(local_path(str(path)))
    marker = str(local.resolve())
    if marker in seen:
        problems.append(f"{via} {path}: include loop; the file is already being read")
        return []
    try:
        text = local.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        problems.append(f"{via} {path}: properties file does not exist")
        return []
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        problems.append(f"{via} {path}: properties file cannot be read: {reason}")
        return []
    return _parse_props(text, str(local), problems, seen | {marker}, storage_keys or {})


def _include_target(location: str, value: str) -> str | Path:
    """``include=`` is relative to the including file, on the same store."""
    if not is_local(value):
        return value
    if not is_local(location):
        return value if scheme_of(value) else location.rsplit("/", 1)[0] + "/" + value
    target = Path(local_path(value))
    return target if target.is_absolute() else Path(location).parent / target


def _parse_props(
    text: str, location: str, problems: list[str], seen: set[str], storage_keys: Mapping[str, str]
) -> list[Entry]:
    entries: list[Entry] = []
    for lineno, line in enumerate(re.split(r"\r\n|\r|\n", text), 1):
        stripped = line.strip(_JAVA_TRIM)
        if not stripped or stripped.startswith("#"):
            continue
        where = f"{location}:{lineno}"
        if "=" not in line and not _JAVA_WS.search(stripped):
            problems.append(f"{where}: {stripped!r} has no value; accepted: key=value or key value")
            continue
        collapsed = _JAVA_WS.sub(" ", line)
        key, _, value = collapsed.partition("=" if "=" in collapsed else " ")
        key, value = key.strip(_JAVA_TRIM), value.strip(_JAVA_TRIM)
        if line.startswith(("include=", "include =")):
            entries += read_props(_include_target(location, value), problems, seen, f"{where} include", storage_keys)
        elif not key:
            problems.append(f"{where}: {stripped!r} has an empty key; accepted: key=value")
        else:
            entries.append((key, value, where))
    return entries
