"""Overview: the cluster at a glance.

Identity and catalog counts, health with its reasons, the tablet servers, the latest
events. When the latest poll failed a banner says since when and why, and every panel is
greyed with the age of what it shows (and nothing is painted green).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

from konsole.model.timefmt import age_text, clock_text
from konsole.ui.colors import health_style, server_state_style, severity_style
from konsole.ui.screens.base import ConsoleScreen

# The overview is the first frame: the model (events, health, placement, the snapshot types)
# is imported with the first state to show, not before that frame is painted.
if TYPE_CHECKING:
    from textual.widgets import DataTable

    from konsole.model.events import Event
    from konsole.ui.screens.cluster_facts import SeenServers, ServerRow
    from konsole.ui.state import ConsoleState

__all__ = ["OverviewScreen", "event_line"]

#: Events shown on the overview (the Events screen has the rest).
LATEST_EVENTS = 8


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

    def compose_body(self) -> ComposeResult:
        yield Static(id="banner")
        # Hidden until a state with data: before the first state the overview says it is
        # connecting, as a connecting state does (the tablet servers' table comes with data).
        with Vertical(id="overview") as body:
            body.display = False
            with Horizontal(id="top"):
                yield Static(id="cluster", classes="panel")
                yield Static(id="health", classes="panel")
            yield Static(id="events", classes="panel")

    def on_mount(self) -> None:
        if self.konsole.state is None:  # no state yet: say what a connecting state says
            banner = self.query_one("#banner", Static)
            banner.add_class("-connecting")
            banner.update(f"connecting to {self._target()}…")

    def _tablets_table(self) -> DataTable[Text | str]:
        """The tablet servers' table, made with the first state that has data: a DataTable
        costs a fifth of the first frame (its styles), and no frame before data shows it."""
        from textual.widgets import DataTable

        found = self.query("#tablets").results(DataTable)
        table: DataTable[Text | str] | None = next(found, None)
        if table is not None:
            return table
        table = DataTable(id="tablets", classes="panel", cursor_type="row", zebra_stripes=False)
        table.add_columns("id", "endpoint", "rack", "state", "leaders", "replicas", "disk")
        table.add_column("write lock", key="lock")
        self.query_one("#overview").mount(table, before="#events")
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
        self._banner(state)
        body = self.query_one("#overview")
        body.display = state.last_ok is not None
        if state.last_ok is None:
            return
        stale = state.stale
        age = f" · {age_text(state.data_age)} old" if stale else ""
        self._tablets_table()  # a panel too: greyed with the others when stale
        for panel in self.query(".panel"):
            panel.set_class(stale, "stale")
        cluster = self.query_one("#cluster", Static)
        cluster.border_title = "Cluster" + age
        cluster.update(self._cluster_text(state))
        health = self.query_one("#health", Static)
        health.border_title = "Health" + age
        health.update(self._health_text(state))
        self._tablets(state, age)
        events = self.query_one("#events", Static)
        events.border_title = "Latest events"
        events.update(self._events_text(state))

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

    def _cluster_text(self, state: ConsoleState) -> Text:
        from konsole.ui.screens.cluster_facts import bucket_counts, count_text, version_text

        snap = state.last_ok
        assert snap is not None
        stale = state.stale
        t = Text(no_wrap=True, overflow="ellipsis")

        def row(label: str, *parts: str | tuple[str, str]) -> None:
            if len(t):
                t.append("\n")
            t.append(f"{label:<12}", style="dim")
            t.append_text(Text.assemble(*parts))

        profile = self.konsole.feed.profile
        identity = state.profile
        if profile is not None and profile.bootstrap:
            identity += f" ({', '.join(profile.bootstrap)})"
        row("cluster", identity)
        version = version_text(snap.view)
        if version:
            row("version", version)
        latest = state.snapshot or snap
        active = latest.active_coordinator if not stale else None
        row(
            "coordinator",
            (active, "") if active else ("none answering", "bold red"),
        )
        standby = latest.standby_coordinators
        if standby and not stale:
            row("standby", ", ".join(standby))
        unreachable = [c.address for c in latest.coordinators if c.role.value == "unreachable"]
        if unreachable and not stale:
            row("unreachable", (", ".join(unreachable), "yellow"))
        counts = bucket_counts(snap, state.placement())
        if counts is not None:
            if counts.databases == 0:
                row("catalog", ("no databases yet", "italic"))
            else:
                row(
                    "catalog",
                    f"{count_text(counts.databases, 'database')} · "
                    f"{count_text(counts.tables, 'table')} · "
                    f"{count_text(counts.buckets, 'bucket')}",
                )
            off_style = "bold red" if counts.offline_buckets else ""
            under_style = "yellow" if counts.under_replicated_buckets else ""
            row(
                "buckets",
                (f"{counts.offline_buckets} offline", off_style),
                " · ",
                (f"{counts.under_replicated_buckets} under-replicated", under_style),
            )
            if counts.out_of_sync_replicas:
                row("replicas", (f"{counts.out_of_sync_replicas} out of sync", "yellow"))
        row(
            "last poll",
            f"{clock_text(snap.taken_at)[11:]} · {age_text(state.data_age)} old · "
            f"{snap.latency_s * 1000:.0f} ms",
        )
        return t

    def _health_text(self, state: ConsoleState) -> Text:
        t = Text()
        health = state.health
        if health is None:
            from konsole.model.health import HealthStatus

            t.append("unknown", style=health_style(HealthStatus.UNKNOWN))
            return t
        stale = state.stale
        t.append(health.status.name, style=health_style(health.status, stale))
        t.append(f"  ({health.source})", style="dim")
        if not health.findings:
            t.append("\nno findings")
        for finding in health.findings:
            t.append("\n• ")
            t.append(finding.subject + ": ", style=health_style(finding.status, stale))
            t.append(finding.reason)
        return t

    def _tablets(self, state: ConsoleState, age: str) -> None:
        table = self._tablets_table()
        rows = [r for r in self._seen.rows(state) if r.node_id is not None]
        table.border_title = f"Tablet servers ({sum(r.state == 'alive' for r in rows)} alive)" + age
        cursor = table.cursor_row
        table.clear()
        for r in rows:
            table.add_row(*_tablet_cells(r, state.stale), key=r.key)
        if rows:
            table.move_cursor(row=min(cursor, len(rows) - 1), animate=False)
        if not rows:
            table.border_subtitle = "no tablet servers"
        else:
            table.border_subtitle = ""

    def _events_text(self, state: ConsoleState) -> Text:
        latest = list(reversed(state.events[-LATEST_EVENTS:]))
        if not latest:
            return Text("no events recorded yet", style="italic")
        out = Text("\n", no_wrap=True, overflow="ellipsis").join(event_line(e) for e in latest)
        out.no_wrap, out.overflow = True, "ellipsis"
        return out

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


def _failing_since(state: ConsoleState) -> float | None:
    """When the polls started failing: the latest poll-failed event after the last good
    poll, else the first poll after it."""
    from konsole.model.events import EventKind

    after = state.last_ok.taken_at if state.last_ok is not None else None
    for event in reversed(state.events):
        if event.kind is EventKind.POLL_FAILED and (after is None or event.time > after):
            return event.time
    return state.snapshot.taken_at if state.snapshot is not None else None


def _tablet_cells(row: ServerRow, stale: bool) -> list[Text | str]:
    from konsole.ui.screens.cluster_facts import fmt_ratio

    m = row.metrics
    disk = fmt_ratio(m.disk_usage_ratio) if m is not None else "-"
    lock: Text | str = "-"
    if m is not None and m.disk_write_locked is not None:
        lock = Text("LOCKED", style="bold red") if m.disk_write_locked else "no"
    return [
        str(row.node_id),
        row.endpoint,
        row.rack or "-",
        Text(row.state, style=server_state_style(row.state, stale)),
        str(row.leaders) if row.leaders is not None else "-",
        str(row.replicas) if row.replicas is not None else "-",
        disk,
        lock,
    ]
