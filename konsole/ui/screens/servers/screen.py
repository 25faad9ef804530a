"""Servers: coordinators and tablet servers in one table; enter opens a server."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Static

from konsole.model.server_lines import skewed, view_lines
from konsole.model.thresholds import HealthThresholds
from konsole.model.timefmt import age_text
from konsole.render.sizes import compact_rate_text
from konsole.ui.colors import server_state_style
from konsole.ui.screens.base import ConsoleScreen
from konsole.ui.screens.capacity.cells import room_cell
from konsole.ui.screens.cluster_facts import (
    SeenServers,
    ServerRow,
    fmt_ratio,
)
from konsole.ui.state import ConsoleState
from konsole.ui.widgets.column_fit import column_widths, fitting_columns

__all__ = ["ServersScreen", "server_cells"]

_COLUMNS = (
    "role",
    "id",
    "endpoint",
    "rack",
    "state",
    "leaders",
    "replicas",
    "disk",
    "lock",
    "room",
    "heap",
    "in/s",
    "out/s",
)
#: The columns a narrow terminal loses, least important first (konsole.ui.widgets.column_fit):
#: role, id, state and lock always stay.
_DROP_ORDER = tuple(
    _COLUMNS.index(c)
    for c in ("rack", "heap", "replicas", "out/s", "in/s", "endpoint", "room", "leaders", "disk")
)
#: Shown only while the servers speak more than one Fluss line (a rolling upgrade); it
#: stays whatever the width: during an upgrade it is the column that matters.
_LINE_COLUMN = "line"


def server_cells(row: ServerRow, stale: bool, room: Text | None = None) -> list[Text | str]:
    """A server's cells; ``room``: its capacity cell (a tablet server's least headroom and
    forecast lock, :func:`konsole.ui.screens.capacity.cells.room_cell`)."""
    m = row.metrics
    lock: Text | str = "-"
    if m is not None and m.disk_write_locked is not None:
        lock = Text("LOCKED", style="bold red") if m.disk_write_locked else "no"
    return [
        "coord" if row.role == "coordinator" else row.role,
        str(row.node_id) if row.node_id is not None else "-",
        row.endpoint,
        row.rack or "-",
        Text(row.state, style=server_state_style(row.state, stale)),
        Text(str(row.leaders) if row.leaders is not None else "-", justify="right"),
        Text(str(row.replicas) if row.replicas is not None else "-", justify="right"),
        Text(fmt_ratio(m.disk_usage_ratio) if m else "-", justify="right"),
        lock,
        room if room is not None else Text("-", justify="right"),
        Text(fmt_ratio(m.heap_ratio) if m else "-", justify="right"),
        Text(compact_rate_text(m.bytes_in_rate) if m else "-", justify="right"),
        Text(compact_rate_text(m.bytes_out_rate) if m else "-", justify="right"),
    ]


class ServersScreen(ConsoleScreen):
    CSS_PATH = "servers.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_server", "Open", show=True),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._seen = SeenServers()
        self._rows: list[ServerRow] = []
        #: The columns shown: the indexes of those that fit the table's width, and
        #: whether the line column is there (only during a version skew).
        self._layout: tuple[list[int], bool] = (list(range(len(_COLUMNS))), False)

    def compose_body(self) -> ComposeResult:
        yield Static(id="servers-summary")
        table: DataTable[Text | str] = DataTable(id="servers", cursor_type="row")
        table.add_columns(*_COLUMNS)
        yield table
        yield Static(id="servers-note")

    def render_state(self, state: ConsoleState) -> None:
        summary = self.query_one("#servers-summary", Static)
        table = self.query_one("#servers", DataTable)
        stale = state.stale
        table.set_class(stale, "stale")
        summary.set_class(stale, "stale")
        rows = self._seen.rows(state)
        self._rows = rows
        summary.update(_summary(state, rows))
        cursor = table.cursor_row
        rooms = _rooms(state, self._rules())
        cells = [
            server_cells(r, stale, rooms(r.node_id) if r.role == "tablet" else None) for r in rows
        ]
        view = state.last_ok.view if state.last_ok is not None else None
        skew = skewed(view)
        lines: list[str] = []
        if skew:  # the line column comes and goes with the skew
            coordinator_line, tablet_lines = view_lines(view)
            for r in rows:
                line = tablet_lines.get(r.node_id) if r.node_id is not None else None
                if r.role == "coordinator" and r.state == "active":
                    line = coordinator_line
                lines.append(line or "-")
        widths = column_widths(_COLUMNS, cells, table.cell_padding)
        room = self._room(table)
        if skew:
            room -= max(map(len, [_LINE_COLUMN, *lines])) + 2 * table.cell_padding
        shown = fitting_columns(widths, _DROP_ORDER, room)
        if (shown, skew) != self._layout:
            self._layout = (shown, skew)
            table.clear(columns=True)
            table.add_columns(*(_COLUMNS[i] for i in shown), *((_LINE_COLUMN,) if skew else ()))
        else:
            table.clear()
        for n, (r, row_cells) in enumerate(zip(rows, cells, strict=True)):
            extra = (lines[n],) if skew else ()
            table.add_row(*(row_cells[i] for i in shown), *extra, key=r.key)
        if rows:
            table.move_cursor(row=min(cursor, len(rows) - 1), animate=False)
        self._note()

    def _room(self, table: DataTable[Text | str]) -> int:
        """The cells the table's columns may take: its own width once laid out (less a
        scrollbar), the terminal's before."""
        width = table.scrollable_content_region.width
        return width if width > 0 else self.app.size.width

    def on_resize(self) -> None:
        state = self.konsole.state
        if state is not None and self.is_mounted:
            self.render_state(state)

    def _rules(self) -> HealthThresholds:
        profile = self.konsole.feed.profile
        return profile.health if profile is not None else HealthThresholds()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._note()

    def _note(self) -> None:
        note = self.query_one("#servers-note", Static)
        row = self._current()
        if row is None or not row.note:
            note.update("")
            note.display = False
            return
        note.display = True
        note.update(Text.assemble((f"{row.endpoint}: ", "bold"), row.note))

    def _current(self) -> ServerRow | None:
        table = self.query_one("#servers", DataTable)
        if not table.row_count or not 0 <= table.cursor_row < len(self._rows):
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return next((r for r in self._rows if r.key == key), None)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open_server()

    def action_open_server(self) -> None:
        row = self._current()
        if row is None:
            return
        if row.node_id is not None:
            self.konsole.open_server(row.node_id)
        else:
            self.konsole.open_server(0, coordinator=row.endpoint)


def _rooms(state: ConsoleState, rules: HealthThresholds) -> Callable[[int | None], Text]:
    """node id -> its capacity cell, from the shown poll (unknown without one)."""
    snap = state.last_ok
    servers = {s.server_id: s for s in state.capacity}
    now = snap.taken_at if snap is not None else state.now

    def room(node_id: int | None) -> Text:
        server = None if node_id is None else servers.get(str(node_id))
        return room_cell(server, rules, now, state.stale)

    return room


def _summary(state: ConsoleState, rows: list[ServerRow]) -> Text:
    if state.last_ok is None:
        return Text("no successful poll yet" if not state.connecting else "connecting…")
    coords = [r for r in rows if r.role == "coordinator"]
    tablets = [r for r in rows if r.role == "tablet"]
    t = Text()
    active = sum(r.state == "active" for r in coords)
    t.append(f"{len(coords)} coordinator{'s' if len(coords) != 1 else ''} ({active} active)")
    alive = sum(r.state == "alive" for r in tablets)
    t.append(f" · {alive} tablet server{'s' if alive != 1 else ''} alive")
    gone = sum(r.state == "gone" for r in tablets)
    if gone:
        t.append(f" · {gone} gone", style="bold red")
    if state.last_ok is not None and skewed(state.last_ok.view):
        t.append(" · version skew: servers speak more than one Fluss line", style="bold yellow")
    if state.stale:
        t.append(f" · unreachable: data {age_text(state.data_age)} old", style="bold yellow")
    return t
