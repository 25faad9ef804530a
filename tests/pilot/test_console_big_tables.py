"""Big tables: a 1,600-bucket table, a 10,000-table cluster and a 300-column preview render
only the rows in view (counted, not timed), and keep their keys, cursor, filter and drill-down.

A row is rendered when its cells are read to be drawn: DataTable asks for their renderables
(:meth:`konsole.ui.widgets.lean_table.LeanTable._compute_row_renderables`) or a line of
plain cells reads them as they are (``LeanTable._plain_cells``); every test counts which
rows were, per table, while the app fills, refreshes and scrolls them.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Any

import pytest
from textual.widgets._data_table import RowRenderables

from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.screens.preview import PreviewScreen, _PagedTable
from konsole.ui.screens.table_detail import TableDetailScreen
from konsole.ui.screens.tables import TablesScreen
from konsole.ui.state import ConsoleState
from konsole.ui.widgets.keyed_table import KeyedTable
from konsole.ui.widgets.lean_table import LeanTable
from tests._testutil.console import (
    fake_preview,
    large_snapshot,
    large_state,
    screen_text,
    settle,
    wait_for_workers,
)

pytestmark = pytest.mark.timeout(120)

SIZE = (100, 30)


@pytest.fixture
def rendered(monkeypatch: pytest.MonkeyPatch) -> dict[str, set[int]]:
    """Row indexes rendered so far, per table id."""
    seen: dict[str, set[int]] = defaultdict(set)
    original = LeanTable._compute_row_renderables

    def counting(self: LeanTable, row_index: int) -> RowRenderables:
        if row_index >= 0:
            seen[self.id or ""].add(row_index)
        return original(self, row_index)

    plain = LeanTable._plain_cells

    def counting_plain(self: LeanTable, row_key: Any, row_index: int) -> list[object] | None:
        if row_index >= 0:
            seen[self.id or ""].add(row_index)
        return plain(self, row_key, row_index)

    monkeypatch.setattr(LeanTable, "_compute_row_renderables", counting)
    monkeypatch.setattr(LeanTable, "_plain_cells", counting_plain)
    return seen


def _in_view(table: LeanTable) -> int:
    """Data rows the table's region can show (its height less the header)."""
    return table.size.height - table.header_height


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
    rendered: dict[str, set[int]],
) -> None:
    state = large_state(2, tables=1, buckets=1600)
    async with (app := _console(state)).run_test(size=SIZE) as pilot:
        await _ready(pilot, app)
        app.open_table("db0.table_000")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TableDetailScreen)
        text = await _painted(pilot, app)
        grid = screen.query_one("#detail-buckets", KeyedTable)
        assert len(grid.row_keys) == 1600 and grid.row_count == 1600
        assert "10,002" in text  # bucket 0's latest offset is on screen
        view = _in_view(grid)
        assert 0 < view < 40
        assert rendered["detail-buckets"] <= set(range(view + 1)), rendered["detail-buckets"]
        # A refresh with every offset changed: still only the rows in view.
        following = large_snapshot(3, tables=1, buckets=1600)
        screen.show(replace(state, snapshot=following, last_ok=following))
        await _painted(pilot, app)
        assert max(rendered["detail-buckets"]) <= view
        # The end of the table: its last rows, and none of those scrolled past.
        await pilot.press("ctrl+end")
        text = await _painted(pilot, app)
        assert grid.selected_key == "None:1599" and grid.cursor_row == 1599
        assert 1599 in rendered["detail-buckets"]
        assert len(rendered["detail-buckets"]) <= 2 * (view + 1)


async def test_a_10000_table_cluster_renders_only_the_tables_in_view(
    rendered: dict[str, set[int]],
) -> None:
    state = large_state(2, tables=10_000, buckets=1)
    app = _console(state)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot, app, "t")
        screen = app.screen
        assert isinstance(screen, TablesScreen)
        text = await _painted(pilot, app)
        grid = screen.query_one(KeyedTable)
        assert grid.row_count == 10_000 and "10000 tables" in text.replace(",", "")
        view = _in_view(grid)
        assert rendered["tables-table"] and max(rendered["tables-table"]) <= view
        # A new poll: every table's offsets move; cells change in place, keys stay.
        following = large_snapshot(3, tables=10_000, buckets=1)
        app.publish(
            replace(state, snapshot=following, last_ok=following, previous_ok=state.last_ok)
        )
        await _painted(pilot, app)
        assert grid.row_count == 10_000 and max(rendered["tables-table"]) <= view
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
        assert len(rendered["tables-table"]) <= 3 * (view + 1), len(rendered["tables-table"])


async def test_a_300_column_preview_renders_only_the_rows_in_view(
    rendered: dict[str, set[int]],
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
        assert grid.row_count == screen.page_rows and max(rendered["preview-rows"]) <= view
        await pilot.press("right_square_bracket")  # the next 24 columns
        await pilot.press("pagedown", "pagedown")
        await _painted(pilot, app)
        assert screen.first_column == 24 and grid.cursor_row > view
        assert len(rendered["preview-rows"]) <= 4 * (view + 1)
