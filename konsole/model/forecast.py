"""When a rising series reaches a level: a robust linear fit over a window. Pure, stdlib.

Like Prometheus's ``predict_linear`` (a line through the window's samples, extended), but
robust: the slope is the Theil–Sen estimator (the median of the slopes between every pair
of samples), so one odd sample (a scrape at a bad moment, a file deleted and written again)
moves it little, and a server's staircase of samples (it measures its disk every
``check-interval``, konsole reads it every poll) does not bias it. The level *now* is the
fitted line's value at the last sample (the median of the residuals), not the last sample
itself, for the same reason.

Confidence is stated, not implied: the slope's two-sided confidence interval is Sen's
(the pairwise slopes ranked around the median by the normal approximation of Kendall's S,
with its correction for tied values), at :data:`CONFIDENCE` unless asked otherwise. A
forecast is *confident* when the whole interval is rising (its low end above 0); the
rules fire on confident forecasts only, and each carries its soonest and latest time.

Why no library: numpy (present through pyarrow and matplotlib) has no Theil–Sen and is not
a model dependency (``konsole.model`` imports the standard library only, and the console's
start-up counts every import); scipy (``scipy.stats.theilslopes``) is not a dependency.
The window is thinned to at most :data:`MAX_FIT_POINTS` samples, so a fit costs at most
~500 pairwise slopes (bench/poll.py prints what the capacity part adds to a poll).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

__all__ = [
    "CONFIDENCE",
    "MAX_FIT_POINTS",
    "METHOD",
    "Fit",
    "Forecast",
    "forecast_crossing",
    "theil_sen",
    "thin",
]

#: Two-sided confidence of the slope's interval.
CONFIDENCE: Final = 0.90
#: Most samples a fit reads (evenly thinned, the newest always kept): 496 pairwise slopes,
#: about 0.15 ms; the interval of 32 samples is already narrow on a steady fill.
MAX_FIT_POINTS: Final = 32
#: Fewest samples a fit needs.
MIN_POINTS: Final = 5
METHOD: Final = "theil-sen"

Point = tuple[float, float]
#: The standard normal quantile of 0.95: :data:`CONFIDENCE`'s two-sided z. Kept as a number
#: so that the model does not import ``statistics`` (~25 ms at start-up) for it.
_Z_90: Final = 1.6448536269514722


def _z(confidence: float) -> float:
    if confidence == CONFIDENCE:
        return _Z_90
    from statistics import NormalDist  # another confidence: rare, so paid only then

    return NormalDist().inv_cdf(0.5 + confidence / 2)


def _median(values: Sequence[float]) -> float:
    """The median of ``values``, sorted already."""
    n = len(values)
    mid = n // 2
    return values[mid] if n % 2 else (values[mid - 1] + values[mid]) / 2


@dataclass(frozen=True, slots=True)
class Fit:
    """A Theil–Sen line: ``level + slope * (t - at)``."""

    #: Units per second.
    slope: float
    #: The slope's confidence interval (``confidence``, two-sided).
    slope_low: float
    slope_high: float
    #: The fitted value at ``at`` (the newest sample's time).
    level: float
    at: float
    points: int
    #: Seconds from the oldest sample fitted to the newest.
    span_s: float
    confidence: float = CONFIDENCE


def thin(points: Sequence[Point], most: int = MAX_FIT_POINTS) -> list[Point]:
    """At most ``most`` of ``points`` (time order kept), evenly spread, the newest kept."""
    n = len(points)
    if n <= most:
        return list(points)
    step = (n - 1) / (most - 1)
    return [points[round(i * step)] for i in range(most)]


def _tie_term(values: Sequence[float]) -> float:
    return sum(t * (t - 1) * (2 * t + 5) for t in Counter(values).values() if t > 1)


def theil_sen(points: Sequence[Point], confidence: float = CONFIDENCE) -> Fit | None:
    """The Theil–Sen fit of ``points`` ((time s, value), any order); None with fewer than
    :data:`MIN_POINTS` samples or fewer than two distinct times."""
    return _fit(thin(sorted(points)), confidence)


def _fit(pts: Sequence[Point], confidence: float) -> Fit | None:
    """:func:`theil_sen` of time-ordered samples, thinned already."""
    n = len(pts)
    if n < MIN_POINTS:
        return None
    slopes = sorted(
        (y2 - y1) / (t2 - t1)
        for i, (t1, y1) in enumerate(pts)
        for t2, y2 in pts[i + 1 :]
        if t2 > t1
    )
    if not slopes:
        return None
    slope = _median(slopes)
    at = pts[-1][0]
    level = _median(sorted(y - slope * (t - at) for t, y in pts))
    # Sen's interval: Var(S) of Kendall's S, less the tied values' share.
    ys = [y for _, y in pts]
    var_s = (n * (n - 1) * (2 * n + 5) - _tie_term(ys)) / 18
    z = _z(confidence)
    c = z * math.sqrt(max(var_s, 0.0))
    m = len(slopes)  # ranks rounded outward: the interval errs wide, never narrow
    low = max(0, math.floor((m - c) / 2) - 1)
    high = min(m - 1, math.ceil((m + c) / 2))
    return Fit(
        slope=slope,
        slope_low=slopes[low],
        slope_high=slopes[high],
        level=level,
        at=at,
        points=n,
        span_s=at - pts[0][0],
        confidence=confidence,
    )


@dataclass(frozen=True, slots=True)
class Forecast:
    """When a series reaches ``level``, from a fit over its last ``window_s`` seconds.

    ``eta_s`` is counted from ``at`` (the newest sample); None with ``why`` when there is no
    answer: too little history, not rising, or already there (``eta_s`` 0 then).
    """

    #: The level it heads for (a write-limit ratio), and the fitted value now.
    level: float
    value: float | None
    at: float
    window_s: float
    #: Seconds until the level at the fitted slope; its soonest (the interval's steepest
    #: slope) and latest (its flattest; None: the interval includes not rising at all).
    eta_s: float | None = None
    eta_soonest_s: float | None = None
    eta_latest_s: float | None = None
    #: Units per second and the interval; None without a fit.
    slope: float | None = None
    slope_low: float | None = None
    slope_high: float | None = None
    points: int = 0
    span_s: float = 0.0
    confidence: float = CONFIDENCE
    method: str = METHOD
    #: Why there is no ETA (None when there is one).
    why: str | None = None
    #: The whole confidence interval rises toward the level, or the level is reached: the
    #: rules judge confident forecasts only (kept, not derived, so that a forecast read back
    #: from the history judges as it did live).
    confident: bool = False

    def eta_from(self, now: float) -> float | None:
        """Seconds until the level counted from ``now`` (never below 0)."""
        if self.eta_s is None:
            return None
        return max(0.0, self.eta_s - (now - self.at))

    def as_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "value": self.value,
            "at": self.at,
            "eta_s": self.eta_s,
            "eta_soonest_s": self.eta_soonest_s,
            "eta_latest_s": self.eta_latest_s,
            "confident": self.confident,
            "slope_per_s": self.slope,
            "slope_low_per_s": self.slope_low,
            "slope_high_per_s": self.slope_high,
            "window_s": self.window_s,
            "points": self.points,
            "span_s": self.span_s,
            "confidence": self.confidence,
            "method": self.method,
            "why": self.why,
        }


def forecast_crossing(
    points: Sequence[Point],
    level: float,
    *,
    now: float,
    window_s: float,
    min_span_s: float = 0.0,
    confidence: float = CONFIDENCE,
) -> Forecast:
    """When the series ``points`` (in time order) reaches ``level``, fitted over
    ``[now - window_s, now]`` (samples with a value only; at least :data:`MIN_POINTS`
    spanning ``min_span_s``). The window is found by bisection and thinned before anything
    else reads it, so a long window costs no more than a short one."""
    lo = bisect_left(points, (now - window_s, -math.inf))
    hi = bisect_right(points, (now, math.inf))
    recent = [(t, y) for t, y in thin(points[lo:hi]) if math.isfinite(y)]
    last = recent[-1][0] if recent else now
    empty = Forecast(level, None, last, window_s, confidence=confidence)
    fit = _fit(recent, confidence)
    if fit is None:
        why = f"needs {MIN_POINTS} samples in the window ({len(recent)} so far)"
        return replace(empty, why=why, points=len(recent))
    base = Forecast(
        level,
        fit.level,
        fit.at,
        window_s,
        slope=fit.slope,
        slope_low=fit.slope_low,
        slope_high=fit.slope_high,
        points=fit.points,
        span_s=fit.span_s,
        confidence=confidence,
    )
    if fit.span_s < min_span_s:
        return replace(base, why=f"needs {min_span_s:g}s of history ({fit.span_s:.0f}s so far)")
    if fit.level >= level:
        return replace(base, eta_s=0.0, eta_soonest_s=0.0, eta_latest_s=0.0, confident=True)
    if fit.slope <= 0:
        return replace(base, why="not rising")
    left = level - fit.level
    latest = left / fit.slope_low if fit.slope_low > 0 else None
    soonest = left / fit.slope_high if fit.slope_high > 0 else None
    return replace(
        base,
        eta_s=left / fit.slope,
        eta_soonest_s=soonest,
        eta_latest_s=latest,
        confident=fit.slope_low > 0,
    )
