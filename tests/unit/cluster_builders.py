"""Small builders of ClusterView / ClusterSnapshot / ServerMetrics for table-driven tests."""

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
from fluss_proto.types import FrozenDict, Schema, TableInfo
from konsole.collect.metrics import MetricsError, ServerMetrics, TableMetrics
from konsole.model.snapshot import ClusterSnapshot, CoordinatorRole, CoordinatorStatus

COORD = "127.0.0.1:9123"

# (leader, replicas, latest offset) per bucket
Bucket = tuple[int | None, Sequence[int], int | None]


def server(node_id: int, *, error: str | None = None) -> ServerInfo:
    return ServerInfo(
        node_id=node_id,
        role="tablet",
        host="127.0.0.1",
        port=9200 + node_id,
        error=FlussError(error) if error else None,
    )


def table(
    name: str,
    table_id: int,
    buckets: Sequence[Bucket] = (),
    *,
    partitions: Mapping[str, Sequence[Bucket]] | None = None,
    schema_id: int = 1,
) -> TableView:
    path = TablePath.of(name)
    info = TableInfo(
        database=path.database,
        table=path.table,
        table_id=table_id,
        schema_id=schema_id,
        schema=Schema(columns=()),
        primary_key=(),
        physical_primary_key=(),
        bucket_keys=(),
        partition_keys=("p",) if partitions is not None else (),
        bucket_count=len(buckets),
        properties=FrozenDict(),
        custom_properties=FrozenDict(),
        comment=None,
        created_ms=0,
        modified_ms=0,
    )
    views: list[BucketView] = []
    parts: list[PartitionInfo] = []
    groups: list[tuple[int | None, str | None, Sequence[Bucket]]] = []
    if partitions is None:
        groups.append((None, None, buckets))
    else:
        for pname, pbuckets in partitions.items():
            pid = table_id * 1000 + _stable(pname)
            parts.append(PartitionInfo(pid, pname, FrozenDict({"p": pname})))
            groups.append((pid, pname, pbuckets))
    for pid, pname, group in groups:
        for bucket_id, (leader, replicas, offset) in enumerate(group):
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
                )
            )
    return TableView(path, table_id, info, tuple(parts), tuple(views))


def _stable(name: str) -> int:
    return sum(ord(c) * (i + 1) for i, c in enumerate(name)) % 997


def view(
    tablets: Iterable[int] = (0, 1, 2),
    tables: Sequence[TableView] = (),
    *,
    coordinator: bool = True,
    errors: Sequence[GatherError] = (),
    server_errors: Mapping[int, str] | None = None,
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
        started_at=0.0,
        duration_s=0.01,
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
