"""Tables: databases and tables, filter and sort.

One row per table of the latest successful poll (and one per database without tables):
kind, buckets, partitions, rows/s from the offsets of the last two polls, offset span,
under-replicated and offline buckets. ``/`` filters on ``db.table``, ``1``..``9`` sort by a
column (again: reverse), clicking a header does the same. ``c`` / ``X`` create or drop a
partition of the selected table, ``m`` sets one of its properties (the confirmation modal
of :mod:`konsole.ui.modals.action_confirm`). The rows are plain sequences in a
:class:`~konsole.ui.widgets.grid.KeyedGrid` (cells made only for the rows
drawn; :mod:`konsole.ui.screens.tables.rows`); a big cluster's figures and rows are made in
a thread worker, the newest poll winning, so no frame waits on 10,000 tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Input, Static

from konsole.model.table_stats import FiguresMemo, TableFigures
from konsole.model.timefmt import age_text, clock_text
from konsole.ui.screens.base import ConsoleScreen
from konsole.ui.screens.tables.rows import Arranged, SortKey, arrange, kind_text, rate_text
from konsole.ui.state import ConsoleState
from konsole.ui.widgets.grid import KeyedGrid
from konsole.ui.widgets.text_input import TextInput

__all__ = ["COLUMNS", "TablesScreen", "rate_text"]


@dataclass(frozen=True, slots=True)
class _Column:
    key: str
    label: str
    #: Sort key of a table's figures (None sorts last).
    sort: SortKey
    numeric: bool = False


COLUMNS: tuple[_Column, ...] = (
    _Column("database", "database", lambda f: f.database),
    _Column("table", "table", lambda f: f.table),
    _Column("kind", "kind", kind_text),
    _Column("buckets", "bkts", lambda f: f.buckets, True),
    _Column("partitions", "parts", lambda f: f.partitions, True),
    _Column("rate", "rows/s", lambda f: f.rows_per_s, True),
    _Column("span", "span", lambda f: f.offset_span, True),
    _Column("under", "u-repl", lambda f: f.under_replicated, True),
    _Column("offline", "offline", lambda f: f.offline, True),
)

#: From how many tables a poll's figures and rows are made in a thread worker (about
#: 20 ms of CPU at 2,000): below, on the UI thread, shown in the same frame as the poll.
IN_WORKER = 2000


@dataclass(frozen=True, slots=True)
class _Wanted:
    """What a poll's rows are arranged by: the screen's filter, sort and staleness."""

    needle: str
    sort_column: int
    reverse: bool
    stale: bool


@dataclass(frozen=True, slots=True)
class _Made:
    """A poll's figures and rows, made in a worker (:class:`TablesScreen.RowsMade`)."""

    state: ConsoleState
    figures: list[TableFigures]
    empty_databases: list[str]
    #: Databases with a table or without (the summary's count).
    databases: int
    wanted: _Wanted
    arranged: Arranged


#: The table actions: (the modal's title, what it asks to be typed).
_TABLE_ACTIONS = {
    "partition-create": ("Create partition", "the partition spec, KEY=VALUE[,KEY=VALUE]"),
    "partition-drop": ("Drop partition", "the partition spec, KEY=VALUE[,KEY=VALUE]"),
    "table-set": ("Set table property", "the property, KEY=VALUE"),
}


class TablesScreen(ConsoleScreen):
    CSS_PATH = "tables.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "Filter"),
        Binding("enter", "open", "Open", show=False),
        Binding("p", "preview", "Preview"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        Binding("c", "table_action('partition-create')", "Create partition", show=False),
        Binding("X", "table_action('partition-drop')", "Drop partition", show=False),
        Binding("m", "table_action('table-set')", "Set table property", show=False),
        Binding("1", "sort(0)", "Sort", key_display="1-9"),
        *(
            Binding(str(i + 1), f"sort({i})", f"Sort by {c.label}", show=False)
            for i, c in enumerate(COLUMNS)
            if i
        ),
    ]

    class RowsMade(Message):
        """A poll's figures and rows, made in a thread worker."""

        def __init__(self, made: _Made) -> None:
            super().__init__()
            self.made = made

    def __init__(self) -> None:
        super().__init__()
        self.filter_text = ""
        #: Index into COLUMNS, and whether the order is reversed.
        self.sort_column = 0
        self.sort_reverse = False
        self._figures: list[TableFigures] = []
        self._empty_databases: list[str] = []
        self._databases = 0
        self._state: ConsoleState | None = None
        #: The state whose figures and rows are shown (``_state`` may be ahead of it while
        #: a worker makes them).
        self._shown_state: ConsoleState | None = None
        #: Each table's figures, kept between polls (made again for the tables that moved);
        #: used by one thread at a time (the UI's, or the one worker running).
        self._memo = FiguresMemo()
        #: A worker is making a poll's rows; the newest poll that came meanwhile waits here
        #: (the polls between are skipped: the newest wins).
        self._working = False
        self._making: ConsoleState | None = None
        self._waiting: ConsoleState | None = None
        self._shown = 0

    @property
    def making_rows(self) -> bool:
        """A worker is making a poll's rows (or one waits for it): the rows shown are an
        older poll's."""
        return self._working or self._waiting is not None

    def compose_body(self) -> ComposeResult:
        yield Static(id="tables-summary")
        yield TextInput(
            placeholder="filter db.table (enter: keep, escape: clear)", id="tables-filter"
        )
        yield Static("no tables", id="tables-empty")
        yield KeyedGrid(id="tables-table")

    def on_mount(self) -> None:
        table = self.query_one(KeyedGrid)
        table.set_columns(self._column_labels())
        table.focus()

    # ------------------------------------------------------------------ rendering

    def render_state(self, state: ConsoleState) -> None:
        """Figures and rows of the poll: here for a small cluster, in a thread worker for
        one of :data:`IN_WORKER` tables or more (no frame waits on them)."""
        self._state = state
        if self._working:
            if state is not self._making:
                self._waiting = state
            return
        if state is self._shown_state:
            return  # its rows are shown (the screen resumed): nothing to make again
        snap = state.last_ok
        if snap is None or snap.view is None or len(snap.view.tables) < IN_WORKER:
            self._apply(self._make(state, self._wanted(state)))
            return
        self._working, self._making = True, state
        self._update_texts()
        wanted = self._wanted(state)
        self.run_worker(
            lambda: self.post_message(self.RowsMade(self._make(state, wanted))),
            name="tables-rows",
            group="tables-rows",
            thread=True,
        )

    def on_tables_screen_rows_made(self, message: TablesScreen.RowsMade) -> None:
        message.stop()
        self._working = False
        self._apply(message.made)
        waiting, self._waiting = self._waiting, None
        if waiting is not None:
            self.render_state(waiting)

    def _wanted(self, state: ConsoleState | None) -> _Wanted:
        stale = state is not None and state.stale
        return _Wanted(self.filter_text, self.sort_column, self.sort_reverse, stale)

    def _make(self, state: ConsoleState, wanted: _Wanted) -> _Made:
        """A poll's figures and its rows arranged as ``wanted`` (no Textual: a worker's)."""
        snap = state.last_ok
        figures = self._memo.figures(snap, state.previous_ok, state.placement)
        empty: list[str] = []
        with_tables = {f.database for f in figures}
        if snap is not None and snap.view is not None:
            empty = [d for d in snap.view.databases if d not in with_tables]
        arranged = self._arrange(figures, empty, wanted)
        return _Made(state, figures, empty, len(with_tables) + len(empty), wanted, arranged)

    def _arrange(self, figures: list[TableFigures], empty: list[str], wanted: _Wanted) -> Arranged:
        sort = COLUMNS[wanted.sort_column].sort
        return arrange(figures, empty, wanted.needle, sort, wanted.reverse, wanted.stale)

    def _apply(self, made: _Made) -> None:
        self._shown_state = made.state
        self._figures, self._empty_databases = made.figures, made.empty_databases
        self._databases = made.databases
        if made.wanted != self._wanted(made.state):  # filter or sort moved meanwhile
            self._refresh_rows()
            return
        self._show(made.arranged, made.wanted.stale)

    def _refresh_rows(self) -> None:
        """The rows again for a new filter or sort (the figures as they are)."""
        wanted = self._wanted(self._shown_state)
        self._show(self._arrange(self._figures, self._empty_databases, wanted), wanted.stale)

    def _show(self, arranged: Arranged, stale: bool) -> None:
        table = self.query_one(KeyedGrid)
        table.set_class(stale, "stale")
        table.show(arranged.source)
        self._shown = len(arranged.source.keys)
        self._update_texts()

    def _update_texts(self) -> None:
        empty = self.query_one("#tables-empty", Static)
        empty.display = not self._shown
        empty.update(self._empty_text())
        self.query_one("#tables-summary", Static).update(self._summary(self._shown))

    def _empty_text(self) -> str:
        state = self._shown_state
        if state is None and self._working:
            return "making the figures of every table…"
        if state is None or state.last_ok is None:
            return "no data yet: waiting for the first successful poll"
        if self.filter_text:
            return f"no table matches {self.filter_text!r}"
        return "no tables"

    def _summary(self, shown: int) -> Text:
        state = self._shown_state
        t = Text()
        if state is None:
            return t
        if state.stale:
            t.append(" UNREACHABLE ", style="bold reverse red")
            if state.last_ok is None:
                t.append(" no successful poll yet · ")
            else:
                t.append(f" tables as of {age_text(state.data_age)} ago (last good poll) · ")
        elif state.historic:
            t.append(
                f"as recorded at {clock_text(state.last_ok.taken_at if state.last_ok else None)} · "
            )
        dbs = self._databases
        t.append(f"{dbs} database{'s' if dbs != 1 else ''} · {len(self._figures)} table")
        t.append("s" if len(self._figures) != 1 else "")
        if self.filter_text:
            t.append(f" · filter {self.filter_text!r}: {shown} shown", style="bold")
        column = COLUMNS[self.sort_column]
        t.append(f" · sort {column.label} {'↓' if self.sort_reverse else '↑'}", style="dim")
        return t

    def _column_labels(self) -> list[tuple[str, str | Text]]:
        out: list[tuple[str, str | Text]] = []
        for i, c in enumerate(COLUMNS):
            label = c.label
            if i == self.sort_column:
                label += " ▼" if self.sort_reverse else " ▲"
            out.append((c.key, Text(label, justify="right" if c.numeric else "left")))
        return out

    # ------------------------------------------------------------------ actions

    def action_filter(self) -> None:
        box = self.query_one("#tables-filter", Input)
        box.display = True
        box.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "tables-filter":
            self.filter_text = event.value.strip()
            self._refresh_rows()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "tables-filter":
            if not event.value.strip():
                event.input.display = False
            self.query_one(KeyedGrid).focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#tables-filter", Input)
        box.value = ""
        box.display = False
        self.filter_text = ""
        self.query_one(KeyedGrid).focus()
        self._refresh_rows()

    def action_sort(self, index: int) -> None:
        if index == self.sort_column:
            self.sort_reverse = not self.sort_reverse
        else:
            # Numbers sort biggest first: the busiest or sickest table is what one looks for.
            self.sort_column, self.sort_reverse = index, COLUMNS[index].numeric
        self.query_one(KeyedGrid).set_columns(self._column_labels())
        self._refresh_rows()

    def on_keyed_grid_header_selected(self, event: KeyedGrid.HeaderSelected) -> None:
        event.stop()
        self.action_sort(event.column_index)

    def _selected_table(self) -> str | None:
        key = self.query_one(KeyedGrid).selected_key
        if key is None or not key.startswith("t:"):
            return None
        return key[2:]

    def on_keyed_grid_row_selected(self, event: KeyedGrid.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        path = self._selected_table()
        if path is not None:
            self.konsole.open_table(path)

    def action_preview(self) -> None:
        path = self._selected_table()
        if path is not None:
            self.konsole.open_preview(path)

    def action_table_action(self, kind: str) -> None:
        """Partition create/drop or a property set on the selected table, through the
        confirmation modal (greyed with why when actions are off)."""
        from konsole.ui.cluster_actions import ActionRequest
        from konsole.ui.modals.action_confirm import open_action

        path = self._selected_table()
        if path is None:
            return
        what, ask = _TABLE_ACTIONS[kind]
        open_action(self.app, f"{what} · {path}", ActionRequest(kind, path), ask=ask)
