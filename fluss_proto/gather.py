"""One pass over a whole cluster in a fixed number of round trips.

:func:`gather_cluster` reads servers, databases, tables (with their :class:`TableInfo`),
partitions, every bucket's placement and its earliest and latest offsets. Requests of one
step are sent together (``call_many``: pipelined per connection, all servers at once), so
the number of round trips does not grow with the number of databases, tables, partitions
or buckets:

1. ListDatabases, plus ApiVersions to every known server;
2. ListTables for every database;
3. GetMetadata for every table (chunks of :data:`~fluss_proto.admin.METADATA_CHUNK`
   paths, sent together). The table JSON in it gives each TableInfo, so no GetTableInfo;
4. ListPartitionInfos for every partitioned table, then GetMetadata for all their
   partition ids (steps skipped when no table is partitioned);
5. ListOffsets LATEST and EARLIEST, one request per (leader, table, partition) and type.

Nothing fails the whole gather except cancellation: each failure is kept where it
happened (on the server, table or bucket, and in :attr:`ClusterView.errors`). Extra round
trips happen only on trouble and are bounded: a GetMetadata chunk rejected because a table
vanished between steps is asked again table by table (+1), a partition that vanished the
same way is isolated per table then per partition (+1, +1), and buckets with stale
leaders are retried once after one metadata refresh (+2). :attr:`ClusterView.round_trips`
counts the batches actually awaited.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.admin import (
    LIST_OFFSETS_KIND,
    METADATA_CHUNK,
    AdminClient,
    BucketRef,
    FlussAdmin,
    api_versions_request,
    as_fluss_error,
    metadata_request,
    normalise_table_error,
    parse_metadata,
    partitions_from_response,
    server_info,
    table_info_from_metadata,
)
from fluss_proto.api_keys import ApiKey
from fluss_proto.client import (
    COORDINATOR,
    BucketMetadata,
    PartitionMetadata,
    ServerNode,
    TablePath,
)
from fluss_proto.error_codes import PartitionNotExistError
from fluss_proto.errors import FlussError
from fluss_proto.model import (
    EARLIEST,
    LATEST,
    BucketView,
    ClusterView,
    GatherError,
    PartitionInfo,
    ServerInfo,
    TableView,
)
from fluss_proto.types import TableInfo

__all__ = ["gather_cluster"]

_PartResult = dict[int, PartitionMetadata | FlussError]


async def gather_cluster(
    client: AdminClient, *, timeout: float | None = None, offsets: bool = True
) -> ClusterView:
    """Read the whole cluster (see the module docs); ``offsets=False`` skips step 5."""
    admin = FlussAdmin(client, timeout=timeout)
    started_at, t0 = time.time(), time.monotonic()
    errors: list[GatherError] = []

    # 1. databases + what every known server advertises
    known = client.metadata
    version_targets: list[tuple[str, ServerNode, int | str]] = []
    if known.coordinator is not None:
        version_targets.append(("coordinator", known.coordinator, COORDINATOR))
    for node_id in sorted(known.tablet_servers):
        version_targets.append(("tablet", known.tablet_servers[node_id], node_id))
    first = await admin.batch(
        [(None, ApiKey.LIST_DATABASES, pb.ListDatabasesRequest())]
        + [(t, ApiKey.API_VERSIONS, api_versions_request()) for _, _, t in version_targets]
    )
    databases: tuple[str, ...] = ()
    if isinstance(first[0], BaseException):
        errors.append(
            GatherError("cluster", "databases", "LIST_DATABASES", as_fluss_error(first[0]))
        )
    else:
        databases = tuple(sorted(first[0].database_name))
    versions = {
        (role, node.address): result
        for (role, node, _), result in zip(version_targets, first[1:], strict=True)
    }

    # 2. tables of every database
    listed = await admin.batch(
        [(None, ApiKey.LIST_TABLES, pb.ListTablesRequest(database_name=db)) for db in databases]
    )
    paths: list[TablePath] = []
    for db, result in zip(databases, listed, strict=True):
        if isinstance(result, BaseException):
            errors.append(GatherError("database", db, "LIST_TABLES", as_fluss_error(result)))
        else:
            paths.extend(TablePath(db, name) for name in sorted(result.table_name))

    # 3. metadata of every table (and the live server list)
    servers, tables_md = await admin.tables_metadata_and_servers(paths)
    infos: dict[TablePath, TableInfo | None] = {}
    table_errors: dict[TablePath, FlussError] = {}
    for path, md in tables_md.items():
        if isinstance(md, FlussError):
            table_errors[path] = md
            errors.append(GatherError("table", str(path), "GET_METADATA", md))
            continue
        try:
            infos[path] = table_info_from_metadata(md)
        except FlussError as exc:  # a table JSON we cannot read: keep its buckets
            infos[path] = None
            table_errors[path] = exc
            errors.append(GatherError("table", str(path), "GET_METADATA", exc))
    partitioned = [p for p, info in infos.items() if info is not None and info.is_partitioned]

    # 4. partitions of partitioned tables, and their bucket placement
    partitions: dict[TablePath, tuple[PartitionInfo, ...]] = {}
    listed_parts = await admin.batch(
        [
            (
                None,
                ApiKey.LIST_PARTITION_INFOS,
                pb.ListPartitionInfosRequest(
                    table_path=pb.PbTablePath(database_name=p.database, table_name=p.table)
                ),
            )
            for p in partitioned
        ]
    )
    for path, result in zip(partitioned, listed_parts, strict=True):
        if isinstance(result, BaseException):
            err = as_fluss_error(result)
            table_errors.setdefault(path, err)
            errors.append(GatherError("table", str(path), "LIST_PARTITION_INFOS", err))
        else:
            partitions[path] = partitions_from_response(result)
    part_md = await _partitions_metadata(
        admin, {p: [x.partition_id for x in parts] for p, parts in partitions.items() if parts}
    )
    for path, per_part in part_md.items():
        for pid, value in per_part.items():
            if isinstance(value, FlussError):
                errors.append(GatherError("partition", f"{path}/p={pid}", "GET_METADATA", value))

    # 5. offsets of every bucket, asked of its leader
    refs: list[BucketRef] = []
    placement: dict[TablePath, list[tuple[int | None, str | None, BucketMetadata]]] = {}
    for path, md in tables_md.items():
        if isinstance(md, FlussError):
            continue
        rows: list[tuple[int | None, str | None, BucketMetadata]] = []
        if path in part_md or path in partitions:
            for pid, value in sorted(part_md.get(path, {}).items()):
                if isinstance(value, PartitionMetadata):
                    rows.extend((pid, value.partition_name, b) for b in value.buckets)
        else:
            rows.extend((None, None, b) for b in md.buckets)
        placement[path] = rows
        refs.extend(
            BucketRef(path, md.table_id, pid, pname, b.bucket_id, b.leader_id)
            for pid, pname, b in rows
        )
    outcomes = (
        await admin.leader_calls(LIST_OFFSETS_KIND, refs, [LATEST, EARLIEST]) if offsets else {}
    )

    # assemble
    table_views: list[TableView] = []
    for path in paths:
        md = tables_md.get(path)
        if isinstance(md, FlussError) or md is None:
            table_views.append(TableView(path, None, None, error=table_errors.get(path)))
            continue
        buckets: list[BucketView] = []
        for pid, pname, b in placement.get(path, []):
            key = (md.table_id, pid, b.bucket_id)
            latest = outcomes.get((0, key))
            earliest = outcomes.get((1, key))
            view = BucketView(
                table_id=md.table_id,
                partition_id=pid,
                partition_name=pname,
                bucket_id=b.bucket_id,
                leader_id=b.leader_id,
                replica_ids=b.replica_ids,
                leader_epoch=b.leader_epoch,
                latest_offset=latest.value if latest else None,
                earliest_offset=earliest.value if earliest else None,
                latest_error=latest.error if latest else None,
                earliest_error=earliest.error if earliest else None,
            )
            buckets.append(view)
            subject = f"{path}" + (f"[p={pid}]" if pid is not None else "") + f"#{b.bucket_id}"
            for outcome in (latest, earliest):
                if outcome is not None and outcome.error is not None:
                    errors.append(GatherError("bucket", subject, "LIST_OFFSETS", outcome.error))
        table_views.append(
            TableView(
                path=path,
                table_id=md.table_id,
                info=infos.get(path),
                partitions=partitions.get(path, ()),
                buckets=tuple(buckets),
                error=table_errors.get(path),
            )
        )

    coordinator, tablets = _servers(client, servers, versions, errors)
    return ClusterView(
        coordinator=coordinator,
        tablet_servers=tablets,
        databases=databases,
        tables=tuple(table_views),
        errors=tuple(errors),
        round_trips=admin.round_trips,
        requests=admin.requests,
        started_at=started_at,
        duration_s=time.monotonic() - t0,
    )


async def _partitions_metadata(
    admin: FlussAdmin, wanted: Mapping[TablePath, Sequence[int]]
) -> dict[TablePath, _PartResult]:
    """Partition placement for ``{table: [partition ids]}``.

    All tables in as few GetMetadata requests as possible (one round trip). A request the
    server rejects (a table or partition vanished) is split per table (+1), and a table
    still answering PARTITION_NOT_EXISTS is split per partition (+1).
    """
    out: dict[TablePath, _PartResult] = {}
    if not wanted:
        return out
    tables = list(wanted)
    chunks = [tables[i : i + METADATA_CHUNK] for i in range(0, len(tables), METADATA_CHUNK)]

    def request(paths: Sequence[TablePath], ids: Sequence[int]) -> Any:
        return (None, ApiKey.GET_METADATA, metadata_request(paths, partition_ids=ids))

    def take(path: TablePath, ids: Sequence[int], result: Any) -> None:
        found = parse_metadata(result)[3]
        per = out.setdefault(path, {})
        for pid in ids:
            per[pid] = found.get(pid) or PartitionNotExistError(
                f"partition {pid} of {path} is not in the metadata reply",
                api=ApiKey.GET_METADATA.name,
            )

    results = await admin.batch(
        [request(chunk, [i for p in chunk for i in wanted[p]]) for chunk in chunks]
    )
    split_tables: list[TablePath] = []
    failed_alone: list[tuple[TablePath, Any]] = []
    for chunk, result in zip(chunks, results, strict=True):
        if not isinstance(result, BaseException):
            for path in chunk:
                take(path, wanted[path], result)
        elif len(chunk) == 1:
            failed_alone.append((chunk[0], result))  # already a per-table answer
        else:
            split_tables.extend(chunk)
    singles = await admin.batch([request([p], wanted[p]) for p in split_tables])
    split_parts: list[tuple[TablePath, int]] = []
    for path, result in [*zip(split_tables, singles, strict=True), *failed_alone]:
        if not isinstance(result, BaseException):
            take(path, wanted[path], result)
        elif isinstance(result, PartitionNotExistError) and len(wanted[path]) > 1:
            split_parts.extend((path, pid) for pid in wanted[path])
        else:
            err = as_fluss_error(normalise_table_error(result, path))
            out[path] = dict.fromkeys(wanted[path], err)
    if not split_parts:
        return out
    parts = await admin.batch([request([p], [pid]) for p, pid in split_parts])
    for (path, pid), result in zip(split_parts, parts, strict=True):
        if isinstance(result, BaseException):
            out.setdefault(path, {})[pid] = as_fluss_error(normalise_table_error(result, path))
        else:
            take(path, [pid], result)
    return out


def _servers(
    client: AdminClient,
    fresh: tuple[ServerNode | None, dict[int, ServerNode]] | None,
    versions: Mapping[tuple[str, str], Any],
    errors: list[GatherError],
) -> tuple[ServerInfo | None, tuple[ServerInfo, ...]]:
    """Servers from this gather's metadata (the client's cache if none arrived), each with
    the ApiVersions reply of step 1, or the client's recorded one for a newcomer."""
    if fresh is not None:
        coordinator, tablets = fresh
    else:
        coordinator, tablets = client.metadata.coordinator, dict(client.metadata.tablet_servers)
    recorded: Mapping[str, Any] = getattr(client, "api_versions", {}) or {}

    def info(role: str, node: ServerNode) -> ServerInfo:
        result = versions.get((role, node.address))
        if result is None and node.address in recorded:
            rec = recorded[node.address]
            result = pb.ApiVersionsResponse(
                api_versions=[
                    pb.PbApiVersion(api_key=k, min_version=lo, max_version=hi)
                    for k, (lo, hi) in sorted(rec.versions.items())
                ]
            )
            if rec.server_type is not None:
                result.server_type = rec.server_type
        server = server_info(role, node, result)
        if server.error is not None:
            errors.append(GatherError("server", server.address, "API_VERSIONS", server.error))
        return server

    coord = info("coordinator", coordinator) if coordinator is not None else None
    return coord, tuple(info("tablet", tablets[n]) for n in sorted(tablets))
