"""A steady pace for the capacity tests' fills: what a write owes, never a sprint.

The fills used to keep a schedule and make up what they owed on it over the writes that
followed (back to back in r9, up to eight ticks a write since). On a loaded machine
(acknowledgements late for seconds) that is a slow stretch, then a faster pace for as long
as the debt lasts: a new regime of many polls, which the forecast rightly follows, while the
lock still comes on the steady schedule, and the test that judges the ETA against a steady
fill fails on its own fill (replayed: 8 s at a third of the pace, then 1.7x until caught up,
fires 40 % early). That was one suspect for the early forecasts of r9 (23.3 s against 39.6
s) and of CI on 2026-12-07 (27.7 s against 41.4 s); the other, found after this change in
r23, was the forecast itself believing a server's late checks to be a faster pace
(konsole/model/forecast.py).

So a write owes what the schedule owes, and a debt of more than :data:`MOST_TICKS` ticks
is forgiven, never carried: slow acknowledgements make fewer, larger writes at the same
pace; a stall is made up by the one write after it (a step, which the forecast reads as
the same pace: tests/unit/test_pace.py), and no run of writes is faster than the pace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

__all__ = ["MOST_TICKS", "Pace"]

#: The most one write makes up, in ticks (a longer stall is forgiven beyond it): bounds a
#: write's memory (10 s of the capacity test's 2 MB/s).
MOST_TICKS: Final = 40


@dataclass
class Pace:
    """``per_s`` units a second from ``started``, asked write by write (``tick_s`` apart
    when nothing is late)."""

    per_s: float
    tick_s: float
    started: float
    done: int = field(default=0, init=False)
    next_at: float = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        self.next_at = self.started

    def owed(self, now: float) -> int:
        """Units to write now (at least one): the schedule's, one tick ahead; a debt beyond
        :data:`MOST_TICKS` ticks is forgiven, so no later write makes it up."""
        per_tick = max(1, round(self.per_s * self.tick_s))
        due = round(self.per_s * (now - self.started)) + per_tick - self.done
        most = MOST_TICKS * per_tick
        if due > most:
            self.done += due - most  # forgiven: counted as written, never written
            due = most
        count = max(1, due)
        self.done += count
        return count

    def wait_s(self, now: float) -> float:
        """Seconds until the next write: a tick after the last, at once when late (a stall
        moves the ticks on rather than bunching them)."""
        self.next_at = max(self.next_at + self.tick_s, now)
        return max(0.0, self.next_at - now)
