"""The Storage screen and the table detail's Storage tab: normal (1.0 line), empty,
unknown on 0.9.1 (no remote log listing), stalled tiering and historic (time travel)."""

from __future__ import annotations

import pytest

from snapshots.conftest import SIZE, SMALL, console_app, settled
from tests._testutil.storage_states import OLD, with_storage

CASES = ("normal", "empty", "unknown_0_9", "stalled", "historic")


def _state(console_states, name: str):
    if name == "empty":
        return console_states["empty"]
    if name == "historic":
        return with_storage(console_states["historic"])
    base = console_states["normal"]
    if name == "unknown_0_9":
        return with_storage(base, caps=OLD)
    return with_storage(base, stalled="shop.orders" if name == "stalled" else None)


async def _storage(pilot) -> None:
    await pilot.press("g")


async def _tab(pilot) -> None:
    await pilot.press("g")
    await pilot.pause()
    pilot.app.open_table("shop.orders", tab="storage")


@pytest.mark.parametrize("name", CASES)
def test_storage_screen(snap_compare, console_states, name: str) -> None:
    state = _state(console_states, name)
    app = console_app(state, state.history.path)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_storage))


@pytest.mark.parametrize("name", CASES)
def test_storage_tab(snap_compare, console_states, name: str) -> None:
    state = _state(console_states, name)
    app = console_app(state, state.history.path)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_tab))


def test_storage_tab_small(snap_compare, console_states) -> None:
    state = _state(console_states, "stalled")
    app = console_app(state, state.history.path)
    assert snap_compare(app, terminal_size=SMALL, run_before=settled(_tab))
