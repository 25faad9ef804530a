"""The time travel picker (recorded events listed from the history) in every state."""

from __future__ import annotations

import pytest

from snapshots.conftest import SIZE, STATES, console_app, settled
from tests._testutil.console import wait_for_workers


async def _travel(pilot) -> None:
    await pilot.press("T")
    await wait_for_workers(pilot)


@pytest.mark.parametrize("name", STATES)
def test_time_travel(snap_compare, console_states, name: str) -> None:
    state = console_states[name]
    app = console_app(state, state.history.path)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_travel))


def test_time_travel_typing_a_bad_moment(snap_compare, console_states) -> None:
    state = console_states["normal"]

    async def typed(pilot) -> None:
        await _travel(pilot)
        await pilot.press(*"yesterday", "enter")

    app = console_app(state, state.history.path)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(typed))
