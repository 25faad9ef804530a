"""The table detail's rows/s and the Storage tab's untiered line are our sparklines: they
take their width, say their scale, and draw an unknown point as a gap, never as zero."""

from __future__ import annotations

from pathlib import Path

import pytest

from konsole.render.spark import BARS, GAP
from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.screens.tables.detail import TableDetailScreen
from konsole.ui.widgets.spark import Spark
from tests._testutil.console import T_STOPPED, record_story, settle, story_state, wait_for_workers
from tests._testutil.storage_states import with_storage

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_story(tmp_path_factory.mktemp("story") / "demo.sqlite", polls=6)


def _assert_gap_between(spark: Spark) -> None:
    """A known, an unknown and a known point: bars, a gap, bars, the whole width."""
    text = spark.render()
    # the bars are the part drawn in the bars' style (the label and the scale beside)
    spans = [s for s in text.spans if s.style == spark.style_bars]
    assert len(spans) == 1
    bars = text.plain[spans[0].start : spans[0].end]
    assert len(bars) > 20
    # low bars, then a gap (not the bottom bar: unknown is not zero), then high bars
    low, gap, high = len(bars) - len(bars.lstrip(BARS[0])), bars.count(GAP), bars.count(BARS[-1])
    assert min(low, gap, high) >= len(bars) // 3 - 1
    assert bars == BARS[0] * low + GAP * gap + BARS[-1] * high


async def test_the_table_details_rows_per_s_draws_an_unknown_rate_as_a_gap(story: Path) -> None:
    app = KonsoleApp(
        StaticFeed([story_state(story, T_STOPPED - 10)], name="demo", history_path=story)
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, lambda: app.live_state is not None)
        app.open_table("shop.orders")
        await settle(pilot, lambda: isinstance(app.screen, TableDetailScreen))
        await wait_for_workers(pilot)
        screen = app.screen
        assert isinstance(screen, TableDetailScreen)
        spark = screen.query_one("#detail-sparkline", Spark)
        assert spark.values  # what the history holds, first
        screen.post_message(screen.SeriesLoaded([2.0, None, 4.0]))
        await settle(pilot, lambda: spark.values == [2.0, None, 4.0])
        await pilot.pause()
        _assert_gap_between(spark)
        assert "min 2.0/s · max 4.0/s" in spark.render().plain


async def test_the_storage_tabs_untiered_line_draws_an_unknown_lag_as_a_gap(
    story: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a storage poll in the middle did not know a bucket's lag
    monkeypatch.setattr(
        "konsole.collect.history.reads.untiered_values", lambda *_: [10.0, None, 30.0]
    )
    state = with_storage(story_state(story, T_STOPPED - 10))
    app = KonsoleApp(StaticFeed([state], name="demo", history_path=story))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, lambda: app.live_state is not None)
        app.open_table("shop.orders", tab="storage")
        await settle(pilot, lambda: bool(app.screen.query("#storage-tab-sparkline")))
        spark = app.screen.query_one("#storage-tab-sparkline", Spark)
        await settle(pilot, lambda: spark.values == [10.0, None, 30.0])
        await pilot.pause()
        _assert_gap_between(spark)
        assert "now 30 · min 10 · max 30" in spark.render().plain
