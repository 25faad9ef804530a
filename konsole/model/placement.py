"""Placement facts: alive servers, offline and under-replicated buckets, computed once.

Every face (the overview, the tables screens, ``check``, ``watch``'s events, health, the
history) reads these functions, so the same poll gives the same numbers everywhere. The
definitions (also in docs/events-and-health.md):

- **alive**: a tablet server listed in the poll's metadata.
- **offline bucket**: no leader, or a leader that is not alive.
- **under-replicated bucket** (from placement): a replica placed on a server that is not
  alive. The client protocol carries no ISR, so this is what metadata alone can tell.
- **replicas offline**: per server that is not alive, the replicas placed on it.

Beside placement, the servers report what metadata cannot show (:func:`replication`):

- GetClusterHealth (1.0 line) counts bucket leaders that are not active and replicas that
  are not in sync, cluster-wide;
- each tablet server's ``underReplicated`` metric counts the under-replicated buckets **it
  leads** (buckets, not replicas; a bucket whose leader is gone is counted by nobody).

The cluster-wide figures take the larger of what placement shows and what the servers
report, each in its own unit: buckets with buckets, replicas with replicas. Per-table and
per-bucket figures come from placement only (no server reports them per table).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from fluss_proto.model import BucketView, ClusterView
from konsole.model.snapshot import ClusterSnapshot

__all__ = [
    "Placement",
    "Replication",
    "TablePlacement",
    "alive_servers",
    "is_offline",
    "is_under_replicated",
    "placement",
    "replication",
]


def alive_servers(view: ClusterView) -> frozenset[int]:
    """Tablet servers alive per the poll's metadata."""
    return frozenset(s.node_id for s in view.tablet_servers)


def is_offline(bucket: BucketView, alive: frozenset[int]) -> bool:
    """No leader, or a leader that is not among the alive tablet servers."""
    return bucket.leader_id is None or bucket.leader_id not in alive


def is_under_replicated(bucket: BucketView, alive: frozenset[int]) -> bool:
    """Some replica is placed on a server that is not alive."""
    return any(r not in alive for r in bucket.replica_ids)


@dataclass(frozen=True, slots=True)
class TablePlacement:
    """One table's buckets (all partitions) by placement."""

    buckets: int = 0
    offline: int = 0
    under_replicated: int = 0


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one poll's buckets live; one pass over the buckets makes it."""

    alive: frozenset[int]
    buckets: int
    #: Buckets without an alive leader, in the poll's order.
    offline: tuple[BucketView, ...]
    #: Buckets with a replica on a server that is not alive, in the poll's order.
    under_replicated: tuple[BucketView, ...]
    #: node id -> buckets it leads (any node metadata names, alive or not).
    leaders: Mapping[int, int]
    #: node id -> replicas placed on it.
    replicas: Mapping[int, int]
    #: node id (not alive) -> replicas placed on it, and the buckets they belong to.
    replicas_offline: Mapping[int, tuple[BucketView, ...]]
    #: table id -> its counts.
    tables: Mapping[int, TablePlacement]

    @property
    def replicas_offline_count(self) -> int:
        return sum(len(b) for b in self.replicas_offline.values())

    def table(self, table_id: int | None) -> TablePlacement:
        """The counts of one table (zeros for an unknown or bucket-less table)."""
        return self.tables.get(table_id if table_id is not None else -1, TablePlacement())


def placement(view: ClusterView, buckets: Iterable[BucketView] | None = None) -> Placement:
    """Placement facts of ``view`` (or of ``buckets`` judged against ``view``'s servers)."""
    alive = alive_servers(view)
    total = 0
    offline: list[BucketView] = []
    under: list[BucketView] = []
    leaders: dict[int, int] = {}
    replicas: dict[int, int] = {}
    dead: dict[int, list[BucketView]] = {}
    tables: dict[int, list[int]] = {}
    for b in view.buckets if buckets is None else buckets:
        total += 1
        counts = tables.setdefault(b.table_id, [0, 0, 0])
        counts[0] += 1
        if b.leader_id is not None:
            leaders[b.leader_id] = leaders.get(b.leader_id, 0) + 1
        if b.leader_id is None or b.leader_id not in alive:
            offline.append(b)
            counts[1] += 1
        lost = False
        for r in b.replica_ids:
            replicas[r] = replicas.get(r, 0) + 1
            if r not in alive:
                dead.setdefault(r, []).append(b)
                lost = True
        if lost:
            under.append(b)
            counts[2] += 1
    return Placement(
        alive=alive,
        buckets=total,
        offline=tuple(offline),
        under_replicated=tuple(under),
        leaders=MappingProxyType(leaders),
        replicas=MappingProxyType(replicas),
        replicas_offline=MappingProxyType({k: tuple(v) for k, v in sorted(dead.items())}),
        tables=MappingProxyType({k: TablePlacement(*v) for k, v in tables.items()}),
    )


@dataclass(frozen=True, slots=True)
class Replication:
    """Cluster-wide replication figures of one poll: placement and the servers' reports."""

    #: Buckets without an active leader: placement's, or GetClusterHealth's inactive
    #: leaders when it reports more.
    offline_buckets: int
    #: Under-replicated buckets: placement's, or the sum of the servers' ``underReplicated``
    #: (buckets they lead) when that is more.
    under_replicated_buckets: int
    #: Replicas out of sync: those on servers that are not alive, or GetClusterHealth's
    #: replicas minus in-sync replicas when that is more.
    out_of_sync_replicas: int
    #: tablet-server subject -> its ``underReplicated`` metric, for servers that export it.
    reported: Mapping[str, int]
    placement: Placement

    @property
    def healthy(self) -> bool:
        return not (self.offline_buckets or self.under_replicated_buckets)


def replication(snapshot: ClusterSnapshot, facts: Placement) -> Replication:
    """The replication figures of a good poll whose placement is ``facts``."""
    offline = len(facts.offline)
    out_of_sync = facts.replicas_offline_count
    health = snapshot.health
    if health is not None:
        offline = max(offline, health.num_leader_replicas - health.active_leader_replicas)
        out_of_sync = max(out_of_sync, health.num_replicas - health.in_sync_replicas)
    reported = {
        m.subject: m.under_replicated
        for m in snapshot.metrics
        if m.role == "tablet" and m.under_replicated is not None
    }
    under = max(len(facts.under_replicated), sum(reported.values()))
    return Replication(
        offline_buckets=offline,
        under_replicated_buckets=under,
        out_of_sync_replicas=out_of_sync,
        reported=MappingProxyType(dict(sorted(reported.items()))),
        placement=facts,
    )
