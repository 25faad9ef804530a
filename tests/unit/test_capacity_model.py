"""The capacity model: the robust forecast on synthetic series with known answers, headroom
per server and data dir, the rules and the forecast's events."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import pytest

from fluss_proto.model import HealthStatus
from konsole.model.capacity import (
    CapacityPart,
    ConfigSource,
    DirUsage,
    ServerCapacity,
    WriteLimits,
)
from konsole.model.events import EventConfig, EventKind, EventState, advance
from konsole.model.forecast import (
    DENSE_POINTS,
    MAX_FIT_POINTS,
    Forecast,
    forecast_crossing,
    theil_sen,
    thin,
)
from konsole.model.headroom import (
    capacity_view,
    headroom_level,
    least_headroom,
    lock_outlook,
    soonest_lock,
)
from konsole.model.health import HealthRules
from konsole.model.snapshot import ClusterSnapshot
from tests._testutil.builders import snap, tm, view
from tests._testutil.judging import health_of, judged

T0 = 1_000_000.0
LIMITS = WriteLimits(0.85, 0.80, ConfigSource.DEFAULT, ConfigSource.DEFAULT)


def line(slope: float, start: float, n: int, *, every: float = 1.0) -> list[tuple[float, float]]:
    return [(T0 + i * every, start + slope * i * every) for i in range(n)]


# =========================================================================== the fit


def test_a_straight_line_gives_its_slope_and_the_time_to_the_level_exactly() -> None:
    pts = line(0.002, 0.10, 30)
    f = forecast_crossing(pts, 0.5, now=T0 + 29, window_s=60)
    assert f.slope == pytest.approx(0.002)
    # at t=29 the value is 0.158; (0.5 - 0.158) / 0.002 = 171 s
    assert f.value == pytest.approx(0.158)
    assert f.eta_s == pytest.approx(171.0)
    # an exact line: the interval is the sampling's own, the lock seen up to one poll later
    assert f.eta_soonest_s == pytest.approx(171.0) and f.eta_latest_s == pytest.approx(172.0)
    assert f.confident and f.why is None
    assert f.points == 30 and f.span_s == 29 and f.method == "theil-sen"


def test_one_wild_sample_barely_moves_the_robust_fit_where_least_squares_would() -> None:
    pts = line(0.001, 0.20, 40)
    t, y = pts[37]
    pts[37] = (t, y + 0.4)  # a bad reading near the end, where it weighs most
    f = forecast_crossing(pts, 0.6, now=pts[-1][0], window_s=100)
    truth = (0.6 - (0.20 + 0.001 * 39)) / 0.001
    assert f.eta_s == pytest.approx(truth, rel=0.02)
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    ols = sum((x - mx) * (v - my) for x, v in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )
    assert abs(ols - 0.001) / 0.001 > 0.1  # what a plain fit would have made of it


def test_a_staircase_of_server_samples_read_more_often_still_gives_the_slope() -> None:
    """The server measures every 10 s, konsole reads every second: steps of 10 equal values."""
    slope = 0.0005
    pts = [(T0 + i, 0.1 + slope * (i - i % 10)) for i in range(120)]
    f = forecast_crossing(pts, 0.5, now=T0 + 119, window_s=120)
    truth = (0.5 - (0.1 + slope * 119)) / slope
    assert f.eta_s == pytest.approx(truth, rel=0.05)
    assert f.confident


def test_noise_puts_the_truth_inside_the_stated_interval_about_as_often_as_stated() -> None:
    rng = random.Random(7)
    inside = 0
    runs = 300
    for _ in range(runs):
        pts = [(T0 + i, 0.3 + 0.001 * i + rng.gauss(0, 0.004)) for i in range(40)]
        fit = theil_sen(pts)
        assert fit is not None
        inside += fit.slope_low <= 0.001 <= fit.slope_high
    # 90% stated; Sen's interval (rounded outward) is close to it or a little wider
    assert 0.85 <= inside / runs <= 0.99


def test_a_flat_or_falling_series_has_no_eta_and_says_why() -> None:
    flat = forecast_crossing(line(0.0, 0.4, 20), 0.85, now=T0 + 19, window_s=60)
    assert flat.eta_s is None and flat.why == "not rising" and not flat.confident
    falling = forecast_crossing(line(-0.01, 0.8, 20), 0.85, now=T0 + 19, window_s=60)
    assert falling.eta_s is None and not falling.confident


def test_a_series_past_the_level_is_there_now() -> None:
    f = forecast_crossing(line(0.01, 0.9, 10), 0.85, now=T0 + 9, window_s=60)
    assert f.eta_s == 0.0 and f.confident and f.eta_from(T0 + 100) == 0.0


def test_noise_around_a_flat_line_is_not_a_confident_rise() -> None:
    rng = random.Random(3)
    pts = [(T0 + i, 0.5 + rng.gauss(0, 0.01)) for i in range(30)]
    f = forecast_crossing(pts, 0.85, now=T0 + 29, window_s=60)
    assert not f.confident


@pytest.mark.parametrize(
    ("n", "span", "why"),
    [
        (3, 0.0, "needs 5 samples in the window (3 so far)"),
        (8, 60.0, "needs 60s of history (7s so far)"),
    ],
)
def test_too_little_history_gives_no_forecast(n: int, span: float, why: str) -> None:
    f = forecast_crossing(line(0.01, 0.1, n), 0.85, now=T0 + n - 1, window_s=600, min_span_s=span)
    assert f.eta_s is None and f.why == why


def test_only_the_window_is_fitted() -> None:
    """A fast rise long ago and a slow one in the window: the window's slope counts."""
    old = [(T0 + i, 0.01 * i) for i in range(50)]
    recent = [(T0 + 100 + i, 0.5 + 0.0001 * i) for i in range(30)]
    f = forecast_crossing(old + recent, 0.85, now=T0 + 129, window_s=40)
    assert f.slope == pytest.approx(0.0001) and f.points == 30


def test_nan_samples_are_left_out() -> None:
    pts = line(0.001, 0.1, 20)
    pts[5] = (pts[5][0], math.nan)
    f = forecast_crossing(pts, 0.5, now=pts[-1][0], window_s=60)
    assert f.points == 19 and f.slope == pytest.approx(0.001)


def test_a_long_window_is_thinned_keeping_the_newest_sample() -> None:
    pts = line(0.0001, 0.1, 1000)
    kept = thin(pts)
    assert len(kept) == MAX_FIT_POINTS and kept[-1] == pts[-1] and kept[0] == pts[0]
    f = forecast_crossing(pts, 0.5, now=pts[-1][0], window_s=2000)
    # the newest DENSE_POINTS as they are, the older thinned to as many; the slope's own
    # fit reads MAX_FIT_POINTS of them
    assert f.points == 2 * DENSE_POINTS and f.slope == pytest.approx(0.0001)


def test_eta_counts_from_the_poll_not_the_newest_sample() -> None:
    f = forecast_crossing(line(0.01, 0.1, 10), 0.5, now=T0 + 9, window_s=60)
    assert f.eta_s == pytest.approx(31.0)
    assert f.eta_from(T0 + 19) == pytest.approx(21.0)


# =========================================================================== headroom


def part(
    server: str = "0",
    *,
    limits: WriteLimits | None = LIMITS,
    dirs: tuple[DirUsage, ...] = (),
    forecast: Forecast | None = None,
    at: float = T0,
) -> CapacityPart:
    facts = ServerCapacity(server, limits, None if limits else "no limits", dirs, forecast, at)
    return CapacityPart(at, MappingProxyType({server: facts}))


def cap_snap(
    usage: float | None,
    *,
    locked: bool | None = False,
    capacity: CapacityPart | None = None,
    t: float = T0,
    seq: int = 1,
) -> ClusterSnapshot:
    metrics = [tm(0, disk_usage_ratio=usage, disk_write_locked=locked), tm(1), tm(2)]
    return replace(snap(view(), metrics=metrics, t=t, seq=seq), capacity=capacity)


def test_headroom_is_the_servers_own_limit_minus_its_usage_per_server_and_dir() -> None:
    gib = 1 << 30
    dirs = (
        DirUsage("/d0", total_bytes=10 * gib, free_bytes=6 * gib),  # 40% used
        DirUsage("/d1", total_bytes=10 * gib, free_bytes=2 * gib),  # 80% used
    )
    servers = capacity_view(cap_snap(0.8, capacity=part(dirs=dirs)))
    s0 = servers[0]
    assert [s.server_id for s in servers] == ["0", "1", "2"]
    assert s0.disk.headroom_ratio == pytest.approx(0.05)
    assert [d.headroom_ratio for d in s0.dirs] == pytest.approx([0.45, 0.05])
    assert s0.dirs[1].headroom_bytes == round(0.85 * 10 * gib) - 8 * gib
    assert s0.dirs[0].used_bytes == 4 * gib and s0.dirs[0].used_ratio == pytest.approx(0.4)
    assert s0.limits is LIMITS and s0.locked is False
    assert least_headroom(servers) == pytest.approx(0.05)


def test_a_server_without_the_metric_or_limits_reads_unknown_never_zero() -> None:
    s = capacity_view(cap_snap(None, locked=None, capacity=part(limits=None)))[0]
    assert s.disk.used_ratio is None and s.disk.headroom_ratio is None
    assert "0.9.1" in (s.disk.why or "")
    assert s.locked is None and s.tightest is None
    no_part = capacity_view(cap_snap(0.5))[0]
    assert no_part.disk.headroom_ratio is None  # limits never read: no headroom
    assert no_part.limits_why == "the capacity collector did not run"
    assert least_headroom(capacity_view(cap_snap(None, locked=None))) is None


@pytest.mark.parametrize(
    ("usage", "locked", "level"),
    [(0.50, False, 0), (0.76, False, 1), (0.83, False, 2), (0.90, True, 0), (None, None, 0)],
)
def test_headroom_levels(usage: float | None, locked: bool | None, level: int) -> None:
    s = capacity_view(cap_snap(usage, locked=locked, capacity=part()))[0]
    assert headroom_level(s, HealthRules())[0] == level


def rising(eta_s: float, *, at: float = T0, level: float = 0.85) -> Forecast:
    """A confident forecast whose level is ``eta_s`` seconds away from ``at``."""
    slope = 0.0001
    start = level - slope * eta_s
    pts = [(at - 20 + i, start - slope * (20 - i)) for i in range(21)]
    return forecast_crossing(pts, level, now=at, window_s=60)


def test_lock_outlook_takes_the_soonest_confident_forecast_of_the_server_and_its_dirs() -> None:
    dirs = (DirUsage("/d0", 100, 50, forecast=rising(5000)),)
    s = capacity_view(cap_snap(0.5, capacity=part(dirs=dirs, forecast=rising(20000))))[0]
    outlook = lock_outlook(s, HealthRules(), T0)
    assert outlook.level == 1 and outlook.figure is not None and outlook.figure.dir == "/d0"
    assert outlook.eta_s == pytest.approx(5000)
    later = lock_outlook(s, HealthRules(), T0 + 4500)  # 500 s left: within the hour
    assert later.level == 2 and later.eta_s == pytest.approx(500)
    assert soonest_lock([s], T0) == pytest.approx(5000)


def test_no_outlook_while_locked_unknown_or_without_limits() -> None:
    for snapshot in (
        cap_snap(0.9, locked=True, capacity=part(forecast=rising(100))),
        cap_snap(0.5, locked=None, capacity=part(forecast=rising(100))),
        cap_snap(0.5, capacity=part(limits=None, forecast=rising(100))),
    ):
        assert lock_outlook(capacity_view(snapshot)[0], HealthRules(), T0).level == 0


# =========================================================================== rules


def findings(s: ClusterSnapshot, **rules: Any) -> list[tuple[str, str, HealthStatus]]:
    h = health_of(s, HealthRules(require_metrics=False, **rules))
    return [
        (f.rule, f.subject, f.status)
        for f in h.findings
        if f.rule in ("disk_headroom", "write_lock_forecast", "disk_write_locked")
    ]


def test_rules_disk_headroom_and_write_lock_forecast() -> None:
    s = cap_snap(0.78, capacity=part(forecast=rising(1800)))
    assert findings(s) == [
        ("disk_headroom", "tablet-server 0", HealthStatus.YELLOW),
        ("write_lock_forecast", "tablet-server 0", HealthStatus.RED),
    ]
    h = health_of(s, HealthRules(require_metrics=False))
    reason = next(f.reason for f in h.findings if f.rule == "write_lock_forecast")
    assert reason.startswith("writes locked in about 30m00s, at 85% used (90% interval")
    assert "theil-sen fit of 21 samples over 20s" in reason
    # the thresholds are the profile's
    assert findings(s, write_lock_critical_s=600, disk_headroom_warn=0.05) == [
        ("write_lock_forecast", "tablet-server 0", HealthStatus.YELLOW)
    ]


def test_a_locked_server_is_the_lock_rule_alone() -> None:
    s = cap_snap(0.86, locked=True, capacity=part(forecast=rising(10)))
    assert findings(s) == [("disk_write_locked", "tablet-server 0", HealthStatus.RED)]


def test_unknown_capacity_raises_nothing() -> None:
    s = cap_snap(None, locked=None, capacity=part(limits=None))
    assert findings(s) == []
    assert health_of(s, HealthRules(require_metrics=False)).status is HealthStatus.GREEN


# =========================================================================== events


def run(*snapshots: ClusterSnapshot, **rules: Any) -> list[list[tuple[str, str]]]:
    config = EventConfig(rules=HealthRules(require_metrics=False, **rules))
    state = EventState()
    out = []
    for s in snapshots:
        events, state = advance(state, s, config=config)
        out.append(
            [
                (e.kind.value, e.severity.value)
                for e in events
                if e.kind.value.startswith(("write_lock", "write_rejected", "writes_accepted"))
            ]
        )
    return out


def test_forecast_events_rise_hold_through_the_lock_and_clear_once_space_is_freed() -> None:
    def at(i: int, usage: float, eta: float | None, locked: bool = False) -> ClusterSnapshot:
        t = T0 + 10 * i
        f = rising(eta, at=t) if eta is not None else None
        return cap_snap(usage, locked=locked, capacity=part(forecast=f, at=t), t=t, seq=i + 1)

    got = run(
        at(0, 0.50, 9000),  # first poll: never reported
        at(1, 0.55, 7000),  # beyond the warning horizon (6000 s here)
        at(2, 0.60, 5000),
        at(3, 0.70, 3000),  # within 1 h: critical
        at(4, 0.86, None, locked=True),  # the lock: write_rejected; the forecast holds
        at(5, 0.86, None, locked=True),
        at(6, 0.40, None, locked=False),  # space freed: lock off, forecast gone
        write_lock_warn_s=6000,
    )
    assert got == [
        [],
        [],
        [("write_lock_forecast", "warning")],
        [("write_lock_forecast", "critical")],
        [("write_rejected", "critical")],
        [],
        [("writes_accepted", "info"), ("write_lock_forecast_cleared", "info")],
    ]


def test_forecast_level_stays_while_the_servers_metrics_are_missing() -> None:
    t1, t2, t3 = T0, T0 + 10, T0 + 20
    first = cap_snap(0.5, capacity=part(forecast=rising(9000, at=t1), at=t1), t=t1)
    warned = cap_snap(0.6, capacity=part(forecast=rising(5000, at=t2), at=t2), t=t2, seq=2)
    blind = replace(
        snap(view(), metrics=[tm(1), tm(2)], t=t3, seq=3), capacity=part(forecast=None, at=t3)
    )
    got = run(first, warned, blind, write_lock_warn_s=6000)
    assert got == [[], [("write_lock_forecast", "warning")], []]


def test_capacity_part_unset_is_quiet() -> None:
    assert run(cap_snap(0.5), cap_snap(0.9, t=T0 + 5, seq=2)) == [[], []]


def test_forecast_event_details_name_the_eta_and_the_fit() -> None:
    config = EventConfig(rules=HealthRules(require_metrics=False))
    state = EventState()
    _, state = advance(state, cap_snap(0.5, capacity=part(forecast=rising(99999))), config=config)
    s2 = cap_snap(0.6, capacity=part(forecast=rising(1200, at=T0 + 5)), t=T0 + 5, seq=2)
    events, _ = advance(state, s2, config=config)
    (e,) = [e for e in events if e.kind is EventKind.WRITE_LOCK_FORECAST]
    assert e.details["eta_s"] == pytest.approx(1200)
    assert e.details["forecast"]["method"] == "theil-sen"
    assert e.details["write_limit_ratio"] == 0.85
    assert e.message.startswith("tablet-server 0: writes locked in about 20m00s")


# =========================================================================== requests


def test_request_figures_say_what_fails_and_why_with_the_lock_on() -> None:
    from konsole.model.requests import explain_line, server_requests

    m = tm(
        0,
        disk_write_locked=True,
        requests=MappingProxyType({"produceLog": (2.5, 163.7), "metadata": (1.0, 0.0)}),
        request_latency_ms=MappingProxyType({"produceLog": 11.4, "metadata": None}),
        request_queue_size=0,
    )
    (s,) = server_requests(snap(view(tablets=[0]), metrics=[m]))
    produce = next(r for r in s.requests if r.request == "produceLog")
    assert produce.failure_ratio == pytest.approx(163.7 / 166.2)
    assert [r.request for r in s.failing] == ["produceLog"]
    assert s.slowest is produce
    assert "write lock is engaged" in (s.why_writes_fail() or "")
    unlocked = replace(s, write_locked=False)
    assert (
        unlocked.why_writes_fail() == "produceLog fails at 163.7/s (errors answered by the server)"
    )
    assert replace(s, write_locked=None, requests=()).why_writes_fail() is None
    # the disk monitor's own lines (DiskUsageMonitor.java:107-121)
    engaged = "TabletServer 0 disk usage reached 50.13% (limit 50.00%); rejecting writes until"
    released = "TabletServer 0 disk usage dropped to 39.90% (recover threshold 40.00%); resuming"
    assert explain_line(engaged) == "the data disk write lock engaged"
    assert explain_line(released + " writes.") == "the data disk write lock released"
    assert explain_line("Created log for bucket") is None


def test_no_answers_is_no_failure_ratio() -> None:
    from konsole.model.requests import RequestFigures

    assert RequestFigures("putKv", 0.0, 0.0, None).failure_ratio is None
    assert RequestFigures("putKv", None, 1.0, None).failure_ratio is None


def test_rejection_evidence_pairs_the_monitors_lines_with_the_figures() -> None:
    from konsole.collect.logs.evidence import LogView, rejection_evidence
    from konsole.model.logs import parse_lines

    lines = parse_lines(
        [
            "2026-12-02 10:00:00,100 INFO  ReplicaManager [main] - Created log for bucket",
            "2026-12-02 10:00:01,200 WARN  DiskUsageMonitor [disk-usage-monitor] - TabletServer"
            " 0 disk usage reached 50.13% (limit 50.00%); rejecting writes until usage reaches"
            " or drops below 40.00%.",
        ]
    )
    found = rejection_evidence(LogView(tuple(lines), "live"), {"request_error_rate": [0, 163.7]})
    assert [(line.level, why) for line, why in found.explaining] == [
        ("WARN", "the data disk write lock engaged")
    ]
    assert found.series["request_error_rate"][-1] == 163.7
    assert rejection_evidence(None, {}).explaining == ()


# =========================================================================== check


def test_check_measures_the_least_headroom_and_the_soonest_lock() -> None:
    from konsole.model.check import measure

    dirs = (DirUsage("/d0", 1000, 300),)  # 70% used: 15 points below 85%
    s = cap_snap(0.6, capacity=part(dirs=dirs, forecast=rising(5000)))
    m = measure(judged(s))
    assert m["disk_headroom_min"].value == pytest.approx(0.15)
    assert m["write_lock_eta"].value == pytest.approx(5000)
    assert m["kv_pressure_max"].value is None
    assert "1.0" in (m["kv_pressure_max"].why_unknown or "")
    none = measure(judged(cap_snap(0.6)))
    assert none["disk_headroom_min"].value is None
    assert none["disk_headroom_min"].why_unknown == "the servers' write limits were not read"
    flat = measure(judged(cap_snap(0.6, capacity=part())))
    assert flat["disk_headroom_min"].value == pytest.approx(0.25)
    assert "no confident forecast" in (flat["write_lock_eta"].why_unknown or "")


def test_a_write_rejection_is_shown_with_the_request_series() -> None:
    from konsole.collect.logs.evidence import REQUEST_SERIES, SERIES, series_for

    assert series_for("write_rejected") == REQUEST_SERIES
    assert series_for("write_lock_forecast") == REQUEST_SERIES
    assert series_for("server_left") == SERIES
    assert "request_rate" in dict(REQUEST_SERIES)
