"""What the console shows at one moment: an immutable :class:`ConsoleState`.

Every screen renders from a ``ConsoleState`` and nothing else about the cluster, so a
recorded moment (time travel) and a live poll look the same to a screen except for
:attr:`ConsoleState.historic`. The state carries its own clock (``now``): ages and "last
poll" texts never read the wall clock, which keeps the screen snapshots deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

# Types only: the console paints its first frame before any model module is imported.
if TYPE_CHECKING:
    from konsole.model.events import Event
    from konsole.model.health import Health
    from konsole.model.snapshot import ClusterSnapshot

__all__ = ["MAX_EVENTS", "ConsoleState", "HistoryMode", "HistoryStatus"]

#: Events kept in a state (newest last); the Events screen reads older ones from history.
MAX_EVENTS = 500


class HistoryMode(StrEnum):
    #: The console polls and writes every poll into the history file.
    RECORDING = "recording"
    #: A ``konsole record`` holds the file: the console reads what it writes instead.
    FOLLOWING = "following"
    #: No history (cannot be written, or not asked for): live only.
    OFF = "off"


@dataclass(frozen=True, slots=True)
class HistoryStatus:
    mode: HistoryMode = HistoryMode.OFF
    path: Path | None = None
    #: Why the history is off or not being written right now (secret-free).
    reason: str | None = None
    #: The file holds another cluster's polls before this moment (epoch seconds).
    other_until: float | None = None
    #: False when the polls before ``other_until`` carry no identity (a history kept by an
    #: older konsole): they may be this cluster's, nothing tells.
    other_proven: bool = True
    #: How the console came to record, said in the status bar (the recorder it followed
    #: is gone: it polls and writes the file now).
    note: str | None = None


@dataclass(frozen=True, slots=True)
class ConsoleState:
    #: The profile's name (the cluster being shown).
    profile: str
    #: When this state was made (epoch seconds): ages are measured from it.
    now: float
    #: The latest poll, failed ones included (None before the first poll ends).
    snapshot: ClusterSnapshot | None = None
    #: The latest successful poll: what the panels show (greyed when ``stale``).
    last_ok: ClusterSnapshot | None = None
    #: The successful poll before ``last_ok``: rates come from the two.
    previous_ok: ClusterSnapshot | None = None
    health: Health | None = None
    #: Recent events, oldest first, at most MAX_EVENTS.
    events: tuple[Event, ...] = ()
    #: Set in time travel: the moment shown (the snapshot is the last poll at or before it).
    as_of: float | None = None
    history: HistoryStatus = field(default_factory=HistoryStatus)

    # ------------------------------------------------------------------ derived

    @property
    def historic(self) -> bool:
        return self.as_of is not None

    @property
    def connecting(self) -> bool:
        """No poll has ended yet."""
        return self.snapshot is None

    @property
    def reachable(self) -> bool:
        return self.snapshot is not None and self.snapshot.ok

    @property
    def stale(self) -> bool:
        """The latest poll failed: what is shown is older than the latest attempt."""
        return self.snapshot is not None and not self.snapshot.ok

    @property
    def data_age(self) -> float | None:
        """Seconds since the poll the panels show; None without one."""
        if self.last_ok is None:
            return None
        return max(0.0, self.now - self.last_ok.taken_at)

    def with_events(self, new: tuple[Event, ...]) -> ConsoleState:
        return replace(self, events=(self.events + new)[-MAX_EVENTS:])
