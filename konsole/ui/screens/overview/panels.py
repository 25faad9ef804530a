"""The Overview dashboard's panels as text and cells, and which panels a size has room for.

No Textual here (rich text only): what each panel says is built from a state's figures,
so it is tested without an app. The Overview (``screen``) places the panels.

Room, by priority (:func:`dashboard_layout`): the cluster's throughput, the tablet servers,
health with the latest events, then requests and hot tables side by side, then the cluster
facts beside the throughput. A panel that does not fit is left out whole; the servers
table drops its columns by priority (:data:`SERVER_COLUMNS`), never cutting a word.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from rich.text import Text

from konsole.model.events import Event
from konsole.model.headroom import ServerHeadroom
from konsole.model.metrics import ServerMetrics
from konsole.model.requests import WRITE_REQUESTS
from konsole.model.table_stats import TableFigures
from konsole.model.timefmt import age_text, clock_text
from konsole.model.totals import RequestTotals
from konsole.render.sizes import compact_rate_text
from konsole.ui.colors import server_state_style
from konsole.ui.screens.cluster_facts import ServerRow, fmt_ratio
from konsole.ui.widgets.line_fit import RankedLines

__all__ = [
    "SERVER_COLUMNS",
    "DashboardLayout",
    "ServerColumn",
    "dashboard_layout",
    "events_lines",
    "fit_columns",
    "hot_tables_text",
    "requests_text",
    "server_cells",
    "throughput_title",
    "trend_mark",
]

#: Rows taken by the status bar and the footer around every screen's body.
_CHROME_ROWS = 2
#: Heights of the fixed panels (borders included).
THROUGHPUT_ROWS = 5
THROUGHPUT_TALL_ROWS = 8
LOWER_ROWS = 8
LOWER_MAX_ROWS = 14
#: The fewest rows health with events is worth showing in.
MIDDLE_MIN_ROWS = 5
#: Widths from which the cluster facts sit beside the throughput.
WIDE = 140


@dataclass(frozen=True, slots=True)
class DashboardLayout:
    """What the Overview shows at one size."""

    #: Rows of the throughput panel (8: a label row above each sparkline).
    throughput_rows: int
    #: The cluster facts beside the throughput.
    cluster: bool
    #: Rows of the servers table (0: not shown).
    servers_rows: int
    #: Health with the latest events.
    middle: bool
    #: Rows of requests and hot tables (0: not shown).
    lower_rows: int


def dashboard_layout(width: int, height: int, servers: int, *, banner: int) -> DashboardLayout:
    """The panels that fit ``width`` x ``height`` with ``servers`` tablet server rows, under
    a banner of ``banner`` rows (0: none; it wraps on a narrow screen)."""
    body = height - _CHROME_ROWS - banner
    table = min(max(servers, 1) + 3, 12)  # border, header, rows
    # a row of its own for each sparkline when health keeps a useful height beside it
    tall = body - THROUGHPUT_TALL_ROWS - table >= MIDDLE_MIN_ROWS + 2
    throughput = THROUGHPUT_TALL_ROWS if tall else THROUGHPUT_ROWS
    left = body - throughput
    if left < table + MIDDLE_MIN_ROWS:
        table = max(0, min(table, left - MIDDLE_MIN_ROWS))
        table = table if table >= 4 else 0
    left -= table
    middle = left >= MIDDLE_MIN_ROWS
    lower = 0
    if left - LOWER_ROWS >= MIDDLE_MIN_ROWS + 2:  # then up to half of what is left
        lower = max(LOWER_ROWS, min(LOWER_MAX_ROWS, left // 2))
    return DashboardLayout(throughput, width >= WIDE and tall, table, middle, lower)


# ====================================================================== servers table


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}" if value < 10 else f"{value:.0f}"


def _p99_write(m: ServerMetrics) -> float | None:
    known = [v for k, v in m.request_latency_ms.items() if k in WRITE_REQUESTS and v is not None]
    return max(known) if known else None


@dataclass(frozen=True, slots=True)
class ServerColumn:
    key: str
    label: str
    #: Lower is kept longer when the width is short.
    priority: int
    cell: Callable[[ServerRow, ServerHeadroom | None, bool], Text | str]


def _metric(show: Callable[[ServerMetrics], Text | str]) -> Callable[..., Text | str]:
    def cell(row: ServerRow, _room: ServerHeadroom | None, _stale: bool) -> Text | str:
        return "-" if row.metrics is None else show(row.metrics)

    return cell


def _state(row: ServerRow, _room: ServerHeadroom | None, stale: bool) -> Text:
    return Text(row.state, style=server_state_style(row.state, stale))


def _lead(row: ServerRow, _room: ServerHeadroom | None, _stale: bool) -> str:
    leaders = "-" if row.leaders is None else str(row.leaders)
    replicas = "-" if row.replicas is None else str(row.replicas)
    return f"{leaders}/{replicas}"


def _room(row: ServerRow, room: ServerHeadroom | None, _stale: bool) -> Text | str:
    tight = room.tightest if room is not None else None
    ratio = tight.headroom_ratio if tight is not None else None
    if ratio is None:
        return "-"
    return Text(fmt_ratio(ratio), style="bold red" if ratio <= 0.05 else "")


def _lock(row: ServerRow, _room: ServerHeadroom | None, _stale: bool) -> Text | str:
    m = row.metrics
    if m is None or m.disk_write_locked is None:
        return "-"
    return Text("LOCKED", style="bold red") if m.disk_write_locked else "no"


def _errors(m: ServerMetrics) -> Text | str:
    errors = m.request_error_rate
    return Text(_rate(errors), style="bold red") if errors else _rate(errors)


#: Every column of the servers table, in screen order; kept by priority when narrow.
SERVER_COLUMNS: tuple[ServerColumn, ...] = (
    ServerColumn("id", "id", 0, lambda r, _h, _s: str(r.node_id)),
    ServerColumn("endpoint", "endpoint", 12, lambda r, _h, _s: r.endpoint),
    ServerColumn("rack", "rack", 13, lambda r, _h, _s: r.rack or "-"),
    ServerColumn("state", "state", 0, _state),
    ServerColumn("leaders", "lead/rep", 1, _lead),
    ServerColumn("cpu", "cpu", 5, _metric(lambda m: fmt_ratio(m.cpu_load))),
    ServerColumn("heap", "heap", 6, _metric(lambda m: fmt_ratio(m.heap_ratio))),
    ServerColumn("in", "in/s", 3, _metric(lambda m: compact_rate_text(m.bytes_in_rate))),
    ServerColumn("out", "out/s", 4, _metric(lambda m: compact_rate_text(m.bytes_out_rate))),
    ServerColumn("req", "req/s", 8, _metric(lambda m: _rate(m.request_rate))),
    ServerColumn("err", "err/s", 7, _metric(_errors)),  # red while requests fail
    ServerColumn("p99", "p99 write", 9, _metric(lambda m: _ms(_p99_write(m)))),
    ServerColumn("disk", "disk", 2, _metric(lambda m: fmt_ratio(m.disk_usage_ratio))),
    ServerColumn("room", "room", 10, _room),
    ServerColumn("lock", "write lock", 11, _lock),
)


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} ms"


def server_cells(
    columns: Sequence[ServerColumn], row: ServerRow, room: ServerHeadroom | None, stale: bool
) -> list[Text | str]:
    return [c.cell(row, room, stale) for c in columns]


def fit_columns(
    width: int, rows: Sequence[ServerRow], rooms: dict[str, ServerHeadroom], stale: bool
) -> tuple[ServerColumn, ...]:
    """The columns (in screen order) that fit ``width``, the most wanted first: each takes
    its widest cell or label plus the table's two columns of padding."""
    widths = {}
    for col in SERVER_COLUMNS:
        cells = [col.cell(r, rooms.get(str(r.node_id)), stale) for r in rows]
        widths[col.key] = max([len(col.label), *(len(str(c)) for c in cells)]) + 2
    kept: set[str] = set()
    used = 0
    for col in sorted(SERVER_COLUMNS, key=lambda c: c.priority):
        if used + widths[col.key] <= width:
            kept.add(col.key)
            used += widths[col.key]
    return tuple(c for c in SERVER_COLUMNS if c.key in kept)


# ====================================================================== text panels


def trend_mark(now: float | None, before: float | None) -> Text:
    """``↑`` rising by more than 10 %, ``↓`` falling by more than 10 %, ``→`` about level,
    blank when either side is unknown."""
    if now is None or before is None:
        return Text(" ")
    if now > before * 1.1 and now - before > 0.5:
        return Text("↑", style="yellow")
    if now < before * 0.9 and before - now > 0.5:
        return Text("↓", style="cyan")
    return Text("→", style="dim")


def requests_text(rows: Sequence[RequestTotals], limit: int) -> Text:
    """Request types the worst first: ``putKv  12.0/s  err 0.5/s  p99 8 ms``."""
    t = Text(no_wrap=True, overflow="crop")
    shown = [r for r in rows if r.rate or r.error_rate or r.p99_ms][:limit]
    if not shown:
        t.append("no requests reported", style="italic")
        return t
    width = max(len(r.request) for r in shown)
    for i, r in enumerate(shown):
        if i:
            t.append("\n")
        t.append(r.request.ljust(width + 1))
        t.append(f"{_rate(r.rate):>6}/s ")
        errors = r.error_rate or 0.0
        t.append(f"err {_rate(r.error_rate):>5}/s ", style="bold red" if errors > 0 else "dim")
        t.append(f"p99 {_ms(r.p99_ms)}")
    return t


def hot_tables_text(
    figures: Sequence[TableFigures], before: dict[str, float | None], lines: int
) -> Text:
    """Top tables by rows/s with their trend against ``before`` (path -> earlier rows/s),
    then the largest by rows held, in at most ``lines`` lines (a third for the largest)."""
    t = Text(no_wrap=True, overflow="crop")
    biggest = max(1, (lines - 2) // 3)
    busy = sorted(
        (f for f in figures if f.rows_per_s), key=lambda f: (-(f.rows_per_s or 0.0), f.path)
    )[: max(1, lines - 2 - biggest)]
    if not figures:
        t.append("no tables", style="italic")
        return t
    width = max((len(f.path) for f in figures), default=0)
    t.append("by rows/s", style="dim")
    if not busy:
        t.append("\n  nothing written since the previous poll", style="italic")
    for f in busy:
        t.append("\n")
        t.append(f.path.ljust(width + 1))
        t.append(f"{_rate(f.rows_per_s):>7}/s ")
        t.append_text(trend_mark(f.rows_per_s, before.get(f.path)))
    big = sorted(
        (f for f in figures if f.offset_span), key=lambda f: (-(f.offset_span or 0), f.path)
    )[:biggest]
    if big:
        t.append("\nby rows held", style="dim")
    for f in big:
        t.append("\n")
        t.append(f.path.ljust(width + 1))
        t.append(f"{_count(f.offset_span):>8}")
    return t


def _count(n: int | None) -> str:
    if n is None:
        return "-"
    for unit in ("", "k", "M", "G"):
        if n < 1000 or unit == "G":
            return f"{n:.0f}{unit}" if unit == "" else f"{n:.1f}{unit}"
        n = n / 1000  # type: ignore[assignment]
    return "-"  # unreachable


def events_lines(
    events: Sequence[Event], limit: int, line: Callable[[Event], Text], now: float
) -> RankedLines:
    """The latest events, newest first; a quiet cluster says since when, and what last
    happened, rather than leaving the box empty. A short panel drops the oldest first."""
    if not events:
        return RankedLines((Text("no events recorded yet", style="italic"),))
    lines: list[Text] = []
    last = events[-1]
    quiet = now - last.time
    if quiet >= 60:
        since = f"quiet since {clock_text(last.time)[11:19]} ({age_text(quiet)}); last:"
        lines.append(Text(since, style="green"))
    first = len(lines)
    lines += [line(event) for event in reversed(events[-limit:])]
    drop = tuple(range(len(lines) - 1, first, -1))  # the newest event stays
    return RankedLines(tuple(lines), drop, more="+{n} more on the Events screen")


def throughput_title(servers: int, reporting: Iterable[ServerMetrics]) -> str:
    """``Throughput · 3 tablet servers`` (or how many of them report)."""
    known = sum(1 for m in reporting if m.role == "tablet" and m.bytes_in_rate is not None)
    if known == servers:
        return f"Throughput · {servers} tablet server{'s' if servers != 1 else ''}"
    return f"Throughput · {known} of {servers} tablet servers report"
