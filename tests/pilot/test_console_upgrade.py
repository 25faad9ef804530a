"""The console during a rolling upgrade: the Servers screen shows each server's line (told
by its API keys) only while the servers speak more than one; the Upgrade screen shows the
lines, the gate, the 1.0 upgrade notes checked against the ACLs and configs it reads, and
the steps."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.screens.servers.screen import ServersScreen
from konsole.ui.state import ConsoleState
from tests._testutil.actions import FakeClusterActions
from tests._testutil.console import T_STOPPED, record_story, story_state
from tests._testutil.console import settle as _settle
from tests._testutil.upgrade_states import NOTES_CLEAN, NOTES_TO_ACT_ON, speaking

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_story(tmp_path_factory.mktemp("story") / "demo.sqlite")


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
    from konsole.ui.screens.operations.upgrade import UpgradeScreen

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


async def _notes(state: ConsoleState, story: Path, fake: FakeClusterActions | None) -> str:
    app = KonsoleApp(StaticFeed([state], name="demo", history_path=story))
    if fake is not None:
        app.cluster_actions_override = fake
    async with app.run_test(size=(160, 48)) as pilot:
        await _settle(pilot, lambda: app.live_state is not None)
        await pilot.press("U")
        notes = app.screen.query_one("#upgrade-notes", Static)
        await _settle(pilot, lambda: "reading" not in _plain(notes))
        return _plain(notes)


async def test_the_upgrade_screen_shows_the_notes_items_it_reads(story: Path) -> None:
    state = speaking(story_state(story, T_STOPPED - 10), {1})
    fake = FakeClusterActions(notes=NOTES_TO_ACT_ON)
    text = await _notes(state, story, fake)
    assert "1.0 upgrade notes: 3 to act on" in text, text
    assert "acl-all User:bob: allowed ALTER but not ALL on database 'shop'" in text, text
    assert "datalake-enabled tablet-server 2: datalake.format=paimon without" in text, text
    assert "config-keys tablet-server 3: log.fetch.max-bytes is renamed" in text, text
    assert fake.reads_opened == 1  # one hold for the screen's life
    clean = await _notes(state, story, FakeClusterActions(notes=NOTES_CLEAN))
    assert "nothing to act on" in clean and "WARNING" not in clean, clean
    assert "no authorizer" in clean, clean


async def test_the_upgrade_screen_says_when_the_notes_could_not_be_read(story: Path) -> None:
    state = speaking(story_state(story, T_STOPPED - 10), {1})
    failed = await _notes(state, story, FakeClusterActions(read_fails_with="connection refused"))
    assert "ACLs and configs not read: connection refused" in failed, failed
    assert "OK" not in failed  # nothing not read is said OK
    no_profile = await _notes(state, story, None)
    assert "not read: actions need a cluster profile" in no_profile, no_profile


async def test_the_overview_cluster_panel_says_who_speaks_which_line_during_skew(
    story: Path,
) -> None:
    base = story_state(story, T_STOPPED - 10)
    for state, expected in (
        (speaking(base, {1}), "skew · 1.0: ts 1 · 0.9: coordinator, ts 2, ts 3"),
        (speaking(base, set()), None),
    ):
        app = KonsoleApp(StaticFeed([state], name="demo", history_path=story))
        async with app.run_test(size=(160, 48)) as pilot:
            await _settle(pilot, lambda a=app: "last poll" in _cluster_panel(a))
            text = _cluster_panel(app)
            if expected is None:
                assert "version     Fluss 0.9 line" in text and "skew" not in text, text
            else:
                assert f"version     {expected}" in text, text


def _cluster_panel(app: KonsoleApp) -> str:
    found = list(app.screen.query("#cluster").results(Static))
    return str(found[0].render()) if found else ""


def _plain(widget: Static) -> str:
    """What a Static shows, as plain text at 160 columns (one item a line)."""
    from rich.console import Console

    console = Console(width=160, record=True, file=io.StringIO())
    console.print(widget.content)
    return " ".join(console.export_text().split())
