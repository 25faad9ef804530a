"""The state carried between polls, composed of each detector's typed slice, and the one
step that runs the detectors in their fixed order."""

from __future__ import annotations

from dataclasses import dataclass, field

from fluss_proto.model import TableView
from konsole.model.events.base import Event, EventConfig
from konsole.model.events.capacity import CapacityState, detect_capacity
from konsole.model.events.coordinators import CoordinatorState, detect_coordinators
from konsole.model.events.disks import DiskState, detect_disks
from konsole.model.events.health_change import detect_health
from konsole.model.events.ingest import IngestState, detect_ingest
from konsole.model.events.kv import KvState, detect_kv
from konsole.model.events.leaders import detect_leaders
from konsole.model.events.poll import PollState, detect_poll
from konsole.model.events.replication import ReplicationState, detect_replication
from konsole.model.events.servers import detect_servers
from konsole.model.events.storage import StorageState, detect_storage
from konsole.model.events.tables import detect_tables, unlisted_after
from konsole.model.events.versions import VersionState, detect_versions
from konsole.model.health import Health
from konsole.model.poll_facts import PollFacts, facts_of
from konsole.model.snapshot import ClusterSnapshot

__all__ = ["EventState", "advance", "diff"]


@dataclass(frozen=True, slots=True)
class EventState:
    """What :func:`advance` carries between polls. Immutable; bounded by the cluster."""

    previous: ClusterSnapshot | None = None
    #: The last snapshot whose poll succeeded (data diffs compare against it).
    baseline: ClusterSnapshot | None = None
    poll: PollState = field(default_factory=PollState)
    coordinators: CoordinatorState = field(default_factory=CoordinatorState)
    ingest: IngestState = field(default_factory=IngestState)
    disks: DiskState = field(default_factory=DiskState)
    kv: KvState = field(default_factory=KvState)
    replication: ReplicationState = field(default_factory=ReplicationState)
    storage: StorageState = field(default_factory=StorageState)
    capacity: CapacityState = field(default_factory=CapacityState)
    versions: VersionState = field(default_factory=VersionState)
    #: The last health (the health detector's slice).
    health: Health | None = None
    #: The facts of ``baseline`` (the last good poll), derived once as that poll was
    #: advanced: every face reads them from here, the next poll compares against them.
    facts: PollFacts | None = None
    #: Tables of databases ``baseline`` could not list, as last seen (the table detector's).
    unlisted: tuple[TableView, ...] = ()

    @classmethod
    def starting_from(
        cls, previous: ClusterSnapshot | None, config: EventConfig | None = None
    ) -> EventState:
        """The state a stream that had only seen ``previous`` would have."""
        if previous is None:
            return cls()
        return advance(cls(), previous, config=config or EventConfig())[1]


def diff(
    previous: ClusterSnapshot | None,
    current: ClusterSnapshot,
    *,
    config: EventConfig | None = None,
    state: EventState | None = None,
) -> list[Event]:
    """The events between ``previous`` and ``current`` (``state`` for a running stream)."""
    config = config or EventConfig()
    if state is None:
        state = EventState.starting_from(previous, config)
    return advance(state, current, config=config)[0]


def advance(
    state: EventState, current: ClusterSnapshot, *, config: EventConfig | None = None
) -> tuple[list[Event], EventState]:
    """The events ``current`` brings after ``state``, and the state for the next poll.

    The detectors run in a fixed order, which is the order of the events: the poll,
    coordinators, then (a successful poll with a view) servers, leaders, tables against
    the baseline, ingest, disks, the write-lock forecast, KV pressure, replication, storage
    tiers; health last.
    """
    config = config or EventConfig()
    previous, base = state.previous, state.baseline
    events, poll = detect_poll(state.poll, previous, current, config)
    coordinators = state.coordinators
    if current.ok or current.coordinators:
        found, coordinators = detect_coordinators(coordinators, previous, current, config)
        events += found
    ingest, disks, kv, replication = state.ingest, state.disks, state.kv, state.replication
    unlisted = state.unlisted
    storage, capacity, versions = state.storage, state.capacity, state.versions
    facts = facts_of(current, config.rules)
    base_facts = state.facts
    if facts is not None:
        if base is not None and base_facts is not None:
            events += detect_servers(base, current, config)
            events += detect_leaders(
                base, current, config, now=facts.placement, before=base_facts.placement
            )
            events += detect_tables(base, current, config, state.unlisted)
        found, versions = detect_versions(versions, current, config)
        events += found
        found, ingest = detect_ingest(ingest, current, config)
        events += found
        found, disks = detect_disks(disks, previous, current, config)
        events += found
        found, capacity = detect_capacity(capacity, previous, current, config, facts.capacity)
        events += found
        found, kv = detect_kv(kv, current, config)
        events += found
        found, replication = detect_replication(replication, current, config, facts.replication)
        events += found
        found, storage = detect_storage(storage, current, config, facts.storage)
        events += found
        unlisted = unlisted_after(base, state.unlisted, current)
        base = current
    found, health = detect_health(
        state.health, previous, current, config, facts, last_ok=state.baseline
    )
    events += found
    new_state = EventState(
        previous=current,
        baseline=base,
        poll=poll,
        coordinators=coordinators,
        ingest=ingest,
        disks=disks,
        kv=kv,
        replication=replication,
        storage=storage,
        capacity=capacity,
        versions=versions,
        health=health,
        facts=facts if facts is not None else base_facts,
        unlisted=unlisted,
    )
    return events, new_state
