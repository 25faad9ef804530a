"""The capacity fills' pace (tests/_testutil/pace.py): steady, late ticks made up, no sprint."""

from __future__ import annotations

from tests._testutil.pace import CATCH_UP, Pace


def test_on_time_ticks_each_write_their_share() -> None:
    pace = Pace(per_s=400, tick_s=0.25, started=100.0)
    assert [pace.owed(100.0 + 0.25 * n) for n in range(8)] == [100] * 8


def test_a_late_tick_is_made_up_by_the_next() -> None:
    pace = Pace(per_s=400, tick_s=0.25, started=0.0)
    assert pace.owed(0.0) == 100
    assert pace.owed(0.45) == 180  # 0.2 s late: its 80 units and the next tick's 100
    assert pace.owed(0.75) == 120  # back on the schedule
    assert pace.owed(1.0) == 100


def test_a_stall_is_followed_by_the_pace_not_a_sprint() -> None:
    """The CI failure of 2026-12-07: after a stall the old fill wrote up to eight ticks at
    a time until caught up, a faster pace that the forecast followed."""
    pace = Pace(per_s=400, tick_s=0.25, started=0.0)
    assert pace.owed(0.0) == 100
    after = [pace.owed(5.0 + 0.25 * n) for n in range(6)]  # 19 ticks missed
    assert after[0] == (1 + CATCH_UP) * 100
    assert after[1:] == [100] * 5


def test_a_pace_below_one_unit_a_tick_still_writes() -> None:
    pace = Pace(per_s=1, tick_s=0.1, started=0.0)
    assert [pace.owed(0.1 * n) for n in range(3)] == [1, 1, 1]
