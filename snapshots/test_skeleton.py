"""The status bar in the four states (a placeholder until each screen has its own tests)."""

from __future__ import annotations

import pytest

from snapshots.conftest import SIZE, STATES, console_app, settled


@pytest.mark.parametrize("name", STATES)
def test_status_bar(snap_compare, console_states, name: str) -> None:
    assert snap_compare(console_app(console_states[name]), terminal_size=SIZE, run_before=settled())
