"""Overview: the cluster at a glance, as a dashboard.

The cluster's throughput now and over the recorded window (sparklines with their scale),
the tablet servers' own figures (CPU, heap, bytes in and out, requests, errors, write p99,
disk and room before the lock), health with its findings and the capacity outlook, the
latest events (a quiet cluster says since when), requests the worst first, the hot tables
with their trend, and the cluster's facts (coordinators, version). Panels that do not fit
the terminal are left out by priority (``panels.dashboard_layout``). Time travel
shows the dashboard as it was: the state and the history read end at the moment shown.

When the latest poll failed a banner says since when and why, and every panel is greyed
with the age of what it shows (and nothing is painted green).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Static

from konsole.model.timefmt import age_text, clock_text, to_ms
from konsole.ui.colors import severity_style
from konsole.ui.screens.base import ConsoleScreen
from konsole.ui.widgets.set_once import SetOnce, cell_key

# The overview is the first frame: the model (events, health, placement, the snapshot types)
# is imported with the first state to show, not before that frame is painted.
if TYPE_CHECKING:
    from textual.widgets import DataTable

    from konsole.model.events import Event
    from konsole.model.headroom import ServerHeadroom
    from konsole.model.table_stats import FiguresMemo
    from konsole.ui.screens.cluster_facts import SeenServers, ServerRow
    from konsole.ui.screens.overview.panels import DashboardLayout, ServerColumn
    from konsole.ui.state import ConsoleState
    from konsole.ui.widgets.line_fit import RankedLines

__all__ = ["OverviewScreen", "event_line"]

#: Events shown on the overview (the Events screen has the rest).
LATEST_EVENTS = 8
#: How far back the throughput sparklines reach (as the server detail's).
SERIES_WINDOW_S = 30 * 60.0
#: Points of throughput kept from the states seen, when there is no history to read.
_SEEN_POINTS = 360


def event_line(event: Event) -> Text:
    """``20:27:30 WARN  tablet-server 3 (127.0.0.1:9203) left; it led 5 buckets``."""
    from konsole.model.events import Severity

    t = Text(no_wrap=True, overflow="ellipsis")
    t.append(clock_text(event.time)[11:19], style="dim")
    label = {Severity.CRITICAL: " CRIT ", Severity.WARNING: " WARN ", Severity.INFO: " info "}
    t.append(label.get(event.severity, " ---- "), style=severity_style(event.severity))
    t.append(event.message)
    return t


class OverviewScreen(ConsoleScreen):
    # overview.tcss is the app's (KonsoleApp.CSS_PATH): read once, with the app's styles.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_server", "Open server", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._seen_servers: SeenServers | None = None
        self._memo: FiguresMemo | None = None
        #: The tables' rows/s at the poll before (path -> rows/s), for their trend.
        self._table_rates: tuple[float, dict[str, float | None]] | None = None
        self._table_before: dict[str, float | None] = {}
        #: The throughput read from the history: (key it was read for, name -> points).
        self._series_key: tuple[float, str | None] | None = None
        self._series: dict[str, list[float | None]] = {}
        self._series_until: float | None = None
        #: Throughput of the states seen (taken_at -> name -> value): without a history.
        self._seen_totals: dict[float, dict[str, float | None]] = {}
        self._columns: tuple[ServerColumn, ...] = ()
        #: A panel's content, title and rows are set again only when they change.
        self._set = SetOnce()
        #: The panels are mounted and their children in the DOM (see _dashboard).
        self._panels_ready = False
        self._panels_mounting = False

    def compose_body(self) -> ComposeResult:
        yield Static(id="banner")
        # Hidden until a state with data: before the first state the overview says it is
        # connecting, as a connecting state does (the tablet servers' table comes with data).
        # The panels come with the first state that has data (_dashboard): the first frame,
        # before any poll, shows the banner only, and pays for no panel.
        with Vertical(id="overview") as body:
            body.display = False

    def on_mount(self) -> None:
        if self.konsole.state is None:  # no state yet: say what a connecting state says
            banner = self.query_one("#banner", Static)
            banner.add_class("-connecting")
            banner.update(f"connecting to {self._target()}…")

    def _dashboard(self) -> bool:
        """The panels, mounted once, with the first state that has data; True until that
        mount is done (then the newest state is painted)."""
        if self._panels_ready:
            return False
        if not self._panels_mounting:
            self._panels_mounting = True
            self.call_later(self._mount_panels)
        return True

    async def _mount_panels(self) -> None:
        await self.query_one("#overview").mount(*_panel_rows())
        if not self.is_attached or not self.query("#cluster"):
            # The app quit while the panels mounted (seen live: a test leaving the console
            # as its first data arrived): there is nothing left to paint on.
            return
        self._panels_ready = True
        self._paint_current()  # the newest state (the app's, as a resume does)

    def _tablets_table(self) -> DataTable[Text | str]:
        """The tablet servers' table, made with the first state that has data: a DataTable
        costs a fifth of the first frame (its styles), and no frame before data shows it."""
        from textual.widgets import DataTable

        found = self.query("#tablets").results(DataTable)
        table: DataTable[Text | str] | None = next(found, None)
        if table is not None:
            return table
        table = DataTable(id="tablets", classes="panel", cursor_type="row", zebra_stripes=False)
        self.query_one("#overview").mount(table, before="#middle")
        if self.focused is None:
            table.focus()  # as the screen's first focus would have, had it been composed
        return table

    # ------------------------------------------------------------------ rendering

    @property
    def _seen(self) -> SeenServers:
        if self._seen_servers is None:
            from konsole.ui.screens.cluster_facts import SeenServers

            self._seen_servers = SeenServers()
        return self._seen_servers

    def render_state(self, state: ConsoleState) -> None:
        from konsole.ui.screens.overview.text import cluster_text, health_lines, rooms_of
        from konsole.ui.widgets.fitted_lines import FittedLines

        self._banner(state)
        body = self.query_one("#overview")
        body.display = state.last_ok is not None
        if state.last_ok is None:
            return
        stale = state.stale
        age = f" · {age_text(state.data_age)} old" if stale else ""
        if self._dashboard():
            return
        self._tablets_table()  # a panel too: greyed with the others when stale
        for panel in self.query(".panel"):
            panel.set_class(stale, "stale")
        rooms = rooms_of(state)
        rows = [r for r in self._seen.rows(state) if r.node_id is not None]
        layout = self._layout(len(rows))
        cluster = self.query_one("#cluster", Static)
        self._set.title(cluster, "Cluster" + age)
        self._set.update(cluster, cluster_text(state, self.konsole.feed.profile))
        health = self.query_one("#health", FittedLines)
        self._set.title(health, "Health" + age)
        health.update_lines(health_lines(state, rooms, with_cluster=not layout.cluster))
        self._tablets(state, age, rooms, rows)
        events = self.query_one("#events", FittedLines)
        self._set.title(events, "Latest events")
        events.update_lines(_events_lines(state))
        self._throughput(state, age)
        if layout.lower_rows:
            self._lower(state, age, layout.lower_rows - 2)

    def _paint_current(self) -> None:
        state = self.konsole.state
        if state is not None and self.is_mounted:
            self.render_state(state)

    def _banner(self, state: ConsoleState) -> None:
        banner = self.query_one("#banner", Static)
        banner.set_class(state.stale, "-unreachable")
        banner.set_class(state.connecting, "-connecting")
        banner.set_class(state.historic and not state.stale, "-historic")
        if state.connecting:
            banner.update(f"connecting to {self._target()}…")
            banner.display = True
        elif state.stale and state.snapshot is not None:
            since = _failing_since(state)
            banner.update(
                Text.assemble(
                    ("cluster unreachable", "bold"),
                    f" since {clock_text(since)[11:]}: {state.snapshot.error or 'no answer'}",
                    f" — showing data {age_text(state.data_age)} old",
                )
            )
            banner.display = True
        elif state.historic:
            banner.update(
                f"as recorded at {clock_text(state.as_of)} · [ ] previous / next event · "
                "L back to live"
            )
            banner.display = True
        elif state.last_ok is None:
            banner.update("no successful poll yet")
            banner.display = True
        else:
            banner.display = False

    def _target(self) -> str:
        feed = self.konsole.feed
        profile = feed.profile
        if profile is not None and profile.bootstrap:
            return ", ".join(profile.bootstrap)
        return feed.name

    def _tablets(
        self,
        state: ConsoleState,
        age: str,
        rooms: dict[str, ServerHeadroom],
        rows: list[ServerRow],
    ) -> None:
        from konsole.ui.screens.overview.panels import fit_columns, server_cells

        table = self._tablets_table()
        # "unreachable" (the cluster did not answer) is not "down" (gone from the metadata)
        counts = [(sum(r.state == k for r in rows), k) for k in ("unreachable", "gone")]
        more = "".join(f", {n} {'down' if k == 'gone' else k}" for n, k in counts if n)
        title = f"Tablet servers ({sum(r.state == 'alive' for r in rows)} alive{more})"
        self._set.title(table, title + age)
        columns = fit_columns(max(self.size.width - 4, 20), rows, rooms, state.stale)
        cells = [
            (r.key, server_cells(columns, r, rooms.get(str(r.node_id)), state.stale)) for r in rows
        ]
        shown = (columns, [(key, [cell_key(c) for c in row]) for key, row in cells])
        if self._set.changed(table, "rows", shown):
            cursor = table.cursor_row
            if columns != self._columns:
                table.clear(columns=True)
                for col in columns:
                    table.add_column(col.label, key=col.key)
                self._columns = columns
            else:
                table.clear()
            for key, row in cells:
                table.add_row(*row, key=key)
            if rows:
                table.move_cursor(row=min(cursor, len(rows) - 1), animate=False)
        subtitle = "" if rows else "no tablet servers"
        if self._set.changed(table, "subtitle", subtitle):
            table.border_subtitle = subtitle

    # ------------------------------------------------------------------ dashboard

    def _layout(self, servers: int) -> DashboardLayout:
        """Show the panels that fit the screen with ``servers`` rows of tablet servers."""
        from konsole.ui.screens.overview.panels import THROUGHPUT_ROWS, dashboard_layout

        banner = self.query_one("#banner", Static)
        # the banner wraps on a narrow screen: its rows, not one, come off the panels'
        rows = _rows(banner.content, self.size.width - 2) if banner.display else 0
        layout = dashboard_layout(self.size.width, self.size.height, servers, banner=rows)
        from konsole.ui.widgets.spark import Spark

        tall = layout.throughput_rows > THROUGHPUT_ROWS
        self.query_one("#top").styles.height = layout.throughput_rows
        for spark in self.query(Spark):
            spark.styles.height = 2 if tall else 1
        self.query_one("#cluster").display = layout.cluster
        tablets = self._tablets_table()
        tablets.display = layout.servers_rows > 0
        tablets.styles.max_height = layout.servers_rows
        self.query_one("#middle").display = layout.middle
        lower = self.query_one("#lower")
        lower.display = layout.lower_rows > 0
        lower.styles.height = layout.lower_rows
        return layout

    def on_resize(self) -> None:
        state = self.konsole.state
        if state is not None and self.is_mounted and state.last_ok is not None:
            self.render_state(state)

    def _throughput(self, state: ConsoleState, age: str) -> None:
        from konsole.model.totals import THROUGHPUT, cluster_totals
        from konsole.ui.screens.overview.panels import throughput_title
        from konsole.ui.widgets.spark import Spark

        snap = state.last_ok
        assert snap is not None
        totals = cluster_totals(snap.metrics)
        panel = self.query_one("#throughput")
        self._set.title(panel, throughput_title(totals.servers, snap.metrics) + age)
        seen = self._seen_totals
        if not state.historic:
            seen[snap.taken_at] = {name: totals.get(name) for name, _ in THROUGHPUT}
            while len(seen) > _SEEN_POINTS:
                del seen[min(seen)]
        self._load_series(state)
        for name, _ in THROUGHPUT:
            values = self._points(name, snap.taken_at, state.historic)
            values.append(totals.get(name))  # the state's own figure is "now"
            style = "grey50" if state.stale else "green"
            self.query_one(f"#tp-{name}", Spark).update_series(values, style=style)

    def _points(self, name: str, until: float, historic: bool) -> list[float | None]:
        """The recorded points before ``until`` (the history's when read for this moment,
        else the states seen live)."""
        if self._series_until is not None and self._series.get(name) is not None:
            return list(self._series[name])
        if historic:
            return []
        return [v[name] for t, v in sorted(self._seen_totals.items()) if t < until]

    def _load_series(self, state: ConsoleState) -> None:
        path = self.konsole.feed.history_path
        snap = state.last_ok
        assert snap is not None
        until = snap.taken_at
        key = (until, str(path))
        if key == self._series_key:
            return
        self._series_key = key
        if path is None:
            self._series_until = None
            return
        self._read_series(path, until)

    class ThroughputRead(Message):
        """The cluster's throughput before ``until`` was read from the history."""

        def __init__(self, until: float, series: dict[str, list[float | None]] | None) -> None:
            super().__init__()
            self.until = until
            self.series = series

    @work(exclusive=True, group="overview-series", exit_on_error=False)
    async def _read_series(self, path: Path, until: float) -> None:
        from konsole.collect.history.reads import throughput_series

        # the points before the poll shown: its own figure is the state's
        lo, hi = to_ms(until - SERIES_WINDOW_S), to_ms(until) - 1
        self.post_message(self.ThroughputRead(until, await throughput_series(path, lo, hi)))

    def on_overview_screen_throughput_read(self, message: ThroughputRead) -> None:
        if self._series_key is None or self._series_key[0] != message.until:
            return  # read for a moment no longer shown
        if message.series is None:
            self._series_until = None
        else:
            self._series, self._series_until = message.series, message.until
        state = self.konsole.state
        if state is not None and state.last_ok is not None:
            self._throughput(state, f" · {age_text(state.data_age)} old" if state.stale else "")

    def _lower(self, state: ConsoleState, age: str, lines: int) -> None:
        from konsole.model.table_stats import FiguresMemo
        from konsole.model.totals import request_totals
        from konsole.ui.screens.overview.panels import hot_tables_text, requests_text

        snap = state.last_ok
        assert snap is not None
        requests = self.query_one("#requests", Static)
        self._set.title(requests, "Requests, worst first" + age)
        self._set.update(requests, requests_text(request_totals(snap.metrics), lines))
        if self._memo is None:
            self._memo = FiguresMemo()
        figures = self._memo.figures(snap, state.previous_ok, state.placement)
        rates = {f.path: f.rows_per_s for f in figures}
        if self._table_rates is not None and self._table_rates[0] != snap.taken_at:
            self._table_before = self._table_rates[1]
        self._table_rates = (snap.taken_at, rates)
        hot = self.query_one("#hot", Static)
        self._set.title(hot, "Hot tables" + age)
        self._set.update(hot, hot_tables_text(figures, self._table_before, lines))

    # ------------------------------------------------------------------ actions

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self._open(event.row_key.value)

    def action_open_server(self) -> None:
        from textual.widgets import DataTable

        table = next(self.query("#tablets").results(DataTable), None)
        if table is not None and table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
            self._open(key.value)

    def _open(self, key: str | None) -> None:
        if key and key.startswith("tablet-"):
            self.konsole.open_server(int(key.removeprefix("tablet-")))


def _events_lines(state: ConsoleState) -> RankedLines:
    from konsole.ui.screens.overview.panels import events_lines

    now = state.as_of if state.as_of is not None else state.now
    return events_lines(state.events, LATEST_EVENTS, event_line, now)


def _failing_since(state: ConsoleState) -> float | None:
    """When the polls started failing: the latest poll-failed event after the last good
    poll, else the first poll after it."""
    from konsole.model.events import EventKind

    after = state.last_ok.taken_at if state.last_ok is not None else None
    for event in reversed(state.events):
        if event.kind is EventKind.POLL_FAILED and (after is None or event.time > after):
            return event.time
    return state.snapshot.taken_at if state.snapshot is not None else None


def _rows(text: object, width: int) -> int:
    """Rows ``text`` (the banner's) takes wrapped at ``width`` (at least one)."""
    from rich.console import Console

    if isinstance(text, str):
        text = Text(text)
    if not isinstance(text, Text):
        return 1
    return max(1, len(text.wrap(Console(width=max(width, 1)), max(width, 1))))


def _per_s(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}/s"


def _bytes_per_s(value: float | None) -> str:
    from konsole.render.sizes import byte_rate_text

    return byte_rate_text(value)


def _panel_rows() -> list[Horizontal]:
    """The dashboard's rows of panels (the tablet servers' table comes between them)."""
    from konsole.model.totals import THROUGHPUT
    from konsole.ui.widgets.fitted_lines import FittedLines
    from konsole.ui.widgets.spark import Spark

    sparks = [
        Spark(
            label,
            show=_per_s if name == "messages_in_rate" else _bytes_per_s,
            label_width=13,
            scale_width=44,
            id=f"tp-{name}",
        )
        for name, label in THROUGHPUT
    ]
    return [
        Horizontal(
            Vertical(*sparks, id="throughput", classes="panel"),
            Static(id="cluster", classes="panel"),
            id="top",
        ),
        Horizontal(
            FittedLines(id="health", classes="panel"),
            FittedLines(id="events", classes="panel"),
            id="middle",
        ),
        Horizontal(
            Static(id="requests", classes="panel"),
            Static(id="hot", classes="panel"),
            id="lower",
        ),
    ]
