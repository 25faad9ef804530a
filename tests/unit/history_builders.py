"""Builders for the history tests: snapshots with real table JSON, a fake clock of polls."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fluss_proto.client import TablePath
from fluss_proto.model import BucketView, ClusterView, PartitionInfo, ServerInfo, TableView
from fluss_proto.types import FrozenDict, TableInfo, parse_table_descriptor
from konsole.collect.metrics import ServerMetrics
from konsole.model.snapshot import ClusterSnapshot, CoordinatorRole, CoordinatorStatus

T0 = 1_780_000_000.0  # a poll time, epoch seconds (whole hour + 2,800 s)


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
    offsets: Sequence[int | None],
    *,
    leaders: Sequence[int] | None = None,
    partitions: Mapping[str, Sequence[int | None]] | None = None,
    earliest: Sequence[int | None] | None = None,
    properties: Mapping[str, str] | None = None,
) -> TableView:
    n = len(offsets) if partitions is None else len(next(iter(partitions.values())))
    info = table_info(name, table_id, n, partitioned=partitions is not None, properties=properties)
    groups: list[tuple[int | None, str | None, Sequence[int | None]]] = []
    parts: list[PartitionInfo] = []
    if partitions is None:
        groups.append((None, None, offsets))
    else:
        for i, (pname, values) in enumerate(partitions.items()):
            pid = table_id * 100 + i
            parts.append(PartitionInfo(pid, pname, FrozenDict({"p": pname})))
            groups.append((pid, pname, values))
    buckets = []
    for pid, pname, values in groups:
        for b, offset in enumerate(values):
            leader = leaders[b] if leaders is not None else b % 3 + 1
            buckets.append(
                BucketView(
                    table_id=table_id,
                    partition_id=pid,
                    partition_name=pname,
                    bucket_id=b,
                    leader_id=leader,
                    replica_ids=(leader, leader % 3 + 1),
                    leader_epoch=0,
                    latest_offset=offset,
                    earliest_offset=None if earliest is None else earliest[b],
                )
            )
    return TableView(TablePath.of(name), table_id, info, tuple(parts), tuple(buckets))


def view(
    tables: Sequence[TableView] = (),
    *,
    tablets: Sequence[int] = (1, 2, 3),
    earliest: bool = False,
) -> ClusterView:
    return ClusterView(
        coordinator=ServerInfo(0, "coordinator", "127.0.0.1", 9123),
        tablet_servers=tuple(ServerInfo(i, "tablet", "127.0.0.1", 9200 + i) for i in tablets),
        databases=tuple(sorted({t.path.database for t in tables})),
        tables=tuple(tables),
        errors=(),
        round_trips=1,
        requests=1,
        started_at=T0,
        duration_s=0.01,
        earliest_read=earliest,
    )


def snapshot(
    v: ClusterView | None,
    *,
    seq: int = 1,
    t: float = T0,
    metrics: Sequence[ServerMetrics] = (),
    error: str = "unreachable",
) -> ClusterSnapshot:
    coords = (CoordinatorStatus("127.0.0.1:9123", CoordinatorRole.ACTIVE),)
    if v is None:
        return ClusterSnapshot.failed(
            seq=seq, taken_at=t, latency_s=0.5, error=error, coordinators=coords
        )
    return ClusterSnapshot.assemble(
        seq=seq, taken_at=t, latency_s=0.05, view=v, coordinators=coords, metrics=tuple(metrics)
    )
