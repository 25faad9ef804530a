"""Evidence around a moment, for the console's evidence view: a server's log lines in the
event's window (live from its log source, or the excerpt the history kept) and its metric
series around it (from the history). Blocking: the console calls these in a thread.

The window of the log lines is the one the recorder keeps around an event
(:data:`konsole.collect.logs.excerpts.BEFORE_S` before,
:data:`~konsole.collect.logs.excerpts.AFTER_S`
after), so the live view and time travel months later show the same stretch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from konsole.collect.logs.excerpts import AFTER_S, BEFORE_S
from konsole.collect.logs.reading import LogConfig, LogSourceError, read_log, server_ref
from konsole.model.logs import LogLine, in_window, parse_lines

if TYPE_CHECKING:
    from store import HistoryReader

__all__ = [
    "REQUEST_KINDS",
    "REQUEST_SERIES",
    "SERIES",
    "SERIES_WINDOW_S",
    "LogView",
    "is_server",
    "live_log",
    "recorded_log",
    "rejection_evidence",
    "series_for",
    "server_series",
]

#: Metric series drawn per server (history names, and their labels).
SERIES: Final = (
    ("leader_count", "leaders"),
    ("replica_count", "replicas"),
    ("bytes_in_rate", "bytes in/s"),
    ("disk_usage_ratio", "disk used"),
)
#: Why requests slow down or fail (konsole.model.requests): failures the server answered,
#: requests waiting for a thread, the disk it fills. Drawn beside a write rejection's log
#: lines (the console's place for them comes with the Capacity screen).
REQUEST_SERIES: Final = (
    ("request_rate", "requests/s"),
    ("request_error_rate", "request errors/s"),
    ("request_queue_size", "request queue"),
    ("disk_usage_ratio", "disk used"),
)
#: Events whose evidence is why requests slow down or fail: drawn with REQUEST_SERIES.
REQUEST_KINDS: Final = frozenset(
    {
        "write_rejected",
        "writes_accepted",
        "disk_pressure",
        "write_lock_forecast",
        "write_lock_forecast_cleared",
    }
)


def series_for(kind: str) -> tuple[tuple[str, str], ...]:
    """The sparklines an event of ``kind`` is shown with."""
    return REQUEST_SERIES if kind in REQUEST_KINDS else SERIES


#: How far the sparklines reach on each side of the moment.
SERIES_WINDOW_S: Final = 300.0
#: An excerpt taken for an event this close to the moment is its evidence.
EXCERPT_SLACK_S: Final = 120.0


@dataclass(frozen=True, slots=True)
class LogView:
    """Log lines to show, and what to say about them (where from, or why there are none)."""

    lines: tuple[LogLine, ...]
    #: "live: /path/ts-1.log", "recorded 14:05:09 from ...", "no log source for ...".
    note: str
    #: The source failed (the note says how): shown as an error, never as "no lines".
    failed: bool = False


def is_server(subject: str) -> bool:
    return subject.startswith(("tablet-server ", "coordinator "))


def live_log(
    logs: LogConfig | None, subject: str, at: float, address: str | None = None
) -> LogView | None:
    """The lines of ``subject``'s log in the window around ``at``, read now; None when the
    profile names no source for it. ``address`` (``host:port``) fills ``{host}``."""
    source = None if logs is None else logs.source_for(subject)
    if source is None:
        return None
    try:
        lines = read_log(source, server_ref(subject, address), since=at - BEFORE_S)
    except LogSourceError as exc:
        return LogView((), str(exc), failed=True)
    kept = in_window(lines, at - BEFORE_S, at + AFTER_S)
    return LogView(tuple(kept), f"live from {source.describe()}")


def recorded_log(reader: HistoryReader, subject: str, at: float) -> LogView | None:
    """The excerpt the history kept for ``subject`` closest to ``at``; None without one."""
    ms = round(at * 1000)
    slack = round(EXCERPT_SLACK_S * 1000)
    rows = reader.log_excerpts(ms - slack, ms + slack, subject=subject)
    if not rows:
        return None
    row = min(rows, key=lambda r: abs(r.at_ms - ms))
    if row.error:
        return LogView((), f"recorded: the log was not read: {row.error}", failed=True)
    return LogView(tuple(parse_lines(row.lines)), f"recorded excerpt from {row.source}")


def server_series(
    reader: HistoryReader,
    subject: str,
    at: float,
    series: tuple[tuple[str, str], ...] = SERIES,
) -> dict[str, list[float]]:
    """metric name -> its values around ``at`` (unknown values left out: a sparkline has no
    gap to draw them as); ``series``: which (default :data:`SERIES`)."""
    since, until = round((at - SERIES_WINDOW_S) * 1000), round((at + SERIES_WINDOW_S) * 1000)
    out: dict[str, list[float]] = {}
    for name, _ in series:
        points = reader.metric_series(subject, name, since=since, until=until)
        values = [p.value for p in points if p.value is not None]
        if values:
            out[name] = values
    return out


@dataclass(frozen=True, slots=True)
class RejectionEvidence:
    """A write rejection's evidence: the log lines that say why (the disk monitor's own,
    konsole.model.requests.explain_line) among the window's, and the request series."""

    #: (line, what it says) for the lines that explain, in time order.
    explaining: tuple[tuple[LogLine, str], ...]
    log: LogView | None
    series: dict[str, list[float]]


def rejection_evidence(log: LogView | None, series: dict[str, list[float]]) -> RejectionEvidence:
    """Pairs a server's log lines around a rejection with the figures of the same moment
    (``series``: :func:`server_series` with :data:`REQUEST_SERIES`)."""
    from konsole.model.requests import explain_line

    lines = log.lines if log is not None else ()
    found = tuple((line, why) for line in lines if (why := explain_line(line.message)))
    return RejectionEvidence(found, log, series)
