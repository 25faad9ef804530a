"""When a rising series reaches a level: a robust line through its newest regime. Pure, stdlib.

Like Prometheus's ``predict_linear`` (a line through the samples, extended), but fitted to
the samples since the last change of pace only (:mod:`konsole.model.change_point`: a disk
that was flat and now fills is forecast from the fill, not from an average of both), and
robust: the slope is the Theil–Sen estimator (the median of the slopes between every pair
of samples), so one odd sample moves it little, and the level *now* is the fitted line's
value at the last sample (the median of the residuals), not the last sample itself.

Confidence is stated and measured (bench/forecast.py, docs/capacity.md): the interval comes
from the residuals about the line, widened for their correlation (a server's staircase
makes them run in sawtooth), plus what the sampling leaves open (a reading up to one check
interval old, a lock seen at the poll after its check, a lock on one noisy reading). A
forecast is *confident* when its slope is known to within :data:`MAX_SPREAD`; the rules
fire on confident forecasts only, and each carries its soonest and latest time. The ETA
errs early rather than late: a faster pace seen in a few polls brings it forward at once.

Why no library: numpy (present through pyarrow and matplotlib) has no Theil–Sen and is not
a model dependency (``konsole.model`` imports the standard library only, and the console's
start-up counts every import); scipy (``scipy.stats.theilslopes``) is not a dependency.
The window is thinned (:func:`thin_old`) and the fit reads at most :data:`MAX_FIT_POINTS`
samples (bench/poll.py prints what the capacity part adds to a poll).
"""

from __future__ import annotations

import itertools
import math
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from konsole.model.change_point import drop_spikes, newest_regime

__all__ = [
    "CONFIDENCE",
    "DENSE_POINTS",
    "MAX_FIT_POINTS",
    "METHOD",
    "Fit",
    "Forecast",
    "forecast_crossing",
    "theil_sen",
    "thin",
    "thin_old",
]

#: Two-sided confidence of the slope's interval.
CONFIDENCE: Final = 0.90
#: Most samples a fit reads (evenly thinned, the newest always kept): 496 pairwise slopes,
#: about 0.15 ms; the interval of 32 samples is already narrow on a steady fill.
MAX_FIT_POINTS: Final = 32
#: Fewest samples a fit needs.
MIN_POINTS: Final = 5
#: A forecast is confident when its slope's margin is at most this share of the slope
#: (its latest ETA within ~1.3x of the ETA): a wider one fires on a guess (the replay
#: set: at 0.5 a fill two polls old, fitted with the flat samples before it, fired 56 % late).
MAX_SPREAD: Final = 0.25
#: The least fall of the newest readings below the line that is a fall (a disk's 0.1 %).
FELL_MIN: Final = 0.001
#: Newest samples kept unthinned (:func:`thin_old`).
DENSE_POINTS: Final = 48
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
    slopes = [
        (y2 - y1) / (t2 - t1)
        for i, (t1, y1) in enumerate(pts)
        for t2, y2 in pts[i + 1 :]
        if t2 > t1
    ]
    slopes.sort()  # a list made whole, then sorted: cheaper than sorting a generator
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
    #: When the fitted regime began (the newest change of pace, or the window's start), and
    #: whether a newer change is seen that is too fresh to fit yet (its pace then brings
    #: the ETA forward when it is faster).
    since: float | None = None
    pace_changing: bool = False

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
            "since": self.since,
            "pace_changing": self.pace_changing,
        }


def _t_quantile(confidence: float, df: float) -> float:
    """Student's t quantile (two-sided ``confidence``), Cornish-Fisher from the normal's:
    within 1 % of the table from 3 degrees of freedom up."""
    z = _z(confidence)
    df = max(df, 1.0)
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df * df)


@dataclass(frozen=True, slots=True)
class _Band:
    """How far the regime's line may be off: its slope's and its level's margins."""

    slope: float
    level: float
    #: The residuals' spread: one reading's noise about the line.
    noise: float


def _band(pts: Sequence[Point], slope: float, level: float, confidence: float) -> _Band:
    """Margins at ``confidence`` from the residuals about the fitted line, widened for their
    correlation (a staircase's residuals run in sawtooth, not independently: lag-1
    autocorrelation r gives (1 + r) / (1 - r) fewer independent samples)."""
    n = len(pts)
    at = pts[-1][0]
    res = [y - (level + slope * (t - at)) for t, y in pts]
    sigma2 = sum(r * r for r in res) / max(n - 2, 1)
    num = sum(a * b for a, b in itertools.pairwise(res))
    den = sum(r * r for r in res)
    rho = min(max(num / den, 0.0), 0.9) if den > 0 else 0.0
    inflate = (1 + rho) / (1 - rho)
    mean_t = sum(t for t, _ in pts) / n
    ctt = sum((t - mean_t) ** 2 for t, _ in pts)
    q = _t_quantile(confidence, (n - 2) / inflate)
    if ctt <= 0:
        return _Band(math.inf, math.inf, math.sqrt(sigma2))
    slope_se = math.sqrt(sigma2 * inflate / ctt)
    level_se = math.sqrt(sigma2 * inflate * (1 / n + (at - mean_t) ** 2 / ctt))
    return _Band(q * slope_se, q * level_se, math.sqrt(sigma2))


def _ols_slope(pts: Sequence[Point]) -> float:
    n = len(pts)
    mt = sum(t for t, _ in pts) / n
    my = sum(y for _, y in pts) / n
    ctt = sum((t - mt) ** 2 for t, _ in pts)
    return sum((t - mt) * (y - my) for t, y in pts) / ctt if ctt > 0 else 0.0


def thin_old(points: Sequence[Point], keep: int = DENSE_POINTS) -> list[Point]:
    """The newest ``keep`` samples as they are, the older thinned to as many: a change of
    pace is seen at the poll's resolution however long the window."""
    if len(points) <= 2 * keep:
        return list(points)
    return thin(points[:-keep], keep) + list(points[-keep:])


def forecast_crossing(
    points: Sequence[Point],
    level: float,
    *,
    now: float,
    window_s: float,
    min_span_s: float = 0.0,
    confidence: float = CONFIDENCE,
    step_s: float = 0.0,
) -> Forecast:
    """When the series ``points`` (in time order) reaches ``level``, fitted over the newest
    regime (:mod:`konsole.model.change_point`) of ``[now - window_s, now]`` (samples with a
    value only; at least :data:`MIN_POINTS` in the regime, ``min_span_s`` in the window).

    ``step_s`` is the server's check interval: it measures (and locks) only then, so the
    lock comes up to one interval after the crossing, and the newest regime spans at least
    two of them (a staircase's last step is not a regime). The window is found by
    bisection and thinned before anything else reads it (:func:`thin_old`).
    """
    lo = bisect_left(points, (now - window_s, -math.inf))
    hi = bisect_right(points, (now, math.inf))
    recent = drop_spikes([(t, y) for t, y in thin_old(points[lo:hi]) if math.isfinite(y)])
    last = recent[-1][0] if recent else now
    empty = Forecast(level, None, last, window_s, confidence=confidence)
    if len(recent) < MIN_POINTS:
        why = f"needs {MIN_POINTS} samples in the window ({len(recent)} so far)"
        return replace(empty, why=why, points=len(recent))
    start, fresh = newest_regime(recent, min_points=MIN_POINTS, min_span_s=2 * step_s)
    regime = recent[start:]
    fit = _fit(thin(regime), confidence)
    if fit is None:
        why = f"needs {MIN_POINTS} samples in the window ({len(regime)} so far)"
        return replace(empty, why=why, points=len(regime))
    band = _band(regime, fit.slope, fit.level, confidence)
    slope_low, slope_high = fit.slope - band.slope, fit.slope + band.slope
    base = Forecast(
        level,
        fit.level,
        fit.at,
        window_s,
        slope=fit.slope,
        slope_low=slope_low,
        slope_high=slope_high,
        points=len(regime),
        span_s=fit.span_s,
        confidence=confidence,
        since=regime[0][0],
    )
    span = recent[-1][0] - recent[0][0]
    if span < min_span_s:
        return replace(base, why=f"needs {min_span_s:g}s of history ({span:.0f}s so far)")
    # The newest readings far below the line: space was freed (a retention run, a file
    # deleted) and the drop is not a regime yet; the old line would say "there now" (seen
    # live: a lock released by freeing space was forecast again for 4 polls).
    # Two readings are a fall; one is enough against a line that says "there now" (seen
    # live: the first poll after a release by freeing space brought the alert back).
    fell = fit.level - max(y for _, y in recent[-2 if fit.level < level else -1 :])
    lag = 2 * max(fit.slope, 0.0) * max(step_s, _poll_s(regime))  # a reading a check late
    if fell > FELL_MIN and fell > 4 * _spread(regime, fit) + lag:
        return replace(base, why="the usage fell: waiting for the new pace")
    fresh_points = recent[fresh:] if fresh is not None else None
    # A faster fresh pace is believed once its newest reading is ahead of the line by more
    # than the timing of readings explains: a check a second late, then the one after
    # (a starved server, a late poll), is a steep slope over three samples at the same
    # pace (seen live under load: a steady fill forecast 32 % early).
    ahead = _ahead(fresh_points, fit) if fresh_points is not None else 0.0
    believed = ahead > 4 * _spread(regime, fit) + lag
    return _with_eta(base, fit, band, fresh_points, believed, step_s + _poll_s(regime), step_s)


def _with_eta(
    base: Forecast,
    fit: Fit,
    band: _Band,
    fresh: Sequence[Point] | None,
    believed: bool,
    late: float,
    step_s: float,
) -> Forecast:
    """``base`` (the regime's fit ``fit``, margins ``band``) with its ETA and interval.

    ``fresh``: the samples of a change too new to be a regime (None: none), its pace
    ``believed`` when its newest reading is ahead of the line; ``late``: how long after its
    check the lock is seen (the check interval and a poll)."""
    level, slope_low, slope_high = base.level, fit.slope - band.slope, fit.slope + band.slope
    if fit.level >= level:
        return replace(base, eta_s=0.0, eta_soonest_s=0.0, eta_latest_s=0.0, confident=True)
    # The server locks on one reading at the limit, not on the line: with noisy readings
    # that comes early, so the ETA counts to one reading's noise below the limit (early
    # rather than late) and the soonest to two.
    left = level - fit.level - band.noise
    # A change too fresh to fit: if it is a faster pace, its few samples' slope brings the
    # ETA forward (early rather than late); a slower one waits to be a regime of its own.
    quick = _ols_slope(fresh) if fresh is not None and believed else 0.0
    slope = max(fit.slope, quick)
    if slope <= 0:
        return replace(base, why="not rising")
    latest = (left + band.noise + band.level) / slope_low + late if slope_low > 0 else None
    steepest = max(slope_high, quick)
    # the newest reading is up to one check old: the level now may be one step on
    reach = left - band.level - band.noise - steepest * step_s
    soonest = max(reach, 0.0) / steepest if steepest > 0 else None
    return replace(
        base,
        eta_s=max(left, 0.0) / slope,
        eta_soonest_s=soonest,
        eta_latest_s=latest,
        confident=slope_low > 0 and band.slope <= MAX_SPREAD * fit.slope,
        pace_changing=fresh is not None,
    )


def _spread(pts: Sequence[Point], fit: Fit) -> float:
    """The robust spread of ``pts``' residuals about ``fit``'s line (the median absolute
    residual as a standard deviation: the few readings already fallen do not widen it)."""
    if not pts:
        return 0.0
    return 1.4826 * _median(sorted(abs(y - (fit.level + fit.slope * (t - fit.at))) for t, y in pts))


def _ahead(pts: Sequence[Point], fit: Fit) -> float:
    """How far the newest of ``pts`` is above ``fit``'s line."""
    t, y = pts[-1]
    return y - (fit.level + fit.slope * (t - fit.at))


def _poll_s(pts: Sequence[Point]) -> float:
    """The median time between two samples."""
    gaps = sorted(b[0] - a[0] for a, b in itertools.pairwise(pts))
    return _median(gaps) if gaps else 0.0
