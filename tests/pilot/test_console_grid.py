"""KeyedGrid's public behaviour: 10,000 rows whose cells are made only when drawn, the
cursor kept by key through refreshes, keys and clicks, in-place updates that repaint the
changed rows, pages and appended rows, and every change refused whole when it is bad."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest
from rich.text import Text
from textual.app import App, ComposeResult

from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.screens.tables.detail import TableDetailScreen
from konsole.ui.screens.tables.screen import TablesScreen
from konsole.ui.widgets.grid import KeyedGrid
from konsole.ui.widgets.grid_cells import Cell, Right
from konsole.ui.widgets.grid_rows import DuplicateKey, GridError, RowSource, TooManyCells
from tests._testutil.console import large_snapshot, large_state, settle, wait_for_workers
from tests._testutil.judging import showing

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


class _Grid(App[None]):
    """One grid; the messages it posts, as they come."""

    def __init__(self) -> None:
        super().__init__()
        self.selected: list[str] = []
        self.highlighted: list[str] = []
        self.headers: list[tuple[str, int]] = []

    def compose(self) -> ComposeResult:
        yield KeyedGrid(id="grid")

    def on_keyed_grid_row_selected(self, event: KeyedGrid.RowSelected) -> None:
        self.selected.append(event.row_key)

    def on_keyed_grid_row_highlighted(self, event: KeyedGrid.RowHighlighted) -> None:
        self.highlighted.append(event.row_key)

    def on_keyed_grid_header_selected(self, event: KeyedGrid.HeaderSelected) -> None:
        self.headers.append((event.column_key, event.column_index))


async def test_ten_thousand_rows_cursor_scroll_and_a_reordering_refresh() -> None:
    app = _Grid()
    rows = _Rows(range(ROWS))
    async with app.run_test(size=(60, 20)) as pilot:
        grid = app.query_one(KeyedGrid)
        grid.set_columns(COLUMNS)
        grid.show(rows.source())
        grid.focus()
        await pilot.pause()
        view = grid.size.height - grid.header_height
        assert grid.row_count == ROWS and grid.selected_key == "k0"
        assert grid.virtual_size.height == ROWS + grid.header_height
        assert rows.made and max(rows.made) < view  # only the rows in view
        await pilot.press("ctrl+end")
        await pilot.pause()
        assert grid.cursor_row == ROWS - 1 and grid.selected_key == f"k{ROWS - 1}"
        assert grid.scroll_y == grid.max_scroll_y == ROWS + grid.header_height - grid.size.height
        await pilot.press("pageup", "up")
        await pilot.pause()
        assert grid.cursor_row == ROWS - 1 - view - 1
        assert grid.scroll_y <= grid.cursor_row < grid.scroll_y + view
        # Never the thousands of rows in between.
        assert len(rows.made) <= 3 * (view + 2), len(rows.made)
        chosen = grid.selected_key
        assert chosen is not None
        # A refresh in the reverse order: the cursor follows its key to the top.
        reordered = _Rows(range(ROWS - 1, -1, -1))
        grid.show(reordered.source())
        await pilot.pause()
        await pilot.pause()
        assert grid.selected_key == chosen
        assert grid.cursor_row == ROWS - 1 - int(chosen[1:])
        assert grid.scroll_y <= grid.cursor_row < grid.scroll_y + view
        assert len(reordered.made) <= 2 * (view + 2)
        # Enter selects the row under the cursor; a click on a row moves the cursor there,
        # a second click selects it.
        await pilot.press("enter")
        await pilot.pause()
        assert app.selected == [chosen]
        await pilot.click(KeyedGrid, offset=(2, grid.header_height + 3))
        await pilot.pause()
        assert grid.cursor_row == int(grid.scroll_y) + 3
        assert app.highlighted[-1] == grid.selected_key
        await pilot.click(KeyedGrid, offset=(2, grid.header_height + 3))
        await pilot.pause()
        assert app.selected == [chosen, grid.selected_key]
        # A click on a header names its column; one beyond the last column, none.
        await pilot.click(KeyedGrid, offset=(len(f"table_{ROWS - 1}") + 4, 0))
        await pilot.click(KeyedGrid, offset=(55, 0))
        await pilot.pause()
        assert app.headers == [("n", 1)]


async def test_sync_updates_in_place_and_keeps_the_cursor_on_its_row() -> None:
    app = _Grid()
    async with app.run_test(size=(60, 12)) as pilot:
        grid = app.query_one(KeyedGrid)
        grid.set_columns([("name", "name"), ("n", "n")])
        grid.sync([("a", ["[bold]a[/]", Right("1")]), ("b", ["b", Right("2")])])
        await pilot.pause()
        assert str(grid.get_cell("a", "name")) == "[bold]a[/]"  # shown, not read as markup
        assert "[bold]a[/]" in grid.render_line(1).text
        assert grid.get_cell("a", "n").justify == "right"
        grid.move_cursor(row=1)
        assert grid.selected_key == "b"
        # Same keys: cells change in place.
        grid.sync([("a", ["a", Right("10")]), ("b", ["b", Right("20")])])
        await pilot.pause()
        assert str(grid.get_cell("b", "n")) == "20" and grid.selected_key == "b"
        # New order and a new row: rebuilt, the cursor follows "b".
        grid.sync([("c", ["c", "3"]), ("b", ["b", "2"]), ("a", ["a", "1"])])
        await pilot.pause()
        assert grid.row_keys == ["c", "b", "a"] and grid.selected_key == "b"
        # A new label (a sort arrow) keeps rows and cursor.
        grid.set_columns([("name", "name ▲"), ("n", "n")])
        await pilot.pause()
        assert grid.row_keys == ["c", "b", "a"] and grid.selected_key == "b"
        assert "name ▲" in grid.render_line(0).text
        # The cursor's row gone: the cursor stays at its place.
        grid.sync([("c", ["c", "3"]), ("a", ["a", "1"])])
        await pilot.pause()
        assert grid.selected_key == "a"
        grid.sync([])
        assert grid.selected_key is None and grid.row_count == 0


async def test_an_update_in_place_repaints_the_changed_rows_and_keeps_the_others() -> None:
    """What is painted must be the new value where a cell changed and the old one
    elsewhere, after several refreshes; a wider value widens its column."""
    app = _Grid()
    async with app.run_test(size=(60, 12)) as pilot:
        grid = app.query_one(KeyedGrid)
        grid.set_columns([("name", "name"), ("n", "n"), ("m", "m")])
        grid.sync([("a", ["alpha", Right("1"), "x"]), ("b", ["beta", Right("2"), "y"])])
        await pilot.pause()
        for step in range(3, 7):
            grid.sync([("a", ["alpha", Right(str(step)), "x"]), ("b", ["beta", Right("2"), "y"])])
            await pilot.pause()
            first = grid.render_line(1).text  # line 0 is the header
            second = grid.render_line(2).text
            assert "alpha" in first and str(step) in first and "x" in first, first
            assert "beta" in second and "2" in second and "y" in second, second
        width = grid.virtual_size.width
        grid.sync([("a", ["alpha", Right("123456789"), "x"]), ("b", ["beta", Right("2"), "y"])])
        await pilot.pause()
        assert "123456789" in grid.render_line(1).text
        assert grid.virtual_size.width == width + 8
        # Columns only grow: a narrower value keeps the width (no jitter).
        grid.sync([("a", ["alpha", Right("1"), "x"]), ("b", ["beta", Right("2"), "y"])])
        await pilot.pause()
        assert grid.virtual_size.width == width + 8


async def test_pages_appended_rows_and_columns_set_again() -> None:
    app = _Grid()
    async with app.run_test(size=(40, 8)) as pilot:
        grid = app.query_one(KeyedGrid)
        grid.set_columns([(str(c), f"c{c}") for c in range(12)])
        page = [(f"p{r}", [f"{r}:{c}" for c in range(12)]) for r in range(30)]
        grid.replace_rows(page)
        grid.focus()
        await pilot.pause()
        await pilot.press("pagedown", "end")
        await pilot.pause()
        assert grid.cursor_row > 0 and grid.scroll_x > 0 and grid.scroll_y > 0
        # A new page: cursor on its first row, the view at the top left.
        grid.replace_rows([(f"q{r}", [f"{r}"]) for r in range(5)])
        await pilot.pause()
        assert (grid.cursor_row, grid.scroll_x, grid.scroll_y) == (0, 0, 0)
        assert grid.get_row_at(0)[1].plain == ""  # missing cells are empty
        grid.append_rows([("q5", ["5"]), ("q6", ["6", "six"])])
        grid.move_cursor(row=grid.row_count - 1)
        await pilot.pause()
        assert grid.row_keys[-2:] == ["q5", "q6"] and grid.selected_key == "q6"
        assert grid.scroll_y <= grid.cursor_row < grid.scroll_y + grid.size.height
        # Another set of columns drops the rows; clearing them too.
        grid.set_columns([("x", "x")])
        assert grid.row_count == 0 and [c.key for c in grid.columns] == ["x"]
        grid.clear(columns=True)
        assert grid.columns == () and grid.row_count == 0


async def test_a_bad_change_is_refused_and_the_rows_stay_as_they_were() -> None:
    app = _Grid()
    async with app.run_test(size=(40, 8)) as pilot:
        grid = app.query_one(KeyedGrid)
        grid.set_columns([("a", "a"), ("b", "b")])
        rows = [("x", ["1", "2"]), ("y", ["3", "4"])]
        grid.sync(rows)
        grid.move_cursor(row=1)
        await pilot.pause()
        before = (grid.row_keys, grid.selected_key, [grid.get_row_at(i) for i in range(2)])
        with pytest.raises(DuplicateKey):
            grid.sync([("x", ["1", "2"]), ("x", ["5", "6"])])
        with pytest.raises(TooManyCells):
            grid.sync([("x", ["1", "2", "3"])])
        with pytest.raises(TooManyCells):
            grid.replace_rows([("z", ["1", "2", "3"])])
        with pytest.raises(DuplicateKey):
            grid.append_rows([("z", ["1"]), ("y", ["2"])])
        with pytest.raises(GridError):  # widths for another number of columns
            grid.show(RowSource(["z"], lambda i: ("1",), [1, 1, 1]))
        with pytest.raises(DuplicateKey):
            grid.set_columns([("a", "a"), ("a", "again")])
        with pytest.raises(DuplicateKey):
            RowSource(["k", "k"], lambda i: (), [0, 0])
        await pilot.pause()
        after = (grid.row_keys, grid.selected_key, [grid.get_row_at(i) for i in range(2)])
        assert after == before
        assert [c.key for c in grid.columns] == ["a", "b"]
        # A source's row with more cells than columns is refused when it is made.
        grid.show(RowSource(["z"], lambda i: ("1", "2", "3"), [1, 1]))
        with pytest.raises(TooManyCells):
            grid.get_row_at(0)


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
        grid = screen.query_one(KeyedGrid)
        assert grid.row_count == 10_000
        await pilot.press(*["pagedown"] * 30, "down")
        await wait_for_workers(pilot)
        chosen, row = grid.selected_key, grid.cursor_row
        assert chosen is not None and row > 500
        following = large_snapshot(3, tables=10_000, buckets=1)
        fewer = replace(following, view=replace(following.view, tables=following.view.tables[100:]))
        app.publish(showing(state, fewer, last_ok=fewer, previous_ok=state.last_ok))
        await wait_for_workers(pilot)
        assert grid.row_count == 9_900 and grid.selected_key == chosen
        assert grid.cursor_row < row  # the rows before it shifted up; it went with them
        assert grid.scroll_y <= grid.cursor_row < grid.scroll_y + grid.size.height
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, TableDetailScreen)
        assert f"t:{app.screen.table_path}" == chosen


def test_a_text_label_is_kept_as_given() -> None:
    labels = [("a", Text("a", justify="right")), ("b", "[b]b[/b]")]
    grid = KeyedGrid()
    grid.set_columns(labels)
    assert [c.label for c in grid.columns] == [Text("a", justify="right"), Text("[b]b[/b]")]
    assert [c.render_width for c in grid.columns] == [3, 10]


async def test_a_hidden_grid_scrolls_to_its_cursor_once_not_for_ever(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A grid never painted (a tab not shown) whose rows changed asks to follow its cursor
    once after the next refresh, not at every refresh after it."""
    calls: list[bool] = []
    scroll = KeyedGrid._scroll_to_cursor

    def counting(self: KeyedGrid, animate: bool = False, *, laid_out: bool = False) -> None:
        calls.append(laid_out)
        scroll(self, animate, laid_out=laid_out)

    monkeypatch.setattr(KeyedGrid, "_scroll_to_cursor", counting)
    app = _Grid()
    async with app.run_test(size=(40, 8)) as pilot:
        grid = app.query_one(KeyedGrid)
        grid.display = False
        grid.set_columns(COLUMNS)
        grid.sync([(f"k{i}", [f"t{i}", Right(str(i))]) for i in range(50)])
        grid.move_cursor(row=40)
        for _ in range(10):
            await pilot.pause()
        assert 1 <= len(calls) <= 3 and calls.count(True) <= 2, calls


async def test_what_a_cursor_move_or_the_mouse_repaints_is_what_a_full_repaint_shows() -> None:
    """The grid repaints only the rows a cursor move or the mouse changed: the frame then
    is the frame of a full repaint (no row left with a stale cursor or hover)."""
    app = _Grid()
    async with app.run_test(size=(40, 12)) as pilot:
        grid = app.query_one(KeyedGrid)
        grid.set_columns(COLUMNS)
        grid.sync([(f"k{i}", [f"table_{i}", Right(str(i))]) for i in range(40)])
        grid.focus()
        await pilot.pause()

        async def same_as_full(*keys: str) -> None:
            await pilot.press(*keys)
            await pilot.pause()
            partial = app.export_screenshot()
            grid.refresh()
            await pilot.pause()
            assert app.export_screenshot() == partial, keys

        await same_as_full("down", "down", "up")
        await pilot.hover(KeyedGrid, offset=(3, 4))
        await pilot.pause()
        await same_as_full()
        await pilot.hover(KeyedGrid, offset=(3, 6))
        await same_as_full()
        await same_as_full("pagedown", "down")
        await pilot.hover(KeyedGrid, offset=(3, 0))  # the header
        await same_as_full()
        await same_as_full("ctrl+home")
