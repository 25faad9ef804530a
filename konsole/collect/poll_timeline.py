"""Poll times that never go back: each poll is stamped once, before it is judged.

The cluster session (or a command with its own poller) stamps every snapshot through one
:class:`Stamper` before its :class:`~konsole.model.poll.Judge` sees it, so every face (the
history, the console, ``serve``) holds the same stamped snapshot. The recorder floors the
:class:`Timeline` with the newest poll of the file it writes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from konsole.model.snapshot import ClusterSnapshot
from konsole.model.timefmt import to_ms

__all__ = ["Stamper", "Timeline"]


class Timeline:
    """Poll times that never go back, whatever the wall clock does.

    A poll taken at or before the last stamp (the wall clock moved back) is stamped at the
    last stamp plus the monotonic time since it (at least 1 ms), so the order, the intervals
    between polls and thus rates stay right; the wall clock is used again as soon as it is
    ahead of the last stamp.
    """

    def __init__(self, monotonic: Callable[[], float]) -> None:
        self._monotonic = monotonic
        self._last_ms: int | None = None
        self._last_mono = 0.0

    def floor(self, at_ms: int | None) -> None:
        """Stamp after ``at_ms`` too (the newest poll of the file being written)."""
        if at_ms is not None and (self._last_ms is None or at_ms > self._last_ms):
            self._last_ms, self._last_mono = at_ms, self._monotonic()

    def stamp(self, at_ms: int) -> int:
        mono = self._monotonic()
        if self._last_ms is not None and at_ms <= self._last_ms:
            at_ms = self._last_ms + max(1, round((mono - self._last_mono) * 1000))
        self._last_ms, self._last_mono = at_ms, mono
        return at_ms

    def now_ms(self, wall_ms: int) -> int:
        """The present on this timeline: the wall clock unless it is behind the last stamp."""
        if self._last_ms is None or wall_ms > self._last_ms:
            return wall_ms
        return self._last_ms + round((self._monotonic() - self._last_mono) * 1000)


class Stamper:
    """Stamps polls on a :class:`Timeline`; says once when the wall clock moved back."""

    def __init__(self, timeline: Timeline, say: Callable[[str], None]) -> None:
        self.timeline = timeline
        self._say = say
        self._behind = False

    def stamp(self, snapshot: ClusterSnapshot) -> ClusterSnapshot:
        taken = to_ms(snapshot.taken_at)
        at_ms = self.timeline.stamp(taken)
        behind, self._behind = self._behind, at_ms != taken
        if at_ms == taken:
            return snapshot
        if not behind:
            self._say(
                f"the wall clock moved back {(at_ms - taken) / 1000:.3f} s: poll times go on "
                "from the last one at the monotonic clock's pace until it is ahead again"
            )
        return replace(snapshot, taken_at=at_ms / 1000)
