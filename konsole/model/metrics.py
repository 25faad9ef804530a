"""What a server's Prometheus endpoint said, as plain data (the scrape is in
:mod:`konsole.collect.cluster.metrics`).

Every value is ``None`` when the server does not export it: unknown is never 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Literal

from konsole.model import subjects

__all__ = [
    "MetricsError",
    "MetricsOrigin",
    "MetricsResult",
    "Role",
    "ServerMetrics",
    "TableMetrics",
]

Role = Literal["coordinator", "tablet"]


class MetricsOrigin(StrEnum):
    """How a poll's metrics endpoints were chosen: the health rules read silence by it.

    An endpoint someone configured (or konsole found) that does not answer is trouble
    (``metrics_unknown``, WARNING); when there never was an endpoint, the metric-based rules
    are *not configured*: said once as information, never a status.
    """

    #: The profile's ``metrics`` URLs or ``metrics_port``, or ``--metrics-port``.
    CONFIGURED = "configured"
    #: Found by konsole without configuration: the local cluster's description.
    FOUND = "found"
    #: Neither configured nor found: no endpoint is scraped.
    NONE = "none"


@dataclass(frozen=True, slots=True)
class TableMetrics:
    """One table as one tablet server sees it (its replicas there)."""

    database: str
    table: str
    #: Worst KV backpressure over the table's buckets on this server, 0..1 (1.0 line).
    kv_pressure: float | None = None
    #: PutKv requests rejected by KV backpressure since the server started (1.0 line).
    kv_rejections: float | None = None

    @property
    def name(self) -> str:
        return f"{self.database}.{self.table}"


@dataclass(frozen=True, slots=True)
class ServerMetrics:
    """What one server's endpoint said. None = the server does not export it."""

    url: str
    role: Role | None
    #: The ``server_id`` label (a tablet server's id; a UUID-like text on a 0.9.1 coordinator).
    server_id: str | None
    host: str | None
    scraped_at: float
    duration_s: float
    # tablet server
    disk_usage_ratio: float | None = None
    disk_write_locked: bool | None = None
    under_replicated: int | None = None
    under_min_isr: int | None = None
    at_min_isr: int | None = None
    isr_shrinks_rate: float | None = None
    isr_expands_rate: float | None = None
    failed_isr_updates_rate: float | None = None
    leader_count: int | None = None
    replica_count: int | None = None
    bytes_in_rate: float | None = None
    bytes_out_rate: float | None = None
    messages_in_rate: float | None = None
    replication_in_rate: float | None = None
    replication_out_rate: float | None = None
    #: Bytes on this server's disk for its replicas: log segments plus, for a PK table,
    #: the latest KV snapshot (``physicalStorage_localSize``, both generations).
    local_size: int | None = None
    #: Bytes of tiered (remote) log of the buckets with a replica here
    #: (``physicalStorage_remoteLogSize``, both generations): a bucket's counts on each of
    #: its replicas' servers, so the servers' figures do not add up to the remote dir's.
    remote_log_size: int | None = None
    #: request type (``produceLog``, ``putKv``, ``fetchLogClient``...) -> (requests/s, errors/s)
    requests: Mapping[str, tuple[float | None, float | None]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    tables: tuple[TableMetrics, ...] = ()
    #: request type -> the 99th percentile of its time on the server, queue to response
    #: sent, in ms (``request_totalTimeMs{quantile="0.99"}``, both lines; None: no request
    #: in the server's window yet).
    request_latency_ms: Mapping[str, float | None] = field(
        default_factory=lambda: MappingProxyType({})
    )
    #: Requests waiting for a processing thread (``request_requestQueueSize``, both lines).
    request_queue_size: int | None = None
    # coordinator
    active_coordinator_count: int | None = None
    alive_coordinator_count: int | None = None
    active_tablet_server_count: int | None = None
    offline_bucket_count: int | None = None
    table_count: int | None = None
    bucket_count: int | None = None
    partition_count: int | None = None
    # JVM
    heap_used: float | None = None
    heap_max: float | None = None
    #: The server process's CPU load, 0..1 of the host's cores (None: not exported, or the
    #: JVM's "not yet known" negative figure).
    cpu_load: float | None = None
    #: The ``cluster_id`` label (the ZooKeeper root; see :mod:`konsole.model.identity`).
    cluster_id: str | None = None

    @property
    def subject(self) -> str:
        """How events and health name this server."""
        if self.role == "tablet" and self.server_id is not None:
            return subjects.tablet_server(self.server_id)
        if self.role == "coordinator":
            return subjects.coordinator(self.host or self.url)
        return self.url

    @property
    def heap_ratio(self) -> float | None:
        if self.heap_used is None or not self.heap_max or self.heap_max <= 0:
            return None
        return self.heap_used / self.heap_max

    @property
    def request_rate(self) -> float | None:
        rates = [r for r, _ in self.requests.values() if r is not None]
        return sum(rates) if rates else None

    @property
    def request_error_rate(self) -> float | None:
        rates = [e for _, e in self.requests.values() if e is not None]
        return sum(rates) if rates else None

    @property
    def kv_rejections(self) -> float | None:
        known = [t.kv_rejections for t in self.tables if t.kv_rejections is not None]
        return sum(known) if known else None


@dataclass(frozen=True, slots=True)
class MetricsError:
    """A scrape that gave nothing usable; ``kind`` says why."""

    url: str
    role: str | None
    server_id: str | None
    #: "unreachable", "timeout", "http_status", "not_metrics" (HTML, garbage, no Fluss names)
    kind: str
    message: str
    at: float

    @property
    def subject(self) -> str:
        if self.role == "tablet" and self.server_id is not None:
            return subjects.tablet_server(self.server_id)
        return f"metrics {self.url}"


MetricsResult = ServerMetrics | MetricsError
