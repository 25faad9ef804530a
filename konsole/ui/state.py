"""What the console shows at one moment: an immutable :class:`ConsoleState`.

Every screen renders from a ``ConsoleState`` and nothing else about the cluster, so a
recorded moment (time travel) and a live poll look the same to a screen except for
:attr:`ConsoleState.historic`. The state carries its own clock (``now``): ages and "last
poll" texts never read the wall clock, which keeps the screen snapshots deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

# The session's history status (stdlib only: the first paint does not wait for it).
from konsole.collect.history.state import HistoryMode, HistoryStatus

# Types only: the console paints its first frame before any model module is imported.
if TYPE_CHECKING:
    from konsole.model.events import Event
    from konsole.model.headroom import ServerHeadroom
    from konsole.model.health import Health
    from konsole.model.placement import Placement, Replication
    from konsole.model.poll import JudgedPoll
    from konsole.model.snapshot import ClusterSnapshot

__all__ = ["MAX_EVENTS", "ConsoleState", "HistoryMode", "HistoryStatus"]

#: Events kept in a state (newest last); the Events screen reads older ones from history.
MAX_EVENTS = 500


@dataclass(frozen=True, slots=True)
class ConsoleState:
    #: The profile's name (the cluster being shown).
    profile: str
    #: When this state was made (epoch seconds): ages are measured from it.
    now: float
    #: The latest poll as the session judged it (or as recorded, in time travel), failed
    #: ones included; None before the first poll ends.
    judged: JudgedPoll | None = None
    #: Recent events, oldest first, at most MAX_EVENTS.
    events: tuple[Event, ...] = ()
    #: Set in time travel: the moment shown (the snapshot is the last poll at or before it).
    as_of: float | None = None
    history: HistoryStatus = field(default_factory=HistoryStatus)

    # ------------------------------------------------------------------ the judged poll

    @property
    def snapshot(self) -> ClusterSnapshot | None:
        """The latest poll, failed ones included."""
        return None if self.judged is None else self.judged.snapshot

    @property
    def last_ok(self) -> ClusterSnapshot | None:
        """The latest successful poll: what the panels show (greyed when ``stale``)."""
        return None if self.judged is None else self.judged.last_ok

    @property
    def previous_ok(self) -> ClusterSnapshot | None:
        """The successful poll before ``last_ok``: rates come from the two."""
        return None if self.judged is None else self.judged.previous_ok

    @property
    def health(self) -> Health | None:
        return None if self.judged is None else self.judged.health

    @property
    def placement(self) -> Placement | None:
        """The placement of ``last_ok`` (alive servers, offline and under-replicated
        buckets, leaders and replicas per server), derived once as its poll was judged."""
        return None if self.judged is None else self.judged.placement

    @property
    def replication(self) -> Replication | None:
        """The replication figures of ``last_ok``."""
        return None if self.judged is None else self.judged.replication

    @property
    def capacity(self) -> tuple[ServerHeadroom, ...]:
        """Every tablet server's headroom at ``last_ok`` (empty before a good poll)."""
        return () if self.judged is None else self.judged.capacity

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
