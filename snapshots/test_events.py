"""Events in the four states, at 80x24, filtered, and the note dialog."""

from __future__ import annotations

from pathlib import Path

import pytest

from snapshots.conftest import SIZE, SMALL, STATES, console_app, settled
from tests._testutil.console import wait_for_workers


async def _events(pilot) -> None:
    await pilot.press("e")
    await wait_for_workers(pilot)


@pytest.mark.parametrize("name", STATES)
def test_events(snap_compare, console_states, name: str) -> None:
    state = console_states[name]
    app = console_app(state, state.history.path)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_events))


def test_events_small(snap_compare, console_states, story_path: Path) -> None:
    app = console_app(console_states["unreachable"], story_path)
    assert snap_compare(app, terminal_size=SMALL, run_before=settled(_events))


def test_events_warnings_only(snap_compare, console_states, story_path: Path) -> None:
    async def warnings(pilot) -> None:
        await _events(pilot)
        await pilot.press("v")

    app = console_app(console_states["unreachable"], story_path)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(warnings))


def test_events_note_dialog(snap_compare, console_states, story_path: Path) -> None:
    async def note(pilot) -> None:
        await _events(pilot)
        await pilot.press("n", *"restarted ts3")

    app = console_app(console_states["unreachable"], story_path)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(note))
