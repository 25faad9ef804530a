"""The tablet servers konsole knows of, and which of them are gone (pure).

Metadata lists only the tablet servers that are alive: when one dies, the coordinator
drops it once its ZooKeeper session ends (about 10 s), and from then on a poll that does
not remember it cannot tell it ever existed. A server that held no replicas (an empty
cluster, a newly added server, one drained earlier) would then die unseen. So konsole
remembers the servers it knows, in a :class:`KnownServers` value the poller carries from
poll to poll and stamps on every snapshot:

- **seen**: alive in a poll of this process;
- **history**: alive in a recorded poll (the history's server rows of the cluster's
  latest epoch), unless an operator retired it after;
- **profile**: named by the profile's ``expected_tablet_servers``.

A known server that metadata no longer lists is **gone** (:meth:`KnownServers.gone`) until
it returns (it is alive again in metadata), is retired (``konsole admin server retire ID``:
:meth:`KnownServers.retire` forgets what was seen of it up to that moment), or the
profile's grace passes (``server_gone_grace_s`` seconds since it was last seen alive; 0,
the default, keeps it until it is retired). A server the profile expects stays expected:
the profile is the operator's word, and only editing it retires such a server.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fluss_proto.model import ClusterView

__all__ = ["GoneServer", "KnownBy", "KnownServer", "KnownServers"]


class KnownBy(StrEnum):
    """How konsole came to know a tablet server."""

    SEEN = "seen"
    HISTORY = "history"
    PROFILE = "profile"


@dataclass(frozen=True, slots=True)
class KnownServer:
    """One tablet server konsole knows, and when it was last seen alive."""

    node_id: int
    by: KnownBy
    #: Wall-clock seconds of the last poll that listed it alive (None: never seen, only
    #: expected by the profile).
    alive_at: float | None = None
    #: ``host:port`` as metadata last listed it (None: not known).
    address: str | None = None


@dataclass(frozen=True, slots=True)
class GoneServer:
    """A known tablet server that the poll's metadata does not list."""

    node_id: int
    #: How it is known: the freshest sighting's way, or the profile when never seen.
    by: KnownBy
    alive_at: float | None
    address: str | None
    #: The profile that expects it (None: the profile does not name it).
    expected_by: str | None


@dataclass(frozen=True, slots=True)
class KnownServers:
    """What konsole remembers of a cluster's tablet servers. Immutable: each change is a
    new value (the poller keeps the newest and stamps it on each snapshot)."""

    #: The remembered sightings, one per node id, by node id.
    sightings: tuple[KnownServer, ...] = ()
    #: Node ids the profile expects (``expected_tablet_servers``).
    expected: frozenset[int] = frozenset()
    #: The profile that says so (named in the finding).
    profile: str | None = None
    #: Seconds after its last sighting a gone server is forgotten; 0: never (until retired).
    grace_s: float = 0.0
    #: Whether a poll of this process listed a tablet server yet (the recalled sightings
    #: were checked against it: :meth:`seen`).
    checked: bool = False
    _by_id: Mapping[int, KnownServer] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if self.grace_s < 0:
            raise ValueError(f"server_gone_grace_s must be 0 or more, not {self.grace_s!r}")
        object.__setattr__(self, "_by_id", {s.node_id: s for s in self.sightings})

    @classmethod
    def of_profile(
        cls, profile: str | None, expected: Iterable[int] = (), grace_s: float = 0.0
    ) -> KnownServers:
        """Nothing seen yet; the profile's expected servers and grace."""
        return cls((), frozenset(expected), profile, grace_s)

    def get(self, node_id: int) -> KnownServer | None:
        return self._by_id.get(node_id)

    @property
    def node_ids(self) -> frozenset[int]:
        """Every server known: seen, recalled or expected."""
        return frozenset(self._by_id) | self.expected

    # ------------------------------------------------------------------ learning

    def seen(self, view: ClusterView, at: float) -> KnownServers:
        """The servers ``view`` lists alive, seen at ``at`` (a poll's ``taken_at``).

        The first view that lists a tablet server checks the history's sightings: when none
        of them is alive in it at the same address, the history is of another cluster (a
        local cluster started again, a file kept from an old one), and they are dropped."""
        alive = [
            KnownServer(s.node_id, KnownBy.SEEN, at, f"{s.host}:{s.port}")
            for s in view.tablet_servers
        ]
        base = self
        if not self.checked and alive:
            recalled = {(s.node_id, s.address) for s in self.sightings if s.by is KnownBy.HISTORY}
            if recalled and not recalled & {(s.node_id, s.address) for s in alive}:
                kept = tuple(s for s in self.sightings if s.by is not KnownBy.HISTORY)
                base = replace(self, sightings=kept)
            base = replace(base, checked=True)
        return base._merged(alive)

    def recall(
        self, sightings: Iterable[KnownServer], retired: Mapping[int, float]
    ) -> KnownServers:
        """Add a history's sightings (``by`` HISTORY), except a server ``retired`` (node id
        -> when) at or after it was last seen alive."""
        return self._merged(
            s
            for s in sightings
            if s.alive_at is not None and s.alive_at > retired.get(s.node_id, float("-inf"))
        )

    def retire(self, node_id: int, at: float) -> KnownServers:
        """Forget what was seen of ``node_id`` up to ``at`` (an operator retired it then); a
        later sighting (the id back in metadata) makes it known again."""
        kept = self._by_id.get(node_id)
        if kept is None or (kept.alive_at is not None and kept.alive_at > at):
            return self
        return replace(self, sightings=tuple(s for s in self.sightings if s.node_id != node_id))

    def _merged(self, found: Iterable[KnownServer]) -> KnownServers:
        by_id = dict(self._by_id)
        changed = False
        for s in found:
            old = by_id.get(s.node_id)
            newer = old is None or (s.alive_at or 0.0) >= (old.alive_at or 0.0)
            if newer and old != s:
                by_id[s.node_id] = s
                changed = True
        if not changed:
            return self
        return replace(self, sightings=tuple(by_id[k] for k in sorted(by_id)))

    # ------------------------------------------------------------------ judging

    def gone(self, view: ClusterView, at: float) -> tuple[GoneServer, ...]:
        """The known servers ``view`` (polled at ``at``) does not list alive, by node id.
        A remembered server whose grace passed is not gone but forgotten; an expected one
        is gone until it is alive again."""
        alive = {s.node_id for s in view.tablet_servers}
        out = []
        for node_id in sorted(self.node_ids - alive):
            sighting = self._by_id.get(node_id)
            expected = node_id in self.expected
            if not expected:
                assert sighting is not None  # known: seen, recalled or expected
                last = sighting.alive_at
                if self.grace_s > 0 and last is not None and at - last > self.grace_s:
                    continue
            out.append(
                GoneServer(
                    node_id,
                    sighting.by if sighting is not None else KnownBy.PROFILE,
                    sighting.alive_at if sighting is not None else None,
                    sighting.address if sighting is not None else None,
                    (self.profile or "the profile") if expected else None,
                )
            )
        return tuple(out)
