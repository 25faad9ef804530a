"""Overview in every state: normal, empty, unreachable, historic, after a server stopped,
connecting, and at the 80x24 minimum; the dashboard's cases (quiet, busy, a server down,
near a write lock, 0.9.1's unknowns) at the issue's four sizes."""

from __future__ import annotations

from pathlib import Path

import pytest

from konsole.ui.state import ConsoleState
from snapshots.conftest import SIZE, SMALL, STATES, console_app, settled
from tests._testutil.console import T0, T_STOPPED, story_state
from tests._testutil.dashboard_states import CASES as DASHBOARD_CASES
from tests._testutil.dashboard_states import dashboard_state


@pytest.mark.parametrize("name", STATES)
def test_overview(snap_compare, console_states, name: str) -> None:
    state = console_states[name]
    app = console_app(state, state.history.path)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled())


@pytest.mark.parametrize("name", ["normal", "unreachable"])
def test_overview_small(snap_compare, console_states, name: str) -> None:
    state = console_states[name]
    app = console_app(state, state.history.path)
    assert snap_compare(app, terminal_size=SMALL, run_before=settled())


def test_overview_after_a_server_stopped(snap_compare, story_path: Path) -> None:
    app = console_app(story_state(story_path, T_STOPPED + 25), story_path)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled())


def test_overview_connecting(snap_compare) -> None:
    app = console_app(ConsoleState(profile="demo", now=T0))
    assert snap_compare(app, terminal_size=SIZE, run_before=settled())


def test_overview_light_theme(snap_compare, story_path: Path) -> None:
    app = console_app(story_state(story_path, T_STOPPED + 25), story_path)

    async def light(pilot) -> None:
        await pilot.press("ctrl+t")

    assert snap_compare(app, terminal_size=SIZE, run_before=settled(light))


#: The issue's sizes, smallest to largest.
DASHBOARD_SIZES = ((80, 24), (100, 30), (160, 48), (200, 60))


@pytest.mark.parametrize("size", DASHBOARD_SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("case", DASHBOARD_CASES)
def test_overview_dashboard(
    snap_compare, console_states, story_path: Path, case: str, size: tuple[int, int]
) -> None:
    state = dashboard_state(case, console_states["normal"], story_path)
    app = console_app(state, state.history.path)
    assert snap_compare(app, terminal_size=size, run_before=settled())
