"""Values typed by a column: the text an operator types (``amount=12.50``, ``'2024-06-01'``)
or a Python value, read as the value of one Fluss column type.

The values are the *column values* every reader of rows in fluss_proto shares: those of the
row decoders' ``"arrow"`` mode and of light preview rows (:mod:`fluss_proto.scan.rows`):

=================================  ==========================================================
type                               value
=================================  ==========================================================
BOOLEAN                            ``bool``
TINYINT, SMALLINT, INTEGER, BIGINT ``int`` (range-checked)
FLOAT, DOUBLE                      ``float`` (a FLOAT is rounded to 32 bits, as stored)
STRING, CHAR(n)                    ``str``
BYTES, BINARY(n)                   ``bytes`` (BINARY(n) padded with zeros to n)
DECIMAL(p, s)                      ``Decimal`` with exactly ``s`` decimal places
DATE                               ``int`` days since 1970-01-01
TIME(p)                            ``int`` of the Arrow unit: s (p = 0), ms (p <= 3), us, ns
TIMESTAMP(p), TIMESTAMP_LTZ(p)     ``int`` since the epoch in the same unit
=================================  ==========================================================

Texts accepted: integers and decimals as written (``-12``, ``12.50``, ``1e3`` for floats);
``true`` / ``false``; hexadecimal bytes (``0x0a0b`` or ``0a0b``); ``YYYY-MM-DD``;
``HH:MM[:SS[.fraction]]``; ``YYYY-MM-DD[ T]HH:MM[:SS[.fraction]]`` (TIMESTAMP_LTZ also takes
a ``Z`` or ``+HH:MM`` suffix; without one it is UTC). A value finer than its column (a third
decimal place for DECIMAL(10, 2), microseconds for TIMESTAMP(3)) is refused rather than
rounded, so a comparison never silently means another value.

:func:`internal_value` gives what Fluss's binary rows hold (DECIMAL unscaled, TIME in
milliseconds, timestamps as ``(millis, nanos of the millisecond)``), for the key encoder.

Pure: no I/O. Errors are :class:`~fluss_proto.errors.LiteralError` (one line, naming the
column and its type).
"""

from __future__ import annotations

import math
import re
import struct
from datetime import UTC, date, datetime, time
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from fluss_proto.errors import LiteralError
from fluss_proto.records.rowtype import DataType

__all__ = [
    "INTEGER_RANGES",
    "column_value",
    "internal_value",
    "read_quoted",
    "type_text",
    "unscaled_bytes",
]

INTEGER_RANGES: Final = {
    "TINYINT": (-(2**7), 2**7 - 1),
    "SMALLINT": (-(2**15), 2**15 - 1),
    "INTEGER": (-(2**31), 2**31 - 1),
    "BIGINT": (-(2**63), 2**63 - 1),
}
_NANOS_PER_DAY: Final = 86_400 * 10**9
_EPOCH_ORDINAL: Final = date(1970, 1, 1).toordinal()
_F32 = struct.Struct("<f")
_DATE = re.compile(r"([+-]?\d{4,9})-(\d{1,2})-(\d{1,2})")
_TIME = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?")
_OFFSET = re.compile(r"(Z|z|[+-]\d{2}(?::?\d{2})?)$")
_HEX = re.compile(r"(?:0[xX])?((?:[0-9a-fA-F]{2})*)")
_TRUE = frozenset({"true"})
_FALSE = frozenset({"false"})


def type_text(dt: DataType) -> str:
    """The type as Fluss prints it (``DECIMAL(10, 2)``, ``TIMESTAMP_LTZ(3)``, ``STRING``)."""
    root = dt.root
    if root == "DECIMAL":
        body = f"DECIMAL({dt.precision}, {dt.scale})"
    elif root in ("CHAR", "BINARY"):
        body = f"{root}({dt.length})"
    elif root == "TIME_WITHOUT_TIME_ZONE":
        body = f"TIME({dt.precision})"
    elif root == "TIMESTAMP_WITHOUT_TIME_ZONE":
        body = f"TIMESTAMP({dt.precision})"
    elif root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE":
        body = f"TIMESTAMP_LTZ({dt.precision})"
    elif root == "ARRAY" and dt.element is not None:
        body = f"ARRAY<{type_text(dt.element)}>"
    elif root == "MAP" and dt.key is not None and dt.value is not None:
        body = f"MAP<{type_text(dt.key)}, {type_text(dt.value)}>"
    else:
        body = root
    return body if dt.nullable else f"{body} NOT NULL"


def column_value(value: object, dt: DataType, column: str) -> Any:
    """``value`` (a text, or a Python value of the type) as the column value of ``dt``
    (see the module doc). None stays None. Raises :class:`LiteralError`."""
    if value is None:
        return None
    root = dt.root
    reader = _READERS.get(root)
    if reader is None:
        raise LiteralError(column, type_text(dt), "values of this type cannot be given")
    try:
        return reader(value, dt)
    except _Refused as exc:
        raise LiteralError(column, type_text(dt), str(exc)) from None


def internal_value(value: Any, dt: DataType) -> Any:
    """A column value (of :func:`column_value`) as Fluss's binary rows hold it: DECIMAL as
    its unscaled ``int``, TIME as milliseconds, timestamps as ``(millis, nanos of the
    millisecond)``, BINARY(n) unpadded as given; the other types unchanged."""
    root = dt.root
    if root == "DECIMAL":
        assert isinstance(value, Decimal) and dt.scale is not None
        return int(value.scaleb(dt.scale))
    if root == "TIME_WITHOUT_TIME_ZONE":
        return _unit_to_nanos(value, _precision(dt)) // 1_000_000
    if root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        return divmod(_unit_to_nanos(value, _precision(dt)), 1_000_000)
    return value


def read_quoted(text: str, start: int) -> tuple[str, int]:
    """The body of the quoted text starting at ``text[start]`` (its quote character; a
    doubled quote inside is one quote) and the position after the closing quote. Raises
    ``ValueError`` for an unterminated one."""
    quote = text[start]
    parts: list[str] = []
    i = start + 1
    for _ in range(len(text) + 1):  # bounded: each pass moves past a quote
        j = text.find(quote, i)
        if j < 0:
            break
        parts.append(text[i:j])
        if j + 1 < len(text) and text[j + 1] == quote:
            parts.append(quote)
            i = j + 2
            continue
        return "".join(parts), j + 1
    raise ValueError(f"unterminated {quote}...{quote}")


def unscaled_bytes(unscaled: int) -> bytes:
    """A non-compact DECIMAL's unscaled value as Fluss writes it: big-endian two's
    complement in the fewest bytes that hold its sign (Java ``BigInteger.toByteArray``)."""
    size = ((unscaled if unscaled >= 0 else ~unscaled).bit_length() // 8) + 1
    return unscaled.to_bytes(size, "big", signed=True)


# ---------------------------------------------------------------------------- readers


class _Refused(Exception):
    """Why a value does not fit (turned into LiteralError with the column named)."""


def _text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) else None


def _boolean(value: object, dt: DataType) -> bool:
    if isinstance(value, bool):
        return value
    text = _text(value)
    if text is not None:
        low = text.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
    raise _Refused(f"{_show(value)} is not true or false")


def _integer(value: object, dt: DataType) -> int:
    low, high = INTEGER_RANGES[dt.root]
    if isinstance(value, bool):
        raise _Refused(f"{value} is a boolean, not an integer")
    if isinstance(value, int):
        number = value
    else:
        text = _text(value)
        if text is None or not re.fullmatch(r"[+-]?\d+", text):
            raise _Refused(f"{_show(value)} is not an integer")
        number = int(text)
    if not low <= number <= high:
        raise _Refused(f"{number} is outside {low}..{high}")
    return number


def _floating(value: object, dt: DataType) -> float:
    if isinstance(value, bool):
        raise _Refused(f"{value} is a boolean, not a number")
    if isinstance(value, int | float | Decimal):
        number = float(value)
    else:
        text = _text(value)
        try:
            if text is None or not text or text.lower().lstrip("+-") in ("infinity",):
                raise ValueError
            number = float(text)
        except ValueError:
            raise _Refused(f"{_show(value)} is not a number") from None
    if dt.root == "FLOAT":
        if math.isfinite(number) and abs(number) > 3.4028234663852886e38:
            raise _Refused(f"{number} is outside the range of FLOAT")
        (number,) = _F32.unpack(_F32.pack(number))
    return number


def _string(value: object, dt: DataType) -> str:
    if isinstance(value, str):
        return value
    raise _Refused(f"{_show(value)} is not a string")


def _binary(value: object, dt: DataType) -> bytes:
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
    else:
        text = _text(value)
        match = _HEX.fullmatch(text) if text is not None else None
        if match is None:
            raise _Refused(f"{_show(value)} is not hexadecimal bytes (0x0a0b or 0a0b)")
        raw = bytes.fromhex(match.group(1))
    if dt.root == "BINARY" and dt.length is not None:
        if len(raw) > dt.length:
            raise _Refused(f"{len(raw)} bytes do not fit BINARY({dt.length})")
        raw = raw.ljust(dt.length, b"\x00")
    return raw


def _decimal(value: object, dt: DataType) -> Decimal:
    precision, scale = dt.precision or 10, dt.scale or 0
    if isinstance(value, bool | float):
        raise _Refused(f"{_show(value)} is not an exact decimal (give it as text)")
    if isinstance(value, Decimal | int):
        number = Decimal(value)
    else:
        text = _text(value)
        try:
            if text is None or not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)", text):
                raise InvalidOperation
            number = Decimal(text)
        except InvalidOperation:
            raise _Refused(f"{_show(value)} is not a decimal number") from None
    if not number.is_finite():
        raise _Refused(f"{number} is not a finite decimal")
    exponent = number.normalize().as_tuple().exponent
    assert isinstance(exponent, int)
    if -exponent > scale:
        raise _Refused(f"{number} has more than {scale} decimal place(s)")
    scaled = number.quantize(Decimal(1).scaleb(-scale))
    if len(scaled.as_tuple().digits) > precision and scaled != 0:
        raise _Refused(f"{number} has more than {precision} digit(s)")
    return scaled


def _date(value: object, dt: DataType) -> int:
    if isinstance(value, datetime):
        raise _Refused(f"{_show(value)} is a timestamp, not a date")
    if isinstance(value, date):
        return value.toordinal() - _EPOCH_ORDINAL
    text = _text(value)
    match = _DATE.fullmatch(text) if text is not None else None
    if match is None:
        raise _Refused(f"{_show(value)} is not a date (YYYY-MM-DD)")
    return _days(*(int(g) for g in match.groups()))


def _days(year: int, month: int, day: int) -> int:
    if not 1 <= year <= 9999:
        raise _Refused(f"year {year} is outside 1..9999")
    try:
        return date(year, month, day).toordinal() - _EPOCH_ORDINAL
    except ValueError as exc:
        raise _Refused(str(exc)) from None


def _time(value: object, dt: DataType) -> int:
    precision = _precision(dt)
    if isinstance(value, time):
        if value.tzinfo is not None:
            raise _Refused("a TIME has no time zone")
        nanos = (
            value.hour * 3600 + value.minute * 60 + value.second
        ) * 10**9 + value.microsecond * 1000
    else:
        text = _text(value)
        match = _TIME.fullmatch(text) if text is not None else None
        if match is None:
            raise _Refused(f"{_show(value)} is not a time (HH:MM[:SS[.fff]])")
        nanos = _clock_nanos(*match.groups())
    if nanos % 1_000_000:
        raise _Refused("Fluss keeps TIME to the millisecond; finer parts cannot match")
    return _nanos_to_unit(nanos, precision)


def _clock_nanos(hh: str, mm: str, ss: str | None, fraction: str | None) -> int:
    hour, minute, second = int(hh), int(mm), int(ss or 0)
    if hour > 23 or minute > 59 or second > 59:
        raise _Refused(f"{hh}:{mm}:{ss or '00'} is not a time of day")
    frac = int((fraction or "").ljust(9, "0") or 0)
    return (hour * 3600 + minute * 60 + second) * 10**9 + frac


def _timestamp(value: object, dt: DataType) -> int:
    ltz = dt.root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE"
    precision = _precision(dt)
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            if not ltz:
                raise _Refused("a TIMESTAMP (without time zone) takes no UTC offset")
            value = value.astimezone(UTC).replace(tzinfo=None)
        delta = value - datetime(1970, 1, 1)
        nanos = (delta.days * 86_400 + delta.seconds) * 10**9 + delta.microseconds * 1000
    elif isinstance(value, date):
        nanos = (value.toordinal() - _EPOCH_ORDINAL) * _NANOS_PER_DAY
    else:
        nanos = _timestamp_text(value, ltz)
    return _nanos_to_unit(nanos, precision)


def _timestamp_text(value: object, ltz: bool) -> int:
    text = _text(value)
    if text is None:
        raise _Refused(f"{_show(value)} is not a timestamp")
    offset_s = 0
    suffix = _OFFSET.search(text) if len(text) > 10 else None
    if suffix is not None:
        if not ltz:
            raise _Refused("a TIMESTAMP (without time zone) takes no UTC offset")
        offset_s = _offset_seconds(suffix.group(1))
        text = text[: suffix.start()].rstrip()
    day_part, sep, clock = text.replace("T", " ", 1).replace("t", " ", 1).partition(" ")
    day = _DATE.fullmatch(day_part)
    clock_match = _TIME.fullmatch(clock.strip()) if sep else None
    if day is None or (sep and clock_match is None):
        raise _Refused(
            f"{_show(value)} is not a timestamp (YYYY-MM-DD[ HH:MM[:SS[.fraction]]]"
            f"{'[Z|+HH:MM]' if ltz else ''})"
        )
    nanos = _days(*(int(g) for g in day.groups())) * _NANOS_PER_DAY
    if clock_match is not None:
        nanos += _clock_nanos(*clock_match.groups())
    return nanos - offset_s * 10**9


def _offset_seconds(text: str) -> int:
    if text in ("Z", "z"):
        return 0
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:] or 0)
    if hours > 18 or minutes > 59:
        raise _Refused(f"UTC offset {text} is out of range")
    return sign * (hours * 3600 + minutes * 60)


def _precision(dt: DataType) -> int:
    return dt.precision if dt.precision is not None else 6


def _unit(precision: int) -> int:
    """Nanoseconds per Arrow unit of a TIME / TIMESTAMP precision (ArrowUtils' rule)."""
    if precision == 0:
        return 10**9
    if precision <= 3:
        return 10**6
    if precision <= 6:
        return 10**3
    return 1


def _nanos_to_unit(nanos: int, precision: int) -> int:
    unit = _unit(precision)
    whole, rest = divmod(nanos, unit)
    if rest:
        raise _Refused(f"the value is finer than the column's precision ({precision} digits)")
    return whole


def _unit_to_nanos(value: int, precision: int) -> int:
    return int(value) * _unit(precision)


def _show(value: object) -> str:
    text = repr(value) if not isinstance(value, str) else repr(value.strip())
    return text if len(text) <= 60 else text[:57] + "..."


_READERS: Final = {
    "BOOLEAN": _boolean,
    "TINYINT": _integer,
    "SMALLINT": _integer,
    "INTEGER": _integer,
    "BIGINT": _integer,
    "FLOAT": _floating,
    "DOUBLE": _floating,
    "STRING": _string,
    "CHAR": _string,
    "BYTES": _binary,
    "BINARY": _binary,
    "DECIMAL": _decimal,
    "DATE": _date,
    "TIME_WITHOUT_TIME_ZONE": _time,
    "TIMESTAMP_WITHOUT_TIME_ZONE": _timestamp,
    "TIMESTAMP_WITH_LOCAL_TIME_ZONE": _timestamp,
}
