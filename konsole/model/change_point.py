"""Where a series' newest regime begins: the pace changes of a disk-usage series. Pure, stdlib.

A disk fills at one pace, then another: a backfill starts, a producer is scaled up, a
retention run frees a block of space, a fill stops. A line fitted through the whole window
averages the regimes, so its forecast is late exactly when the pace has just risen. This
finds the newest regime, the samples since the last change of pace, so that the forecast
fits only those:

- **spikes out first** (:func:`drop_spikes`): a sample far from the median of its four
  neighbours (a Hampel filter) is one bad reading, not a change; a step of the server's
  staircase (three equal samples or more) is kept whole;
- **binary segmentation**: the best single split of the samples into two least-squares
  lines (each with its own level, so a retention drop is a split too) is kept when it
  explains the samples better than one line by more than a BIC-like penalty
  (``n log(SSE one / SSE two) > PENALTY log n``); then the tail is searched again, at most
  :data:`MAX_SPLITS` times. Prefix sums make each search one pass over the samples.

The newest regime is never shorter than ``min_points`` samples nor ``min_span_s`` seconds
(two of the server's check intervals: a staircase's last step is not a regime).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from itertools import accumulate
from typing import Final

__all__ = ["FRESH_POINTS", "MAX_SPLITS", "PENALTY", "drop_spikes", "newest_regime"]

Point = tuple[float, float]

#: The BIC-like weight of a split: three more parameters (a level, a slope, the break)
#: would be 3; at 4 to 8 noise and a jittered staircase still split now and then (the
#: replay set, bench/forecast.py), and a split on noise makes a short regime's ETA late.
PENALTY: Final = 12.0
#: Fewest samples after a change that are enough to see it (not to fit it).
FRESH_POINTS: Final = 3
#: Most splits searched for (each on the tail of the last).
MAX_SPLITS: Final = 6
#: The least residual variance a fit is credited with: a ratio's resolution (1e-4 of a
#: disk), so that two exact lines are not "infinitely" better than one near-exact line.
NOISE_FLOOR: Final = 1e-4**2
#: A spike is this many robust deviations from its neighbours' median.
SPIKE_DEVIATIONS: Final = 6.0


def _median(values: Sequence[float]) -> float:
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def drop_spikes(points: Sequence[Point]) -> list[Point]:
    """``points`` without the samples that stand alone far from their neighbours."""
    n = len(points)
    if n < 5:
        return list(points)
    ys = [y for _, y in points]
    # the two newest (and oldest) have no neighbours on one side: a spike there cannot be
    # told from a change, so they are kept (a change needs several samples to be fitted)
    dev = [abs(ys[i] - sorted(ys[i - 2 : i + 3])[2]) for i in range(2, n - 2)]  # 5's median
    # the scale is the usual spread, at least the usual step between two readings (on a
    # steady rise a spike shifts its neighbours' median by a step)
    steps = [abs(b - a) for a, b in itertools.pairwise(ys)]
    scale = max(1.4826 * _median(dev), _median(steps), 1e-4)
    kept = [p for p, d in zip(points[2:], dev, strict=False) if d <= SPIKE_DEVIATIONS * scale]
    return [*points[:2], *kept, *points[n - 2 :]]


class _Sums:
    """Prefix sums of t, y, t², ty, y² (t from the first sample: no loss of precision)."""

    def __init__(self, points: Sequence[Point]) -> None:
        t0 = points[0][0] if points else 0.0
        ts = [t - t0 for t, _ in points]
        ys = [y for _, y in points]
        self.st = list(accumulate(ts, initial=0.0))
        self.sy = list(accumulate(ys, initial=0.0))
        self.stt = list(accumulate([t * t for t in ts], initial=0.0))
        self.sty = list(accumulate([t * y for t, y in zip(ts, ys, strict=True)], initial=0.0))
        self.syy = list(accumulate([y * y for y in ys], initial=0.0))

    def sse(self, i: int, j: int) -> float:
        """The least-squares line's squared residuals over samples ``[i, j)``."""
        n = j - i
        if n < 3:
            return 0.0
        st, sy = self.st[j] - self.st[i], self.sy[j] - self.sy[i]
        ctt = self.stt[j] - self.stt[i] - st * st / n
        cty = self.sty[j] - self.sty[i] - st * sy / n
        cyy = self.syy[j] - self.syy[i] - sy * sy / n
        fit = cty * cty / ctt if ctt > 0 else 0.0
        return max(cyy - fit, 0.0)


def _best_splits(
    points: Sequence[Point], sums: _Sums, start: int, min_points: int, min_span_s: float
) -> tuple[int | None, int | None]:
    """Where a significant change of pace begins in ``points[start:]``: the first with a
    tail of ``min_points`` samples and ``min_span_s`` seconds (a regime), the second with
    a tail of :data:`FRESH_POINTS` (seen, too fresh to be one). One pass serves both: the
    regime's candidates are a prefix of the fresh ones, and both are judged against the
    same single line."""
    end = len(points)
    n = end - start
    least = min(min_points, FRESH_POINTS)
    if n < least + 3:
        return None, None
    floor = n * NOISE_FLOOR
    whole = max(sums.sse(start, end), floor)
    best, best_sse = None, whole
    fresh, fresh_sse = None, whole
    regime_open = n >= min_points + 3
    last_t = points[-1][0]
    st, sy, stt, sty, syy = sums.st, sums.sy, sums.stt, sums.sty, sums.syy
    # sums.sse inlined and unrolled for both sides (the same arithmetic, so the same
    # figures): this loop is most of a forecast's cost
    s_t, s_y, s_tt, s_ty, s_yy = st[start], sy[start], stt[start], sty[start], syy[start]
    e_t, e_y, e_tt, e_ty, e_yy = st[end], sy[end], stt[end], sty[end], syy[end]
    for k in range(start + 3, end - least + 1):
        if regime_open and (k > end - min_points or last_t - points[k][0] < min_span_s):
            regime_open = False  # later splits leave a tail shorter still
        k_t, k_y, k_tt, k_ty, k_yy = st[k], sy[k], stt[k], sty[k], syy[k]
        n_ = k - start  # the left side: at least 3 samples
        a, b = k_t - s_t, k_y - s_y
        ctt = k_tt - s_tt - a * a / n_
        cty = k_ty - s_ty - a * b / n_
        part = k_yy - s_yy - b * b / n_ - (cty * cty / ctt if ctt > 0 else 0.0)
        two = part if part > 0 else 0.0
        n_ = end - k
        if n_ >= 3:
            a, b = e_t - k_t, e_y - k_y
            ctt = e_tt - k_tt - a * a / n_
            cty = e_ty - k_ty - a * b / n_
            part = e_yy - k_yy - b * b / n_ - (cty * cty / ctt if ctt > 0 else 0.0)
            two += part if part > 0 else 0.0
        if regime_open and two < best_sse:
            best, best_sse = k, two
        if two < fresh_sse and k <= end - FRESH_POINTS:
            fresh, fresh_sse = k, two
    bar = PENALTY * math.log(n)

    def significant(k: int | None, sse: float) -> int | None:
        return k if k is not None and n * math.log(whole / max(sse, floor)) > bar else None

    return significant(best, best_sse), significant(fresh, fresh_sse)


def newest_regime(
    points: Sequence[Point], *, min_points: int, min_span_s: float = 0.0
) -> tuple[int, int | None]:
    """Where the newest regime begins in ``points`` (time order; 0: one regime), and where
    a change too fresh to be a regime yet begins (fewer than ``min_points`` samples or
    ``min_span_s`` since it; None: none seen)."""
    sums = _Sums(points)
    start = 0
    fresh: int | None = None
    for _ in range(MAX_SPLITS):  # bounded
        k, fresh = _best_splits(points, sums, start, min_points, min_span_s)
        if k is None:
            return start, fresh
        start = k
    # the last split searched was kept: the tail after it is searched for a fresh change
    return start, _best_splits(points, sums, start, min_points, min_span_s)[1]
