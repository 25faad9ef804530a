"""The console's cluster actions against a fake (tests/_testutil/actions.FakeClusterActions):
the Rebalance screen (goals, progress, start with the typed subject, a refused start,
cancel), the Config screen (list with sources, edit with a diff, a failed delete, an
unknown list), the Tables screen (partition create, a property set), and actions off with
the reason (no writes, time travel)."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import pytest

from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.modals.action_confirm import ActionConfirmScreen
from konsole.ui.screens.operations.configs import ConfigScreen
from konsole.ui.screens.operations.rebalance import RebalanceScreen
from konsole.ui.screens.tables.screen import TablesScreen
from konsole.ui.widgets.grid import KeyedGrid
from konsole.ui.widgets.text_input import TextInput
from tests._testutil.actions import FakeClusterActions
from tests._testutil.console import NOW, T_STOPPED, record_story, settle, story_state

pytestmark = pytest.mark.timeout(60)

AT = T_STOPPED - 10
S = TypeVar("S", RebalanceScreen, ConfigScreen)


@pytest.fixture
def story(tmp_path: Path) -> Path:
    return record_story(tmp_path / "demo.sqlite")


def _app(story: Path, fake: FakeClusterActions) -> KonsoleApp:
    app = KonsoleApp(StaticFeed([story_state(story, AT)], name="demo", history_path=story))
    app.cluster_actions_override = fake
    return app


def _text(node: object, selector: str) -> str:
    return str(node.query_one(selector).render())  # type: ignore[attr-defined]


async def _modal(pilot, app: KonsoleApp, *keys: str, step: str) -> ActionConfirmScreen:
    await pilot.press(*keys)
    await settle(pilot, lambda: getattr(app.screen, "step", None) == step)
    assert isinstance(app.screen, ActionConfirmScreen)
    return app.screen


async def _type(pilot, modal: ActionConfirmScreen, text: str) -> None:
    modal.query_one("#confirm-input", TextInput).value = text
    await pilot.press("enter")


async def _open(pilot, app: KonsoleApp, key: str, kind: type[S]) -> S:
    """Screen ``kind`` (opened by ``key``) once it has read the cluster (or failed to)."""
    await settle(pilot, lambda: app.live_state is not None)
    await pilot.press(key)
    await settle(pilot, lambda: isinstance(app.screen, kind))
    screen = app.screen
    assert isinstance(screen, kind)
    if isinstance(screen, RebalanceScreen):
        read = [lambda: screen.progress, lambda: screen.progress_error]
    else:
        read = [lambda: screen.configs, lambda: screen.error]
    await settle(pilot, lambda: any(r() is not None for r in read))
    return screen


async def _rebalance(pilot, app: KonsoleApp) -> RebalanceScreen:
    return await _open(pilot, app, "R", RebalanceScreen)


async def _configs(pilot, app: KonsoleApp) -> ConfigScreen:
    return await _open(pilot, app, "C", ConfigScreen)


async def test_rebalance_goals_progress_start_typed_subject(story: Path) -> None:
    fake = FakeClusterActions()
    app = _app(story, fake)
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _rebalance(pilot, app)
        assert "rb-7: REBALANCING, 1/2 buckets done" in _text(screen, "#rb-progress-title")
        assert screen.query_one(KeyedGrid).row_count == 2
        assert "no dry run" in _text(screen, "#rb-plan")
        await pilot.press("2", "3")  # leader off, rack-aware on
        assert screen.chosen_goals() == ["REPLICA_DISTRIBUTION", "RACK_AWARE"]
        modal = await _modal(pilot, app, "S", step="plan")
        assert "goals: REPLICA_DISTRIBUTION, RACK_AWARE" in _text(modal, "#confirm-body")
        await _type(pilot, modal, "clus")
        assert fake.executed == [] and "type cluster exactly" in _text(modal, "#confirm-status")
        await _type(pilot, modal, "cluster")
        await settle(pilot, lambda: modal.step == "done")
        assert fake.executed[0].value == "REPLICA_DISTRIBUTION,RACK_AWARE"
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, RebalanceScreen))


async def test_rebalance_refused_while_one_runs_then_cancel(story: Path) -> None:
    fake = FakeClusterActions(running="rb-7")
    app = _app(story, fake)
    async with app.run_test(size=(120, 34)) as pilot:
        await _rebalance(pilot, app)
        modal = await _modal(pilot, app, "S", step="refused")
        assert "REFUSED" in _text(modal, "#confirm-status")
        assert not modal.query_one("#confirm-input").display
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, RebalanceScreen))
        modal = await _modal(pilot, app, "x", step="plan")
        assert "cancels rebalance rb-7" in _text(modal, "#confirm-body")
        await _type(pilot, modal, "rebalance")
        await settle(pilot, lambda: modal.step == "done")
        assert [r.kind for r in fake.executed] == ["rebalance-cancel"]


async def test_rebalance_progress_unknown_when_the_read_fails(story: Path) -> None:
    app = _app(story, FakeClusterActions(read_fails_with="cannot reach the coordinator"))
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _rebalance(pilot, app)
        assert "Progress unknown: cannot reach" in _text(screen, "#rb-progress-title")


async def test_config_lists_sources_and_edits_with_a_diff(story: Path) -> None:
    fake = FakeClusterActions()
    app = _app(story, fake)
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _configs(pilot, app)
        table = screen.query_one(KeyedGrid)
        assert table.row_count == 3
        assert "3, 1 set at run time" in _text(screen, "#cfg-title")
        first = [str(c) for c in table.get_row_at(0)]
        assert first == ["kv.rocksdb.shared-rate-limiter.bytes-per-sec", "100mb", "dynamic"]
        assert [str(c) for c in table.get_row_at(2)][1] == "(not shown)"
        modal = await _modal(pilot, app, "v", step="ask")
        assert modal.query_one("#confirm-input", TextInput).value == "100mb"
        await _type(pilot, modal, "200mb")
        await settle(pilot, lambda: modal.step == "plan")
        body = _text(modal, "#confirm-body")
        assert "- 100mb" in body and "+ 200mb" in body
        assert "undo: konsole admin config set" in body
        await _type(pilot, modal, "kv.rocksdb.shared-rate-limiter.bytes-per-sec")
        await settle(pilot, lambda: modal.step == "done")
        assert fake.executed[0].value == "200mb"


async def test_config_delete_of_a_file_value_fails_with_why(story: Path) -> None:
    fake = FakeClusterActions()
    app = _app(story, fake)
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _configs(pilot, app)
        screen.query_one(KeyedGrid).move_cursor(row=1)
        modal = await _modal(pilot, app, "d", step="failed")
        assert "has no dynamic value to delete" in _text(modal, "#confirm-status")
        assert fake.executed == []


async def test_config_new_key_needs_key_equals_value(story: Path) -> None:
    fake = FakeClusterActions()
    app = _app(story, fake)
    async with app.run_test(size=(120, 34)) as pilot:
        await _configs(pilot, app)
        modal = await _modal(pilot, app, "n", step="ask")
        await _type(pilot, modal, "no-equals-sign")
        assert "KEY=VALUE" in _text(modal, "#confirm-status") and modal.step == "ask"
        await _type(pilot, modal, "datalake.format=paimon")
        await settle(pilot, lambda: modal.step == "plan")
        assert modal.plan is not None and modal.plan.subject == "datalake.format"


async def test_config_unknown_when_the_read_fails(story: Path) -> None:
    app = _app(story, FakeClusterActions(read_fails_with="cannot reach the coordinator"))
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _configs(pilot, app)
        assert "Configs unknown: cannot reach" in _text(screen, "#cfg-title")


async def _tables_on(pilot, app: KonsoleApp, path: str) -> TablesScreen:
    await settle(pilot, lambda: app.live_state is not None)
    await pilot.press("t")
    await settle(pilot, lambda: isinstance(app.screen, TablesScreen))
    table = app.screen.query_one(KeyedGrid)
    await settle(pilot, lambda: f"t:{path}" in table.row_keys)
    table.move_cursor(row=table.row_keys.index(f"t:{path}"))
    await pilot.pause()
    assert isinstance(app.screen, TablesScreen)
    return app.screen


async def test_tables_partition_create_and_property_set(story: Path) -> None:
    state = story_state(story, AT)
    assert state.last_ok is not None and state.last_ok.view is not None
    fake = FakeClusterActions(view=state.last_ok.view)
    app = _app(story, fake)
    async with app.run_test(size=(120, 34)) as pilot:
        await _tables_on(pilot, app, "shop.visits")
        modal = await _modal(pilot, app, "c", step="ask")
        await _type(pilot, modal, "day=2026-12-02")
        await settle(pilot, lambda: modal.step == "plan")
        assert modal.plan is not None and modal.plan.subject == "shop.visits[2026-12-02]"
        await _type(pilot, modal, "shop.visits[2026-12-02]")
        await settle(pilot, lambda: modal.step == "done")
        await pilot.press("escape")
        await _tables_on(pilot, app, "shop.orders")
        modal = await _modal(pilot, app, "m", step="ask")
        await _type(pilot, modal, "table.log.ttl=3d")
        await settle(pilot, lambda: modal.step == "plan")
        body = _text(modal, "#confirm-body")
        assert "- 7d" in body and "+ 3d" in body
        await _type(pilot, modal, "shop.orders")
        await settle(pilot, lambda: modal.step == "done")
        assert [(r.kind, r.target) for r in fake.executed] == [
            ("partition-create", "shop.visits"),
            ("table-set", "shop.orders"),
        ]


async def test_actions_off_without_writes_and_in_time_travel(story: Path) -> None:
    fake = FakeClusterActions(unavailable_reason="read-only: profile 'prod' has no writes")
    app = _app(story, fake)
    async with app.run_test(size=(120, 34)) as pilot:
        await _tables_on(pilot, app, "shop.visits")
        modal = await _modal(pilot, app, "c", step="off")
        assert "actions off: read-only" in _text(modal, "#confirm-status")
        assert not modal.query_one("#confirm-input").display
        await pilot.press("enter")
        assert fake.executed == [] and modal.step == "off"
    fake = FakeClusterActions()
    past = _app(story, fake)
    past.travel_state = story_state(story, T_STOPPED - 5, live=False, now=NOW)
    async with past.run_test(size=(120, 34)) as pilot:
        await _rebalance(pilot, past)
        modal = await _modal(pilot, past, "S", step="off")
        assert "time travel shows the past" in _text(modal, "#confirm-status")
        assert fake.executed == []
