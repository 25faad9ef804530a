"""Operator actions from the server detail: the drain flow against a fake (modal, typed
subject, progress, outcome), a refused plan, a failure, and actions off with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluss_proto.model import HealthStatus
from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.modals.server_action import ServerActionScreen
from konsole.ui.widgets.text_input import TextInput
from tests._testutil.actions import FakeServerActions
from tests._testutil.console import NOW, T_STOPPED, record_story, settle, story_state

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def story(tmp_path: Path) -> Path:
    return record_story(tmp_path / "demo.sqlite")


def _app(story: Path, fake: FakeServerActions | None, at: float = T_STOPPED - 10) -> KonsoleApp:
    app = KonsoleApp(StaticFeed([story_state(story, at)], name="demo", history_path=story))
    app.actions_override = fake
    return app


async def _modal(pilot, app: KonsoleApp, server_id: int = 1) -> ServerActionScreen:
    await settle(pilot, lambda: app.live_state is not None)
    app.open_server(server_id)
    await pilot.pause()
    await pilot.press("a")
    await settle(pilot, lambda: isinstance(app.screen, ServerActionScreen))
    assert isinstance(app.screen, ServerActionScreen)
    return app.screen


def _status(modal: ServerActionScreen) -> str:
    return str(modal.query_one("#action-status").render())


async def test_drain_flow_plan_typed_subject_progress_done(story: Path) -> None:
    fake = FakeServerActions()
    app = _app(story, fake)
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await _modal(pilot, app)
        await pilot.press("d")
        await settle(pilot, lambda: modal.step == "plan")
        assert modal.plan is not None and modal.plan.action == "server drain"
        assert "replicas on server 1" in str(modal.query_one("#action-body").render())
        await pilot.press("9", "enter")  # the wrong subject: nothing sent
        assert fake.executed == [] and "type 1 exactly" in _status(modal)
        modal.query_one("#action-confirm", TextInput).value = ""
        await pilot.press("1", "enter")
        await settle(pilot, lambda: modal.step == "done")
        assert fake.executed == [("drain", 1)]
        assert "server 1 drained" in _status(modal)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ServerActionScreen)


async def test_refused_plan_offers_nothing_to_send(story: Path) -> None:
    fake = FakeServerActions(health=HealthStatus.RED)
    app = _app(story, fake)
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await _modal(pilot, app)
        await pilot.press("d")
        await settle(pilot, lambda: modal.step == "refused")
        assert "REFUSED: cluster health is RED" in _status(modal)
        assert not modal.query_one("#action-confirm").display
        await pilot.press("1", "enter")
        assert fake.executed == []


async def test_a_failure_shows_the_servers_error(story: Path) -> None:
    fake = FakeServerActions(fail_with="server drain 1: REBALANCE_FAILURE_EXCEPTION (61): no")
    app = _app(story, fake)
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await _modal(pilot, app)
        await pilot.press("t")
        await settle(pilot, lambda: modal.step == "plan")
        await pilot.press("1", "enter")
        await settle(pilot, lambda: modal.step == "failed")
        assert "REBALANCE_FAILURE_EXCEPTION (61)" in _status(modal)


async def test_actions_off_without_writes_and_in_time_travel(story: Path) -> None:
    app = _app(story, None)  # a static feed has no profile: the live actions are off
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await _modal(pilot, app)
        assert "actions off: actions need a cluster profile" in _status(modal)
        await pilot.press("d")
        assert modal.step == "choose"
    fake = FakeServerActions()
    past = _app(story, fake, at=T_STOPPED - 10)
    state = story_state(story, T_STOPPED - 5, live=False, now=NOW)
    past.travel_state = state
    async with past.run_test(size=(100, 30)) as pilot:
        modal = await _modal(pilot, past)
        assert "time travel shows the past" in _status(modal)
        await pilot.press("d")
        assert modal.step == "choose" and fake.executed == []
