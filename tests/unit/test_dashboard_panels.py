"""The Overview dashboard's panels without an app: what fits each size, the servers'
columns by priority, quiet events, requests and hot tables."""

from __future__ import annotations

import pytest
from rich.text import Text

from konsole.model.events import Event, EventKind, Severity, Subject
from konsole.model.table_stats import TableFigures
from konsole.model.totals import RequestTotals
from konsole.ui.screens.cluster_facts import ServerRow
from konsole.ui.screens.overview.panels import (
    SERVER_COLUMNS,
    dashboard_layout,
    events_lines,
    fit_columns,
    hot_tables_text,
    requests_text,
    trend_mark,
)
from konsole.ui.widgets.line_fit import RankedLines
from tests._testutil.builders import tm


@pytest.mark.parametrize(
    ("size", "cluster", "lower"),
    [((80, 24), False, False), ((100, 30), False, False), ((160, 48), True, True),
     ((200, 60), True, True)],
)  # fmt: skip
def test_what_each_size_shows(size: tuple[int, int], cluster: bool, lower: bool) -> None:
    layout = dashboard_layout(*size, servers=3, banner=False)
    assert layout.servers_rows == 6 and layout.middle  # throughput, servers, health: always
    assert (layout.cluster, layout.lower_rows > 0) == (cluster, lower)
    used = layout.throughput_rows + layout.servers_rows + layout.lower_rows
    assert used + 5 <= size[1] - 2  # the middle keeps its rows


def test_a_tiny_terminal_keeps_the_throughput_and_drops_the_rest_whole() -> None:
    layout = dashboard_layout(80, 12, servers=3, banner=True)
    assert layout.throughput_rows == 5
    assert layout.servers_rows in (0, 4) and layout.lower_rows == 0


def _row(node: int, state: str = "alive") -> ServerRow:
    metrics = tm(node, cpu_load=0.5, bytes_in_rate=2048.0) if state == "alive" else None
    return ServerRow("tablet", node, f"127.0.0.1:920{node}", f"rack-{node}", state, 3, 9, metrics)


def test_columns_drop_by_priority_never_id_or_state() -> None:
    rows = [_row(1), _row(2, "gone")]
    wide = fit_columns(200, rows, {}, False)
    assert [c.key for c in wide] == [c.key for c in SERVER_COLUMNS]
    narrow = fit_columns(40, rows, {}, False)
    keys = [c.key for c in narrow]
    assert keys[:2] == ["id", "state"] and "endpoint" not in keys and "rack" not in keys
    assert sum(max(len(c.label), 8) for c in narrow) <= 60


def _event(t: float) -> Event:
    return Event(t, EventKind.SERVER_JOINED, Severity.INFO, Subject("server", "s"), "joined")


def _plain(lines: RankedLines) -> list[str]:
    return [line.plain for line in lines.lines]


def test_a_quiet_cluster_says_since_when_with_the_last_event() -> None:
    quiet = events_lines([_event(1_000.0)], 8, lambda e: Text(e.message), now=1_000.0 + 3_600)
    assert quiet.lines[0].plain.startswith("quiet since") and _plain(quiet)[1:] == ["joined"]
    assert quiet.drop_order == ()  # the quiet line and the newest event always stay
    busy = events_lines([_event(1_000.0)], 8, lambda e: Text(e.message), now=1_010.0)
    assert _plain(busy) == ["joined"]
    assert "no events" in _plain(events_lines([], 8, lambda e: Text(""), now=0.0))[0]


def test_a_short_events_panel_drops_the_oldest_events_first() -> None:
    events = [_event(1_000.0 + i) for i in range(5)]
    lines = events_lines(events, 3, lambda e: Text(f"{e.time:.0f}"), now=1_010.0)
    assert _plain(lines) == ["1004", "1003", "1002"]  # newest first, at most 3
    assert lines.drop_order == (2, 1)
    assert "Events screen" in lines.more.format(n=2)


def test_requests_text_marks_errors_and_skips_idle_types() -> None:
    rows = [RequestTotals("putKv", 5.0, 1.5, 30.0), RequestTotals("idle", None, None, None)]
    text = requests_text(rows, 5)
    assert "putKv" in text.plain and "idle" not in text.plain and "1.5/s" in text.plain


def _table(path: str, rate: float | None, span: int | None) -> TableFigures:
    db, _, t = path.partition(".")
    return TableFigures(path, db, t, False, 2, 0, rate, span, 0, 0)


def test_hot_tables_by_rate_with_trend_then_by_size_within_the_lines_given() -> None:
    figures = [_table("a.x", 10.0, 100), _table("a.y", 500.0, 5), _table("a.z", None, 9_000)]
    text = hot_tables_text(figures, {"a.y": 100.0}, lines=6).plain
    lines = text.splitlines()
    assert len(lines) <= 6
    assert lines[1].startswith("a.y") and lines[1].endswith("↑")
    assert "by rows held" in text and "9.0k" in text


@pytest.mark.parametrize(
    ("now", "before", "mark"),
    [(200.0, 100.0, "↑"), (50.0, 100.0, "↓"), (101.0, 100.0, "→"), (5.0, None, " ")],
)
def test_trend_mark(now: float, before: float | None, mark: str) -> None:
    assert trend_mark(now, before).plain == mark
