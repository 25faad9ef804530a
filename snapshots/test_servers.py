"""Servers in every state, after a tablet server stopped (shown gone), and at 80x24."""

from __future__ import annotations

from pathlib import Path

import pytest

from snapshots.conftest import SIZE, SMALL, STATES, console_app, settled
from tests._testutil.console import T_STOPPED, story_state


async def _servers(pilot) -> None:
    await pilot.press("s")


@pytest.mark.parametrize("name", STATES)
def test_servers(snap_compare, console_states, name: str) -> None:
    state = console_states[name]
    app = console_app(state, state.history.path)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_servers))


def test_servers_small(snap_compare, console_states) -> None:
    state = console_states["normal"]
    app = console_app(state, state.history.path)
    assert snap_compare(app, terminal_size=SMALL, run_before=settled(_servers))


def test_servers_after_a_server_stopped(snap_compare, story_path: Path) -> None:
    app = console_app(story_state(story_path, T_STOPPED + 25), story_path)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_servers))
