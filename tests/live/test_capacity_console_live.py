"""The console's Capacity screen on a real 1.0-line tablet server with two data dirs (each
a tmpfs of its own): both dirs are shown, each with its own free bytes and room against the
server's own lock ratio (read from its configuration). One cluster (the capacity module's
``disks`` fixture); every wait bounded; loopback only. 1.0 line only: the 0.9.1 unknowns
are proven by ``test_capacity_live.py`` through the same functions."""

from __future__ import annotations

from pathlib import Path

import pytest

from konsole.ui.app import KonsoleApp
from konsole.ui.feed import LiveFeed
from konsole.ui.screens.capacity.screen import CapacityScreen
from konsole.ui.widgets.grid import KeyedGrid
from tests._testutil.console import settle
from tests.live.test_capacity_live import LIMIT, Disks, _profile, disks

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

__all__ = ["disks"]


async def test_the_capacity_screen_shows_both_data_dirs(disks: Disks, tmp_path: Path) -> None:
    feed = LiveFeed(_profile(disks), tmp_path / "history.sqlite", interval=1.0)
    app = KonsoleApp(feed)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot, lambda: app.live_state is not None, tries=1500)
        await pilot.press("h")
        await settle(pilot, lambda: isinstance(app.screen, CapacityScreen))
        grid = app.screen.query_one("#capacity-headroom", KeyedGrid)
        keys = [f"d:0:{d}" for d in disks.dirs]
        # Limits are read a poll after the first (configs); 60 s at most.
        await settle(
            pilot,
            lambda: all(
                k in grid.row_keys and grid.get_cell(k, "limit").plain != "-" for k in keys
            ),
            tries=3000,
        )
        for k in keys:
            assert grid.get_cell(k, "limit").plain == f"{LIMIT:.0%}"
            assert grid.get_cell(k, "free").plain.endswith("MiB")
            assert grid.get_cell(k, "room").plain.endswith("%")
            assert grid.get_cell(k, "state").plain != "unknown"
