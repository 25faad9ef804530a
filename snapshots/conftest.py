"""Screen snapshot set-up: the scenario's recorded states, a fixed size, clock and theme.

Every screen is tested in four states, all read back from a real history file written by
the recorder (``tests/console_scenario.py``): ``normal`` (live, healthy, 3 tablet servers),
``empty`` (reachable, no database), ``unreachable`` (the last polls failed; panels greyed)
and ``historic`` (time travel to before tablet server 3 stopped).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

import pytest

from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.state import ConsoleState
from tests.console_scenario import NOW, T0, T_STOPPED, empty_state, record_story, story_state

#: The terminal every screen snapshot is taken at (the issue's minimum size is 80x24).
SIZE = (100, 30)
SMALL = (80, 24)
STATES = ("normal", "empty", "unreachable", "historic")


@pytest.fixture(scope="session")
def story_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_story(tmp_path_factory.mktemp("story") / "demo.sqlite")


@pytest.fixture(scope="session")
def console_states(
    story_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, ConsoleState]:
    historic = story_state(story_path, T_STOPPED - 5, live=False, now=NOW)
    return {
        "normal": story_state(story_path, T_STOPPED - 10),
        "empty": empty_state(tmp_path_factory.mktemp("empty") / "empty.sqlite"),
        "unreachable": story_state(story_path, NOW),
        "historic": historic,
    }


def console_app(state: ConsoleState, history_path: Path | None = None) -> KonsoleApp:
    """An app fed ``state`` (historic states become the travel state, as time travel does)."""
    if state.historic:
        live = replace(state, as_of=None)
        app = KonsoleApp(StaticFeed([live], name=state.profile, history_path=history_path))
        app.travel_state = state
    else:
        app = KonsoleApp(StaticFeed([state], name=state.profile, history_path=history_path))
    app.theme = "textual-dark"
    return app


def settled(then: Callable[..., Awaitable[None]] | None = None) -> Callable[..., Awaitable[None]]:
    """A ``run_before`` that waits for the first state to be shown, then runs ``then``."""

    async def run_before(pilot) -> None:
        app = pilot.app
        for _ in range(100):
            if app.live_state is not None:
                break
            await pilot.pause(0.02)
        await pilot.pause()
        if then is not None:
            await then(pilot)
            await pilot.pause()

    return run_before


__all__ = ["SIZE", "SMALL", "STATES", "T0", "console_app", "settled"]
