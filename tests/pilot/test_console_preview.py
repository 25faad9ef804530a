"""The Preview screen with a fake scan: paging, following the tail, cancel, errors, width."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

import pytest

import konsole.ui.screens.tables.preview as preview_module
from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.screens.tables.preview import (
    COLUMN_WINDOW,
    PreviewRequest,
    PreviewScreen,
    _PagedTable,
    preview_cells,
)
from tests._testutil.console import T_STOPPED, fake_preview, record_story, story_state
from tests._testutil.console import settle as _settle

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_story(tmp_path_factory.mktemp("story") / "demo.sqlite")


async def _preview(pilot, app: KonsoleApp, path: str, scan, **kwargs) -> PreviewScreen:
    """The preview of ``path``, its scans answered by ``scan`` (the feed's fake)."""
    await _settle(pilot, lambda: app.live_state is not None)
    feed = app.feed
    assert isinstance(feed, StaticFeed)
    feed.scan = scan
    screen = PreviewScreen(path, **kwargs)
    app.push_screen(screen)
    await pilot.pause()
    return screen


def _app(story: Path) -> KonsoleApp:
    return KonsoleApp(StaticFeed([story_state(story, T_STOPPED - 10)], name="demo"))


def test_cells_are_exact() -> None:
    rows = preview_cells(fake_preview("shop.orders", 3))
    assert rows[0][:4] == ("0", None, "0.01", "2026-05-28T20:26:40.000Z")
    assert rows[2][2] == "2.03"  # a decimal's digits, not a float's


async def test_pages_with_n_b_and_page_down(story: Path) -> None:
    requests: list[PreviewRequest] = []

    async def scan(request):
        requests.append(request)
        return fake_preview("shop.orders", 1200)

    app = _app(story)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _preview(pilot, app, "shop.orders", scan)
        await _settle(pilot, lambda: screen.result is not None)
        assert requests == [PreviewRequest(("shop", "orders"), None, 2000, False)]
        grid = screen.query_one(_PagedTable)
        assert screen.pages == 3 and grid.row_count == 500
        assert str(grid.get_row_at(0)[0]) == "0"
        await pilot.press("n")
        assert screen.page == 1 and str(grid.get_row_at(0)[0]) == str(500 * 7)
        await pilot.press("n")
        assert screen.page == 2 and grid.row_count == 200
        await pilot.press("n")  # no page after the last
        assert screen.page == 2
        await pilot.press("b", "b")
        assert screen.page == 0
        # pgdn on the last row of a page turns to the next page.
        grid.move_cursor(row=grid.row_count - 1)
        await pilot.press("pagedown")
        assert screen.page == 1
        await pilot.press("m")  # more rows: a new scan with 4x the limit
        await _settle(pilot, lambda: len(requests) == 2 and not screen.scanning)
        assert requests[-1].limit == 8000


async def test_following_the_tail_appends_only_new_rows(story: Path, monkeypatch) -> None:
    monkeypatch.setattr(preview_module, "FOLLOW_INTERVAL_S", 0.01)
    reads = 0

    async def scan(request):
        nonlocal reads
        if not request.tail:
            return fake_preview("shop.orders", 8)  # offsets 0..1 in each of 4 buckets
        reads += 1
        # Each tail read overlaps the one before: offsets from reads-1 to reads+1.
        return fake_preview("shop.orders", 12, first_offset=reads - 1, tail=True)

    app = _app(story)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _preview(pilot, app, "shop.orders", scan)
        await _settle(pilot, lambda: screen.result is not None)
        assert len(screen.rows) == 8
        await pilot.press("f")
        assert screen.following
        await _settle(pilot, lambda: reads >= 3)
        await pilot.press("f")
        assert not screen.following
        await pilot.pause()
        offsets = [(r[-1], int(r[4] or -1)) for r in screen.rows]
        assert len(offsets) == len(set(offsets)), "a row was appended twice"
        # Every bucket's offsets once each, without gaps (the last read may be cut off
        # by the stop before it was appended).
        top = max(o for _, o in offsets)
        assert 3 <= top <= reads + 1
        for bucket in {b for b, _ in offsets}:
            assert sorted(o for b, o in offsets if b == bucket) == list(range(top + 1))
        grid = screen.query_one(_PagedTable)
        assert grid.row_count == len(screen.rows)


async def test_follow_is_bounded(story: Path, monkeypatch) -> None:
    monkeypatch.setattr(preview_module, "FOLLOW_INTERVAL_S", 0.0)
    monkeypatch.setattr(preview_module, "MAX_FOLLOW_ROWS", 50)
    reads = 0

    async def scan(request):
        nonlocal reads
        reads += 1
        return fake_preview("metrics.cpu", 20, first_offset=reads * 10, tail=request.tail)

    app = _app(story)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _preview(pilot, app, "metrics.cpu", scan)
        await _settle(pilot, lambda: screen.result is not None)
        await pilot.press("f")
        await _settle(pilot, lambda: reads >= 8)
        await pilot.press("escape")  # stops following, stays on the preview
        assert not screen.following and app.screen is screen
        assert len(screen.rows) <= 50


async def test_escape_cancels_a_running_scan_then_goes_back(story: Path) -> None:
    cancelled = asyncio.Event()

    async def scan(request):
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    app = _app(story)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _preview(pilot, app, "shop.orders", scan)
        assert screen.scanning
        await pilot.press("escape")
        await _settle(pilot, cancelled.is_set)
        await _settle(pilot, lambda: not screen.scanning)
        assert app.screen is screen and screen.error == "scan cancelled"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is not screen


async def test_errors_are_shown_not_raised(story: Path) -> None:
    async def scan(request):
        raise RuntimeError("table shop.nope does not exist")

    app = _app(story)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _preview(pilot, app, "shop.nope", scan)
        await _settle(pilot, lambda: screen.error is not None)
        assert "does not exist" in str(screen.query_one("#preview-error").render())
        await pilot.press("f", "n", "x")
        assert app.is_running


async def test_without_a_profile_the_real_scan_says_so(story: Path) -> None:
    app = _app(story)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, lambda: app.live_state is not None)
        app.open_preview("shop.orders")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PreviewScreen)
        await _settle(pilot, lambda: screen.error is not None)
        assert "no connection profile" in (screen.error or "")


async def test_300_columns(story: Path) -> None:
    async def scan(request):
        return fake_preview("wide.table", 400, columns=300)

    app = _app(story)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _preview(pilot, app, "wide.table", scan)
        await _settle(pilot, lambda: screen.result is not None)
        grid = screen.query_one(_PagedTable)
        # 303 columns (300, _offset, _change_type, _bucket) shown a window at a time.
        assert len(grid.columns) == COLUMN_WINDOW
        assert grid.row_count == screen.page_rows < 400
        assert f"columns 1-{COLUMN_WINDOW} of 303" in str(
            screen.query_one("#preview-head").render()
        )
        await pilot.press("right", "end", "n", "right_square_bracket")
        assert screen.first_column == COLUMN_WINDOW
        labels = {c.key: str(c.label) for c in grid.columns}
        assert labels[str(COLUMN_WINDOW)].startswith("c024")
        for _ in range(20):
            await pilot.press("right_square_bracket")
        assert len(grid.columns) == 303 % COLUMN_WINDOW
        await pilot.press("left_square_bracket")
        assert len(grid.columns) == COLUMN_WINDOW
        assert app.is_running
        # the rows kept out of the collector's full passes while shown, given back after
        assert gc.get_freeze_count() > 0
        await pilot.press("escape")
        await _settle(pilot, lambda: app.screen is not screen)
        await pilot.pause()
        assert gc.get_freeze_count() == 0, (screen.is_mounted, screen.is_attached)


async def test_tiny_terminal(story: Path) -> None:
    async def scan(request):
        return fake_preview("shop.visits", 40)

    app = _app(story)
    async with app.run_test(size=(60, 20)) as pilot:
        screen = await _preview(pilot, app, "shop.visits", scan)
        await _settle(pilot, lambda: screen.result is not None)
        await pilot.press("down", "n", "b", "f", "f", "r")
        assert app.is_running


async def test_x_exports_every_row_read_through_konsole_export(story: Path, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    async def scan(request):
        return fake_preview("shop.orders", 1200)

    app = _app(story)
    target = tmp_path / "orders.parquet"
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _preview(pilot, app, "shop.orders", scan)
        await _settle(pilot, lambda: screen.result is not None)
        await pilot.press("x")
        await _settle(pilot, lambda: type(app.screen).__name__ == "ExportDialog")
        # An unknown suffix is refused in the dialog, before anything is written.
        field = app.screen.query_one("#export-path")
        field.value = str(tmp_path / "orders.xlsx")
        await pilot.press("enter")
        assert type(app.screen).__name__ == "ExportDialog"
        assert not list(tmp_path.iterdir())
        field.value = str(target)
        await pilot.press("enter")
        await _settle(pilot, lambda: target.exists(), tries=250)
    written = pq.read_table(target)
    assert written.num_rows == 1200  # every page, not only the 500 rows shown
    assert (
        written.column("order_id").to_pylist() == screen.result.table.column("order_id").to_pylist()
    )
