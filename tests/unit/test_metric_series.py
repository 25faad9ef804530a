"""History series for the sparklines: a point per recorded poll, unknown kept as None."""

from __future__ import annotations

from pathlib import Path

import pytest

from konsole.collect.history.metric_series import cluster_throughput_series, metric_series
from konsole.collect.history.reads import with_history
from tests._testutil.console import STEP, T0, record_story


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # 12 polls: tablet server 3 stops at poll 7, the cluster is unreachable from poll 11
    return record_story(tmp_path_factory.mktemp("series") / "story.sqlite")


def _ms(t: float) -> int:
    return round(t * 1000)


def test_a_stopped_server_and_failed_polls_are_gaps_not_zero(story: Path) -> None:
    series = with_history(
        story,
        lambda r: metric_series(
            r,
            "tablet-server 3",
            ["bytes_in_rate", "disk_usage_ratio"],
            _ms(T0),
            _ms(T0 + 11 * STEP),
        ),
    )
    assert series is not None
    bytes_in = series["bytes_in_rate"]
    assert len(bytes_in) == 12  # every poll is a point
    assert bytes_in[:6] == [51_200.0 * 3 + 100 * seq for seq in range(1, 7)]
    assert bytes_in[6:] == [None] * 6
    assert series["disk_usage_ratio"][0] == pytest.approx(0.46)


def test_cluster_throughput_is_summed_per_poll(story: Path) -> None:
    series = with_history(
        story, lambda r: cluster_throughput_series(r, _ms(T0), _ms(T0 + 11 * STEP))
    )
    assert series is not None
    bytes_in = series["bytes_in_rate"]
    # poll 1: servers 1..3; poll 7: servers 1 and 2; polls 11, 12 failed: unknown
    assert bytes_in[0] == pytest.approx(51_200.0 * 6 + 300)
    assert bytes_in[6] == pytest.approx(51_200.0 * 3 + 1_400)
    assert bytes_in[10:] == [None, None]
    assert series["messages_in_rate"][0] == pytest.approx(180.0 * 6)
