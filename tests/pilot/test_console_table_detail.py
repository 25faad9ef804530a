"""The Table detail screen: tabs, a table that is gone, the sparkline, KV snapshots."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from textual.widgets import TabbedContent

from konsole.collect.profiles import Profile
from konsole.ui.app import KonsoleApp
from konsole.ui.feed import KvFunction, StaticFeed
from konsole.ui.screens.tables.detail import TableDetailScreen
from konsole.ui.screens.tables.preview import PreviewScreen
from konsole.ui.state import ConsoleState
from konsole.ui.widgets.grid import KeyedGrid
from konsole.ui.widgets.spark import Spark
from tests._testutil.console import (
    NOW,
    T_CREATED,
    T_STOPPED,
    record_story,
    story_state,
    wait_for_workers,
)
from tests._testutil.console import settle as _settle
from tests._testutil.judging import showing

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_story(tmp_path_factory.mktemp("story") / "demo.sqlite")


async def _detail(pilot, app: KonsoleApp, path: str) -> TableDetailScreen:
    await _settle(pilot, lambda: app.live_state is not None)
    app.open_table(path)
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, TableDetailScreen)
    return screen


def _app(
    state: ConsoleState,
    history: Path | None,
    profile: Profile | None = None,
    kv: KvFunction | None = None,
) -> KonsoleApp:
    feed = StaticFeed([state], name="demo", history_path=history, profile=profile, kv=kv)
    return KonsoleApp(feed)


async def test_buckets_tabs_sparkline_escape_and_preview(story: Path) -> None:
    app = _app(story_state(story, T_STOPPED + 10), story)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _detail(pilot, app, "shop.visits")
        buckets = screen.query_one("#detail-buckets", KeyedGrid)
        assert len(buckets.row_keys) == 4  # 2 partitions x 2 buckets
        spark = screen.query_one("#detail-sparkline", Spark)
        await _settle(pilot, lambda: bool(spark.values))
        assert len(spark.values) == 7  # 8 polls up to T_STOPPED + 10
        await pilot.press("2")
        assert screen.query_one(TabbedContent).active == "schema"
        assert screen.query_one("#detail-schema", KeyedGrid).row_keys == ["visitor", "page", "day"]
        await pilot.press("4")
        assert len(screen.query_one("#detail-partitions", KeyedGrid).row_keys) == 2
        await pilot.press("down", "p")
        await pilot.pause()
        assert isinstance(app.screen, PreviewScreen)
        assert (app.screen.table_path, app.screen.partition) == ("shop.visits", "2026-05-28")
        app.pop_screen()
        await pilot.pause()
        await pilot.press("3")
        assert "table.replication.factor" in str(screen.query_one("#detail-properties").render())
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, PreviewScreen)
        assert (app.screen.table_path, app.screen.partition) == ("shop.visits", None)
        app.pop_screen()
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, TableDetailScreen)


async def test_a_table_not_created_yet_says_so(story: Path) -> None:
    state = story_state(story, T_CREATED - 5, live=False, now=NOW)
    app = _app(replace(state, as_of=None), story)
    app.travel_state = state
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _detail(pilot, app, "shop.returns")
        head = str(screen.query_one("#detail-head").render())
        assert "no table shop.returns at this moment" in head
        assert screen.query_one("#detail-buckets", KeyedGrid).row_keys == []


async def test_kv_snapshots_of_a_pk_table_live(story: Path) -> None:
    asked: list[tuple[str, list[tuple[int | None, str | None]]]] = []

    async def fake(table_path, partitions):
        asked.append((table_path, list(partitions)))
        return {(None, 0): "7 @ 1,200", (None, 1): "none"}

    profile = Profile(name="demo", source="profile", bootstrap=("127.0.0.1:9123",))
    app = _app(story_state(story, T_STOPPED - 10), story, profile, kv=fake)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _detail(pilot, app, "shop.customers")
        await _settle(pilot, lambda: screen.kv_snapshots is not None)
        grid = screen.query_one("#detail-buckets", KeyedGrid)
        assert str(grid.get_cell("None:0", "kv")) == "7 @ 1,200"
        assert str(grid.get_cell("None:2", "kv")) == "none"
        assert asked == [("shop.customers", [(None, None)])]


async def test_no_kv_snapshots_without_a_live_cluster(story: Path) -> None:
    async def fail(table_path, partitions):
        raise AssertionError("must not be asked")

    app = _app(story_state(story, NOW), story, kv=fail)  # unreachable, and no profile
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _detail(pilot, app, "shop.customers")
        await wait_for_workers(pilot)
        grid = screen.query_one("#detail-buckets", KeyedGrid)
        assert str(grid.get_cell("None:0", "kv")) == "-"
        assert grid.has_class("stale") or screen.query_one("#detail-tabs").has_class("stale")


async def test_tiny_terminal(story: Path) -> None:
    app = _app(story_state(story, T_STOPPED + 10), story)
    async with app.run_test(size=(60, 20)) as pilot:
        await _detail(pilot, app, "shop.orders")
        await pilot.press("2", "3", "4", "1", "down", "k")
        assert app.is_running


async def test_a_refresh_of_one_table_with_1600_buckets(capsys: pytest.CaptureFixture[str]) -> None:
    import time

    from tests._testutil.console import large_snapshot, large_state

    state = large_state(2, tables=1, buckets=1600)
    app = KonsoleApp(StaticFeed([state], name="demo"))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _detail(pilot, app, "db0.table_000")
        grid = screen.query_one("#detail-buckets", KeyedGrid)
        assert len(grid.row_keys) == 1600
        timings = []
        for seq in (3, 4, 5):
            nxt = showing(
                state,
                large_snapshot(seq, tables=1, buckets=1600),
                last_ok=large_snapshot(seq, tables=1, buckets=1600),
                previous_ok=large_snapshot(seq - 1, tables=1, buckets=1600),
            )
            started = time.perf_counter()
            screen.show(nxt)
            timings.append(time.perf_counter() - started)
            await pilot.pause()
        assert str(grid.get_cell("None:0", "latest")) == f"{10_000 + 5:,}"
        with capsys.disabled():
            shown = ", ".join(f"{t * 1000:.1f}" for t in timings)
            print(f"\nTable detail refresh, 1,600 buckets: {shown} ms")
