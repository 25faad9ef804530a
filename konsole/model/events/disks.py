"""Writes and disk, per tablet server from its metrics: write_rejected / writes_accepted
for the data disk write lock, disk_pressure when usage climbs a threshold level.

Nothing is reported for the first snapshot of a stream (the state it finds is not a
change). A server that goes away with its lock engaged is remembered (at most
:data:`MAX_GONE_LOCKED` of them) so its writes_accepted comes when it returns unlocked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from konsole.model.events.base import (
    Emitter,
    Event,
    EventConfig,
    EventKind,
    Severity,
    Subject,
    tablet_subjects,
)
from konsole.model.health import HealthRules
from konsole.model.metrics import ServerMetrics
from konsole.model.snapshot import ClusterSnapshot

__all__ = ["MAX_GONE_LOCKED", "Disk", "DiskState", "detect_disks"]

#: Servers that left with their disk write lock engaged, remembered until they return.
MAX_GONE_LOCKED: Final = 16


@dataclass(frozen=True, slots=True)
class Disk:
    #: The data disk write lock, last known (None: never reported).
    locked: bool | None = None
    #: Disk usage level: 0 ok, 1 over the warn threshold, 2 over the critical one.
    level: int = 0


@dataclass(frozen=True, slots=True)
class DiskState:
    #: tablet-server subject -> its disk, last known.
    servers: Mapping[str, Disk] = field(default_factory=lambda: MappingProxyType({}))


def detect_disks(
    state: DiskState,
    previous: ClusterSnapshot | None,
    current: ClusterSnapshot,
    config: EventConfig,
) -> tuple[list[Event], DiskState]:
    """Write lock and disk level changes of each tablet server scraped in ``current``."""
    out = Emitter(current, config)
    first = previous is None
    disks = dict(state.servers)
    for m in current.metrics:
        if m.role == "tablet":
            disks[m.subject] = _server(out, m, disks.get(m.subject, Disk()), config.rules, first)
    # Bounded: servers in metadata or scraped this poll, and servers that went away
    # while locked (their writes_accepted is owed when they come back).
    names = tablet_subjects(current)
    gone_locked = [k for k, d in disks.items() if k not in names and d.locked]
    keep = names | set(gone_locked[-MAX_GONE_LOCKED:])
    kept = {k: v for k, v in disks.items() if k in keep}
    return out.events, DiskState(MappingProxyType(kept))


def _level(ratio: float | None, rules: HealthRules) -> int:
    if ratio is None:
        return 0
    return 2 if ratio >= rules.disk_usage_critical else 1 if ratio >= rules.disk_usage_warn else 0


def _server(out: Emitter, m: ServerMetrics, was: Disk, rules: HealthRules, first: bool) -> Disk:
    subject = Subject("server", m.subject)
    ratio = m.disk_usage_ratio
    level = _level(ratio, rules)
    if not first and m.disk_write_locked and was.locked is not True:
        out.emit(
            EventKind.WRITE_REJECTED,
            Severity.CRITICAL,
            subject,
            f"{m.subject} rejects writes: data disk write lock engaged"
            + (f" (disk usage {ratio:.0%})" if ratio is not None else ""),
            {"cause": "disk_write_locked", "server": m.server_id, "disk_usage_ratio": ratio},
        )
    elif m.disk_write_locked is False and was.locked is True:
        out.emit(
            EventKind.WRITES_ACCEPTED,
            Severity.INFO,
            subject,
            f"{m.subject} accepts writes again: data disk write lock released",
            {"cause": "disk_write_locked", "server": m.server_id, "disk_usage_ratio": ratio},
        )
    if not first and level > was.level and ratio is not None:
        limit = rules.disk_usage_critical if level == 2 else rules.disk_usage_warn
        out.emit(
            EventKind.DISK_PRESSURE,
            Severity.CRITICAL if level == 2 else Severity.WARNING,
            subject,
            f"{m.subject}: data disk {ratio:.0%} used (threshold {limit:.0%})",
            {"server": m.server_id, "disk_usage_ratio": ratio, "threshold": limit},
        )
    locked = m.disk_write_locked if m.disk_write_locked is not None else was.locked
    return Disk(locked, level if ratio is not None else was.level)
