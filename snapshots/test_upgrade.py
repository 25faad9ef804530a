"""The console during a rolling upgrade midway (tablet server 1 on the 1.0 line, the rest
on 0.9): the Upgrade screen with the 1.0 upgrade notes to act on (a fake's ACLs and
configs; tests/_testutil/upgrade_states) at 100x30 and 160x48, and the Overview's
cluster panel naming who speaks which line."""

from __future__ import annotations

from pathlib import Path

import pytest

from snapshots.conftest import console_app, settled
from tests._testutil.actions import FakeClusterActions
from tests._testutil.dashboard_states import dashboard_state
from tests._testutil.upgrade_states import NOTES_TO_ACT_ON, speaking

SIZES = ((100, 30), (160, 48))


async def _upgrade(pilot) -> None:
    await pilot.press("U")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_upgrade_in_skew(snap_compare, console_states, size: tuple[int, int]) -> None:
    state = speaking(console_states["normal"], {1})
    app = console_app(state, state.history.path)
    app.cluster_actions_override = FakeClusterActions(notes=NOTES_TO_ACT_ON)
    assert snap_compare(app, terminal_size=size, run_before=settled(_upgrade))


def test_overview_in_skew(snap_compare, console_states, story_path: Path) -> None:
    state = speaking(dashboard_state("quiet", console_states["normal"], story_path), {1})
    app = console_app(state, state.history.path)
    assert snap_compare(app, terminal_size=(160, 48), run_before=settled())
