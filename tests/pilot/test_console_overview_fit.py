"""The Overview at 80x24 with the cluster unreachable (the banner wraps to two rows): the
Health panel shows its findings whole, never a line cut at its bottom edge or mid-word;
what does not fit is left out whole and counted."""

from __future__ import annotations

from pathlib import Path

import pytest

from konsole.ui.app import KonsoleApp
from konsole.ui.feed import StaticFeed
from konsole.ui.widgets.fitted_lines import FittedLines
from tests._testutil.console import (
    NOW,
    T_STOPPED,
    record_story,
    settle,
    story_state,
    wait_for_workers,
)
from tests._testutil.dashboard_states import dashboard_state

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_story(tmp_path_factory.mktemp("story") / "demo.sqlite")


def _rows_drawn(panel: FittedLines) -> list[str]:
    return panel.render().plain.splitlines()


@pytest.mark.parametrize("size", [(80, 24), (100, 30)], ids=["80x24", "100x30"])
async def test_unreachable_health_shows_every_finding_whole(
    story: Path, size: tuple[int, int]
) -> None:
    state = story_state(story, NOW)
    assert state.stale and state.health is not None and state.health.findings
    app = KonsoleApp(StaticFeed([state], name="demo", history_path=story))
    async with app.run_test(size=size) as pilot:
        await settle(pilot, lambda: app.live_state is not None)
        await wait_for_workers(pilot)
        health = app.screen.query_one("#health", FittedLines)
        await settle(pilot, lambda: bool(health.shown))
        rows = _rows_drawn(health)
        # what is drawn fits the panel: nothing below its bottom edge
        assert len(rows) <= health.content_size.height
        assert all(len(r) <= health.content_size.width for r in rows)
        # every finding is there, whole (the lines drawn, joined, hold each one's text)
        drawn = " ".join(r.strip() for r in rows)
        for finding in state.health.findings:
            assert f"{finding.subject}: {finding.reason}" in drawn, (drawn, finding)
        assert health.left_out == 0 or "more" in rows[-1]


@pytest.mark.parametrize("size", [(80, 24), (100, 30)], ids=["80x24", "100x30"])
async def test_near_a_lock_health_keeps_the_forecast_and_the_red_findings(
    tmp_path: Path, story: Path, size: tuple[int, int]
) -> None:
    normal = story_state(record_story(tmp_path / "normal.sqlite", polls=6), T_STOPPED - 10)
    state = dashboard_state("near_lock", normal, story)
    assert state.health is not None
    red = [f for f in state.health.findings if f.status.name == "RED"]
    assert red and len(red) < len(state.health.findings)
    app = KonsoleApp(StaticFeed([state], name="demo", history_path=state.history.path))
    async with app.run_test(size=size) as pilot:
        await settle(pilot, lambda: app.live_state is not None)
        await wait_for_workers(pilot)
        health = app.screen.query_one("#health", FittedLines)
        await settle(pilot, lambda: bool(health.shown))
        rows = _rows_drawn(health)
        assert len(rows) <= health.content_size.height
        assert health.left_out > 0 and rows[-1].strip() == f"+{health.left_out} more"
        assert any(
            line.startswith("least room") and "first lock in" in line for line in health.shown
        )
        shown = [f for f in state.health.findings if f"• {f}" in health.shown]
        if size[0] >= 100:  # room for the red ones: the yellow ones went first
            assert shown == red
        else:  # a red one or none; never a yellow one in place of a red one
            assert all(f in red for f in shown)
