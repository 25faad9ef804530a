"""The change-point search: its one-pass, unrolled loop finds what the plain search finds.

The reference below is the search as the module's docstring states it, written plainly:
the best single split by the two sides' least-squares residuals (``_Sums.sse``), kept when
it passes the penalty, the tail searched again; then the tail of the last regime searched
once more with :data:`FRESH_POINTS` for a change too fresh to fit. The module answers the
same on every series Hypothesis draws (flat, rising, faster, a drop, noise, staircases).
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from konsole.model.change_point import (
    FRESH_POINTS,
    MAX_SPLITS,
    NOISE_FLOOR,
    PENALTY,
    _Sums,
    newest_regime,
)

Point = tuple[float, float]


def _split(
    points: list[Point], sums: _Sums, start: int, min_points: int, min_span_s: float
) -> int | None:
    end = len(points)
    n = end - start
    if n < min_points + 3:
        return None
    floor = n * NOISE_FLOOR
    whole = max(sums.sse(start, end), floor)
    best, best_sse = None, whole
    for k in range(start + 3, end - min_points + 1):
        if points[-1][0] - points[k][0] < min_span_s:
            break
        two = sums.sse(start, k) + sums.sse(k, end)
        if two < best_sse:
            best, best_sse = k, two
    if best is None or n * math.log(whole / max(best_sse, floor)) <= PENALTY * math.log(n):
        return None
    return best


def _reference(points: list[Point], min_points: int, min_span_s: float) -> tuple[int, int | None]:
    sums = _Sums(points)
    start = 0
    for _ in range(MAX_SPLITS):
        k = _split(points, sums, start, min_points, min_span_s)
        if k is None:
            break
        start = k
    return start, _split(points, sums, start, FRESH_POINTS, 0.0)


@st.composite
def series(draw: st.DrawFn) -> list[Point]:
    """Disk-usage-like samples: regimes of a pace, now and then a drop, a step, noise."""
    t, y = 0.0, draw(st.floats(0.0, 0.9))
    out: list[Point] = []
    for _ in range(draw(st.integers(0, 6))):  # regimes
        pace = draw(st.sampled_from([0.0, 1e-5, 2e-4, 3e-3, -5e-4]))
        noise = draw(st.sampled_from([0.0, 1e-5, 5e-4]))
        step = draw(st.sampled_from([1.0, 5.0, 30.0]))
        stair = draw(st.sampled_from([1, 1, 3]))  # a reading kept for a few polls
        y -= draw(st.sampled_from([0.0, 0.0, 0.05]))  # a retention run
        for i in range(draw(st.integers(1, 40))):
            t += step
            if i % stair == 0:
                y += pace * step * stair
            out.append((t, y + draw(st.floats(-1.0, 1.0)) * noise))
    return out


@settings(max_examples=300, deadline=None)
@given(
    series(),
    st.sampled_from([2, 3, 5, 8]),
    st.sampled_from([0.0, 10.0, 60.0]),
)
def test_newest_regime_is_the_plain_searchs(
    points: list[Point], min_points: int, min_span_s: float
) -> None:
    got = newest_regime(points, min_points=min_points, min_span_s=min_span_s)
    assert got == _reference(points, min_points, min_span_s)


def test_a_fill_after_a_flat_disk_is_its_own_regime_and_a_fresh_one_is_seen() -> None:
    flat = [(5.0 * i, 0.3) for i in range(40)]
    fill = [(200.0 + 5.0 * i, 0.3 + 2e-3 * i) for i in range(1, 30)]
    assert newest_regime(flat + fill, min_points=5, min_span_s=60.0) == (40, None)
    faster = [(345.0 + 5.0 * i, fill[-1][1] + 2e-2 * i) for i in range(1, 4)]
    start, fresh = newest_regime(flat + fill + faster, min_points=5, min_span_s=60.0)
    assert start >= 40 and fresh == len(flat + fill)  # the first faster sample


def test_a_regime_has_min_points_samples_and_min_span_and_a_fresh_change_fresh_points() -> None:
    """Across rises of 1 to 8 samples after a flat disk: the newest regime never has fewer
    than ``min_points`` samples nor ``min_span_s`` seconds; a change seen is at least
    FRESH_POINTS samples old; a steep rise is seen, as one or the other, from 3 samples."""
    flat = [(5.0 * i, 0.3) for i in range(40)]
    for length in range(1, 9):
        points = flat + [(200.0 + 5.0 * i, 0.3 + 1e-2 * i) for i in range(1, length + 1)]
        last = points[-1][0]
        for min_points in (2, 3, 5, 8):
            for span in (0.0, 10.0, 30.0):
                start, fresh = newest_regime(points, min_points=min_points, min_span_s=span)
                if start:
                    assert len(points) - start >= min_points, (length, min_points, start)
                    assert last - points[start][0] >= span, (length, span, start)
                if fresh is not None:
                    assert len(points) - fresh >= FRESH_POINTS, (length, fresh)
                if length >= FRESH_POINTS:
                    assert start >= 38 or fresh is not None, (length, min_points, span)
