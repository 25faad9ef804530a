"""Tables in the four states, at 80x24, filtered and sorted."""

from __future__ import annotations

import pytest

from snapshots.conftest import SIZE, SMALL, STATES, console_app, settled


async def _tables(pilot) -> None:
    await pilot.press("t")


@pytest.mark.parametrize("name", STATES)
def test_tables(snap_compare, console_states, name: str) -> None:
    app = console_app(console_states[name])
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_tables))


def test_tables_small(snap_compare, console_states) -> None:
    app = console_app(console_states["normal"])
    assert snap_compare(app, terminal_size=SMALL, run_before=settled(_tables))


def test_tables_filtered_and_sorted_by_rate(snap_compare, console_states) -> None:
    async def filter_and_sort(pilot) -> None:
        await pilot.press("t", "slash", "s", "h", "o", "p", "enter", "6")

    app = console_app(console_states["normal"])
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(filter_and_sort))
