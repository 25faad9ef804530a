"""KV pressure: write_rejected while a table's KV backpressure rejection counters rise
(one event per table per poll, summed over its servers), writes_accepted when they stop.

The counters are cumulative per (server, table); a rise needs the value of the poll before,
so a first sighting never reports.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from konsole.model.events.base import (
    Emitter,
    Event,
    EventConfig,
    EventKind,
    Severity,
    Subject,
    tablet_subjects,
)
from konsole.model.snapshot import ClusterSnapshot

__all__ = ["KvState", "detect_kv"]


@dataclass(frozen=True, slots=True)
class KvState:
    #: (tablet-server subject, table) -> its rejections counter, last known.
    rejections: Mapping[tuple[str, str], float] = field(
        default_factory=lambda: MappingProxyType({})
    )
    #: Tables whose rejections rose at the last poll with metrics.
    rejecting: frozenset[str] = frozenset()


def detect_kv(
    state: KvState, current: ClusterSnapshot, config: EventConfig
) -> tuple[list[Event], KvState]:
    """Rejections that rose since ``state``'s counters, and tables where they stopped."""
    out = Emitter(current, config)
    rejections = dict(state.rejections)
    rising: dict[str, dict[str, float]] = defaultdict(dict)
    for m in current.metrics:
        if m.role != "tablet":
            continue
        for table in m.tables:
            if table.kv_rejections is None:
                continue
            key = (m.subject, table.name)
            old = rejections.get(key)
            if old is not None and table.kv_rejections > old:
                rising[table.name][m.subject] = table.kv_rejections - old
            rejections[key] = table.kv_rejections
    for name, servers in sorted(rising.items()):
        total = sum(servers.values())
        out.emit(
            EventKind.WRITE_REJECTED,
            Severity.WARNING,
            Subject("table", name),
            f"table {name}: {total:g} writes rejected by KV backpressure on "
            + ", ".join(sorted(servers)),
            {"cause": "kv_backpressure", "servers": dict(sorted(servers.items()))},
            count=round(total),
        )
    for name in sorted(state.rejecting - rising.keys()):
        out.emit(
            EventKind.WRITES_ACCEPTED,
            Severity.INFO,
            Subject("table", name),
            f"table {name}: no more KV backpressure rejections",
            {"cause": "kv_backpressure"},
        )
    names = tablet_subjects(current)  # bounded: counters of servers still there
    kept = {k: v for k, v in rejections.items() if k[0] in names}
    return out.events, KvState(MappingProxyType(kept), frozenset(rising))
