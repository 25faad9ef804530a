"""Screen snapshot set-up: the scenario's recorded states, a fixed size, clock and theme.

Every screen is tested in four states, all read back from a real history file written by
the recorder (``tests/_testutil/console.py``): ``normal`` (live, healthy, 3 tablet servers),
``empty`` (reachable, no database), ``unreachable`` (the last polls failed; panels greyed)
and ``historic`` (time travel to before tablet server 3 stopped).

A live state comes with the history file as it was at its moment: ``normal`` with a file
that ends at its poll (the story's first six polls), ``unreachable`` with the whole story.
A live console's file never holds what happens after its latest poll.

The apps run with :data:`SNAPSHOT_SETTINGS` (no cursor blink), and ``settled`` waits for the
workers (:func:`tests._testutil.console.wait_for_workers`), never a fixed time.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

import pytest

from konsole.collect.profiles import Profile
from konsole.localcluster import ClusterDescription
from konsole.ui.app import KonsoleApp
from konsole.ui.feed import LookupFunction, ScanFunction, StaticFeed
from konsole.ui.services import ConsoleSettings
from konsole.ui.state import ConsoleState
from tests._testutil.console import (
    NOW,
    T0,
    T_STOPPED,
    empty_state,
    record_story,
    settle,
    story_state,
    wait_for_workers,
)

#: The terminal every screen snapshot is taken at (the issue's minimum size is 80x24).
SIZE = (100, 30)
SMALL = (80, 24)
STATES = ("normal", "empty", "unreachable", "historic")
#: Nothing that depends on timing: a cursor that blinks is on or off by luck.
SNAPSHOT_SETTINGS = ConsoleSettings(cursor_blink=False)
#: The polls of the story up to the "normal" state's moment (T_STOPPED - 10 is poll 6).
NORMAL_POLLS = 6


@pytest.fixture(scope="session")
def story_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_story(tmp_path_factory.mktemp("story") / "demo.sqlite")


@pytest.fixture(scope="session")
def console_states(
    story_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, ConsoleState]:
    historic = story_state(story_path, T_STOPPED - 5, live=False, now=NOW)
    # The live console at T_STOPPED - 10 has recorded up to then, not the rest of the story.
    so_far = record_story(tmp_path_factory.mktemp("normal") / "demo.sqlite", polls=NORMAL_POLLS)
    return {
        "normal": story_state(so_far, T_STOPPED - 10),
        "empty": empty_state(tmp_path_factory.mktemp("empty") / "empty.sqlite"),
        "unreachable": story_state(story_path, NOW),
        "historic": historic,
    }


def console_app(
    state: ConsoleState,
    history_path: Path | None = None,
    *,
    scan: ScanFunction | None = None,
    local: ClusterDescription | None = None,
    lookup: LookupFunction | None = None,
    profile: Profile | None = None,
) -> KonsoleApp:
    """An app fed ``state`` (historic states become the travel state, as time travel does);
    ``scan`` answers its previews and ``lookup`` its lookups, ``local`` is the local cluster
    it runs on, ``profile`` its profile (masking rules, export)."""
    live = replace(state, as_of=None) if state.historic else state
    feed = StaticFeed(
        [live],
        name=state.profile,
        profile=profile,
        history_path=history_path,
        local=local,
        scan=scan,
        lookup_rows=lookup,
    )
    app = KonsoleApp(feed, settings=SNAPSHOT_SETTINGS)
    if state.historic:
        app.travel_state = state
    app.theme = "textual-dark"
    return app


def settled(
    then: Callable[..., Awaitable[None]] | None = None, *, ignore: tuple[str, ...] = ()
) -> Callable[..., Awaitable[None]]:
    """A ``run_before`` that waits for the first state to be shown, then runs ``then``;
    after each, until the workers (but those of the groups in ``ignore``) are done."""

    async def run_before(pilot) -> None:
        app = pilot.app
        await settle(pilot, lambda: app.live_state is not None)
        await wait_for_workers(pilot, ignore=ignore)
        if then is not None:
            await then(pilot)
            await wait_for_workers(pilot, ignore=ignore)

    return run_before


__all__ = ["SIZE", "SMALL", "STATES", "T0", "console_app", "settled"]
