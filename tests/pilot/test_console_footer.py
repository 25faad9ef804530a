"""The footer at 80 and 100 columns on every screen: keys that do not fit are left out
whole (the least important first), never cut at the edge or hidden under the palette key;
Quit, Help and the screen's main keys stay."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from textual.widget import Widget

from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.screens.base import ConsoleScreen
from konsole.ui.widgets.footer_fit import key_width
from konsole.ui.widgets.key_footer import KeyFooter
from tests._testutil.actions import FakeClusterActions
from tests._testutil.console import (
    T_STOPPED,
    fake_preview,
    record_story,
    settle,
    story_state,
    wait_for_workers,
)

pytestmark = pytest.mark.timeout(120)

SIZES = ((80, 24), (100, 30))
#: Every screen the app switches to (its own table, not a copy of it).
MODES = tuple(KonsoleApp.MODES)


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_story(tmp_path_factory.mktemp("story") / "demo.sqlite", polls=6)


def _app(story: Path) -> KonsoleApp:
    async def scan(request: Any) -> Any:
        await asyncio.sleep(0)
        return fake_preview("shop.orders", 5)

    state = story_state(story, T_STOPPED - 10)
    app = KonsoleApp(StaticFeed([state], name="demo", history_path=story, scan=scan))
    app.cluster_actions_override = FakeClusterActions()  # the Rebalance and Config screens
    return app


def _opener(name: str) -> Callable[[KonsoleApp], object]:
    if name == "preview":
        return lambda app: app.open_preview("shop.orders")
    if name == "server detail":
        return lambda app: app.open_server(1)
    if name == "table detail":
        return lambda app: app.open_table("shop.orders")
    return lambda app: app.switch_mode(name)


def _keys(footer: KeyFooter) -> list[Widget]:
    return list(footer.query("FooterKey"))


async def _footer_of(
    app: KonsoleApp, pilot: Any, open_it: Callable[[KonsoleApp], object]
) -> KeyFooter:
    await settle(pilot, lambda: app.live_state is not None)
    result = open_it(app)
    if isinstance(result, Awaitable):
        await result
    await wait_for_workers(pilot)
    await settle(
        pilot,
        lambda: (
            isinstance(app.screen, ConsoleScreen) and bool(_keys(app.screen.query_one(KeyFooter)))
        ),
    )
    await pilot.pause()
    return app.screen.query_one(KeyFooter)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("screen", [*MODES, "preview", "server detail", "table detail"])
async def test_every_footer_key_is_whole_and_quit_help_and_the_main_keys_stay(
    story: Path, screen: str, size: tuple[int, int]
) -> None:
    app = _app(story)
    async with app.run_test(size=size) as pilot:
        footer = await _footer_of(app, pilot, _opener(screen))
        keys = _keys(footer)
        palette = [k for k in keys if k.has_class("-command-palette")]
        shown = [k for k in keys if not k.has_class("-command-palette")]
        assert len(palette) == 1
        edge = palette[0].region.x
        # whole, left of the palette key, side by side: nothing cut or covered
        for key in shown:
            assert key.region.right <= edge, (getattr(key, "description", ""), key.region, edge)
            assert key.region.width == key_width(key.key_display, key.description)  # type: ignore[attr-defined]
        lefts = sorted((k.region.x, k.region.right) for k in shown)
        assert all(a[1] <= b[0] for a, b in pairwise(lefts))
        actions = {getattr(k, "action", "") for k in shown}
        assert {"quit", "help"} <= actions
        assert set(type(app.screen).FOOTER_MAIN) <= actions  # type: ignore[attr-defined]


async def test_a_narrow_footer_drops_the_key_to_the_screen_shown_first(story: Path) -> None:
    app = _app(story)
    async with app.run_test(size=(80, 24)) as pilot:
        footer = await _footer_of(app, pilot, _opener("overview"))
        described = [getattr(k, "description", "") for k in _keys(footer)]
        assert "Overview" not in described
        assert {"Servers", "Tables", "Events", "Time travel", "Help", "Quit"} <= set(described)
        # wider: everything is back, in its place
        await pilot.resize_terminal(100, 30)
        await settle(
            pilot,
            lambda: (
                footer.fitted_width == 100
                and "Overview" in [getattr(k, "description", "") for k in _keys(footer)]
            ),
        )


async def test_the_preview_keeps_more_columns_at_80_and_drops_the_overview_whole(
    story: Path,
) -> None:
    app = _app(story)
    async with app.run_test(size=(80, 24)) as pilot:
        footer = await _footer_of(app, pilot, _opener("preview"))
        described = [getattr(k, "description", "") for k in _keys(footer)]
        assert described[:3] == ["Cancel/back", "Next page", "More columns"]
        assert "Overview" not in described and "Quit" in described
