"""Builders of ClusterView / ClusterSnapshot / ServerMetrics for table-driven tests (the
model, the check, the poller, the recorder and the history use the same ones).

A table's buckets are given either as ``(leader, replicas, latest offset)`` or as a bare
latest offset, which places the bucket the way the history tests expect: leader
``leaders[b]`` (else ``b % 3 + 1``) and one follower beside it. Every table carries real
table JSON (columns ``id`` and ``p``), so it survives the history file's round trip.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from fluss_proto.client import TablePath
from fluss_proto.errors import FlussError
from fluss_proto.model import (
    BucketView,
    ClusterHealth,
    ClusterView,
    GatherError,
    HealthStatus,
    PartitionInfo,
    ServerInfo,
    TableView,
)
from fluss_proto.types import FrozenDict, TableInfo, parse_table_descriptor
from konsole.collect.cluster.metrics import MetricsError, ServerMetrics, TableMetrics
from konsole.model.snapshot import ClusterSnapshot, CoordinatorRole, CoordinatorStatus
from store.rows import EventRow

COORD = "127.0.0.1:9123"
T0 = 1_780_000_000.0  # a poll time, epoch seconds (whole hour + 2,800 s)

# (leader, replicas, latest offset) per bucket, or only its latest offset
Bucket = tuple[int | None, Sequence[int], int | None]
BucketSpec = Bucket | int | None


def server(node_id: int, *, error: str | None = None) -> ServerInfo:
    return ServerInfo(
        node_id=node_id,
        role="tablet",
        host="127.0.0.1",
        port=9200 + node_id,
        error=FlussError(error) if error else None,
    )


def table_info(
    name: str,
    table_id: int,
    buckets: int,
    *,
    partitioned: bool = False,
    properties: Mapping[str, str] | None = None,
    schema_id: int = 1,
) -> TableInfo:
    path = TablePath.of(name)
    doc = {
        "version": 1,
        "schema": {
            "version": 1,
            "columns": [
                {"name": "id", "data_type": {"type": "BIGINT"}, "id": 0},
                {"name": "p", "data_type": {"type": "STRING"}, "id": 1},
            ],
        },
        "partition_key": ["p"] if partitioned else [],
        "bucket_count": buckets,
        "properties": dict(properties or {"table.replication.factor": "3"}),
        "custom_properties": {},
    }
    return TableInfo.from_descriptor(
        path.database,
        path.table,
        table_id=table_id,
        schema_id=schema_id,
        descriptor=parse_table_descriptor(doc),
        created_ms=1_700_000_000_000 + table_id,
        modified_ms=1_700_000_000_000 + table_id,
    )


def table(
    name: str,
    table_id: int,
    buckets: Sequence[BucketSpec] = (),
    *,
    partitions: Mapping[str, Sequence[BucketSpec]] | None = None,
    leaders: Sequence[int] | None = None,
    earliest: Sequence[int | None] | None = None,
    properties: Mapping[str, str] | None = None,
    schema_id: int = 1,
) -> TableView:
    """A table; ``earliest`` gives each bucket's earliest offset by bucket number."""
    n = len(buckets) if partitions is None else len(next(iter(partitions.values())))
    partitioned = partitions is not None
    info = table_info(
        name, table_id, n, partitioned=partitioned, properties=properties, schema_id=schema_id
    )
    views: list[BucketView] = []
    parts: list[PartitionInfo] = []
    groups: list[tuple[int | None, str | None, Sequence[BucketSpec]]] = []
    if partitions is None:
        groups.append((None, None, buckets))
    else:
        for pname, pbuckets in partitions.items():
            pid = table_id * 1000 + _stable(pname)
            parts.append(PartitionInfo(pid, pname, FrozenDict({"p": pname})))
            groups.append((pid, pname, pbuckets))
    for pid, pname, group in groups:
        for bucket_id, spec in enumerate(group):
            leader, replicas, offset = _placed(bucket_id, spec, leaders)
            views.append(
                BucketView(
                    table_id=table_id,
                    partition_id=pid,
                    partition_name=pname,
                    bucket_id=bucket_id,
                    leader_id=leader,
                    replica_ids=tuple(replicas),
                    leader_epoch=0,
                    latest_offset=offset,
                    earliest_offset=None if earliest is None else earliest[bucket_id],
                )
            )
    return TableView(TablePath.of(name), table_id, info, tuple(parts), tuple(views))


def _placed(bucket_id: int, spec: BucketSpec, leaders: Sequence[int] | None) -> Bucket:
    if isinstance(spec, tuple):
        return spec
    leader = leaders[bucket_id] if leaders is not None else bucket_id % 3 + 1
    return leader, (leader, leader % 3 + 1), spec


def _stable(name: str) -> int:
    return sum(ord(c) * (i + 1) for i, c in enumerate(name)) % 997


def view(
    tablets: Iterable[int] = (0, 1, 2),
    tables: Sequence[TableView] = (),
    *,
    coordinator: bool = True,
    errors: Sequence[GatherError] = (),
    server_errors: Mapping[int, str] | None = None,
    earliest: bool = False,
    started_at: float = T0,
) -> ClusterView:
    server_errors = server_errors or {}
    coord = (
        ServerInfo(node_id=0, role="coordinator", host="127.0.0.1", port=9123)
        if coordinator
        else None
    )
    databases = tuple(sorted({t.path.database for t in tables}))
    return ClusterView(
        coordinator=coord,
        tablet_servers=tuple(server(i, error=server_errors.get(i)) for i in tablets),
        databases=databases,
        tables=tuple(tables),
        errors=tuple(errors),
        round_trips=1,
        requests=1,
        started_at=started_at,
        duration_s=0.01,
        earliest_read=earliest,
    )


def addr(i: int) -> str:
    return f"127.0.0.1:{9123 + i}"


def probe(*roles: str) -> tuple[CoordinatorStatus, ...]:
    """probe("active", "standby"): coordinator i at 127.0.0.1:9123+i with that role."""
    return tuple(
        CoordinatorStatus(
            addr(i),
            CoordinatorRole(role),
            "refused" if role == "unreachable" else None,
        )
        for i, role in enumerate(roles)
    )


def tm(server_id: int, **fields: Any) -> ServerMetrics:
    tables = fields.pop("tables", ())
    return ServerMetrics(
        url=f"http://127.0.0.1:{9300 + server_id}/metrics",
        role="tablet",
        server_id=str(server_id),
        host="127.0.0.1",
        scraped_at=0.0,
        duration_s=0.0,
        tables=tuple(tables),
        **fields,
    )


def kv(
    name: str, *, pressure: float | None = None, rejections: float | None = None
) -> TableMetrics:
    db, _, t = name.partition(".")
    return TableMetrics(db, t, kv_pressure=pressure, kv_rejections=rejections)


def metrics_error(server_id: int | None, kind: str = "timeout") -> MetricsError:
    return MetricsError(
        f"http://127.0.0.1:{9300 + (server_id or 0)}/metrics",
        "tablet" if server_id is not None else None,
        str(server_id) if server_id is not None else None,
        kind,
        "no answer within 2s",
        0.0,
    )


def health(status: HealthStatus, *, replicas: int = 9, in_sync: int = 9) -> ClusterHealth:
    leaders = 3
    active = 3 if status is not HealthStatus.RED else 2
    return ClusterHealth(replicas, in_sync, leaders, active, status)


def snap(
    v: ClusterView | None = None,
    *,
    seq: int = 1,
    t: float = 1000.0,
    coords: tuple[CoordinatorStatus, ...] | None = None,
    cluster_health: ClusterHealth | None = None,
    metrics: Sequence[ServerMetrics] = (),
    metrics_errors: Sequence[MetricsError] = (),
    failed: str | None = None,
    failures: int = 1,
) -> ClusterSnapshot:
    if coords is None:
        coords = probe("active")
    if failed is not None or v is None:
        return ClusterSnapshot.failed(
            seq=seq,
            taken_at=t,
            latency_s=0.1,
            error=failed or "unreachable",
            consecutive_failures=failures,
            coordinators=coords,
        )
    return ClusterSnapshot.assemble(
        seq=seq,
        taken_at=t,
        latency_s=0.1,
        view=v,
        coordinators=coords,
        health=cluster_health,
        metrics=tuple(metrics),
        metrics_errors=tuple(metrics_errors),
    )


def all_metrics(tablets: Iterable[int] = (0, 1, 2), **fields: Any) -> list[ServerMetrics]:
    return [tm(i, **fields) for i in tablets]


def with_time(s: ClusterSnapshot, t: float) -> ClusterSnapshot:
    return replace(s, taken_at=t)


def operator_row(action: str, outcome: str, details: str | None = None) -> EventRow:
    """An operator event as ``konsole admin`` writes it (``details``: a raw column instead)."""
    import time

    from konsole.collect.history.rows import event_row
    from konsole.model.events import Event, EventKind, Severity
    from konsole.model.events.base import Subject

    event = Event(
        time=time.time(),
        kind=EventKind.OPERATOR,
        severity=Severity.INFO,
        subject=Subject("config", "k"),
        message="m",
        details={"action": action, "outcome": outcome},
    )
    row = event_row(event)
    return row if details is None else replace(row, details=details)
