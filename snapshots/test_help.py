"""Help over the overview (every state) and over the servers screen."""

from __future__ import annotations

import pytest

from snapshots.conftest import SIZE, STATES, console_app, settled


async def _help(pilot) -> None:
    await pilot.press("question_mark")


async def _servers_help(pilot) -> None:
    await pilot.press("s", "question_mark")


@pytest.mark.parametrize("name", STATES)
def test_help(snap_compare, console_states, name: str) -> None:
    state = console_states[name]
    app = console_app(state, state.history.path)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_help))


def test_help_over_servers(snap_compare, console_states) -> None:
    state = console_states["normal"]
    app = console_app(state, state.history.path)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_servers_help))
