"""What an incident report shows, read from the history (read-only) for one window.

:func:`gather` asks the store's queries and nothing else: polls, events, notes, log
excerpts, the tables' rows/s (``throughput``), and per server the recorded metrics that
the plots draw (leaders, replicas, disk usage, the write lock, KV rejections). A series
that was never recorded is absent (the plot says "not recorded"), never zeros.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Final

from store.rows import EventRow, LogExcerptRow, NoteRow

if TYPE_CHECKING:
    from store import HistoryReader

__all__ = ["SERVER_METRICS", "ReportData", "Series", "gather"]

#: Per-server metrics the report draws (their names in the history).
SERVER_METRICS: Final = (
    "leader_count",
    "replica_count",
    "disk_usage_ratio",
    "disk_write_locked",
    "kv_rejections",
)
#: Tables drawn in the rows/s plot (the busiest first); the rest are named in a line.
MAX_TABLES: Final = 8


@dataclass(frozen=True, slots=True)
class Series:
    """One line of a plot: (epoch seconds, value or None for unknown) points."""

    label: str
    points: tuple[tuple[float, float | None], ...]

    @property
    def known(self) -> bool:
        return any(v is not None for _, v in self.points)


@dataclass(frozen=True, slots=True)
class ReportData:
    """Everything the documents need; times are epoch seconds."""

    source: str
    since: float
    until: float
    #: The moment asked about (``--around``), drawn as a line; None for a range.
    around: float | None
    polls: tuple[tuple[float, bool], ...]
    #: (time, status name) for every change, the first at or before ``since``.
    health: tuple[tuple[float, str], ...]
    events: tuple[EventRow, ...]
    notes: tuple[NoteRow, ...]
    excerpts: tuple[LogExcerptRow, ...]
    throughput: tuple[Series, ...]
    #: Tables left out of the rows/s plot (beyond :data:`MAX_TABLES`).
    other_tables: tuple[str, ...] = ()
    #: metric name -> one series per server.
    servers: dict[str, tuple[Series, ...]] = field(default_factory=dict)

    @property
    def shown(self) -> tuple[float, float]:
        """The span the plots show: the recorded part of the window, with a margin (a
        30-minute window around one minute of polls would draw a line of dots)."""
        if not self.polls:
            return self.since, self.until
        first, last = self.polls[0][0], self.polls[-1][0]
        margin = max(5.0, (last - first) * 0.05)
        return max(self.since, first - margin), min(self.until, last + margin)

    @property
    def empty(self) -> bool:
        """No poll in the window: the report says so instead of drawing empty axes."""
        return not self.polls


def gather(
    reader: HistoryReader, since_ms: int, until_ms: int, around_ms: int | None
) -> ReportData:
    polls = tuple((p.at_ms / 1000, p.ok) for p in reader.polls(since_ms, until_ms))
    events = tuple(reader.events(since_ms, until_ms))
    data = ReportData(
        source=str(reader.path),
        since=since_ms / 1000,
        until=until_ms / 1000,
        around=None if around_ms is None else around_ms / 1000,
        polls=polls,
        health=_health(reader, since_ms, events),
        events=events,
        notes=tuple(reader.notes(since_ms, until_ms)),
        excerpts=tuple(reader.log_excerpts(since_ms, until_ms)),
        throughput=(),
    )
    if not polls:
        return data
    tables, others = _throughput(reader, since_ms, until_ms)
    servers = _server_series(reader, since_ms, until_ms)
    return replace(data, throughput=tables, other_tables=others, servers=servers)


def _health(
    reader: HistoryReader, since_ms: int, events: tuple[EventRow, ...]
) -> tuple[tuple[float, str], ...]:
    """The status at ``since`` (the last change before it, else what the first change in
    the window left), then every change in the window."""
    before = reader.events(until=since_ms, kinds=("health_changed",))
    inside = [e for e in events if e.kind == "health_changed"]
    out: list[tuple[float, str]] = []
    if before:
        out.append((since_ms / 1000, _detail(before[-1], "new")))
    elif inside:
        out.append((since_ms / 1000, _detail(inside[0], "old")))
    out += [(e.at_ms / 1000, _detail(e, "new")) for e in inside]
    return tuple((at, status) for at, status in out if status)


def _detail(event: EventRow, key: str) -> str:
    stored = json.loads(event.details or "{}")  # the event's own facts sit under "details"
    value = (stored.get("details") or stored).get(key)
    return value if isinstance(value, str) else ""


def _throughput(
    reader: HistoryReader, since_ms: int, until_ms: int
) -> tuple[tuple[Series, ...], tuple[str, ...]]:
    state = reader.state_at(until_ms)
    if state is None:
        return (), ()
    series: list[tuple[float, Series]] = []
    for table in state.tables:
        points = reader.throughput(
            table.table_id, since=since_ms, until=until_ms, all_partitions=True
        )
        s = Series(
            f"{table.database}.{table.name}",
            tuple((p.at_ms / 1000, p.value) for p in points),
        )
        series.append((sum(v for _, v in s.points if v is not None), s))
    series.sort(key=lambda item: (-item[0], item[1].label))
    kept = tuple(s for _, s in series[:MAX_TABLES])
    return kept, tuple(s.label for _, s in series[MAX_TABLES:])


def _server_series(
    reader: HistoryReader, since_ms: int, until_ms: int
) -> dict[str, tuple[Series, ...]]:
    names = reader.metric_names()
    out: dict[str, tuple[Series, ...]] = {}
    for metric in SERVER_METRICS:
        found = []
        for subject, metrics in names.items():
            if metric not in metrics or subject == "cluster":
                continue
            points = reader.metric_series(subject, metric, since=since_ms, until=until_ms)
            s = Series(subject, tuple((p.at_ms / 1000, p.value) for p in points))
            if s.known:
                found.append(s)
        out[metric] = tuple(found)
    return out
