"""Tables: databases and tables, filter and sort.

One row per table of the latest successful poll (and one per database without tables):
kind, buckets, partitions, rows/s from the offsets of the last two polls, offset span,
under-replicated and offline buckets. ``/`` filters on ``db.table``, ``1``..``9`` sort by a
column (again: reverse), clicking a header does the same. ``c`` / ``X`` create or drop a
partition of the selected table, ``m`` sets one of its properties (the confirmation modal
of :mod:`konsole.ui.modals.action_confirm`). A refresh updates changed cells
in place and rebuilds the rows only when their set or order changes (see
:class:`~konsole.ui.widgets.keyed_table.KeyedTable`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Input, Static

from konsole.model.table_stats import FiguresMemo, TableFigures
from konsole.model.timefmt import age_text, clock_text
from konsole.ui.screens.base import ConsoleScreen
from konsole.ui.state import ConsoleState
from konsole.ui.widgets.keyed_table import Cell, KeyedTable, Right, Row
from konsole.ui.widgets.text_input import TextInput

__all__ = ["COLUMNS", "TablesScreen", "rate_text"]


@dataclass(frozen=True, slots=True)
class _Column:
    key: str
    label: str
    #: Sort key of a table's figures (None sorts last).
    sort: Callable[[TableFigures], Any]
    numeric: bool = False


COLUMNS: tuple[_Column, ...] = (
    _Column("database", "database", lambda f: f.database),
    _Column("table", "table", lambda f: f.table),
    _Column("kind", "kind", lambda f: _kind(f)),
    _Column("buckets", "bkts", lambda f: f.buckets, True),
    _Column("partitions", "parts", lambda f: f.partitions, True),
    _Column("rate", "rows/s", lambda f: f.rows_per_s, True),
    _Column("span", "span", lambda f: f.offset_span, True),
    _Column("under", "u-repl", lambda f: f.under_replicated, True),
    _Column("offline", "offline", lambda f: f.offline, True),
)


def _kind(f: TableFigures) -> str:
    if f.error is not None:
        return "error"
    if f.primary_key is None:
        return "?"
    return "PK" if f.primary_key else "log"


def rate_text(rate: float | None) -> str:
    """``-`` when unknown, one decimal below 10 rows/s, thousands separators above."""
    if rate is None:
        return "-"
    if rate < 10:
        return f"{rate:.1f}"
    return f"{rate:,.0f}"


def _num(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


#: How many distinct right-aligned texts a Tables screen shares between its rows.
_RIGHTS_KEPT = 4096

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

    def __init__(self) -> None:
        super().__init__()
        self.filter_text = ""
        #: Index into COLUMNS, and whether the order is reversed.
        self.sort_column = 0
        self.sort_reverse = False
        self._figures: list[TableFigures] = []
        self._empty_databases: list[str] = []
        self._state: ConsoleState | None = None
        #: Each table's figures, kept between polls (made again for the tables that moved).
        self._memo = FiguresMemo()
        #: The last rows by id of their figures (the figures, stale, the row): a table whose
        #: figures are the same object as at the last refresh is not turned into cells again.
        self._made: dict[int, tuple[TableFigures, bool, Row]] = {}
        #: One Right per text, shared by the rows ("0", "1", "-" in almost every row): a
        #: Right is a tracked object, and 10,000 tables' rows made again in a poll where
        #: all moved made 60,000 of them, which the full collections then walked.
        self._rights: dict[str, Right] = {}

    def compose_body(self) -> ComposeResult:
        yield Static(id="tables-summary")
        yield TextInput(
            placeholder="filter db.table (enter: keep, escape: clear)", id="tables-filter"
        )
        yield Static("no tables", id="tables-empty")
        yield KeyedTable(id="tables-table")

    def on_mount(self) -> None:
        table = self.query_one(KeyedTable)
        table.set_columns(self._column_labels())
        table.focus()

    # ------------------------------------------------------------------ rendering

    def render_state(self, state: ConsoleState) -> None:
        self._state = state
        snap = state.last_ok
        self._figures = self._memo.figures(snap, state.previous_ok)
        if snap is not None and snap.view is not None:
            with_tables = {f.database for f in self._figures}
            self._empty_databases = [d for d in snap.view.databases if d not in with_tables]
        else:
            self._empty_databases = []
        self._refresh_rows()

    def _refresh_rows(self) -> None:
        state = self._state
        table = self.query_one(KeyedTable)
        stale = state is not None and state.stale
        table.set_class(stale, "stale")
        rows = self._rows(stale)
        table.sync(rows)
        empty = self.query_one("#tables-empty", Static)
        empty.display = not rows
        empty.update(self._empty_text())
        self.query_one("#tables-summary", Static).update(self._summary(len(rows)))

    def _empty_text(self) -> str:
        state = self._state
        if state is None or state.last_ok is None:
            return "no data yet: waiting for the first successful poll"
        if self.filter_text:
            return f"no table matches {self.filter_text!r}"
        return "no tables"

    def _visible(self) -> list[TableFigures]:
        needle = self.filter_text.lower()
        figures = self._figures
        if needle:
            figures = [f for f in figures if needle in f.path.lower()]
        sort = COLUMNS[self.sort_column].sort
        keys = [sort(f) for f in figures]
        # Sorted as (key, path) tuples (paths are unique: the index never decides), so the
        # sort compares in C rather than calling a key function per table.
        known = sorted(
            (
                (k, f.path, i)
                for i, (k, f) in enumerate(zip(keys, figures, strict=True))
                if k is not None
            ),
            reverse=self.sort_reverse,
        )
        unknown = [f for k, f in zip(keys, figures, strict=True) if k is None]
        return [figures[i] for _, _, i in known] + unknown

    def _rows(self, stale: bool) -> list[Row]:
        made: dict[int, tuple[TableFigures, bool, Row]] = self._made
        kept: dict[int, tuple[TableFigures, bool, Row]] = {}
        if self.filter_text:  # the rows filtered out are kept too, for the filter's end
            current = {id(f) for f in self._figures}
            kept = {k: entry for k, entry in made.items() if k in current}
        rows: list[Row] = []
        for f in self._visible():
            entry = made.get(id(f))
            if entry is None or entry[0] is not f or entry[1] is not stale:
                entry = (f, stale, (f"t:{f.path}", self._cells(f, stale)))
            kept[id(f)] = entry
            rows.append(entry[2])
        self._made = kept  # only this poll's tables: bounded by the cluster's tables
        needle = self.filter_text.lower()
        for db in self._empty_databases:
            if needle in db.lower():
                cells: list[Cell] = [db, Text("(no tables)", style="dim")]
                cells += [""] * (len(COLUMNS) - 2)
                rows.append((f"d:{db}", cells))
        return rows

    def _cells(self, f: TableFigures, stale: bool) -> tuple[Cell, ...]:
        rights = self._rights

        def right(text: str, style: str = "") -> Cell:
            if stale or not style:
                cell = rights.get(text)
                if cell is None:
                    cell = Right(text)
                    if len(rights) < _RIGHTS_KEPT:  # bounded: rates and spans vary freely
                        rights[text] = cell
                return cell
            return Text(text, style=style, justify="right")

        kind = _kind(f)
        return (
            f.database,
            f.table,
            kind if stale or kind != "error" else Text(kind, style="bold red"),
            right(_num(f.buckets)),
            right(_num(f.partitions) if f.partitions else "-"),
            right(rate_text(f.rows_per_s)),
            right(_num(f.offset_span)),
            right(_num(f.under_replicated), "bold yellow" if f.under_replicated else ""),
            right(_num(f.offline), "bold red" if f.offline else ""),
        )

    def _summary(self, shown: int) -> Text:
        state = self._state
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
        dbs = len({f.database for f in self._figures}) + len(self._empty_databases)
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
            self.query_one(KeyedTable).focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#tables-filter", Input)
        box.value = ""
        box.display = False
        self.filter_text = ""
        self.query_one(KeyedTable).focus()
        self._refresh_rows()

    def action_sort(self, index: int) -> None:
        if index == self.sort_column:
            self.sort_reverse = not self.sort_reverse
        else:
            # Numbers sort biggest first: the busiest or sickest table is what one looks for.
            self.sort_column, self.sort_reverse = index, COLUMNS[index].numeric
        self.query_one(KeyedTable).set_columns(self._column_labels())
        self._refresh_rows()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        self.action_sort(event.column_index)

    def _selected_table(self) -> str | None:
        key = self.query_one(KeyedTable).selected_key
        if key is None or not key.startswith("t:"):
            return None
        return key[2:]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
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
