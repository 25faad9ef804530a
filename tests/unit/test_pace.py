"""The capacity fills' pace (tests/_testutil/pace.py): a schedule kept, no sprint, and why."""

from __future__ import annotations

import math
from collections.abc import Callable

from konsole.model.forecast import forecast_crossing
from tests._testutil.pace import MOST_TICKS, Pace


def test_on_time_ticks_each_write_their_share() -> None:
    pace = Pace(per_s=400, tick_s=0.25, started=100.0)
    assert [pace.owed(100.0 + 0.25 * n) for n in range(8)] == [100] * 8


def test_late_acknowledgements_make_larger_writes_at_the_same_pace() -> None:
    pace = Pace(per_s=400, tick_s=0.25, started=0.0)
    assert pace.owed(0.0) == 100
    assert pace.owed(0.45) == 180  # 0.2 s late: its 80 units made up with the next tick's
    assert [pace.owed(1.45 + n) for n in range(3)] == [400] * 3  # a write a second


def test_a_stall_is_made_up_by_one_write_then_the_pace() -> None:
    pace = Pace(per_s=400, tick_s=0.25, started=0.0)
    assert pace.owed(0.0) == 100
    assert [pace.owed(5.0 + 0.25 * n) for n in range(4)] == [2000, 100, 100, 100]


def test_a_stall_longer_than_a_write_makes_up_is_forgiven_not_carried() -> None:
    """The old fill carried such a debt over the writes that followed, eight ticks each: a
    faster pace for as long as it lasted (a suspect for CI's failure of 2026-12-07)."""
    pace = Pace(per_s=400, tick_s=0.25, started=0.0)
    assert pace.owed(0.0) == 100
    after = [pace.owed(30.0 + 0.25 * n) for n in range(4)]
    assert after == [MOST_TICKS * 100, 100, 100, 100]


def test_writes_wait_for_their_tick_and_a_stall_moves_the_ticks_on() -> None:
    pace = Pace(per_s=400, tick_s=0.25, started=0.0)
    assert pace.wait_s(0.1) == 0.15  # the first tick after the start
    assert pace.wait_s(0.3) == 0.2
    assert pace.wait_s(3.0) == 0.0  # late: at once, and the ticks count from now
    assert pace.wait_s(3.0) == 0.25


def test_a_pace_below_one_unit_a_tick_still_writes() -> None:
    pace = Pace(per_s=1, tick_s=0.1, started=0.0)
    assert [pace.owed(0.1 * n) for n in range(3)] == [1, 1, 1]


# Why: the forecast on a fill that stalls, then steps back onto its schedule or sprints.
RATE, START, LIMIT, WARN_S = 0.0056, 0.156, 0.5, 40.0  # the live test's fill and profile
STALL_AT, STALL_S, STALL_PACE = 10.0, 8.0, 1 / 3


def _stalled(t: float) -> float:
    """Usage by the schedule, but a third of the pace in the stall."""
    if t < STALL_AT:
        return START + RATE * t
    return START + RATE * (STALL_AT + STALL_PACE * (min(t, STALL_AT + STALL_S) - STALL_AT))


def _stepped(t: float) -> float:
    """The fill now: the stall made up by one write, back on the schedule."""
    return _stalled(t) if t < STALL_AT + STALL_S else START + RATE * t


def _sprinted(t: float) -> float:
    """The old fill: the debt made up at 1.7x the pace for as long as it lasts."""
    if t < STALL_AT + STALL_S:
        return _stalled(t)
    return min(START + RATE * t, _stalled(t) + 1.7 * RATE * (t - STALL_AT - STALL_S))


def _first_forecast_error(usage: Callable[[float], float]) -> float:
    """The first warning's ETA against the truth, as the live test judges it: the server
    measures at each whole second (and locks there), konsole polls half a second later."""
    lock = next(c for c in range(200) if usage(c) >= LIMIT)
    points: list[tuple[float, float]] = []
    for n in range(120):
        now = n + 0.5
        points.append((now, usage(math.floor(now))))
        fc = forecast_crossing(points, LIMIT, now=now, window_s=20, min_span_s=8, step_s=1.0)
        if fc.confident and fc.eta_s is not None and fc.eta_s <= WARN_S:
            return (fc.eta_s - (lock - now)) / (lock - now)
    raise AssertionError("never fired")


def test_the_forecast_reads_a_stall_made_up_by_one_write_as_the_same_pace() -> None:
    assert abs(_first_forecast_error(_stepped)) <= 0.20


def test_a_sprint_after_a_stall_is_a_new_pace_that_the_forecast_follows() -> None:
    """The old fill's pattern: the forecast follows the sprint (early rather than late) and
    the lock comes on the schedule, so the live test's bar of a fifth fails on the fill."""
    assert _first_forecast_error(_sprinted) < -0.20
