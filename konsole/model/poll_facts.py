"""What one good poll says, derived once as the poll is judged.

The placement (alive servers, leaders and replicas per server, offline and under-replicated
buckets), the replication figures, every tablet server's headroom and the tables behind in
a storage tier are read by the health rules, the event detectors and every face. They are
made once, here, when the judge takes a good poll, and travel with it
(:class:`konsole.model.poll.JudgedPoll`): no consumer derives its own copy.
"""

from __future__ import annotations

from dataclasses import dataclass

from konsole.model.headroom import ServerHeadroom, capacity_view
from konsole.model.placement import Placement, Replication, placement, replication
from konsole.model.snapshot import ClusterSnapshot
from konsole.model.storage import StorageLimits, StorageTrouble, trouble
from konsole.model.thresholds import HealthThresholds

__all__ = ["PollFacts", "facts_of"]


@dataclass(frozen=True, slots=True)
class PollFacts:
    """The facts of one good poll."""

    placement: Placement
    #: Replication figures: the placement's, or the servers' own reports when worse.
    replication: Replication
    #: Every tablet server's headroom, by id (without growth drivers: the rows per second
    #: that the Capacity screen adds, :func:`konsole.model.headroom.with_drivers`).
    capacity: tuple[ServerHeadroom, ...]
    #: The tables behind in a tier as of the poll's storage part, under the rules' limits
    #: (none without a storage part).
    storage: StorageTrouble


def facts_of(snapshot: ClusterSnapshot, rules: HealthThresholds) -> PollFacts | None:
    """The facts of ``snapshot`` (None for a failed poll: it has no view to derive from);
    ``rules``: the limits the storage judgement reads (a stall, a stale KV snapshot)."""
    if not snapshot.ok or snapshot.view is None:
        return None
    where = placement(snapshot.view)
    return PollFacts(
        where,
        replication(snapshot, where),
        capacity_view(snapshot),
        trouble(snapshot.storage, StorageLimits.of(rules)),
    )
