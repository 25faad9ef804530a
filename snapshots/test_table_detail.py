"""Table detail in the four states, its tabs, and a table that does not exist then."""

from __future__ import annotations

import pytest

from snapshots.conftest import SIZE, SMALL, STATES, console_app, settled
from tests._testutil.console import wait_for_workers


def _open(path: str, *keys: str):
    async def run(pilot) -> None:
        pilot.app.open_table(path)
        await wait_for_workers(pilot)  # the sparkline's history read
        if keys:
            await pilot.press(*keys)

    return run


@pytest.mark.parametrize("name", STATES)
def test_table_detail(snap_compare, console_states, name: str) -> None:
    state = console_states[name]
    app = console_app(state, state.history.path)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_open("shop.orders")))


def test_table_detail_small_partitioned(snap_compare, console_states) -> None:
    state = console_states["unreachable"]
    app = console_app(state, state.history.path)
    assert snap_compare(app, terminal_size=SMALL, run_before=settled(_open("shop.visits")))


@pytest.mark.parametrize("tab", ["2", "3", "4"])
def test_table_detail_tabs(snap_compare, console_states, tab: str) -> None:
    state = console_states["normal"]
    app = console_app(state, state.history.path)
    path = "shop.visits" if tab == "4" else "shop.customers"
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_open(path, tab)))


def test_table_detail_not_created_yet(snap_compare, console_states) -> None:
    state = console_states["historic"]
    app = console_app(state, state.history.path)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_open("shop.returns")))
