"""The Capacity screen: normal (1.0 line, room everywhere), near lock (a data dir locks
within the hour), locked (writes refused), unknown on 0.9.1 (no usage, no limits: unknown,
never ok) and historic (time travel reads the capacity part back from the history)."""

from __future__ import annotations

from pathlib import Path

import pytest

from snapshots.conftest import SIZE, console_app, settled
from tests._testutil.capacity_states import CASES, record_capacity_story, with_capacity
from tests._testutil.console import NOW, T_STOPPED, story_state


@pytest.fixture(scope="module")
def capacity_story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_capacity_story(tmp_path_factory.mktemp("capacity") / "demo.sqlite")


def _state(console_states, capacity_story: Path, name: str):
    if name == "historic":
        return story_state(capacity_story, T_STOPPED - 15, live=False, now=NOW)
    return with_capacity(console_states["normal"], name)


async def _capacity(pilot) -> None:
    await pilot.press("h")


@pytest.mark.parametrize("name", (*CASES, "historic"))
def test_capacity_screen(snap_compare, console_states, capacity_story, name: str) -> None:
    state = _state(console_states, capacity_story, name)
    app = console_app(state, state.history.path)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_capacity))


async def _servers(pilot) -> None:
    await pilot.press("s")


@pytest.mark.parametrize("name", ("near_lock", "locked"))
def test_servers_room_column(snap_compare, console_states, name: str) -> None:
    """The Servers screen's room column: the least headroom, the forecast lock in time."""
    state = with_capacity(console_states["normal"], name)
    app = console_app(state, state.history.path)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_servers))
