"""The Events screen driven by keys: filters, search, jump to the subject, operator notes."""

from __future__ import annotations

from pathlib import Path

import pytest

from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.screens.events.evidence import EvidenceScreen
from konsole.ui.screens.events.screen import EventsScreen, NoteScreen, subject_target
from konsole.ui.screens.servers.detail import ServerDetailScreen
from konsole.ui.screens.tables.detail import TableDetailScreen
from konsole.ui.state import ConsoleState
from konsole.ui.widgets.grid import KeyedGrid
from store import open_reader
from tests._testutil.console import (
    NOW,
    T_CREATED,
    T_STOPPED,
    record_story,
    story_state,
    wait_for_workers,
)
from tests._testutil.console import settle as _settle

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def story(tmp_path: Path) -> Path:
    return record_story(tmp_path / "demo.sqlite")


def _app(state: ConsoleState, history: Path | None) -> KonsoleApp:
    return KonsoleApp(StaticFeed([state], name="demo", history_path=history))


async def _open_events(pilot, app: KonsoleApp, rows: int) -> KeyedGrid:
    await _settle(pilot, lambda: app.live_state is not None)
    await pilot.press("e")
    assert isinstance(app.screen, EventsScreen)
    table = app.screen.query_one(KeyedGrid)
    await _settle(pilot, lambda: len(table.row_keys) >= rows)
    return table


def _subjects(screen: EventsScreen) -> list[str]:
    return [e.subject for e in screen._visible()]


def test_subject_targets() -> None:
    assert subject_target("tablet-server 3") == ("server", 3)
    assert subject_target("coordinator 127.0.0.1:9123") == ("server", 0)
    assert subject_target("table db.t") == ("table", "db.t")
    assert subject_target("db.t#3") == ("table", "db.t")
    assert subject_target("shop.visits[2026-05-28]#1") == ("table", "shop.visits")
    assert subject_target("shop.returns") == ("table", "shop.returns")
    assert subject_target("cluster") is None
    assert subject_target("shop.*") is None


async def test_newest_first_filters_and_search(story: Path) -> None:
    app = _app(story_state(story, NOW), story)
    async with app.run_test(size=(100, 30)) as pilot:
        await _open_events(pilot, app, 10)
        screen = app.screen
        assert isinstance(screen, EventsScreen)
        times = [e.time for e in screen._visible()]
        assert times == sorted(times, reverse=True)
        await pilot.press("v")  # warnings and worse
        assert {e.severity for e in screen._visible()} <= {"warning", "critical"}
        await pilot.press("v")  # critical only
        assert {e.severity for e in screen._visible()} == {"critical"}
        await pilot.press("v", "k")  # all severities, the first kind
        kinds = {e.kind for e in screen._visible()}
        assert len(kinds) == 1
        await pilot.press("escape", "slash", *"server 3", "enter")
        assert screen.search == "server 3"
        assert "tablet-server 3" in _subjects(screen)
        assert all("server 3" in f"{e.subject} {e.message}" for e in screen._visible())
        assert "search 'server 3'" in str(screen.query_one("#events-summary").render())
        await pilot.press("escape")
        # u: only the selected event's subject (and what is below it).
        table = screen.query_one(KeyedGrid)
        while screen._selected() is not None and screen._selected().subject != "tablet-server 3":  # type: ignore[union-attr]
            await pilot.press("down")
        await pilot.press("u")
        assert set(_subjects(screen)) == {"tablet-server 3"}
        assert len(table.row_keys) == 3
        await pilot.press("u")
        assert len(table.row_keys) == 10


async def test_enter_opens_the_evidence_and_g_jumps_to_server_and_table(story: Path) -> None:
    app = _app(story_state(story, NOW), story)
    async with app.run_test(size=(100, 30)) as pilot:
        await _open_events(pilot, app, 10)
        screen = app.screen
        assert isinstance(screen, EventsScreen)
        await pilot.press("slash", *"server_left", "enter", "enter")
        await pilot.pause()
        assert isinstance(app.screen, EvidenceScreen)
        await pilot.press("j")
        await pilot.pause()
        assert isinstance(app.screen, ServerDetailScreen)
        assert app.screen.server_id == 3
        app.pop_screen()
        app.pop_screen()
        await pilot.pause()
        await pilot.press("escape", "slash", *"table_created", "enter", "j")
        await pilot.pause()
        assert isinstance(app.screen, TableDetailScreen)
        assert app.screen.table_path == "shop.returns"


async def test_time_travel_lists_events_up_to_the_moment(story: Path) -> None:
    state = story_state(story, T_STOPPED + 5, live=False, now=NOW)
    app = _app(state, story)
    app.travel_state = state
    async with app.run_test(size=(100, 30)) as pilot:
        await _open_events(pilot, app, 1)
        await wait_for_workers(pilot)
        screen = app.screen
        assert isinstance(screen, EventsScreen)
        assert screen._entries and all(e.time <= T_STOPPED + 5 for e in screen._entries)
        assert all(e.kind != "table_created" for e in screen._entries)
        assert max(e.time for e in screen._entries) < T_CREATED


async def test_a_note_is_written_and_shown(story: Path) -> None:
    app = _app(story_state(story, NOW), story)
    async with app.run_test(size=(100, 30)) as pilot:
        table = await _open_events(pilot, app, 10)
        await pilot.press("n")
        assert isinstance(app.screen, NoteScreen)
        await pilot.press(*"restarted tablet-server 3", "enter")
        await _settle(pilot, lambda: any(k.startswith("n") for k in table.row_keys))
        screen = app.screen
        assert isinstance(screen, EventsScreen)
        notes = [e for e in screen._entries if e.kind == "note"]
        assert [n.message for n in notes] == ["restarted tablet-server 3"]
        # Its subject is the selected event's (the newest), its time the state's clock.
        assert notes[0].subject == screen._entries[1].subject
        assert app.live_state is not None and notes[0].time == app.live_state.now
    with open_reader(story) as reader:
        assert [n.text for n in reader.notes()] == ["restarted tablet-server 3"]


async def test_escape_cancels_a_note_and_no_history_says_so(story: Path) -> None:
    app = _app(story_state(story, NOW), None)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open_events(pilot, app, 1)
        await pilot.press("n")
        assert isinstance(app.screen, EventsScreen)  # no dialog without a history file
        assert "recent events only" in str(app.screen.query_one("#events-summary").render())
    app = _app(story_state(story, NOW), story)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open_events(pilot, app, 10)
        await pilot.press("n", "x", "escape")
        assert isinstance(app.screen, EventsScreen)
    with open_reader(story) as reader:
        assert reader.notes() == []


async def test_tiny_terminal(story: Path) -> None:
    app = _app(story_state(story, NOW), story)
    async with app.run_test(size=(60, 20)) as pilot:
        await _open_events(pilot, app, 10)
        await pilot.press("v", "k", "u", "slash", "x", "escape", "down", "n", "escape")
        assert app.is_running


async def test_operator_events_show_live_and_in_time_travel(story: Path) -> None:
    """What `konsole admin` writes (an operator event outside any poll) reads as one."""
    from konsole.collect.actions.runner import Audit
    from konsole.model.actions import Outcome, plan_tag
    from tests._testutil.builders import view

    plan = plan_tag(view((1, 2, 3)), 3, "PERMANENT_OFFLINE", remove=False)
    audit = Audit(story, who="ops@box", clock=lambda: T_STOPPED + 1)
    audit.record(plan, Outcome.SENT)
    audit.clock = lambda: T_STOPPED + 2
    audit.record(plan, Outcome.SUCCEEDED)
    for state in (story_state(story, NOW), story_state(story, T_STOPPED + 5, live=False, now=NOW)):
        app = _app(state, story)
        if state.historic:
            app.travel_state = state
        async with app.run_test(size=(100, 30)) as pilot:
            await _open_events(pilot, app, 1)
            await wait_for_workers(pilot)
            screen = app.screen
            assert isinstance(screen, EventsScreen)
            ops = [e for e in screen._entries if e.kind == "operator"]
            assert [e.message for e in ops] == [
                "server tag 3: succeeded by ops@box",
                "server tag 3: sent by ops@box",
            ]
            assert {(e.severity, e.subject) for e in ops} == {("info", "tablet-server 3")}
            await pilot.press("slash", *"succeeded by", "enter", "j")
            await pilot.pause()
            assert isinstance(app.screen, ServerDetailScreen) and app.screen.server_id == 3
