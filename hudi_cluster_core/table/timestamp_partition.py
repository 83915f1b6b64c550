"""The partition path of Hudi's timestamp-based key generator (and the custom one's ``field:TIMESTAMP`` parts).

Facts from Apache Hudi 1.1.1 (``TimestampBasedAvroKeyGenerator``, ``HoodieDateTimeParser``,
``TimestampKeyGeneratorConfig``):

* ``hoodie.keygen.timebased.timestamp.type``: ``EPOCHMILLISECONDS``, ``EPOCHMICROSECONDS``, ``UNIX_TIMESTAMP``
  (seconds), ``SCALAR`` (unit ``hoodie.keygen.timebased.timestamp.scalar.time.unit``, default ``SECONDS``), or
  ``DATE_STRING``/``MIXED`` (strings parsed with ``hoodie.keygen.timebased.input.dateformat``, formats split by
  ``...input.dateformat.list.delimiter.regex``, default ``,``). A number becomes milliseconds with Java's
  ``TimeUnit`` (truncating toward zero); doubles, floats and decimals are truncated to a long first; a date is
  its epoch day taken in that unit; a timestamp column is its stored number unless
  ``...consistent.logical.timestamp.enabled`` (then its milliseconds). A null value is ``1`` in that unit
  (for date strings: epoch millisecond 1 printed in the first input format).
* The path is those milliseconds printed with the Joda pattern ``hoodie.keygen.timebased.output.dateformat`` in
  ``hoodie.keygen.timebased.timezone`` when set, else ``...output.timezone``; with neither, the JVM's zone (here
  the process's local zone). A date string without an output zone keeps the zone it was parsed in.

The Joda letters printed here: ``y Y M d D H h k K m s S E a``, quoted text and any other character as it is.
A pattern with another letter is refused with the key named.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import ConfigError, TableError

PREFIX = "hoodie.keygen.timebased."
TYPE_KEY, UNIT_KEY = PREFIX + "timestamp.type", PREFIX + "timestamp.scalar.time.unit"
OUTPUT_FORMAT_KEY, INPUT_FORMAT_KEY = PREFIX + "output.dateformat", PREFIX + "input.dateformat"
INPUT_DELIMITER_KEY = PREFIX + "input.dateformat.list.delimiter.regex"
ZONE_KEY, INPUT_ZONE_KEY, OUTPUT_ZONE_KEY = PREFIX + "timezone", PREFIX + "input.timezone", PREFIX + "output.timezone"
_OLD_PREFIX = "hoodie.deltastreamer.keygen.timebased."  # Hudi's alternative names
_UNIT_MS = {"NANOSECONDS": Fraction(1, 1_000_000), "MICROSECONDS": Fraction(1, 1000), "MILLISECONDS": Fraction(1),
            "SECONDS": Fraction(1000), "MINUTES": Fraction(60_000), "HOURS": Fraction(3_600_000),
            "DAYS": Fraction(86_400_000)}  # fmt: skip
_TYPE_UNITS = {"EPOCHMILLISECONDS": "MILLISECONDS", "EPOCHMICROSECONDS": "MICROSECONDS", "UNIX_TIMESTAMP": "SECONDS"}
TYPES = (*_TYPE_UNITS, "SCALAR", "DATE_STRING", "MIXED")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")  # fmt: skip
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_PRINTED = set("yYMdDHhkKmsSEa")
_PARSED = {"y": r"-?\d{1,9}", "Y": r"-?\d{1,9}", "M": r"\d{1,2}", "d": r"\d{1,2}", "H": r"\d{1,2}", "m": r"\d{1,2}",
           "s": r"\d{1,2}", "S": r"\d{1,9}", "Z": r"Z|[+-]\d{2}:?\d{2}"}  # fmt: skip


@dataclass(frozen=True)
class TimestampPartition:
    timestamp_type: str
    unit_ms: Fraction | None  # milliseconds per unit of a number (None: numbers are refused, as by Hudi)
    output_pattern: str
    output_zone: str | None  # None: the local zone
    input_patterns: tuple[str, ...] = ()
    input_zone: str | None = None

    @classmethod
    def from_settings(cls, setting: Callable[..., str]) -> "TimestampPartition":
        def get(key: str, default: str = "") -> str:
            return setting(key) or setting(_OLD_PREFIX + key.removeprefix(PREFIX)) or default

        kind = get(TYPE_KEY).upper()
        if kind not in TYPES:
            raise ConfigError(f"{TYPE_KEY}={kind!r}: accepted: {', '.join(TYPES)}")
        unit = _TYPE_UNITS.get(kind) or (get(UNIT_KEY, "SECONDS").upper() if kind == "SCALAR" else None)
        if unit is not None and unit not in _UNIT_MS:
            raise ConfigError(f"{UNIT_KEY}={unit!r}: accepted: {', '.join(_UNIT_MS)}")
        output = get(OUTPUT_FORMAT_KEY)
        _tokens(output, OUTPUT_FORMAT_KEY, _PRINTED)  # refused now, not per row
        inputs: tuple[str, ...] = ()
        if kind in ("DATE_STRING", "MIXED"):
            inputs = tuple(p.strip() for p in re.split(get(INPUT_DELIMITER_KEY, ","), get(INPUT_FORMAT_KEY)) if p.strip())
            if not inputs:
                raise ConfigError(f"{INPUT_FORMAT_KEY} is required with {TYPE_KEY}={kind}; accepted: Joda patterns")
            for pattern in inputs:
                _tokens(pattern, INPUT_FORMAT_KEY, set(_PARSED))
        zone = get(ZONE_KEY)
        return cls(kind, _UNIT_MS[unit] if unit else None, output, zone or get(OUTPUT_ZONE_KEY) or None, inputs,
                   zone or get(INPUT_ZONE_KEY) or None)  # fmt: skip

    def format(self, values: pa.Array, consistent_timestamps: bool) -> pa.Array:
        """The partition text of every value (the distinct values are few: each is printed once)."""
        kind = values.type
        if pa.types.is_timestamp(kind) and consistent_timestamps and kind.tz is not None and kind.unit in ("ms", "us"):
            raw = values.cast(pa.int64())  # Hudi's java.sql.Timestamp: its milliseconds, whatever the unit says
            values = raw if kind.unit == "ms" else pc.cast(pc.divide(raw, 1000), pa.int64())  # truncated toward 0
            return self._each(values, lambda millis: _print(millis, self._output_zone(), self.output_pattern))
        if pa.types.is_date(kind):
            values = values.cast(pa.date32()).cast(pa.int32())  # its epoch day, as Hudi reads a LocalDate
        elif pa.types.is_timestamp(kind) or pa.types.is_time(kind):
            values = values.cast(pa.int64())  # the stored number, as Hudi reads it
        return self._each(values, self._text)

    @staticmethod
    def _each(values: pa.Array, text: Callable) -> pa.Array:
        distinct = pc.unique(values)
        texts = pa.array([text(v) for v in distinct.to_pylist()], pa.string())
        return pc.take(texts, pc.index_in(values, distinct))

    def _output_zone(self) -> dt.tzinfo | None:
        return _zone(self.output_zone) if self.output_zone else None

    def _text(self, value) -> str:
        if value is None and self.input_patterns:  # Hudi's default value: epoch millisecond 1, as a date string
            zone = self.input_zone or self.output_zone
            value = _print(1, _zone(zone) if zone else dt.timezone.utc, self.input_patterns[0])
        if isinstance(value, str):
            if not self.input_patterns:
                raise ConfigError(f"{TYPE_KEY}={self.timestamp_type}: a string partition value needs "
                                  f"{TYPE_KEY}=DATE_STRING and {INPUT_FORMAT_KEY}")  # fmt: skip
            millis, parsed_zone = self._parse(value)
            return _print(millis, self._output_zone() or parsed_zone, self.output_pattern)
        if self.unit_ms is None:
            raise ConfigError(f"{TYPE_KEY}={self.timestamp_type} takes date strings; the partition field holds numbers")
        number = 1 if value is None else _java_long(value)
        millis = int(number * self.unit_ms)  # exact, truncated toward zero as TimeUnit.convert does
        return _print(millis, self._output_zone(), self.output_pattern)

    def _parse(self, text: str) -> tuple[int, dt.tzinfo]:
        for pattern in self.input_patterns:
            found = _parse(text, pattern, _zone(self.input_zone) if self.input_zone else None)
            if found is not None:
                return found
        raise TableError(f"partition value {text!r} matches none of {INPUT_FORMAT_KEY}={','.join(self.input_patterns)}")


def _java_long(value) -> int:
    """Java's ``longValue()``: truncated toward zero; NaN is 0 and infinities saturate."""
    if isinstance(value, float) and value != value:
        return 0
    if isinstance(value, float) and abs(value) == float("inf"):
        return (1 << 63) - 1 if value > 0 else -(1 << 63)
    return int(value)


def _zone(name: str) -> dt.tzinfo:
    """Java's ``TimeZone.getTimeZone``: a region, ``UTC``/``GMT``, ``GMT+hh:mm``; an unknown id is GMT, as in Java."""
    offset = re.fullmatch(r"GMT([+-])(\d{1,2}):?(\d{2})?", name)
    if offset:
        minutes = int(offset.group(2)) * 60 + int(offset.group(3) or 0)
        return dt.timezone(dt.timedelta(minutes=minutes if offset.group(1) == "+" else -minutes))
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return dt.timezone.utc


def _tokens(pattern: str, key: str, letters: set[str]) -> list[tuple[str, int]]:
    """A Joda pattern as (letter, count) and ('', literal text) tokens."""
    tokens: list[tuple[str, int]] = []
    for match in re.finditer(r"'((?:[^']|'')*)'|([A-Za-z])\2*|(.)", pattern):
        quoted, letter, other = match.group(1), match.group(2), match.group(3)
        if letter:
            if letter not in letters:
                raise ConfigError(f"{key}={pattern!r}: the Joda letter {letter!r} is not supported here; accepted "
                                  f"letters: {' '.join(sorted(letters))}, quoted text and other characters")  # fmt: skip
            tokens.append((letter, len(match.group(0))))
        else:  # literal text, kept as ("'text", 0); '' is a quote
            tokens.append(("'" + (other if other is not None else (quoted.replace("''", "'") if quoted else "'")), 0))
    return tokens


def _print(millis: int, zone: dt.tzinfo | None, pattern: str) -> str:
    moment = (_EPOCH + dt.timedelta(milliseconds=millis)).astimezone(zone)  # zone None: the local zone
    out = []
    for letter, count in _tokens(pattern, OUTPUT_FORMAT_KEY, _PRINTED):
        if letter.startswith("'"):
            out.append(letter[1:])
        elif letter in "yY":
            out.append(f"{moment.year % 100:02d}" if count == 2 else f"{moment.year:0{count}d}")
        elif letter == "M":
            out.append(_MONTHS[moment.month - 1][:3] if count == 3 else _MONTHS[moment.month - 1] if count > 3
                       else f"{moment.month:0{count}d}")  # fmt: skip
        elif letter == "E":
            out.append(_DAYS[moment.weekday()][: 3 if count <= 3 else None])
        elif letter == "a":
            out.append("AM" if moment.hour < 12 else "PM")
        elif letter == "S":
            out.append(f"{moment.microsecond // 1000:03d}"[:count].ljust(count, "0"))
        else:
            number = {"d": moment.day, "D": moment.timetuple().tm_yday, "H": moment.hour, "h": (moment.hour % 12) or 12,
                      "k": moment.hour or 24, "K": moment.hour % 12, "m": moment.minute, "s": moment.second}[letter]
            out.append(f"{number:0{count}d}")
    return "".join(out)


def _parse(text: str, pattern: str, zone: dt.tzinfo | None) -> tuple[int, dt.tzinfo] | None:
    """Joda's parse of ``text`` (None when it does not match): epoch millis and the zone it was read in."""
    tokens = _tokens(pattern, INPUT_FORMAT_KEY, set(_PARSED))
    regex = "".join(re.escape(t[1:]) if t.startswith("'") else f"(?P<{t}{i}>{_PARSED[t]})"
                    for i, (t, _) in enumerate(tokens))  # fmt: skip
    match = re.fullmatch(regex, text.strip())
    if match is None:
        return None
    parts = {name[0]: value for name, value in match.groupdict().items()}
    offset = parts.get("Z")
    if offset is not None:
        sign, digits = (1, "0000") if offset == "Z" else (1 if offset[0] == "+" else -1, offset[1:].replace(":", ""))
        parsed_zone: dt.tzinfo = dt.timezone(sign * dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
    fraction = parts.get("S", "0")
    moment = dt.datetime(int(parts.get("y", parts.get("Y", "1970"))), int(parts.get("M", 1)), int(parts.get("d", 1)),
                         int(parts.get("H", 0)), int(parts.get("m", 0)), int(parts.get("s", 0)),
                         int(fraction.ljust(3, "0")[:3]) * 1000)  # fmt: skip
    if offset is None:  # no offset in the text: the input zone, else (Joda's withOffsetParsed) the JVM's zone
        moment = moment.replace(tzinfo=zone) if zone else moment.astimezone()
        parsed_zone = moment.tzinfo or dt.timezone.utc
    else:
        moment = moment.replace(tzinfo=parsed_zone)
    # an input zone is the parsed time's zone (Joda's withZone), else the offset read
    return (moment - _EPOCH) // dt.timedelta(milliseconds=1), zone or parsed_zone
