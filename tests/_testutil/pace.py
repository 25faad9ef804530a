"""A steady pace for the capacity tests' fills: how much a tick owes, never a sprint.

The fills used to make up everything owed since their start, up to eight ticks at a time.
On a loaded machine (acknowledgements late for seconds) that is a slow stretch, then a
faster pace for as long as the debt lasts, bounded by the acknowledgements: a new regime of
many polls, which the forecast rightly follows, while the lock still comes on the steady
schedule. The test that judges the ETA against a steady fill then fails (CI, 2026-12-07:
predicted 27.7 s, real 41.4 s; rehearsal r9: 23.3 s against 39.6 s; replaying a recorded
fill with 8 s at a third of the pace and then 1.7x until caught up gives 30 s against 40).
So a tick owes its own share and at most :data:`CATCH_UP` more: a late acknowledgement is
made up, a longer stall is not (the fill resumes its pace and the lock comes that much
later, which the test measures as the real time).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

__all__ = ["CATCH_UP", "Pace"]

#: The most a tick writes beyond its own share, in ticks' worth.
CATCH_UP: Final = 1


@dataclass
class Pace:
    """``per_s`` units a second from ``started``, asked tick by tick (``tick_s`` apart)."""

    per_s: float
    tick_s: float
    started: float
    done: int = field(default=0, init=False)

    def owed(self, now: float) -> int:
        """Units to write now (at least one); the debt beyond :data:`CATCH_UP` ticks is
        forgiven, so what comes after a stall is the pace, not a sprint."""
        per_tick = max(1, round(self.per_s * self.tick_s))
        due = round(self.per_s * (now - self.started)) + per_tick - self.done
        cap = (1 + CATCH_UP) * per_tick
        if due > cap:
            self.done += due - cap  # forgiven: counted as written, never written
            due = cap
        count = max(1, due)
        self.done += count
        return count
