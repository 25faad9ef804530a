"""The Overview sets a panel again only when what it shows changed (Textual lays out and
paints a widget whenever its content or title is set): the same state shown twice sets
nothing; a poll whose server figures moved sets the servers' table; a server gone sets
the health, the events and the table, and the screen says so."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from textual.widget import Widget
from textual.widgets import DataTable, Static

from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.screens.overview.screen import OverviewScreen
from konsole.ui.state import ConsoleState
from konsole.ui.widgets.fitted_lines import FittedLines
from tests._testutil.console import (
    STEP,
    T0,
    T_STOPPED,
    record_story,
    screen_text,
    settle,
    story_state,
)
from tests._testutil.judging import showing


def _busier(state: ConsoleState) -> ConsoleState:
    """The next poll of ``state``: the same cluster, every tablet server taking in 10x."""
    snap = state.last_ok
    assert snap is not None
    metrics = tuple(
        replace(m, bytes_in_rate=None if m.bytes_in_rate is None else 10 * m.bytes_in_rate)
        for m in snap.metrics
    )
    busier = replace(snap, seq=snap.seq + 1, taken_at=snap.taken_at + STEP, metrics=metrics)
    return showing(replace(state, now=state.now + STEP), busier, last_ok=busier, previous_ok=snap)


@pytest.fixture
def sets(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """What the screen set, by widget id: ``id`` (content), ``id:title``, ``id:rows``."""
    seen: Counter[str] = Counter()
    update, clear = Static.update, DataTable.clear
    update_lines = FittedLines.update_lines
    title = Widget.__dict__["border_title"]  # the descriptor itself

    def counted_update(self: Static, *args: Any, **kwargs: Any) -> None:
        seen[str(self.id)] += 1
        update(self, *args, **kwargs)

    def counted_lines(self: FittedLines, ranked: Any) -> None:
        if ranked != self.ranked:  # a panel of whole lines lays out only for new lines
            seen[str(self.id)] += 1
        update_lines(self, ranked)

    def counted_clear(self: DataTable[Any], *args: Any, **kwargs: Any) -> Any:
        seen[f"{self.id}:rows"] += 1
        return clear(self, *args, **kwargs)

    class CountedTitle:
        def __get__(self, obj: Widget, owner: type | None = None) -> Any:
            return title.__get__(obj, owner)

        def __set__(self, obj: Widget, value: Any) -> None:
            seen[f"{obj.id}:title"] += 1
            title.__set__(obj, value)

    monkeypatch.setattr(Static, "update", counted_update)
    monkeypatch.setattr(DataTable, "clear", counted_clear)
    monkeypatch.setattr(FittedLines, "update_lines", counted_lines)
    monkeypatch.setattr(Widget, "border_title", CountedTitle())
    return seen


async def test_the_overview_sets_again_only_what_changed(
    tmp_path: Path, sets: Counter[str]
) -> None:
    story = record_story(tmp_path / "story.sqlite", polls=8)
    quiet = story_state(story, T0 + 3 * STEP + 1)
    moved = _busier(quiet)
    gone = story_state(story, T_STOPPED + 1)  # tablet server 3 gone
    app = KonsoleApp(StaticFeed([quiet], name="demo"))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, lambda: app.live_state is not None)
        screen = app.screen
        assert isinstance(screen, OverviewScreen)
        await pilot.pause()
        first = Counter(sets)
        assert first["health"] and first["events"] and first["tablets:rows"]

        sets.clear()
        screen.show(quiet)
        await pilot.pause()
        # nothing changed: no panel set (the status bar, the base screen's, is not one)
        assert set(sets) <= {"status-bar"}, sets

        screen.show(moved)
        await pilot.pause()
        assert sets["tablets:rows"] == 1
        assert "health" not in sets and "events:title" not in sets

        sets.clear()
        screen.show(gone)
        await pilot.pause()
        assert sets["health"] == 1 and sets["events"] == 1 and sets["tablets:rows"] == 1
        assert sets["tablets:title"] == 1
        assert "1 down" in screen_text(app)
        table = screen.query_one("#tablets", DataTable)
        assert str(table.get_cell("tablet-3", "state")) == "gone"
