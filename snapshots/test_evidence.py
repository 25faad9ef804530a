"""The evidence view of the story's server_left event: with a live log source, without
one, with a source that fails, and in time travel (the recorded excerpt).

Log times are local times (log4j writes no zone): these tests run in UTC so the lines and
the window they fall in are the same on every machine. The live log sits at a fixed path,
since the view names its source.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from konsole.collect.logs.reading import FileSource, LogSource
from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.state import ConsoleState
from snapshots.conftest import SIZE, SMALL, settled
from store import open_reader
from tests._testutil.console import NOW, T_STOPPED, record_story, story_state
from tests._testutil.console import settle as _settle
from tests._testutil.incidents import add_excerpt, story_profile, write_log

LIVE_LOG = Path(tempfile.gettempdir()) / "konsole-snapshot-evidence" / "tablet-server-3.log"


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _app(state: ConsoleState, history: Path, source: LogSource | None) -> KonsoleApp:
    from snapshots.conftest import SNAPSHOT_SETTINGS

    live = replace(state, as_of=None) if state.historic else state
    feed = StaticFeed(
        [live], name=state.profile, history_path=history, profile=story_profile(source)
    )
    app = KonsoleApp(feed, settings=SNAPSHOT_SETTINGS)
    if state.historic:
        app.travel_state = state
    app.theme = "textual-dark"
    return app


async def _evidence(pilot) -> None:
    from tests._testutil.console import wait_for_workers

    await pilot.press("e")
    await wait_for_workers(pilot)
    await pilot.press("slash", *"server_left", "enter", "enter")
    await _settle(pilot, lambda: type(pilot.app.screen).__name__ == "EvidenceScreen")


def test_evidence_with_a_log_source(snap_compare, tmp_path: Path) -> None:
    story = record_story(tmp_path / "demo.sqlite")
    LIVE_LOG.parent.mkdir(exist_ok=True)
    write_log(LIVE_LOG)
    app = _app(story_state(story, NOW), story, FileSource(str(LIVE_LOG)))
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_evidence))


def test_evidence_without_a_log_source(snap_compare, tmp_path: Path) -> None:
    story = record_story(tmp_path / "demo.sqlite")
    app = _app(story_state(story, NOW), story, None)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_evidence))


def test_evidence_small(snap_compare, tmp_path: Path) -> None:
    # 80x24: the footer keeps its keys whole, the sparklines their scale's whole words
    story = record_story(tmp_path / "demo.sqlite")
    app = _app(story_state(story, NOW), story, None)
    assert snap_compare(app, terminal_size=SMALL, run_before=settled(_evidence))


def test_evidence_with_a_failing_log_source(snap_compare, tmp_path: Path) -> None:
    story = record_story(tmp_path / "demo.sqlite")
    app = _app(story_state(story, NOW), story, FileSource("/nonexistent/fluss/ts-3-*.log"))
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_evidence))


def test_evidence_in_time_travel(snap_compare, tmp_path: Path) -> None:
    story = record_story(tmp_path / "demo.sqlite")
    with open_reader(story) as reader:
        (left,) = reader.events(kinds=("server_left",))
    add_excerpt(story, left.at_ms)
    state = story_state(story, T_STOPPED + 30, live=False, now=NOW)
    app = _app(state, story, None)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_evidence))
