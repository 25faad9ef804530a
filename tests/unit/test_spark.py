"""Sparklines as text: exact width, unknown as a gap (never zero), a stated scale."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from konsole.render.spark import BARS, GAP, Scale, scale_of, scale_text, spark_text


def test_unknown_is_a_gap_and_zero_is_the_bottom_bar() -> None:
    assert spark_text([0.0, None, 0.0, None], 4) == f"{BARS[0]}{GAP}{BARS[0]}{GAP}"


def test_a_series_never_known_is_all_gap_and_says_so() -> None:
    assert spark_text([None, None, None], 10) == GAP * 10
    assert scale_text(scale_of([None, None]), str) == "no figures"


def test_bars_span_the_series_min_to_max() -> None:
    assert spark_text([10.0, 15.0, 20.0], 3) == BARS[0] + BARS[4] + BARS[-1]


def test_a_flat_nonzero_series_is_drawn_mid_height_not_as_zero() -> None:
    line = spark_text([5.0, 5.0], 4)
    assert set(line) == {BARS[3]}


def test_few_points_are_stretched_over_the_whole_width() -> None:
    assert spark_text([0.0, 1.0], 6) == BARS[0] * 3 + BARS[-1] * 3


def test_many_points_keep_a_spike_when_squeezed() -> None:
    values = [0.0] * 100
    values[51] = 9.0
    line = spark_text(values, 10)
    assert line.count(BARS[-1]) == 1 and len(line) == 10


def test_scale_text_names_current_min_and_max() -> None:
    scale = scale_of([3.0, None, 1.0, 7.0, 2.0])
    assert scale == Scale(2.0, 1.0, 7.0)
    assert scale_text(scale, lambda v: f"{v:.0f}/s") == "now 2/s · min 1/s · max 7/s"


def test_an_unknown_latest_point_is_said_unknown() -> None:
    assert scale_text(scale_of([1.0, None]), str).startswith("now unknown")


@given(
    st.lists(st.one_of(st.none(), st.floats(-1e12, 1e12), st.just(float("nan"))), max_size=300),
    st.integers(0, 250),
)
def test_always_exactly_the_width_given(values: list[float | None], width: int) -> None:
    line = spark_text(values, width)
    assert len(line) == width
    assert set(line) <= set(BARS + GAP)


@pytest.mark.parametrize("width", [0, -3])
def test_no_room_draws_nothing(width: int) -> None:
    assert spark_text([1.0, 2.0], width) == ""
