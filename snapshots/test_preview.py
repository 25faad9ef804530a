"""Preview with a fake scan (no cluster): rows, no rows, errors, time travel, a scan under way."""

from __future__ import annotations

import asyncio

import pytest

from konsole.ui.screens.preview import PreviewScreen
from snapshots.conftest import SIZE, SMALL, console_app, settled
from tests._testutil.console import fake_preview


def _scan(result=None, error: Exception | None = None, hang: bool = False):
    async def scan(request):
        if hang:
            await asyncio.Event().wait()
        if error is not None:
            raise error
        return result

    return scan


def _open(path: str):
    async def run(pilot) -> None:
        pilot.app.push_screen(PreviewScreen(path))

    return run


def test_preview_rows(snap_compare, console_states) -> None:
    scan = _scan(fake_preview("shop.orders", 30))
    app = console_app(console_states["normal"], scan=scan)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_open("shop.orders")))


def test_preview_pk_table_small(snap_compare, console_states) -> None:
    scan = _scan(fake_preview("shop.customers", 12))
    app = console_app(console_states["normal"], scan=scan)
    assert snap_compare(app, terminal_size=SMALL, run_before=settled(_open("shop.customers")))


def test_preview_no_rows(snap_compare, console_states) -> None:
    scan = _scan(fake_preview("shop.orders", 0))
    app = console_app(console_states["empty"], scan=scan)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_open("shop.orders")))


@pytest.mark.parametrize(
    "error",
    [
        "cannot reach the cluster at 127.0.0.1:9123: connection refused",
        "table shop.nope does not exist",
    ],
    ids=["unreachable", "unknown-table"],
)
def test_preview_error(snap_compare, console_states, error: str) -> None:
    scan = _scan(error=RuntimeError(error))
    app = console_app(console_states["unreachable"], scan=scan)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_open("shop.nope")))


def test_preview_in_time_travel(snap_compare, console_states) -> None:
    scan = _scan(fake_preview("metrics.cpu", 8))
    app = console_app(console_states["historic"], scan=scan)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_open("metrics.cpu")))


def test_preview_scanning(snap_compare, console_states) -> None:
    scan = _scan(hang=True)
    app = console_app(console_states["normal"], scan=scan)
    # The scan never ends: every other worker is waited for.
    opened = settled(_open("shop.orders"), ignore=("preview-scan",))
    assert snap_compare(app, terminal_size=SIZE, run_before=opened)
