"""The Capacity screen: opened by its key and from the command palette, the detail follows
the highlighted server, enter opens the server, and time travel shows the recorded part."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.screens.capacity.screen import CapacityScreen
from konsole.ui.screens.servers.detail import ServerDetailScreen
from konsole.ui.widgets.grid import KeyedGrid
from tests._testutil.capacity_states import record_capacity_story, with_capacity
from tests._testutil.console import (
    NOW,
    T_STOPPED,
    record_story,
    settle,
    story_state,
    wait_for_workers,
)

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_story(tmp_path_factory.mktemp("story") / "demo.sqlite", polls=6)


def _detail(app: KonsoleApp) -> str:
    return str(app.screen.query_one("#capacity-detail", Static).render())


async def test_the_key_opens_capacity_and_the_detail_follows_the_cursor(story: Path) -> None:
    state = with_capacity(story_state(story, T_STOPPED - 10), "near_lock")
    app = KonsoleApp(StaticFeed([state], name="demo", history_path=story))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, lambda: app.live_state is not None)
        await pilot.press("h")
        await settle(pilot, lambda: isinstance(app.screen, CapacityScreen))
        grid = app.screen.query_one("#capacity-headroom", KeyedGrid)
        await settle(pilot, lambda: bool(grid.row_keys))
        assert grid.row_keys[:3] == ["s:1", "d:1:/data/ts-1/a", "d:1:/data/ts-1/b"]
        assert "tablet-server 1" in _detail(app)
        cells = [c.plain for c in grid.get_row("d:2:/data/ts-2/b")]
        assert cells[-1] == "lock in 40m00s" and cells[-2] == "40m00s"
        for _ in range(3):  # down to tablet server 2's own row
            await pilot.press("down")
        await settle(pilot, lambda: "tablet-server 2" in _detail(app))
        assert "locks at 85% (initial), recovers at 80% (default)" in _detail(app)
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, ServerDetailScreen))
        detail = app.screen
        assert isinstance(detail, ServerDetailScreen)
        # the row's own server, not the first or the coordinator
        assert (detail.server_id, detail.coordinator) == (2, None)
        await wait_for_workers(pilot)


async def test_the_palette_opens_capacity(story: Path) -> None:
    state = with_capacity(story_state(story, T_STOPPED - 10), "unknown_0_9")
    app = KonsoleApp(StaticFeed([state], name="demo", history_path=story))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, lambda: app.live_state is not None)
        await pilot.press("ctrl+p")
        await pilot.press(*"go to capacity")
        await wait_for_workers(pilot)  # the palette's search
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, CapacityScreen))
        grid = app.screen.query_one("#capacity-headroom", KeyedGrid)
        await settle(pilot, lambda: bool(grid.row_keys))
        # 0.9.1: no usage, no limits: unknown, never ok.
        states = {grid.get_cell(k, "state").plain for k in grid.row_keys}
        assert states == {"unknown"}
        assert "write limits unknown" in _detail(app)


async def test_time_travel_shows_the_recorded_capacity(tmp_path: Path) -> None:
    path = record_capacity_story(tmp_path / "capacity.sqlite")
    live = story_state(path, T_STOPPED - 10, now=NOW)
    app = KonsoleApp(StaticFeed([live], name="demo", history_path=path))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, lambda: app.live_state is not None)
        await pilot.press("h")
        await settle(pilot, lambda: isinstance(app.screen, CapacityScreen))
        app.travel_to(T_STOPPED - 25)
        await settle(pilot, lambda: app.historic)
        grid = app.screen.query_one("#capacity-headroom", KeyedGrid)
        await settle(pilot, lambda: "d:2:/data/ts-2/b" in grid.row_keys)
        assert grid.get_cell("d:2:/data/ts-2/b", "limit").plain == "85%"
        summary = str(app.screen.query_one("#capacity-summary", Static).render())
        assert summary.startswith("as recorded at")
