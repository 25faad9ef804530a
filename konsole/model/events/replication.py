"""Replication (ISR): under_replicated when the cluster goes from fully replicated to not,
replicas_in_sync when it is fully replicated again.

The figures are :func:`konsole.model.placement.replication`'s, each in its own unit:
under-replicated **buckets** (placement, or the servers' ``underReplicated`` metric, which
counts buckets a server leads) and **replicas** out of sync (on servers that are gone, or
GetClusterHealth's). "Under-replicated" = either is above 0; "in sync" = both are 0. The
event's count is the buckets when there are some, else the replicas.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from konsole.model.events.base import (
    CLUSTER,
    Emitter,
    Event,
    EventConfig,
    EventKind,
    Severity,
    plural,
)
from konsole.model.placement import Replication
from konsole.model.snapshot import ClusterSnapshot

__all__ = ["ReplicationState", "detect_replication"]


@dataclass(frozen=True, slots=True)
class ReplicationState:
    """The figures of the last poll with a view; None before the first one."""

    buckets: int | None = None
    replicas: int | None = None

    @property
    def known(self) -> bool:
        return self.buckets is not None and self.replicas is not None

    @property
    def degraded(self) -> bool:
        return bool(self.buckets or self.replicas)


def detect_replication(
    state: ReplicationState,
    current: ClusterSnapshot,
    config: EventConfig,
    figures: Replication,
) -> tuple[list[Event], ReplicationState]:
    """The change of "fully replicated" from ``state`` to ``current`` (a good poll;
    ``figures``: its replication, derived once as the poll is judged)."""
    out = Emitter(current, config)
    now = ReplicationState(figures.under_replicated_buckets, figures.out_of_sync_replicas)
    if not state.known or state.degraded == now.degraded:
        return out.events, now
    details = _details(figures)
    if now.degraded:
        buckets, replicas = figures.under_replicated_buckets, figures.out_of_sync_replicas
        out.emit(
            EventKind.UNDER_REPLICATED,
            Severity.WARNING,
            CLUSTER,
            _summary(buckets, replicas),
            details,
            count=buckets or replicas,
            samples=details["servers"],  # the servers that report some
        )
    else:
        out.emit(
            EventKind.REPLICAS_IN_SYNC,
            Severity.INFO,
            CLUSTER,
            "every replica is in sync again",
            details,
        )
    return out.events, now


def _details(figures: Replication) -> dict[str, Any]:
    return {
        "buckets": figures.under_replicated_buckets,
        "replicas": figures.out_of_sync_replicas,
        "servers": {k: v for k, v in figures.reported.items() if v},
        "replicas_offline": figures.placement.replicas_offline_count,
    }


def _summary(buckets: int, replicas: int) -> str:
    """Each non-zero figure in its own unit."""
    parts = [plural(buckets, "under-replicated bucket")] if buckets else []
    if replicas:
        parts.append(f"{plural(replicas, 'replica')} out of sync")
    return ", ".join(parts)
