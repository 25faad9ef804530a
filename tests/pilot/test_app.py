"""The console app's plumbing: states reach the shown screen, modes, time travel, errors."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

import pytest

from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.screens.base import ConsoleScreen
from konsole.ui.state import ConsoleState
from konsole.ui.widgets.status_bar import StatusBar, status_text
from tests._testutil.console import NOW, T0, T_STOPPED, record_story, story_state
from tests._testutil.console import settle as _settle

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_story(tmp_path_factory.mktemp("story") / "demo.sqlite")


async def test_live_state_reaches_the_shown_screen_and_follows_mode_switches(story: Path) -> None:
    first, second = story_state(story, T0 + 20), story_state(story, T_STOPPED + 5)
    app = KonsoleApp(StaticFeed([first, second], name="demo", history_path=story))
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, lambda: app.live_state is second)
        assert isinstance(app.screen, ConsoleScreen)
        bar = app.screen.query_one(StatusBar)
        assert "LIVE" in str(bar.render())
        for key, mode in (("s", "servers"), ("t", "tables"), ("e", "events"), ("o", "overview")):
            await pilot.press(key)
            assert app.current_mode == mode
            assert "LIVE" in str(app.screen.query_one(StatusBar).render())


async def test_time_travel_shows_the_recorded_moment_then_live_again(story: Path) -> None:
    live = story_state(story, NOW)
    app = KonsoleApp(StaticFeed([live], name="demo", history_path=story))
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, lambda: app.live_state is not None)
        app.travel_to(T0 + 25)
        await _settle(pilot, lambda: app.travel_state is not None)
        state = app.state
        assert state is not None and state.historic and state.as_of == T0 + 25
        assert state.snapshot is not None and state.snapshot.taken_at == T0 + 20
        assert "HISTORY" in str(app.screen.query_one(StatusBar).render())
        # A new live state while travelling does not replace the moment shown.
        app.publish(live)
        assert app.state is state
        await pilot.press("L")
        assert app.state is live
        assert "UNREACHABLE" in str(app.screen.query_one(StatusBar).render())


async def test_a_failing_feed_is_reported_not_a_crash() -> None:
    @dataclass
    class Broken:
        name: str = "broken"
        profile: None = None
        local: None = None
        history_path: None = None

        async def run(self, publish) -> None:
            await asyncio.sleep(0)
            raise RuntimeError("environment variable X is not set")

    app = KonsoleApp(Broken())
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(pilot, lambda: app.feed_error is not None)
        assert app.is_running
        assert "X is not set" in (app.feed_error or "")


def test_status_text_states(story: Path) -> None:
    connecting = ConsoleState(profile="demo", now=T0)
    assert "CONNECTING" in status_text(connecting).plain
    assert "history off" in status_text(connecting).plain
    live = story_state(story, T0 + 20)
    text = status_text(live).plain
    assert "LIVE" in text and "GREEN" in text and "data 2s old (41 ms)" in text
    assert "recording" in text
    down = story_state(story, NOW)
    text = status_text(down).plain
    assert "UNREACHABLE" in text and "GREEN" not in text
