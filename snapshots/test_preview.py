"""Preview with a fake scan (no cluster): rows, no rows, errors, time travel, a scan under way."""

from __future__ import annotations

import asyncio

import pytest

from konsole.ui.screens.tables.preview import PreviewScreen
from snapshots.conftest import SIZE, SMALL, console_app, settled
from tests._testutil.console import fake_preview, wait_for_workers
from tests._testutil.table_reads import lookup_fake, masked_profile, scan_fake


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


# ---------------------------------------------------------------- lookup, filter, masking

CUSTOMERS = [(101, "Ada Lovelace", "London"), (102, "Alan Turing", None), (205, "Grace", "NYC")]


def _keys(*keys: str):
    async def run(pilot) -> None:
        pilot.app.push_screen(PreviewScreen("shop.customers"))
        await wait_for_workers(pilot)
        await pilot.press(*keys)

    return run


def test_preview_lookup_modal(snap_compare, console_states) -> None:
    """l opens one input per key column; a value of the wrong type is one line under it."""
    app = console_app(
        console_states["normal"], scan=scan_fake(CUSTOMERS), lookup=lookup_fake(CUSTOMERS)
    )
    opened = settled(_keys("l", "a", "b", "c", "enter"))
    assert snap_compare(app, terminal_size=SIZE, run_before=opened)


def test_preview_lookup_result(snap_compare, console_states) -> None:
    """The row found in the grid, the head saying lookup, key and found."""
    app = console_app(
        console_states["normal"], scan=scan_fake(CUSTOMERS), lookup=lookup_fake(CUSTOMERS)
    )
    opened = settled(_keys("l", "1", "0", "1", "enter"))
    assert snap_compare(app, terminal_size=SIZE, run_before=opened)


def test_preview_filtered(snap_compare, console_states) -> None:
    """/ filters: the head says rows scanned, matched and batches skipped by the server."""
    app = console_app(console_states["normal"], scan=scan_fake(CUSTOMERS))
    keys = ["slash", *"id > 101", "enter"]
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_keys(*keys)))


def test_preview_masked(snap_compare, console_states) -> None:
    """A profile masking ``name``: its values are ****, its type says masked; no export key."""
    app = console_app(
        console_states["normal"],
        scan=scan_fake(CUSTOMERS),
        profile=masked_profile("shop.*.name", export=False),
    )
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(_open("shop.customers")))
