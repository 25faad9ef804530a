"""VirtualTable: 10,000 rows as plain sequences, cells made only for the rows drawn, drawn
exactly as a KeyedTable draws the same rows, the cursor and scroll right at the far end,
the selected row kept by key through a refresh that reorders the rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.screens.table_detail import TableDetailScreen
from konsole.ui.screens.tables import TablesScreen
from konsole.ui.widgets.keyed_table import Cell, KeyedTable, Right
from konsole.ui.widgets.virtual_table import RowSource, VirtualTable
from tests._testutil.console import large_snapshot, large_state, settle, wait_for_workers

pytestmark = pytest.mark.timeout(60)

COLUMNS = [("name", "name"), ("n", "number")]
ROWS = 10_000


class _Rows:
    """A source of ``ROWS`` rows in a given order, counting the rows whose cells are made."""

    def __init__(self, order: Sequence[int]) -> None:
        self.order = list(order)
        self.made: set[int] = set()

    def source(self) -> RowSource:
        keys = [f"k{i}" for i in self.order]
        widest = max(len(f"{i:,}") for i in self.order)
        return RowSource(keys, self.cells, [len(f"table_{ROWS - 1}"), widest])

    def cells(self, index: int) -> Sequence[Cell]:
        self.made.add(index)
        i = self.order[index]
        return (f"table_{i}", Right(f"{i:,}"))


class _Tables(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.selected: list[str] = []
        self.headers: list[int] = []

    def compose(self) -> ComposeResult:
        yield VirtualTable(id="virtual")

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.selected.append(event.row_key.value or "")

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        self.headers.append(event.column_index)


async def test_ten_thousand_rows_cursor_scroll_and_a_reordering_refresh() -> None:
    app = _Tables()
    rows = _Rows(range(ROWS))
    async with app.run_test(size=(60, 20)) as pilot:
        table = app.query_one(VirtualTable)
        table.set_columns(COLUMNS)
        table.show(rows.source())
        table.focus()
        await pilot.pause()
        view = table.size.height - table.header_height
        assert table.row_count == ROWS and table.selected_key == "k0"
        assert rows.made and max(rows.made) <= view  # only the rows in view
        await pilot.press("ctrl+end")
        await pilot.pause()
        assert table.cursor_row == ROWS - 1 and table.selected_key == f"k{ROWS - 1}"
        assert (
            table.scroll_y == table.max_scroll_y == ROWS + table.header_height - table.size.height
        )
        await pilot.press("pageup", "up")
        await pilot.pause()
        assert table.cursor_row == ROWS - 1 - view - 1
        assert table.scroll_y <= table.cursor_row < table.scroll_y + view
        # Never the thousands of rows in between.
        assert len(rows.made) <= 3 * (view + 2), len(rows.made)
        chosen = table.selected_key
        assert chosen is not None
        # A refresh in the reverse order: the cursor follows its key to the top.
        reordered = _Rows(range(ROWS - 1, -1, -1))
        table.show(reordered.source())
        await pilot.pause()
        await pilot.pause()
        assert table.selected_key == chosen
        assert table.cursor_row == ROWS - 1 - int(chosen[1:])
        assert table.scroll_y <= table.cursor_row < table.scroll_y + view
        assert len(reordered.made) <= 2 * (view + 2)
        # Enter selects the row under the cursor; a click on a row moves the cursor there.
        await pilot.press("enter")
        await pilot.pause()
        assert app.selected == [chosen]
        await pilot.click(VirtualTable, offset=(2, table.header_height + 3))
        await pilot.pause()
        assert table.cursor_row == int(table.scroll_y) + 3
        # A click on the header names its column.
        await pilot.click(VirtualTable, offset=(len(f"table_{ROWS - 1}") + 4, 0))
        await pilot.pause()
        assert app.headers == [1]


class _Both(App[None]):
    CSS = "DataTable { height: 12; }"

    def compose(self) -> ComposeResult:
        yield KeyedTable(id="keyed")
        yield VirtualTable(id="virtual")


async def test_drawn_exactly_as_a_keyed_table() -> None:
    rows = [(f"k{i}", (f"table_{i}", Right(f"{i * 997:,}"))) for i in range(40)]
    app = _Both()
    async with app.run_test(size=(50, 30)) as pilot:
        keyed, virtual = app.query_one(KeyedTable), app.query_one(VirtualTable)
        for table in (keyed, virtual):
            table.set_columns(COLUMNS)
            table.sync(rows)
        await pilot.pause()  # a sync puts the cursor back on its row after the refresh
        for table in (keyed, virtual):
            table.move_cursor(row=3)
        app.set_focus(None)  # the first table would have it: a focused table is tinted
        await pilot.pause()
        assert virtual.size == keyed.size and virtual.cursor_row == keyed.cursor_row == 3
        for y in range(keyed.size.height):
            assert list(virtual.render_line(y)) == list(keyed.render_line(y)), y
        # A sort arrow (new labels) keeps the rows and the cursor's row.
        virtual.set_columns([("name", "name ▲"), ("n", "number")])
        await pilot.pause()
        assert virtual.row_keys == [k for k, _ in rows] and virtual.selected_key == "k3"


async def test_the_tables_screen_keeps_its_table_through_a_poll_that_reorders() -> None:
    """10,000 tables: the rows are made in a worker; a poll without the first 100 tables
    shifts every row, and the cursor stays on its table."""
    state = large_state(2, tables=10_000, buckets=1)
    app = KonsoleApp(StaticFeed([state], name="demo"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, lambda: app.live_state is not None)
        await pilot.press("t")
        await wait_for_workers(pilot)
        screen = app.screen
        assert isinstance(screen, TablesScreen) and not screen.making_rows
        table = screen.query_one(VirtualTable)
        assert table.row_count == 10_000
        await pilot.press(*["pagedown"] * 30, "down")
        await wait_for_workers(pilot)
        chosen, row = table.selected_key, table.cursor_row
        assert chosen is not None and row > 500
        following = large_snapshot(3, tables=10_000, buckets=1)
        fewer = replace(following, view=replace(following.view, tables=following.view.tables[100:]))
        app.publish(replace(state, snapshot=fewer, last_ok=fewer, previous_ok=state.last_ok))
        await wait_for_workers(pilot)
        assert table.row_count == 9_900 and table.selected_key == chosen
        assert table.cursor_row < row  # the rows before it shifted up; it went with them
        assert table.scroll_y <= table.cursor_row < table.scroll_y + table.size.height
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, TableDetailScreen)
        assert f"t:{app.screen.table_path}" == chosen
