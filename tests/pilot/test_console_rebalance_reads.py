"""The Rebalance screen's reads and keys, against a fake (tests/_testutil/actions.py).

The screen asks the app's cluster actions for its reads once, at its mount, and reads the
progress through them at every refresh: several refreshes, one ``reads()``; they are
closed when the screen goes (the app quits), and a profile switched to gets reads of its
own (the old ones closed). ``S`` starts a rebalance; ``g`` on this screen is the app's
Storage key, as everywhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from fluss_proto.model import RebalanceProgress
from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.modals.action_confirm import ActionConfirmScreen
from konsole.ui.screens.operations.rebalance import RebalanceScreen
from tests._testutil.actions import FakeClusterActions
from tests._testutil.console import T_STOPPED, record_story, settle, story_state

pytestmark = pytest.mark.timeout(60)


@dataclass
class CountingFake(FakeClusterActions):
    """The fake, counting the progress reads made through it."""

    reads_made: int = 0

    async def progress(self) -> RebalanceProgress:
        self.reads_made += 1
        return await super().progress()


def _app(story: Path, fake: FakeClusterActions) -> KonsoleApp:
    def feed() -> StaticFeed:
        return StaticFeed([story_state(story, T_STOPPED - 10)], name="demo", history_path=story)

    app = KonsoleApp(feed(), profiles={"other": feed})
    app.cluster_actions_override = fake
    return app


async def _rebalance(pilot, app: KonsoleApp) -> RebalanceScreen:
    await settle(pilot, lambda: app.live_state is not None)
    await pilot.press("R")
    await settle(pilot, lambda: isinstance(app.screen, RebalanceScreen))
    screen = app.screen
    assert isinstance(screen, RebalanceScreen)
    return screen


async def _refreshed(pilot, fake: CountingFake, times: int) -> None:
    for _ in range(times):
        before = fake.reads_made
        await pilot.press("r")
        await settle(pilot, lambda b=before: fake.reads_made > b)


async def test_one_reads_for_the_screens_life_closed_when_it_goes(tmp_path: Path) -> None:
    fake = CountingFake()
    app = _app(record_story(tmp_path / "demo.sqlite"), fake)
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _rebalance(pilot, app)
        await settle(pilot, lambda: screen.progress is not None)
        await _refreshed(pilot, fake, 4)
        assert fake.reads_made >= 5
        assert (fake.reads_opened, fake.reads_closed) == (1, 0)
        # Shown again after another screen: the same reads.
        await pilot.press("o")
        await pilot.press("R")
        await settle(pilot, lambda: app.screen is screen)
        await _refreshed(pilot, fake, 1)
        assert (fake.reads_opened, fake.reads_closed) == (1, 0)
    assert (fake.reads_opened, fake.reads_closed) == (1, 1)


async def test_a_profile_switched_to_gets_its_own_reads(tmp_path: Path) -> None:
    fake = CountingFake()
    app = _app(record_story(tmp_path / "demo.sqlite"), fake)
    async with app.run_test(size=(120, 34)) as pilot:
        await _rebalance(pilot, app)
        await settle(pilot, lambda: fake.reads_made > 0)
        app.switch_profile("other")
        await _refreshed(pilot, fake, 1)
        assert (fake.reads_opened, fake.reads_closed) == (2, 1)


async def test_start_is_capital_s_and_g_stays_the_storage_key(tmp_path: Path) -> None:
    app = _app(record_story(tmp_path / "demo.sqlite"), CountingFake())
    async with app.run_test(size=(120, 34)) as pilot:
        await _rebalance(pilot, app)
        await pilot.press("S")
        await settle(pilot, lambda: isinstance(app.screen, ActionConfirmScreen))
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, RebalanceScreen))
        await pilot.press("g")
        await settle(pilot, lambda: type(app.screen).__name__ == "StorageScreen")
