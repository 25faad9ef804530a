"""The Tables screen driven by keys: filter, sort, enter, preview, refresh of a big cluster."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from konsole.model.table_stats import table_figures
from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.screens.tables.detail import TableDetailScreen
from konsole.ui.screens.tables.preview import PreviewScreen
from konsole.ui.screens.tables.screen import TablesScreen
from konsole.ui.state import ConsoleState
from konsole.ui.widgets.grid import KeyedGrid
from tests._testutil.console import (
    T_STOPPED,
    large_snapshot,
    large_state,
    record_story,
    story_state,
)
from tests._testutil.console import settle as _settle
from tests._testutil.judging import showing

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_story(tmp_path_factory.mktemp("story") / "demo.sqlite")


async def _open_tables(pilot, app: KonsoleApp) -> KeyedGrid:
    await _settle(pilot, lambda: app.live_state is not None)
    await pilot.press("t")
    await pilot.pause()
    assert isinstance(app.screen, TablesScreen)
    return app.screen.query_one(KeyedGrid)


def _app(state: ConsoleState) -> KonsoleApp:
    return KonsoleApp(StaticFeed([state], name="demo"))


def test_figures_rates_spans_and_offline(story: Path) -> None:
    state = story_state(story, T_STOPPED)
    figures = {f.path: f for f in table_figures(state.last_ok, state.previous_ok, state.placement)}
    orders = figures["shop.orders"]
    assert orders.primary_key is False and orders.buckets == 4
    assert orders.rows_per_s == pytest.approx(4 * 120)
    # Tablet server 3 is gone: every bucket has a replica on it, none lost its leader.
    assert orders.under_replicated == 4 and orders.offline == 0
    assert figures["shop.customers"].primary_key is True
    assert figures["shop.visits"].partitions == 2
    # Without a previous poll there is no rate.
    assert table_figures(state.last_ok, None, state.placement)[0].rows_per_s is None


async def test_filter_sort_and_enter(story: Path) -> None:
    app = _app(story_state(story, T_STOPPED - 10))
    async with app.run_test(size=(100, 30)) as pilot:
        table = await _open_tables(pilot, app)
        assert table.row_keys == [
            "t:metrics.cpu",
            "t:shop.customers",
            "t:shop.orders",
            "t:shop.visits",
        ]
        await pilot.press("slash", "o", "r", "d")
        assert table.row_keys == ["t:shop.orders"]
        await pilot.press("escape")
        assert len(table.row_keys) == 4
        # 6: rows/s, biggest first; again: reversed.
        await pilot.press("6")
        assert table.row_keys[0] == "t:shop.orders"
        await pilot.press("6")
        assert table.row_keys[0] == "t:metrics.cpu"
        # The cursor follows its table through a new order.
        assert table.selected_key == "t:shop.orders"
        await pilot.press("up")
        assert table.selected_key == "t:shop.visits"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, TableDetailScreen)
        assert app.screen.table_path == "shop.visits"


async def test_p_opens_the_preview_of_the_selected_table(story: Path) -> None:
    app = _app(story_state(story, T_STOPPED - 10))
    async with app.run_test(size=(100, 30)) as pilot:
        table = await _open_tables(pilot, app)
        await pilot.press("down", "down")
        assert table.selected_key == "t:shop.orders"
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, PreviewScreen)
        assert app.screen.table_path == "shop.orders"
        assert app.screen.partition is None


async def test_cursor_stays_on_its_table_across_refreshes(story: Path) -> None:
    first, second = story_state(story, T_STOPPED - 10), story_state(story, T_STOPPED + 30)
    app = _app(first)
    async with app.run_test(size=(100, 30)) as pilot:
        table = await _open_tables(pilot, app)
        await pilot.press("down", "down", "down")
        assert table.selected_key == "t:shop.visits"
        app.publish(second)  # shop.returns appears before shop.visits
        await pilot.pause()
        assert "t:shop.returns" in table.row_keys
        assert table.selected_key == "t:shop.visits"


async def test_a_refresh_of_1600_buckets(capsys: pytest.CaptureFixture[str]) -> None:
    state = large_state(2)
    app = _app(state)
    async with app.run_test(size=(100, 30)) as pilot:
        table = await _open_tables(pilot, app)
        assert len(table.row_keys) == 200
        screen = app.screen
        assert isinstance(screen, TablesScreen)
        timings = []
        for seq in (3, 4, 5):
            nxt = showing(
                state,
                large_snapshot(seq),
                last_ok=large_snapshot(seq),
                previous_ok=large_snapshot(seq - 1),
            )
            started = time.perf_counter()
            screen.show(nxt)
            timings.append(time.perf_counter() - started)
            await pilot.pause()
        with capsys.disabled():
            shown = ", ".join(f"{t * 1000:.1f}" for t in timings)
            print(f"\nTables refresh, 200 tables / 1,600 buckets: {shown} ms")
        assert len(table.row_keys) == 200


async def test_empty_and_unreachable(story: Path, tmp_path: Path) -> None:
    from tests._testutil.console import NOW, empty_state

    app = _app(empty_state(tmp_path / "empty.sqlite"))
    async with app.run_test(size=(80, 24)) as pilot:
        table = await _open_tables(pilot, app)
        assert table.row_keys == []
        assert "no tables" in str(app.screen.query_one("#tables-empty").render())
    app = _app(story_state(story, NOW))
    async with app.run_test(size=(80, 24)) as pilot:
        table = await _open_tables(pilot, app)
        assert table.has_class("stale")
        assert "UNREACHABLE" in str(app.screen.query_one("#tables-summary").render())


async def test_tiny_terminal(story: Path) -> None:
    app = _app(story_state(story, T_STOPPED - 10))
    async with app.run_test(size=(60, 20)) as pilot:
        await _open_tables(pilot, app)
        await pilot.press("slash", "x", "escape", "9", "down")
        assert app.is_running


async def test_clicking_a_header_sorts_by_it(story: Path) -> None:
    app = _app(story_state(story, T_STOPPED - 10))
    async with app.run_test(size=(100, 30)) as pilot:
        table = await _open_tables(pilot, app)
        screen = app.screen
        assert isinstance(screen, TablesScreen)
        # The x offset of the rows/s column (the sixth) in the header line.
        x = sum(c.render_width for c in table.columns[:5]) + 2
        await pilot.click(KeyedGrid, offset=(x, 0))
        await pilot.pause()
        assert screen.sort_column == 5 and screen.sort_reverse
        assert table.row_keys[0] == "t:shop.orders"
