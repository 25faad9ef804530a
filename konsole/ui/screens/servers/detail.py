"""Server detail: one server's metrics (sparklines from history), its buckets, its log.

Metric evidence next to log evidence: the current values come from the state, their recent
course from the history file (read in a thread), and for a local cluster the tail of the
server's own log file (read in a thread too; the log4j layout already masks passwords).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import DataTable, Label, Log, Static

from konsole.collect.history.reads import server_metric_series
from konsole.localcluster import processes
from konsole.model import subjects
from konsole.model.metrics import ServerMetrics
from konsole.model.snapshot import table_names
from konsole.model.timefmt import age_text, to_ms
from konsole.render.sizes import byte_rate_text, bytes_text
from konsole.ui.colors import server_state_style
from konsole.ui.screens.base import ConsoleScreen
from konsole.ui.screens.cluster_facts import (
    ServerRow,
    buckets_of,
    fmt_ratio,
    server_rows,
)
from konsole.ui.state import ConsoleState
from konsole.ui.widgets.spark import Spark

__all__ = ["LOG_LINES", "SERIES_WINDOW_S", "ServerDetailScreen", "tail_lines"]

#: Lines of the server's log shown, and how far back the sparklines reach.
LOG_LINES = 200
SERIES_WINDOW_S = 30 * 60.0


@dataclass(frozen=True, slots=True)
class _Metric:
    name: str
    label: str
    show: Callable[[float | None], str]


def _count(v: float | None) -> str:
    return "-" if v is None else f"{v:.0f}"


_METRICS = (
    _Metric("disk_usage_ratio", "disk used", fmt_ratio),
    _Metric("heap_used", "heap used", bytes_text),
    _Metric("bytes_in_rate", "bytes in", byte_rate_text),
    _Metric("bytes_out_rate", "bytes out", byte_rate_text),
    _Metric("messages_in_rate", "messages in/s", lambda v: "-" if v is None else f"{v:.0f}"),
    _Metric("leader_count", "leaders", _count),
    _Metric("under_replicated", "under-replicated", _count),
)


#: Columns for a sparkline's "min … · max …" (two byte sizes: 31).
_SCALE_WIDTH = 31


def tail_lines(path: Path, lines: int = LOG_LINES) -> list[str]:
    """The last ``lines`` lines of ``path`` (at most its last 256 KiB); [] when unreadable."""
    return processes.tail_lines(path, lines, max_bytes=256 * 1024)


class ServerDetailScreen(ConsoleScreen):
    CSS_PATH = "server_detail.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("a", "server_actions", "Actions"),
    ]

    def __init__(self, server_id: int, *, coordinator: str | None = None) -> None:
        super().__init__()
        #: The tablet server's node id (0 is the coordinator, as Fluss numbers it).
        self.server_id = server_id
        #: A coordinator's address when this shows a coordinator (they share node id 0).
        self.coordinator = coordinator
        self._series_key: tuple[float, str | None] | None = None
        #: What the buckets table holds: (key, role, leader, replicas) per row.
        self._placement: list[tuple[str, str, str, str]] | None = None

    @property
    def is_coordinator(self) -> bool:
        return self.coordinator is not None or self.server_id == 0

    @property
    def subject(self) -> str:
        """How the history names this server's metrics."""
        if self.is_coordinator:
            host = (self.coordinator or "").rpartition(":")[0]
            return subjects.coordinator(host)
        return subjects.tablet_server(self.server_id)

    def compose_body(self) -> ComposeResult:
        yield Static(id="server-title")
        with Vertical(id="server-metrics", classes="panel"):
            for metric in _METRICS:
                with Horizontal(classes="metric"):
                    yield Label(metric.label, classes="metric-label")
                    yield Label("-", id=f"value-{metric.name}", classes="metric-value")
                    yield Spark(
                        show=metric.show,
                        with_current=False,
                        scale_width=_SCALE_WIDTH,
                        id=f"spark-{metric.name}",
                        classes="metric-spark",
                    )
        table: DataTable[Text | str] = DataTable(
            id="server-buckets", classes="panel", cursor_type="row"
        )
        for label in ("bucket", "role", "leader", "replicas"):
            table.add_column(label, key=label)
        yield table
        yield Log(id="server-log", classes="panel", max_lines=LOG_LINES)

    def on_mount(self) -> None:
        self.query_one("#server-log", Log).display = self._log_path() is not None

    # ------------------------------------------------------------------ rendering

    def render_state(self, state: ConsoleState) -> None:
        row = self._row(state)
        stale = state.stale
        for panel in self.query(".panel"):
            panel.set_class(stale, "stale")
        self.query_one("#server-title", Static).update(self._title(state, row))
        metrics = row.metrics if row is not None else self._coordinator_metrics(state)
        age = f" · {age_text(state.data_age)} old" if stale else ""
        panel = self.query_one("#server-metrics")
        panel.border_title = "Metrics" + age
        for metric in _METRICS:
            value = getattr(metrics, metric.name, None) if metrics is not None else None
            self.query_one(f"#value-{metric.name}", Label).update(metric.show(value))
        self._buckets(state, age)
        self._load_series(state)
        log = self._log_path()
        if log is not None:
            self.query_one(
                "#server-log", Log
            ).border_title = f"Log · {log.name} (last {LOG_LINES} lines)"
            self._load_log(log)

    def _row(self, state: ConsoleState) -> ServerRow | None:
        for row in server_rows(state):
            if self.is_coordinator:
                if row.role == "coordinator" and (
                    self.coordinator is None or row.endpoint == self.coordinator
                ):
                    return row
            elif row.node_id == self.server_id:
                return row
        return None

    def _coordinator_metrics(self, state: ConsoleState) -> ServerMetrics | None:
        if not self.is_coordinator or state.last_ok is None:
            return None
        found = state.last_ok.coordinator_metrics
        host = (self.coordinator or "").rpartition(":")[0]
        return next((m for m in found if not host or m.host == host), None)

    def _title(self, state: ConsoleState, row: ServerRow | None) -> Text:
        t = Text(no_wrap=True, overflow="ellipsis")
        name = subjects.coordinator(self.coordinator)
        t.append(name if self.is_coordinator else subjects.tablet_server(self.server_id), "bold")
        if row is None:
            t.append("  not in this state's metadata", style="yellow")
            return t
        if not self.is_coordinator:
            t.append(f"  {row.endpoint}")
        if row.rack:
            t.append(f"  rack {row.rack}")
        t.append(f"  {row.state}", style=server_state_style(row.state, state.stale))
        if row.note:
            t.append(f"  ({row.note})", style="dim")
        return t

    def _buckets(self, state: ConsoleState, age: str) -> None:
        table = self.query_one("#server-buckets", DataTable)
        view = state.last_ok.view if state.last_ok is not None else None
        if view is None or self.is_coordinator:
            table.display = not self.is_coordinator
            table.clear()
            self._placement = None
            return
        names = table_names(view)
        mine = buckets_of(view, self.server_id)
        led = sum(b.leader_id == self.server_id for b in mine)
        facts = state.placement
        alive = facts is not None and self.server_id in facts.alive
        # The tables with a replica here: those of its buckets (server_load's count).
        held = {b.table_id for b in mine if self.server_id in b.replica_ids}
        known = facts is not None and (
            self.server_id in facts.alive or self.server_id in facts.replicas
        )
        tables = f" of {len(held)} tables" if known else ""
        table.border_title = (
            f"Buckets: leads {led}, hosts {len(mine)}{tables} · draining moves "
            f"{len(mine)} replicas, {led} leaders" + age
        )
        rows: list[tuple[str, list[Text | str]]] = []
        for b in mine:
            part = f"[{b.partition_name}]" if b.partition_name is not None else ""
            bucket = f"{names.get(b.table_id, f'table-{b.table_id}')}{part}#{b.bucket_id}"
            role = "leader" if b.leader_id == self.server_id else "follower"
            if not alive:
                role = "replica (offline)"
            leader = "none" if b.leader_id is None else str(b.leader_id)
            rows.append(
                (
                    bucket,
                    [
                        bucket,
                        Text(role, style={"leader": "bold", "follower": ""}.get(role, "yellow")),
                        Text(leader, style="bold red" if b.leader_id is None else ""),
                        ",".join(str(r) for r in b.replica_ids),
                    ],
                )
            )
        self._fill_buckets(table, rows)

    def _fill_buckets(self, table: DataTable[Text | str], rows: list[tuple[str, list]]) -> None:
        """Rebuild the table only when the buckets or their placement changed: a poll that
        moved nothing costs a comparison (offsets are the table detail's business)."""
        placement = [(key, str(cells[1]), str(cells[2]), str(cells[3])) for key, cells in rows]
        if placement == self._placement:
            return
        cursor = table.cursor_row
        table.clear()
        for key, cells in rows:
            table.add_row(*cells, key=key)
        self._placement = placement
        if rows:
            table.move_cursor(row=min(cursor, len(rows) - 1), animate=False)

    # ------------------------------------------------------------------ history, log

    def _load_series(self, state: ConsoleState) -> None:
        path = self.konsole.feed.history_path
        until = state.as_of if state.as_of is not None else state.now
        key = (until, str(path))
        if key == self._series_key:
            return
        self._series_key = key
        self._read_series(path, until)

    class SeriesRead(Message):
        """The metric series were read from the history (empty: no history file)."""

        def __init__(self, series: dict[str, list[float | None]]) -> None:
            super().__init__()
            self.series = series

    @work(exclusive=True, group="server-series", exit_on_error=False)
    async def _read_series(self, path: Path | None, until: float) -> None:
        lo, hi = to_ms(until - SERIES_WINDOW_S), to_ms(until)
        # every poll a point: an unknown figure (a coordinator's disk) is a gap
        names = [m.name for m in _METRICS]
        series = await server_metric_series(path, self.subject, names, lo, hi)
        self.post_message(self.SeriesRead(series or {}))

    def on_server_detail_screen_series_read(self, message: SeriesRead) -> None:
        self._show_series(message.series)

    def _show_series(self, series: dict[str, list[float | None]]) -> None:
        for metric in _METRICS:
            spark = self.query_one(f"#spark-{metric.name}", Spark)
            spark.update_series(series.get(metric.name) or [])
        panel = self.query_one("#server-metrics")
        panel.border_subtitle = "" if series else "no history: no sparklines"

    def _log_path(self) -> Path | None:
        local = self.konsole.feed.local
        if local is None:
            return None
        for proc in local.processes:
            if self.is_coordinator:
                if proc.role == "coordinator" and (
                    self.coordinator is None or proc.endpoint == self.coordinator
                ):
                    return Path(proc.log)
            elif proc.role == "tablet-server" and proc.id == self.server_id:
                return Path(proc.log)
        return None

    class LogRead(Message):
        """The tail of the server's log file was read ([] when unreadable)."""

        def __init__(self, path: Path, lines: list[str]) -> None:
            super().__init__()
            self.path = path
            self.lines = lines

    @work(exclusive=True, group="server-log", exit_on_error=False)
    async def _load_log(self, path: Path) -> None:
        self.post_message(self.LogRead(path, await asyncio.to_thread(tail_lines, path)))

    def on_server_detail_screen_log_read(self, message: LogRead) -> None:
        log = self.query_one("#server-log", Log)
        log.clear()
        log.write_lines(message.lines or [f"(nothing readable in {message.path})"])

    def action_back(self) -> None:
        self.app.pop_screen()

    # ------------------------------------------------------------------ operator actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A coordinator has no operator actions (drain, tag and untag are a tablet
        server's)."""
        return not (action == "server_actions" and self.is_coordinator)

    def action_server_actions(self) -> None:
        """The actions modal; greyed with the reason when they are off."""
        from konsole.ui.modals.server_action import ServerActionScreen

        actions = self.konsole.server_actions()
        state = self.konsole.state
        why = actions.unavailable()
        if why is None and state is not None and state.historic:
            why = "time travel shows the past; actions act on the live cluster (L: live)"
        self.app.push_screen(ServerActionScreen(self.server_id, actions, why))
