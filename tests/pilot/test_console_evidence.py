"""The evidence view: enter on an event in the Events screen, its server's log lines of that
minute (a file source, a failing command, none, a recorded excerpt in time travel), ``j``
to the subject and ``r`` for the report of the moment."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from konsole.collect.logs.reading import CommandSource, FileSource, LogSource
from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.screens.events.evidence import EvidenceScreen
from konsole.ui.screens.events.screen import EventsScreen
from konsole.ui.screens.servers.detail import ServerDetailScreen
from konsole.ui.state import ConsoleState
from konsole.ui.widgets.grid import KeyedGrid
from store import open_reader
from tests._testutil.console import NOW, T_STOPPED, record_story, story_state, wait_for_workers
from tests._testutil.console import settle as _settle
from tests._testutil.incidents import IN_WINDOW, add_excerpt, log_line, story_profile, write_log

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def story(tmp_path: Path) -> Path:
    return record_story(tmp_path / "demo.sqlite")


def _app(state: ConsoleState, history: Path, source: LogSource | None) -> KonsoleApp:
    live = replace(state, as_of=None) if state.historic else state
    feed = StaticFeed([live], name="demo", history_path=history, profile=story_profile(source))
    return KonsoleApp(feed)


async def _evidence_of_server_left(pilot, app: KonsoleApp) -> EvidenceScreen:
    await _settle(pilot, lambda: app.live_state is not None)
    await pilot.press("e")
    assert isinstance(app.screen, EventsScreen)
    table = app.screen.query_one(KeyedGrid)
    await _settle(pilot, lambda: len(table.row_keys) >= 1)
    await wait_for_workers(pilot)
    await pilot.press("slash", *"server_left", "enter", "enter")
    await _settle(pilot, lambda: isinstance(app.screen, EvidenceScreen))
    await wait_for_workers(pilot)
    screen = app.screen
    assert isinstance(screen, EvidenceScreen)
    assert screen.entry.kind == "server_left" and screen.entry.subject == "tablet-server 3"
    return screen


async def test_enter_on_server_left_shows_that_servers_lines_of_that_minute(
    story: Path, tmp_path: Path
) -> None:
    log = write_log(tmp_path / "ts3.log")
    app = _app(story_state(story, NOW), story, FileSource(str(log)))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _evidence_of_server_left(pilot, app)
        assert screen.log_lines == [log_line(*line) for line in IN_WINDOW]
        assert screen.log_note == f"live from {log}"
        assert any(e.kind == "server_left" for e in screen.around)
        await pilot.press("j")
        await pilot.pause()
        assert isinstance(app.screen, ServerDetailScreen) and app.screen.server_id == 3


async def test_a_hanging_log_command_is_cut_at_its_timeout_and_said(story: Path) -> None:
    source = CommandSource(("sh", "-c", "sleep 30"), timeout=0.3)
    app = _app(story_state(story, NOW), story, source)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _evidence_of_server_left(pilot, app)
        assert screen.log_lines == []
        assert "timed out after 0.3 s" in screen.log_note


async def test_without_a_log_source_it_says_so(story: Path) -> None:
    app = _app(story_state(story, NOW), story, None)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _evidence_of_server_left(pilot, app)
        assert screen.log_lines == []
        assert screen.log_note.startswith("no log source for tablet-server 3")


async def test_time_travel_shows_the_recorded_excerpt(story: Path, tmp_path: Path) -> None:
    with open_reader(story) as reader:
        (left,) = reader.events(kinds=("server_left",))
    add_excerpt(story, left.at_ms)
    state = story_state(story, T_STOPPED + 30, live=False, now=NOW)
    # The live source exists but time travel reads what the history kept.
    app = _app(state, story, FileSource(str(tmp_path / "rotated-away.log")))
    app.travel_state = state
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _evidence_of_server_left(pilot, app)
        assert screen.log_lines == [log_line(*line) for line in IN_WINDOW]
        assert screen.log_note.startswith("recorded excerpt from /var/log/fluss")


async def test_r_writes_the_report_of_the_moment_and_says_where(story: Path) -> None:
    app = _app(story_state(story, NOW), story, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await _evidence_of_server_left(pilot, app)
        await pilot.press("r")
        await wait_for_workers(pilot)
        (report,) = (story.parent / "reports").iterdir()
        assert report.suffix == ".html" and "server_left" in report.read_text()
        await pilot.press("escape")
        assert isinstance(app.screen, EventsScreen)
        await pilot.press("r")
        await wait_for_workers(pilot)
        assert len(list((story.parent / "reports").iterdir())) >= 1


async def test_r_in_the_time_travel_picker_writes_the_highlighted_moments_report(
    story: Path,
) -> None:
    from konsole.ui.modals.time_travel import TimeTravelScreen

    app = _app(story_state(story, NOW), story, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(pilot, lambda: app.live_state is not None)
        await pilot.press("T")
        await _settle(pilot, lambda: isinstance(app.screen, TimeTravelScreen))
        await wait_for_workers(pilot)
        await pilot.press("tab", "r")  # from the typed moment to the list, then r
        await wait_for_workers(pilot)
        (report,) = (story.parent / "reports").iterdir()
        assert "konsole incident report" in report.read_text()
        assert isinstance(app.screen, TimeTravelScreen)  # the picker stays open


async def test_the_sparklines_draw_the_polls_after_the_server_left_as_gaps(story: Path) -> None:
    from konsole.render.spark import BARS, GAP
    from konsole.ui.widgets.spark import Spark

    app = _app(story_state(story, NOW), story, None)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _evidence_of_server_left(pilot, app)
        spark = screen.query_one("#spark-bytes_in_rate", Spark)
        await _settle(pilot, lambda: bool(spark.values))
        values = spark.values
        # known while it was there, unknown (None, never 0) at each poll after it left
        assert values[0] is not None and values[-1] is None
        assert 0.0 not in values[values.index(None) :]
        bars = spark.render().plain.splitlines()[-1]
        assert len(bars) == spark.size.width
        assert bars.endswith(GAP) and bars.rstrip(GAP)[-1] in BARS
        assert "now unknown" in spark.render().plain
