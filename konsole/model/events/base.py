"""The event value types every detector shares, and the helper that builds them.

:class:`Event` is what a detector returns, what the faces print and what the history
stores (``konsole.collect.history.rows`` persists :class:`EventKind` values and the detail
keys, so both are stable). :class:`Emitter` gives one detector's events the poll's time
and the sample bound of :class:`EventConfig` so no detector repeats that.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Final

from konsole.model import subjects
from konsole.model.health import HealthRules
from konsole.model.placement import alive_servers
from konsole.model.snapshot import ClusterSnapshot
from konsole.model.timefmt import iso_text, to_ms

__all__ = [
    "CLUSTER",
    "Emitter",
    "Event",
    "EventConfig",
    "EventKind",
    "Severity",
    "Subject",
    "plural",
    "server_subject",
    "tablet_subjects",
]


class EventKind(StrEnum):
    COORDINATOR_FAILOVER = "coordinator_failover"
    COORDINATOR_UNREACHABLE = "coordinator_unreachable"
    COORDINATOR_RECOVERED = "coordinator_recovered"
    STANDBY_LOST = "standby_lost"
    STANDBY_JOINED = "standby_joined"
    SERVER_LEFT = "server_left"
    SERVER_JOINED = "server_joined"
    #: A server speaks another Fluss line (told by its API keys) than when last seen.
    SERVER_VERSION_CHANGED = "server_version_changed"
    LEADERS_MOVED = "leaders_moved"
    REPLICAS_OFFLINE = "replicas_offline"
    UNDER_REPLICATED = "under_replicated"
    REPLICAS_IN_SYNC = "replicas_in_sync"
    BUCKET_OFFLINE = "bucket_offline"
    BUCKET_ONLINE = "bucket_online"
    TABLE_CREATED = "table_created"
    TABLE_DROPPED = "table_dropped"
    PARTITION_CREATED = "partition_created"
    PARTITION_DROPPED = "partition_dropped"
    SCHEMA_CHANGED = "schema_changed"
    INGEST_STALLED = "ingest_stalled"
    INGEST_RESUMED = "ingest_resumed"
    WRITE_REJECTED = "write_rejected"
    WRITES_ACCEPTED = "writes_accepted"
    DISK_PRESSURE = "disk_pressure"
    #: A confident forecast puts a tablet server's write lock within the horizon.
    WRITE_LOCK_FORECAST = "write_lock_forecast"
    WRITE_LOCK_FORECAST_CLEARED = "write_lock_forecast_cleared"
    TIERING_STALLED = "tiering_stalled"
    TIERING_RESUMED = "tiering_resumed"
    KV_SNAPSHOT_STALE = "kv_snapshot_stale"
    LAKE_LAG_HIGH = "lake_lag_high"
    HEALTH_CHANGED = "health_changed"
    POLL_FAILED = "poll_failed"
    POLL_RECOVERED = "poll_recovered"
    #: Written by the recorder, not a detector: the history file could not be written.
    HISTORY_TROUBLE = "history_trouble"
    #: Written by ``konsole admin``, not a detector: an operator action and its outcome.
    OPERATOR = "operator"
    #: Written by a console that followed a history, not a detector: the recorder that held
    #: the file is gone and the console polls and writes it now.
    HISTORY_TAKEN_OVER = "history_taken_over"


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"


@dataclass(frozen=True, slots=True)
class Subject:
    #: "cluster", "server", "table", "partition" or "bucket".
    kind: str
    #: "cluster", "tablet-server 2", "coordinator 127.0.0.1:9123", "db.t", "db.t[p]"...
    name: str

    def __str__(self) -> str:
        return self.name


CLUSTER: Final = Subject("cluster", "cluster")


@dataclass(frozen=True, slots=True)
class Event:
    time: float
    kind: EventKind
    severity: Severity
    subject: Subject
    message: str
    #: JSON-able facts (addresses, ids, counts per server or table, durations in seconds).
    details: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    #: How many items the event stands for, and a few of them by name.
    count: int = 1
    samples: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The one JSON shape of an event (docs/cli.md): ``watch --format jsonl``'s lines,
        ``history events --format json`` and ``history export events`` all print this."""
        return {
            "type": "event",
            "time": iso_text(self.time),
            "time_ms": to_ms(self.time),
            "kind": self.kind.value,
            "severity": self.severity.value,
            "subject": {"kind": self.subject.kind, "name": self.subject.name},
            "message": self.message,
            "count": self.count,
            "samples": list(self.samples),
            "details": dict(self.details),
        }


@dataclass(frozen=True, slots=True)
class EventConfig:
    rules: HealthRules = field(default_factory=HealthRules)
    #: Names kept as samples in a grouped event.
    max_samples: int = 5
    #: More created/dropped tables than this in one database become one event.
    group_tables_over: int = 3


class Emitter:
    """Collects one detector's events for one poll (its time, the sample bound)."""

    __slots__ = ("events", "max_samples", "time")

    def __init__(self, current: ClusterSnapshot, config: EventConfig) -> None:
        self.time = current.taken_at
        self.max_samples = config.max_samples
        self.events: list[Event] = []

    def emit(
        self,
        kind: EventKind,
        severity: Severity,
        subject: Subject,
        message: str,
        details: Mapping[str, Any] | None = None,
        *,
        count: int = 1,
        samples: Iterable[str] = (),
    ) -> None:
        kept = tuple(sorted(samples)[: self.max_samples])
        frozen = MappingProxyType(dict(details or {}))
        self.events.append(Event(self.time, kind, severity, subject, message, frozen, count, kept))


def server_subject(node_id: int | str) -> Subject:
    return Subject("server", subjects.tablet_server(node_id))


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def tablet_subjects(current: ClusterSnapshot) -> set[str]:
    """Tablet servers in metadata or scraped this poll, by subject: the servers whose
    per-server state is kept (a restarted server answers metrics before it is back in
    metadata: forgetting it then would report its state again every poll)."""
    alive = alive_servers(current.view) if current.view is not None else frozenset()
    names = {subjects.tablet_server(i) for i in alive}
    names |= {m.subject for m in current.metrics if m.role == "tablet"}
    return names
