"""Time as konsole reads and writes it: one parser, one clock text, one age text.

Every face (the console, ``watch``, ``history``, ``check``) uses these, so a moment reads the
same everywhere. Times are epoch seconds (float) in the model and milliseconds (int) in the
history file; :func:`to_ms` is the one conversion.
"""

from __future__ import annotations

import math
import re
import time
from datetime import UTC, datetime
from typing import Final

__all__ = [
    "MAX_DURATION",
    "MAX_MOMENT",
    "TimeParseError",
    "age_text",
    "clock_text",
    "day_time_text",
    "file_stamp_text",
    "iso_seconds_text",
    "iso_text",
    "parse_duration",
    "parse_time",
    "rfc3339_text",
    "short_clock_text",
    "time_of_day_text",
    "to_ms",
]

_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_AGE: Final = re.compile(r"^-?(\d+(?:\.\d+)?)([smhdw])$")
_DURATION: Final = re.compile(r"^(\d+(?:\.\d+)?)([smhdw])$")
#: The longest span konsole takes (100 years): longer is a typo, and would overflow the
#: clock texts and the history's 64-bit milliseconds.
MAX_DURATION: Final = 100 * 365 * 86400
#: The latest moment konsole takes: the end of year 9999, the last one ISO 8601 and the
#: clock texts can write. The earliest is the epoch (the history has nothing before).
MAX_MOMENT: Final = 253402300799


class TimeParseError(ValueError):
    """A text that is not a time or a duration; the message says what was expected."""


def to_ms(seconds: float) -> int:
    """Epoch seconds -> the history's epoch milliseconds."""
    return round(seconds * 1000)


def parse_duration(text: str) -> float:
    """``90s``, ``15m``, ``2h``, ``3d``, ``1w`` (or plain seconds) -> seconds, never
    negative (a sign is refused: ``-5h`` is not a duration)."""
    match = _DURATION.match(text.strip())
    if match:
        seconds = float(match.group(1)) * _UNITS[match.group(2)]
    else:
        try:
            seconds = float(text)
        except ValueError:
            seconds = math.nan
        if not math.isfinite(seconds) or seconds < 0 or text.strip().startswith(("-", "+")):
            raise TimeParseError(f"{text!r} is not a duration like 90s, 15m, 2h, 3d")
    if seconds > MAX_DURATION:
        raise TimeParseError(f"{text!r} is longer than 100 years")
    return seconds


def parse_time(text: str, now: float) -> float:
    """Epoch seconds from ISO 8601 (UTC unless a zone is given), epoch seconds, ``now`` or
    an age (``2h`` = two hours ago); between the epoch and :data:`MAX_MOMENT`."""
    value = text.strip()
    if value == "now":
        return now
    if _AGE.match(value):  # "2h" and "-2h" both: two hours ago
        moment = now - parse_duration(value.lstrip("-"))
    elif re.fullmatch(r"\d{9,}(\.\d+)?", value):
        moment = float(value)
    else:
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise TimeParseError(
                f"{text!r} is not a time (ISO 8601, epoch seconds, now, or an age like 2h)"
            ) from None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        moment = parsed.timestamp()
    if not 0 <= moment <= MAX_MOMENT:
        raise TimeParseError(f"{text!r} is not a time between 1970 and the end of year 9999")
    return moment


def iso_text(seconds: float) -> str:
    """``2026-11-30T17:05:08.123Z``: the machine-readable moment of lines and exports."""
    ms = to_ms(seconds)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def iso_seconds_text(t: float) -> str:
    """``2026-11-30T17:05:08Z``: a moment handed to another program (a log command's
    ``{since}``, ``--around`` in a printed command line)."""
    return _utc(t).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_text(t: float) -> str:
    """``2026-11-30T17:05:08.123+00:00``: RFC 3339 with milliseconds (Alertmanager's
    ``startsAt``/``endsAt``)."""
    return _utc(t).isoformat(timespec="milliseconds")


def file_stamp_text(t: float) -> str:
    """``20261130-170508``: a moment in a file name (an incident report's)."""
    return _utc(t).strftime("%Y%m%d-%H%M%S")


def day_time_text(t: float) -> str:
    """``2026-11-30 17:05:08 UTC``: a moment in prose (an incident report's window)."""
    return _utc(t).strftime("%Y-%m-%d %H:%M:%S UTC")


def time_of_day_text(t: float) -> str:
    """``17:05:08`` (UTC): a moment inside a window whose day is said once."""
    return _utc(t).strftime("%H:%M:%S")


def _utc(t: float) -> datetime:
    # datetime, not time.gmtime: it rounds to the microsecond as these texts always have.
    return datetime.fromtimestamp(t, UTC)


def clock_text(t: float | None) -> str:
    """UTC wall time of ``t``, ``2026-11-30 17:05:08Z``; ``-`` when unknown."""
    if t is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(t))


def short_clock_text(t: float) -> str:
    """UTC month-day and time of ``t``, ``11-30 17:05:08``: a list's time column."""
    return time.strftime("%m-%d %H:%M:%S", time.gmtime(t))


def age_text(seconds: float | None) -> str:
    """``4s``, ``3m12s``, ``2h05m``, ``3d04h``; ``-`` when unknown."""
    if seconds is None:
        return "-"
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"
