"""Server log lines as data: parsed for time and level, secrets masked, pure.

Fluss's servers log through log4j's PatternLayout. Its own distribution writes
``%d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n`` (conf/log4j.properties) and the local
runner ``%d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %c{1} [%t] - %m%n``: both start with the time and
the level, then ``<logger and context> - <message>``. :func:`parse_lines` reads either; a
line in any other layout keeps ``at`` and ``level`` None and is shown raw. A line that
does not start with a time inside a run of parsed lines (a stack trace, a multi-line
message) belongs to the line above and takes its time and level.

log4j's ``%d`` carries no zone: the time is the server's local time. The caller says what
that zone is (``utc_offset_s``); None reads it as this host's local time, right for the
local runner and for servers on the same host.

Secrets are masked here, once, for every source: the local runner's layout already replaces
JAAS passwords in the file (``localcluster/log4j.properties``), but a cluster deployed by
someone else logs what its layout lets through; :func:`mask` hides the same
``password="..."`` / ``user_x="..."`` JAAS values and ``password=...``-like settings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Final

__all__ = [
    "FLAGGED_LEVELS",
    "MASK",
    "LogLine",
    "in_window",
    "mask",
    "parse_line",
    "parse_lines",
]

MASK: Final = "******"
#: Levels the faces highlight.
FLAGGED_LEVELS: Final = frozenset({"WARN", "ERROR", "FATAL"})

_LOG4J: Final = re.compile(
    r"^(?P<at>\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[,.]\d{1,6})?)\s+"
    r"(?P<level>TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)\s+"
    r"(?P<source>.*?)\s+-\s(?P<message>.*)$"
)
#: JAAS options in a config line (the runner's log4j replace does the same in the file).
_JAAS: Final = re.compile(r'(user_[A-Za-z0-9_]+|password)="[^"]*"')
#: key=value / key: value settings whose key names a secret (server.yaml lines at start-up).
_SETTING: Final = re.compile(
    r"((?:[\w.-]*?)(?:password|passwd|secret|token|credential)s?[\w.-]*\s*[:=]\s*)"
    r"(?!\"|\*{6})([^\s,;]+)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class LogLine:
    """One line of a server's log, masked. ``at`` (epoch seconds) and ``level`` are None
    for a line in a layout not understood: it is shown as ``raw``."""

    at: float | None
    level: str | None
    #: The message after the layout's ``-`` separator (the whole line when not parsed).
    message: str
    #: The whole line as the server wrote it, masked.
    raw: str
    #: True for a continuation line (a stack trace) that took the time of the line above.
    continued: bool = False

    @property
    def flagged(self) -> bool:
        """A warning or an error: the faces highlight it."""
        return self.level in FLAGGED_LEVELS


def mask(text: str) -> str:
    """``text`` with JAAS passwords and secret-named settings replaced by :data:`MASK`."""
    text = _JAAS.sub(lambda m: f'{m.group(1)}="{MASK}"', text)
    return _SETTING.sub(lambda m: m.group(1) + MASK, text)


def _zone(utc_offset_s: float | None) -> timezone | None:
    return None if utc_offset_s is None else timezone(timedelta(seconds=utc_offset_s))


def _time(text: str, zone: timezone | None) -> float | None:
    text = text.replace(",", ".").replace("T", " ")
    try:
        at = datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f" if "." in text else "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return None
    # No zone: datetime.timestamp() reads a naive time as this host's local time.
    return at.replace(tzinfo=zone).timestamp() if zone is not None else at.timestamp()


def parse_line(line: str, *, utc_offset_s: float | None = None) -> LogLine:
    """One line on its own (a line not in a known layout has no time and no level)."""
    raw = mask(line.rstrip("\r\n"))
    m = _LOG4J.match(raw)
    if m is None:
        return LogLine(None, None, raw, raw)
    at = _time(m.group("at"), _zone(utc_offset_s))
    if at is None:
        return LogLine(None, None, raw, raw)
    level = m.group("level")
    return LogLine(at, "WARN" if level == "WARNING" else level, m.group("message"), raw)


def parse_lines(lines: Iterable[str], *, utc_offset_s: float | None = None) -> list[LogLine]:
    """Every line, in order; continuation lines take the time and level of the line above."""
    out: list[LogLine] = []
    above: LogLine | None = None
    for text in lines:
        line = parse_line(text, utc_offset_s=utc_offset_s)
        if line.at is None and above is not None and line.raw.strip():
            line = LogLine(above.at, above.level, line.raw, line.raw, continued=True)
        elif line.at is not None:
            above = line
        out.append(line)
    return out


def in_window(lines: Sequence[LogLine], since: float, until: float) -> list[LogLine]:
    """The lines in ``[since, until]``; lines without a time are kept only when no line of
    ``lines`` has one (an unknown layout: the caller cannot tell, so it sees them all)."""
    if not any(line.at is not None for line in lines):
        return list(lines)
    return [line for line in lines if line.at is not None and since <= line.at <= until]
