"""What changed between two snapshots, as a closed set of grouped events.

Pure: :func:`diff` compares two snapshots; :func:`advance` does the same and also carries
an immutable :class:`EventState` from one poll to the next, which the events that need
more than two snapshots use (ingest_stalled after N quiet polls, coordinator_failover's
gap, write rejections that stop, the last good snapshot to compare with after failed
polls). ``diff(previous, current)`` is ``advance`` from a state built out of ``previous``
alone, so it cannot see a stall yet.

One detector per concern, each a function of its own module that takes its typed slice
of the state (when it needs one), the snapshots it compares and the config, and returns
its events and its new slice (a frozen dataclass): the poll (:mod:`.poll`), coordinators
(:mod:`.coordinators`), tablet servers (:mod:`.servers`), leaders and placement
(:mod:`.leaders`), the catalog (:mod:`.tables`), ingest (:mod:`.ingest`), writes and disk
(:mod:`.disks`), the write-lock forecast (:mod:`.capacity`), KV pressure (:mod:`.kv`),
replication (:mod:`.replication`), storage tiers (:mod:`.storage`) and health
(:mod:`.health_change`). :class:`EventState` is made of those slices; :func:`advance`
runs the detectors in one fixed order, the order of the events. Offline buckets, replicas
offline and under-replication are :mod:`konsole.model.placement`'s figures.

Events are grouped by cause and subject, with a count and a few samples: a tablet server
leaving with 500 leaders gives server_left, one leaders_moved, one replicas_offline, one
under_replicated (and bucket_offline for leaders that found no new home), not one event
per bucket. The set of kinds is closed (:class:`EventKind`, persisted by the history);
docs/events-and-health.md describes each one.
"""

from __future__ import annotations

from konsole.model.events.base import (
    CLUSTER,
    Event,
    EventConfig,
    EventKind,
    Severity,
    Subject,
)
from konsole.model.events.disks import MAX_GONE_LOCKED
from konsole.model.events.state import EventState, advance, diff

__all__ = [
    "CLUSTER",
    "MAX_GONE_LOCKED",
    "Event",
    "EventConfig",
    "EventKind",
    "EventState",
    "Severity",
    "Subject",
    "advance",
    "diff",
]
