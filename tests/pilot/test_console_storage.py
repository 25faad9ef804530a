"""The Storage screen: most behind first, enter opens the table's Storage tab."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import TabbedContent

from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.screens.tables.detail import TableDetailScreen
from konsole.ui.screens.tables.storage import StorageScreen
from konsole.ui.screens.tables.storage_tab import StorageTab
from konsole.ui.widgets.grid import KeyedGrid
from tests._testutil.console import T_STOPPED, record_story, settle, story_state
from tests._testutil.storage_states import with_storage

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_story(tmp_path_factory.mktemp("story") / "demo.sqlite", polls=6)


async def test_from_the_storage_screen_into_a_tables_storage_tab(story: Path) -> None:
    state = with_storage(story_state(story, T_STOPPED - 10), stalled="metrics.cpu")
    app = KonsoleApp(StaticFeed([state], name="demo", history_path=story))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, lambda: app.live_state is not None)
        await pilot.press("g")
        await settle(pilot, lambda: isinstance(app.screen, StorageScreen))
        grid = app.screen.query_one(KeyedGrid)
        await settle(pilot, lambda: bool(grid.row_keys))
        assert grid.row_keys[0] == "t:metrics.cpu"  # the stalled table first
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, TableDetailScreen))
        detail = app.screen
        assert isinstance(detail, TableDetailScreen) and detail.table_path == "metrics.cpu"
        assert detail.query_one(TabbedContent).active == "storage"
        tab = detail.query_one(StorageTab)
        await settle(pilot, lambda: len(tab.grid.row_keys) == 2)  # metrics.cpu: 2 buckets
        assert tab.grid.has_focus
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, StorageScreen))
