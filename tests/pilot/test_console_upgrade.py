"""The console during a rolling upgrade: the Servers screen shows each server's line (told
by its API keys) only while the servers speak more than one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from fluss_proto.model import ApiVersionRange, ClusterView
from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.screens.servers import ServersScreen
from konsole.ui.state import ConsoleState
from tests._testutil.console import T_STOPPED, record_story, story_state
from tests._testutil.console import settle as _settle

pytestmark = pytest.mark.timeout(60)

OLD = tuple(ApiVersionRange(k, 0, 1) for k in range(1000, 1052))
NEW = tuple(ApiVersionRange(k, 0, 1) for k in range(1000, 1065))


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_story(tmp_path_factory.mktemp("story") / "demo.sqlite")


def speaking(state: ConsoleState, upgraded: set[int]) -> ConsoleState:
    """``state`` whose tablet servers in ``upgraded`` advertise the 1.0 line's keys, the
    others (and the coordinator) the 0.9 line's."""
    snap = state.last_ok
    assert snap is not None and snap.view is not None
    view: ClusterView = snap.view
    coordinator = view.coordinator
    view = replace(
        view,
        coordinator=replace(coordinator, api_versions=OLD) if coordinator else None,
        tablet_servers=tuple(
            replace(s, api_versions=NEW if s.node_id in upgraded else OLD)
            for s in view.tablet_servers
        ),
    )
    return replace(state, last_ok=replace(snap, view=view))


async def _servers(state: ConsoleState, story: Path) -> tuple[list[str], list[list[str]], str]:
    app = KonsoleApp(StaticFeed([state], name="demo", history_path=story))
    async with app.run_test(size=(160, 30)) as pilot:
        await _settle(pilot, lambda: app.live_state is not None)
        await pilot.press("s")
        assert isinstance(app.screen, ServersScreen)
        await pilot.pause()
        table = app.screen.query_one("#servers", DataTable)
        header = [str(c.label) for c in table.columns.values()]
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        summary = str(app.screen.query_one("#servers-summary", Static).render())
        return header, rows, summary


async def test_the_line_column_shows_only_during_skew(story: Path) -> None:
    base = story_state(story, T_STOPPED - 10)
    header, rows, summary = await _servers(speaking(base, {1}), story)
    assert header[-1] == "line", header
    lines = {(r[0], r[1]): r[-1] for r in rows}
    assert lines[("tablet", "1")] == "1.0"
    assert lines[("tablet", "2")] == "0.9"
    assert "version skew" in summary
    header, rows, summary = await _servers(speaking(base, set()), story)
    assert "line" not in header
    assert "version skew" not in summary


async def test_the_upgrade_screen_shows_lines_the_gate_and_the_steps(story: Path) -> None:
    from konsole.ui.screens.upgrade import UpgradeScreen

    healthy = speaking(story_state(story, T_STOPPED - 10), {1})
    gone = speaking(story_state(story, T_STOPPED + 5), {1})
    for state, safe in ((healthy, True), (gone, False)):
        app = KonsoleApp(StaticFeed([state], name="demo", history_path=story))
        async with app.run_test(size=(140, 40)) as pilot:
            await _settle(pilot, lambda app=app: app.live_state is not None)
            await pilot.press("U")
            assert isinstance(app.screen, UpgradeScreen)
            await pilot.pause()
            summary = str(app.screen.query_one("#upgrade-summary", Static).render())
            gate = str(app.screen.query_one("#upgrade-gate", Static).render())
            servers = app.screen.query_one("#upgrade-servers", DataTable)
            lines = {
                str(servers.get_row_at(i)[0]): str(servers.get_row_at(i)[1])
                for i in range(servers.row_count)
            }
            steps = app.screen.query_one("#upgrade-steps", DataTable)
            order = [str(steps.get_row_at(i)[1]) for i in range(steps.row_count)]
            assert "0.9/1.0" in summary and "version skew" in summary
            assert lines["tablet-server 1"] == "1.0" and lines["tablet-server 2"] == "0.9"
            assert order[-1].endswith("(active, last)")
            assert ("gate: SAFE" in gate) is safe, gate
            if not safe:
                assert "tablet-server 3" in gate, gate  # the stopped server holds the gate
