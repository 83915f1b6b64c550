"""Java ``.properties`` files (``hoodie.properties``, ``clusteringjob.properties``).

Hudi writes and reads these with ``java.util.Properties``: ``key=value`` or ``key: value`` or ``key value``,
``#``/``!`` comments, backslash escapes (``\\:``, ``\\=``, ``\\uXXXX``), and line continuations.
"""

from __future__ import annotations

import re

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2 : i + 6] or ""):
                out.append(chr(int(text[i + 2 : i + 6], 16)))
                i += 6
                continue
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _logical_lines(text: str):
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip() if not pending else raw.lstrip()
        if not pending and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:  # odd number of backslashes: continuation
            pending += line[:-1]
            continue
        yield pending + line
        pending = ""
    if pending:
        yield pending


def parse(text: str) -> dict[str, str]:
    """Parse properties text into an ordered dict, as ``java.util.Properties.load`` does."""
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        i = 0
        while i < len(line):
            ch = line[i]
            if ch == "\\":
                i += 2
                continue
            if ch in "=: \t\f":
                break
            i += 1
        key = line[:i]
        rest = line[i:].lstrip(" \t\f")
        if rest[:1] in ("=", ":") and (i < len(line) and line[i] in " \t\f" or True):
            if rest[:1] in ("=", ":"):
                rest = rest[1:].lstrip(" \t\f")
        props[_unescape(key)] = _unescape(rest)
    return props


def _escape(text: str, is_key: bool) -> str:
    out = []
    for idx, ch in enumerate(text):
        if ch in "\\=:#!":
            out.append("\\" + ch)
        elif ch == " " and (is_key or idx == 0):
            out.append("\\ ")
        elif ch in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[ch])
        elif ord(ch) < 0x20 or ord(ch) > 0x7E:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return "".join(out)


def dump(props: dict[str, str], header: str | None = None) -> str:
    """Render properties as ``java.util.Properties.store`` would (escapes included)."""
    lines = [f"#{header}"] if header else []
    lines += [f"{_escape(k, True)}={_escape(v, False)}" for k, v in props.items()]
    return "\n".join(lines) + "\n"
