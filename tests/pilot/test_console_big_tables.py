"""Big tables: a 1,600-bucket table, a 10,000-table cluster and a 300-column preview render
only the rows in view (counted, not timed), and keep their keys, cursor, filter and drill-down.

A row is rendered when its cells are read to be drawn: the grid asks its row model for them
(:meth:`konsole.ui.widgets.grid_rows.GridRows.cells_at`, the only way to a row's cells);
every test counts which rows were, per grid, while the app fills, refreshes and scrolls them.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.screens.tables.detail import TableDetailScreen
from konsole.ui.screens.tables.preview import PreviewScreen, _PagedTable
from konsole.ui.screens.tables.screen import TablesScreen
from konsole.ui.state import ConsoleState
from konsole.ui.widgets.grid import KeyedGrid
from konsole.ui.widgets.grid_cells import Cell
from konsole.ui.widgets.grid_rows import GridRows
from tests._testutil.console import (
    fake_preview,
    large_snapshot,
    large_state,
    screen_text,
    settle,
    wait_for_workers,
)
from tests._testutil.judging import showing

pytestmark = pytest.mark.timeout(120)

SIZE = (100, 30)


class _Rendered:
    """Row indexes whose cells were read, per grid."""

    def __init__(self) -> None:
        self._seen: dict[int, set[int]] = defaultdict(set)

    def note(self, rows: GridRows, index: int) -> None:
        self._seen[id(rows)].add(index)

    def __getitem__(self, grid: KeyedGrid) -> set[int]:
        return self._seen[id(grid.rows)]


@pytest.fixture
def rendered(monkeypatch: pytest.MonkeyPatch) -> _Rendered:
    seen = _Rendered()
    original = GridRows.cells_at

    def counting(self: GridRows, index: int) -> tuple[Cell | None, ...]:
        seen.note(self, index)
        return original(self, index)

    monkeypatch.setattr(GridRows, "cells_at", counting)
    return seen


def _in_view(grid: KeyedGrid) -> int:
    """Data rows the grid's region can show (its height less the header)."""
    return grid.size.height - grid.header_height


async def _painted(pilot: Any, app: KonsoleApp) -> str:
    """Let the app settle and draw a whole frame (what the terminal would show)."""
    await wait_for_workers(pilot)
    return screen_text(app)


def _console(state: ConsoleState, scan: Any = None) -> KonsoleApp:
    return KonsoleApp(StaticFeed([state], name="demo", scan=scan))


async def _ready(pilot: Any, app: KonsoleApp, key: str | None = None) -> None:
    """Until the first state is shown, then ``key`` pressed (a screen opened)."""
    await settle(pilot, lambda: app.live_state is not None)
    if key is not None:
        await pilot.press(key)
        await pilot.pause()


async def test_a_1600_bucket_table_renders_only_the_buckets_in_view(
    rendered: _Rendered,
) -> None:
    state = large_state(2, tables=1, buckets=1600)
    async with (app := _console(state)).run_test(size=SIZE) as pilot:
        await _ready(pilot, app)
        app.open_table("db0.table_000")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TableDetailScreen)
        text = await _painted(pilot, app)
        grid = screen.query_one("#detail-buckets", KeyedGrid)
        assert len(grid.row_keys) == 1600 and grid.row_count == 1600
        assert "10,002" in text  # bucket 0's latest offset is on screen
        view = _in_view(grid)
        assert 0 < view < 40
        assert rendered[grid] <= set(range(view + 1)), rendered[grid]
        # A refresh with every offset changed: still only the rows in view.
        following = large_snapshot(3, tables=1, buckets=1600)
        screen.show(showing(state, following, last_ok=following))
        await _painted(pilot, app)
        assert max(rendered[grid]) <= view
        # The end of the table: its last rows, and none of those scrolled past.
        await pilot.press("ctrl+end")
        text = await _painted(pilot, app)
        assert grid.selected_key == "None:1599" and grid.cursor_row == 1599
        assert 1599 in rendered[grid]
        assert len(rendered[grid]) <= 2 * (view + 1)


async def test_a_10000_table_cluster_renders_only_the_tables_in_view(
    rendered: _Rendered,
) -> None:
    state = large_state(2, tables=10_000, buckets=1)
    app = _console(state)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot, app, "t")
        screen = app.screen
        assert isinstance(screen, TablesScreen)
        text = await _painted(pilot, app)
        grid = screen.query_one(KeyedGrid)
        assert grid.row_count == 10_000 and "10000 tables" in text.replace(",", "")
        view = _in_view(grid)
        assert rendered[grid] and max(rendered[grid]) <= view
        # A new poll: every table's offsets move; cells change in place, keys stay.
        following = large_snapshot(3, tables=10_000, buckets=1)
        app.publish(showing(state, following, last_ok=following, previous_ok=state.last_ok))
        await _painted(pilot, app)
        assert grid.row_count == 10_000 and max(rendered[grid]) <= view
        # Filter to one table, clear the filter (the cursor stays on that table, the last
        # row), move, drill into the table under the cursor.
        await pilot.press("slash", *"table_9999", "enter")
        await _painted(pilot, app)
        assert grid.row_keys == ["t:db9.table_9999"]
        await pilot.press("escape")
        await _painted(pilot, app)
        assert grid.row_count == 10_000 and grid.selected_key == "t:db9.table_9999"
        await pilot.press("up", "up", "enter")
        await pilot.pause()
        detail = app.screen
        assert isinstance(detail, TableDetailScreen)
        assert grid.cursor_row == 9997 and f"t:{detail.table_path}" == grid.selected_key
        # First rows, the filtered row, the last rows: never the thousands in between.
        assert len(rendered[grid]) <= 3 * (view + 1), len(rendered[grid])


async def test_a_300_column_preview_renders_only_the_rows_in_view(
    rendered: _Rendered,
) -> None:
    state = large_state(2, tables=2, buckets=1)

    async def scan(request: Any) -> Any:
        return fake_preview("wide.table", 2000, columns=300)

    app = _console(state, scan)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot, app)
        screen = PreviewScreen("wide.table")
        app.push_screen(screen)
        await settle(pilot, lambda: screen.result is not None)
        await _painted(pilot, app)
        grid = screen.query_one(_PagedTable)
        view = _in_view(grid)
        assert grid.row_count == screen.page_rows and max(rendered[grid]) <= view
        await pilot.press("right_square_bracket")  # the next 24 columns
        await pilot.press("pagedown", "pagedown")
        await _painted(pilot, app)
        assert screen.first_column == 24 and grid.cursor_row > view
        assert len(rendered[grid]) <= 4 * (view + 1)
