"""Typed, read-only admin API over :class:`~fluss_proto.client.FlussClient`.

:class:`FlussAdmin` turns Fluss read RPCs into the frozen values of :mod:`fluss_proto.model`.
It sends nothing that changes the cluster (the client's read-only gate would refuse it
anyway) and only needs three things from the client: ``call``, ``call_many`` and
``metadata`` (the cached server list), so tests can drive it with a small fake.

Routing follows Fluss's own admin client:

- read-only catalog calls (databases, tables, schemas, partitions, metadata, KV and lake
  snapshots) go to any server (the client prefers a tablet server);
- ListAcls, DescribeClusterConfigs, ListRebalanceProgress and GetClusterHealth go to the
  coordinator; a standby coordinator (Fluss 1.0, code 65) is followed by the client;
- ListOffsets and GetTableStats go to each bucket's leader, one request per leader (per
  table and partition for ListOffsets; per table for GetTableStats, whose buckets carry
  their partition), all leaders at once (``call_many``).

Leader-routed calls keep errors per bucket (see :mod:`fluss_proto.leaders`, which also
retries stale-metadata failures once). Catalog requests and reply conversions live in
:mod:`fluss_proto.catalog`; this module holds the one :class:`FlussAdmin` class.

Metadata is read with GetMetadata requests of our own (the client's cache is not
modified). Partitioned tables carry no table-level buckets in GetMetadata (observed on
0.9.1): their buckets come per partition.

Counters: :attr:`FlussAdmin.round_trips` counts awaited batches (a ``call`` or one
``call_many``), :attr:`FlussAdmin.requests` the requests in them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from google.protobuf.message import Message

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto._replies import as_fluss_error, opt, server_failed
from fluss_proto.api_keys import ApiKey
from fluss_proto.catalog import (
    PARTITION_SEPARATOR,
    TABLE_INFO_CACHE,
    PathLike,
    api_versions_request,
    as_path,
    bucket_info,
    is_partitioned,
    metadata_request,
    missing_table,
    normalise_table_error,
    partition_name_of,
    partitions_from_response,
    pb_path,
    server_info,
    table_info_from_metadata,
)
from fluss_proto.client import COORDINATOR, CallItem
from fluss_proto.cluster import (
    ClusterMetadata,
    ServerNode,
    TableMetadata,
    TablePath,
    parse_metadata,
)
from fluss_proto.error_codes import (
    LakeSnapshotNotExistError,
    LakeStorageNotConfiguredError,
    NoRebalanceInProgressError,
    PartitionNotExistError,
    SecurityDisabledError,
)
from fluss_proto.errors import FlussError
from fluss_proto.leaders import (
    LIST_OFFSETS_KIND,
    TABLE_STATS_KIND,
    BucketRef,
    LeaderKind,
    LeaderOutcome,
    NoBucketAnswerError,
    Outcomes,
    Placement,
    bucket_offset,
    leader_calls,
    select_buckets,
)
from fluss_proto.model import (
    AclBinding,
    AclFilter,
    AclListing,
    ActiveKvSnapshot,
    ActiveKvSnapshots,
    BucketInfo,
    BucketRebalance,
    BucketStats,
    ClusterHealth,
    ConfigEntry,
    DatabaseSummary,
    HealthStatus,
    KvSnapshot,
    KvSnapshots,
    LakeBucket,
    LakeSnapshot,
    OffsetSpec,
    OffsetsResult,
    OperationType,
    PartitionInfo,
    PermissionType,
    RebalanceProgress,
    RebalanceStatus,
    RemoteLogManifest,
    RemoteLogManifests,
    ResourceType,
    SchemaInfo,
    ServerInfo,
    TableRebalance,
    TableStats,
    enum_or_int,
)
from fluss_proto.types import (
    DatabaseInfo,
    TableInfo,
    parse_schema,
)

__all__ = [
    "LIST_OFFSETS_KIND",
    "METADATA_CHUNK",
    "PARTITION_SEPARATOR",
    "TABLE_INFO_CACHE",
    "TABLE_STATS_KIND",
    "AdminClient",
    "BucketRef",
    "FlussAdmin",
    "NoBucketAnswerError",
    "PathLike",
    "api_versions_request",
    "as_fluss_error",
    "as_path",
    "metadata_request",
    "normalise_table_error",
    "parse_metadata",
    "partition_name_of",
    "partitions_from_response",
    "server_info",
    "table_info_from_metadata",
]

#: Most table paths put in one GetMetadata request (the server answered 300 paths with
#: ~165 KB in one reply on 0.9.1; chunks keep single replies moderate on big clusters and
#: are sent concurrently, so they cost no extra round trip).
METADATA_CHUNK = 500


class AdminClient(Protocol):
    """What :class:`FlussAdmin` needs from a client (``FlussClient`` provides it)."""

    @property
    def metadata(self) -> ClusterMetadata: ...

    async def call(
        self,
        api: ApiKey | int,
        request: Message,
        *,
        node: int | None = None,
        coordinator: bool = False,
        timeout: float | None = None,
    ) -> Message: ...

    async def call_many(
        self,
        items: Iterable[CallItem],
        *,
        timeout: float | None = None,
    ) -> list[Message | BaseException]: ...


class FlussAdmin:
    """Read-only typed API. Create with a connected :class:`~fluss_proto.client.FlussClient`.

    Whole-call failures raise the client's typed errors (e.g.
    :class:`~fluss_proto.error_codes.TableNotExistError`,
    :class:`~fluss_proto.errors.UnsupportedByServerError`); leader-routed calls keep errors per
    bucket instead.

    Past 350 lines on purpose: it is the one public facade of about thirty typed calls, each a
    request and a conversion of a few lines; the conversions live in :mod:`fluss_proto.catalog`
    and :mod:`fluss_proto.leaders`, and konsole calls these methods by name.
    """

    def __init__(self, client: AdminClient, *, timeout: float | None = None) -> None:
        self._client = client
        self._timeout = timeout
        #: Awaited batches so far (one ``call`` or one ``call_many`` each).
        self.round_trips = 0
        #: Requests sent so far.
        self.requests = 0

    @property
    def client(self) -> AdminClient:
        return self._client

    # ------------------------------------------------------------------ plumbing

    async def _call(
        self, api: ApiKey, request: Message, *, node: int | None = None, coordinator: bool = False
    ) -> Any:
        self.round_trips += 1
        self.requests += 1
        return await self._client.call(
            api, request, node=node, coordinator=coordinator, timeout=self._timeout
        )

    async def batch(self, items: Sequence[CallItem]) -> list[Any]:
        """Send ``items`` concurrently (one round trip); results or exceptions, in order."""
        if not items:
            return []
        self.round_trips += 1
        self.requests += len(items)
        results = await self._client.call_many(items, timeout=self._timeout)
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, Exception):
                raise result  # cancellation and the like are not per-item failures
        return results

    def server_label(self, node: int | str | None) -> str:
        """The address of ``node`` (a tablet server id or COORDINATOR) for error texts."""
        md = self._client.metadata
        if node == COORDINATOR:
            return md.coordinator.address if md.coordinator else "coordinator"
        if isinstance(node, int) and node in md.tablet_servers:
            return md.tablet_servers[node].address
        return f"node {node}" if node is not None else "any"

    # ------------------------------------------------------------------ servers

    async def servers(self) -> tuple[ServerInfo, ...]:
        """Coordinator first, then tablet servers by id, each with its ApiVersions.

        Two round trips: one GetMetadata, then ApiVersions to every server at once. A
        server that cannot be reached keeps its place with ``error`` set.
        """
        resp = await self._call(ApiKey.GET_METADATA, pb.MetadataRequest())
        reply = parse_metadata(resp)
        return await self._servers_with_versions(reply.coordinator, reply.tablet_servers)

    async def _servers_with_versions(
        self, coordinator: ServerNode | None, tablets: Mapping[int, ServerNode]
    ) -> tuple[ServerInfo, ...]:
        targets: list[tuple[str, ServerNode, int | str]] = []
        if coordinator is not None:
            targets.append(("coordinator", coordinator, COORDINATOR))
        for node_id in sorted(tablets):
            targets.append(("tablet", tablets[node_id], node_id))
        results = await self.batch(
            [CallItem(t, ApiKey.API_VERSIONS, api_versions_request()) for _, _, t in targets]
        )
        return tuple(
            server_info(role, node, result)  # type: ignore[arg-type]
            for (role, node, _), result in zip(targets, results, strict=True)
        )

    # ------------------------------------------------------------------ catalog

    async def list_databases(self) -> tuple[str, ...]:
        resp = await self._call(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest())
        return tuple(resp.database_name)

    async def list_database_summaries(self) -> tuple[DatabaseSummary, ...]:
        resp = await self._call(
            ApiKey.LIST_DATABASES, pb.ListDatabasesRequest(include_summary=True)
        )
        return tuple(
            DatabaseSummary(s.database_name, s.created_time, s.table_count)
            for s in resp.database_summary
        )

    async def database_info(self, name: str) -> DatabaseInfo:
        resp = await self._call(
            ApiKey.GET_DATABASE_INFO, pb.GetDatabaseInfoRequest(database_name=name)
        )
        return DatabaseInfo.from_response(name, resp)

    async def database_exists(self, name: str) -> bool:
        resp = await self._call(
            ApiKey.DATABASE_EXISTS, pb.DatabaseExistsRequest(database_name=name)
        )
        return bool(resp.exists)

    async def list_tables(self, database: str) -> tuple[str, ...]:
        resp = await self._call(ApiKey.LIST_TABLES, pb.ListTablesRequest(database_name=database))
        return tuple(resp.table_name)

    async def table_exists(self, path: PathLike) -> bool:
        p = as_path(path)
        resp = await self._call(ApiKey.TABLE_EXISTS, pb.TableExistsRequest(table_path=pb_path(p)))
        return bool(resp.exists)

    async def table_info(self, path: PathLike) -> TableInfo:
        p = as_path(path)
        resp = await self._call(
            ApiKey.GET_TABLE_INFO, pb.GetTableInfoRequest(table_path=pb_path(p))
        )
        return TableInfo.from_response(p.database, p.table, resp)

    async def table_schema(self, path: PathLike, schema_id: int | None = None) -> SchemaInfo:
        """The latest schema, or the one with ``schema_id`` (SCHEMA_NOT_EXIST if unknown)."""
        p = as_path(path)
        req = pb.GetTableSchemaRequest(table_path=pb_path(p))
        if schema_id is not None:
            req.schema_id = schema_id
        resp = await self._call(ApiKey.GET_TABLE_SCHEMA, req)
        return SchemaInfo(resp.schema_id, parse_schema(resp.schema_json))

    async def list_partitions(self, path: PathLike) -> tuple[PartitionInfo, ...]:
        """Partitions by id. A non-partitioned table raises TableNotPartitionedError (37)."""
        p = as_path(path)
        resp = await self._call(
            ApiKey.LIST_PARTITION_INFOS, pb.ListPartitionInfosRequest(table_path=pb_path(p))
        )
        return partitions_from_response(resp)

    # ------------------------------------------------------------------ placement

    async def tables_metadata(
        self, paths: Iterable[PathLike]
    ) -> dict[TablePath, TableMetadata | FlussError]:
        """GetMetadata for many tables: chunks of :data:`METADATA_CHUNK` sent at once.

        A chunk the server rejects as a whole (a table in it was dropped: 0.9.1 answers
        UNKNOWN_SERVER_ERROR wrapping TableNotExistException) is asked again table by
        table, all at once, so only the vanished table carries the error. One round
        trip, two when a fallback was needed.
        """
        wanted = list(dict.fromkeys(as_path(p) for p in paths))
        if not wanted:
            return {}
        chunks = [wanted[i : i + METADATA_CHUNK] for i in range(0, len(wanted), METADATA_CHUNK)]
        # The coordinator answers a many-table GetMetadata in 10-20 ms where a 0.9.1 tablet
        # server takes 0.1-0.45 s (measured with 300 tables), so big lookups go there.
        target = COORDINATOR if len(wanted) > 1 else None
        results = await self.batch(
            [CallItem(target, ApiKey.GET_METADATA, metadata_request(chunk)) for chunk in chunks]
        )
        # No coordinator (crashed, failing over): any tablet server can answer. A server's
        # verdict on the tables themselves (e.g. one was dropped) is not worth a second ask.
        failed = [
            i for i, r in enumerate(results) if isinstance(r, BaseException) and server_failed(r)
        ]
        if target is COORDINATOR and failed:
            again = await self.batch(
                [CallItem(None, ApiKey.GET_METADATA, metadata_request(chunks[i])) for i in failed]
            )
            for i, result in zip(failed, again, strict=True):
                results[i] = result
        out: dict[TablePath, TableMetadata | FlussError] = {}
        retry: list[TablePath] = []
        for chunk, result in zip(chunks, results, strict=True):
            if isinstance(result, BaseException):
                if len(chunk) == 1:
                    out[chunk[0]] = as_fluss_error(normalise_table_error(result, chunk[0]))
                else:
                    retry.extend(chunk)
                continue
            tables = parse_metadata(result).tables
            for path in chunk:
                out[path] = tables.get(path) or missing_table(path)
        if retry:
            singles = await self.batch(
                [CallItem(None, ApiKey.GET_METADATA, metadata_request([p])) for p in retry]
            )
            for path, result in zip(retry, singles, strict=True):
                if isinstance(result, BaseException):
                    out[path] = as_fluss_error(normalise_table_error(result, path))
                    continue
                out[path] = parse_metadata(result).tables.get(path) or missing_table(path)
        return {p: out[p] for p in wanted}

    async def _placement(self, path: TablePath, partition: str | int | None) -> Placement:
        """Table metadata plus the partitions asked for (all when ``partition`` is None)."""
        if partition is None:
            resp = await self._table_metadata_call(path, metadata_request([path]))
            table = parse_metadata(resp).tables.get(path)
            if table is None:
                raise missing_table(path)
            if not is_partitioned(table):
                return Placement(table, (), False)
            parts = await self.list_partitions(path)
            if not parts:
                return Placement(table, (), True)
            req = metadata_request([path], partition_ids=[p.partition_id for p in parts])
        elif isinstance(partition, str):
            req = metadata_request([path], partition_names=[(path, partition)])
        else:
            req = metadata_request([path], partition_ids=[int(partition)])
        resp = await self._table_metadata_call(path, req)
        reply = parse_metadata(resp)
        table = reply.tables.get(path)
        if table is None:
            raise missing_table(path)
        chosen = tuple(
            sorted(
                (p for p in reply.partitions.values() if p.table_id == table.table_id),
                key=lambda p: p.partition_id,
            )
        )
        return Placement(table, chosen, True)

    async def _table_metadata_call(self, path: TablePath, req: pb.MetadataRequest) -> Any:
        try:
            return await self._call(ApiKey.GET_METADATA, req)
        except FlussError as exc:
            typed = normalise_table_error(exc, path)
            if typed is exc:
                raise
            raise typed from exc

    async def bucket_metadata(
        self, path: PathLike, partition: str | int | None = None
    ) -> tuple[BucketInfo, ...]:
        """Leader, replicas and leader epoch of every bucket (of one partition, or of all
        partitions of a partitioned table when ``partition`` is None).

        ``isr`` is always None: the client protocol does not carry ISR.
        """
        placement = await self._placement(as_path(path), partition)
        if not placement.partitioned:
            t = placement.table
            return tuple(bucket_info(t.table_id, None, None, b) for b in t.buckets)
        return tuple(
            bucket_info(p.table_id, p.partition_id, p.partition_name, b)
            for p in placement.partitions
            for b in p.buckets
        )

    # ------------------------------------------------------------------ leader-routed

    async def leader_calls(
        self,
        kind: LeaderKind,
        refs: Sequence[BucketRef],
        variants: Sequence[Any] = (None,),
    ) -> Outcomes:
        """:func:`fluss_proto.leaders.leader_calls` through this admin."""
        return await leader_calls(self, kind, refs, variants)

    async def list_offsets(
        self,
        path: PathLike,
        spec: OffsetSpec,
        buckets: Iterable[int] | None = None,
        partition: str | int | None = None,
    ) -> OffsetsResult:
        """Offsets per bucket, asked of each leader (one request per leader, concurrently).

        ``partition`` is a partition name or id; None on a partitioned table means every
        partition. ``buckets`` limits the bucket ids (default: all). Per-bucket failures
        are kept in the result (``BucketOffset.error``), never raised for the whole call.
        """
        p = as_path(path)
        placement = await self._placement(p, partition)
        refs = select_buckets(placement, buckets)
        outcomes = await self.leader_calls(LIST_OFFSETS_KIND, refs, [spec])
        return OffsetsResult(
            table_path=p,
            table_id=placement.table.table_id,
            spec=spec,
            buckets=tuple(bucket_offset(ref, outcomes.get((0, ref.key))) for ref in refs),
        )

    async def table_stats(self, path: PathLike, partition: str | int | None = None) -> TableStats:
        """Row counts per bucket via GetTableStats (one request per leader, concurrently).

        A leader that does not advertise GET_TABLE_STATS gets nothing sent; its buckets
        carry :class:`~fluss_proto.errors.UnsupportedByServerError`.
        """
        p = as_path(path)
        placement = await self._placement(p, partition)
        refs = select_buckets(placement, None)
        outcomes = await self.leader_calls(TABLE_STATS_KIND, refs)
        stats = []
        for ref in refs:
            o = outcomes.get((0, ref.key)) or LeaderOutcome(ref.leader_id, None, None)
            stats.append(
                BucketStats(
                    ref.table_id, ref.partition_id, ref.bucket_id, o.leader_id, o.value, o.error
                )
            )
        return TableStats(p, placement.table.table_id, tuple(stats))

    # ------------------------------------------------------------------ snapshots

    async def latest_kv_snapshots(
        self, path: PathLike, partition: str | int | None = None
    ) -> KvSnapshots:
        """Latest completed KV snapshot per bucket of a primary-key table (or partition).

        Log tables raise NonPrimaryKeyTableError (20). A partitioned table needs
        ``partition`` (a name, or an id resolved through ListPartitionInfos).
        """
        p = as_path(path)
        req = pb.GetLatestKvSnapshotsRequest(table_path=pb_path(p))
        if isinstance(partition, int):
            names = {x.partition_id: x.name for x in await self.list_partitions(p)}
            if partition not in names:
                raise PartitionNotExistError(f"partition id {partition} of {p} does not exist")
            req.partition_name = names[partition]
        elif partition is not None:
            req.partition_name = partition
        resp = await self._call(ApiKey.GET_LATEST_KV_SNAPSHOTS, req)
        return KvSnapshots(
            table_id=resp.table_id,
            partition_id=opt(resp, "partition_id"),
            buckets=tuple(
                KvSnapshot(s.bucket_id, opt(s, "snapshot_id"), opt(s, "log_offset"))
                for s in sorted(resp.latest_snapshots, key=lambda s: s.bucket_id)
            ),
        )

    async def lake_snapshot(
        self, path: PathLike, snapshot_id: int | None = None, *, readable: bool = False
    ) -> LakeSnapshot:
        """The latest (or ``snapshot_id``, or latest readable) lake snapshot.

        No snapshot (53) or no lake storage (40) gives ``exists=False`` with the reason.
        """
        p = as_path(path)
        req = pb.GetLakeSnapshotRequest(table_path=pb_path(p))
        if snapshot_id is not None:
            req.snapshot_id = snapshot_id
        if readable:
            req.readable = True
        try:
            resp = await self._call(ApiKey.GET_LAKE_SNAPSHOT, req)
        except (LakeSnapshotNotExistError, LakeStorageNotConfiguredError) as exc:
            return LakeSnapshot(p, False, reason=exc.message or exc.name)
        return LakeSnapshot(
            table_path=p,
            exists=True,
            table_id=resp.table_id,
            snapshot_id=resp.snapshotId,
            buckets=tuple(
                LakeBucket(
                    opt(b, "partition_id"),
                    opt(b, "partition_name"),
                    b.bucket_id,
                    opt(b, "log_offset"),
                )
                for b in resp.bucket_snapshots
            ),
        )

    # ------------------------------------------------------------------ coordinator

    async def cluster_configs(self) -> tuple[ConfigEntry, ...]:
        resp = await self._call(
            ApiKey.DESCRIBE_CLUSTER_CONFIGS, pb.DescribeClusterConfigsRequest(), coordinator=True
        )
        return _config_entries(resp)

    async def server_configs(
        self, nodes: Sequence[int]
    ) -> dict[int, tuple[ConfigEntry, ...] | Exception]:
        """DescribeClusterConfigs asked of each tablet server in ``nodes`` (one round trip).

        Every server answers it with *its own* configuration (RpcServiceBase, both lines):
        its ``server.yaml`` keys and the cluster's dynamic keys. A tablet server's keys
        (``data.dir``, the disk write limits) are in its own answer only, not the
        coordinator's. A server that failed is its exception."""
        request = pb.DescribeClusterConfigsRequest()
        results = await self.batch(
            [CallItem(n, ApiKey.DESCRIBE_CLUSTER_CONFIGS, request) for n in nodes]
        )
        return {
            n: r if isinstance(r, Exception) else _config_entries(r)
            for n, r in zip(nodes, results, strict=True)
        }

    async def list_acls(self, filter: AclFilter | None = None) -> AclListing:
        """ACLs matching ``filter`` (default: all). No authorizer -> ``enabled=False``."""
        f = filter or AclFilter()
        pf = pb.PbAclFilter(
            resource_type=int(f.resource_type),
            operation_type=int(f.operation),
            permission_type=int(f.permission),
        )
        for name, value in (
            ("resource_name", f.resource_name),
            ("principal_name", f.principal_name),
            ("principal_type", f.principal_type),
            ("host", f.host),
        ):
            if value is not None:
                setattr(pf, name, value)
        try:
            resp = await self._call(
                ApiKey.LIST_ACLS, pb.ListAclsRequest(acl_filter=pf), coordinator=True
            )
        except SecurityDisabledError as exc:
            return AclListing(enabled=False, reason=exc.message or exc.name)
        return AclListing(
            enabled=True,
            bindings=tuple(
                AclBinding(
                    resource_type=enum_or_int(ResourceType, a.resource_type),
                    resource_name=a.resource_name,
                    principal_name=a.principal_name,
                    principal_type=a.principal_type,
                    host=a.host,
                    operation=enum_or_int(OperationType, a.operation_type),
                    permission=enum_or_int(PermissionType, a.permission_type),
                )
                for a in resp.acl
            ),
        )

    async def rebalance_progress(self, rebalance_id: str | None = None) -> RebalanceProgress:
        """The current (or given) rebalance; ``exists`` False when there is none."""
        req = pb.ListRebalanceProgressRequest()
        if rebalance_id is not None:
            req.rebalance_id = rebalance_id
        try:
            resp = await self._call(ApiKey.LIST_REBALANCE_PROGRESS, req, coordinator=True)
        except NoRebalanceInProgressError:
            return RebalanceProgress(None, None)
        status = opt(resp, "rebalance_status")
        return RebalanceProgress(
            rebalance_id=opt(resp, "rebalance_id"),
            status=enum_or_int(RebalanceStatus, status) if status is not None else None,
            tables=tuple(
                TableRebalance(
                    t.table_id,
                    tuple(
                        BucketRebalance(
                            partition_id=opt(b.rebalance_plan, "partition_id"),
                            bucket_id=b.rebalance_plan.bucket_id,
                            original_leader=opt(b.rebalance_plan, "original_leader"),
                            new_leader=opt(b.rebalance_plan, "new_leader"),
                            original_replicas=tuple(b.rebalance_plan.original_replicas),
                            new_replicas=tuple(b.rebalance_plan.new_replicas),
                            status=enum_or_int(RebalanceStatus, b.rebalance_status),
                        )
                        for b in t.buckets_progress
                    ),
                )
                for t in resp.table_progress
            ),
        )

    async def cluster_health(self) -> ClusterHealth:
        """GetClusterHealth (Fluss 1.0 only), asked of the coordinator.

        A 0.9 coordinator does not offer it: :class:`~fluss_proto.errors.UnsupportedByServerError`
        is raised and nothing is sent.
        """
        resp = await self._call(
            ApiKey.GET_CLUSTER_HEALTH, pb.GetClusterHealthRequest(), coordinator=True
        )
        status = enum_or_int(HealthStatus, resp.status)
        return ClusterHealth(
            num_replicas=resp.num_replicas,
            in_sync_replicas=resp.in_sync_replicas,
            num_leader_replicas=resp.num_leader_replicas,
            active_leader_replicas=resp.active_leader_replicas,
            # Fluss's client maps every code other than 0..2 to UNKNOWN; so do we.
            status=status if isinstance(status, HealthStatus) else HealthStatus.UNKNOWN,
        )

    # ------------------------------------------------------------------ 1.0 storage listings
    # ListKvSnapshots (1064) and ListRemoteLogManifests (1063): coordinator-only Fluss 1.0
    # APIs (made for orphan cleanup) that say what the cluster keeps in remote storage.
    # Both take a table id: a path costs one GetTableInfo first. On a 0.9 coordinator the
    # client raises UnsupportedByServer before sending the listing itself.

    async def active_kv_snapshots(
        self, table: PathLike | int, partition: str | int | None = None
    ) -> ActiveKvSnapshots:
        """Every KV snapshot the coordinator keeps (retained or leased), per bucket.

        ``table`` is a path or a table id; ``partition`` a partition id, or a name when
        ``table`` is a path. Unknown table: TableNotExistError (7); a partition that is not
        the table's: PartitionNotExistError (36). A log table answers with no snapshots.
        """
        table_id, partition_id = await self._table_and_partition_ids(table, partition)
        req = pb.ListKvSnapshotsRequest(table_id=table_id)
        if partition_id is not None:
            req.partition_id = partition_id
        resp = await self._call(ApiKey.LIST_KV_SNAPSHOTS, req, coordinator=True)
        return ActiveKvSnapshots(
            table_id=resp.table_id,
            partition_id=opt(resp, "partition_id"),
            snapshots=tuple(
                sorted(
                    # the server always sets snapshot_id here (it is optional in the message)
                    (
                        ActiveKvSnapshot(s.bucket_id, s.snapshot_id)
                        for s in resp.active_snapshots
                        if s.HasField("snapshot_id")
                    ),
                    key=lambda s: (s.bucket_id, s.snapshot_id),
                )
            ),
        )

    async def remote_log_manifests(
        self, table: PathLike | int, partition: str | int | None = None
    ) -> RemoteLogManifests:
        """The remote log manifest of every bucket that has tiered log segments.

        Arguments as :meth:`active_kv_snapshots`. Buckets with nothing in remote storage are
        not listed; an unknown table id answers an empty listing (seen on the 1.0 line).
        """
        table_id, partition_id = await self._table_and_partition_ids(table, partition)
        req = pb.ListRemoteLogManifestsRequest(table_id=table_id)
        if partition_id is not None:
            req.partition_id = partition_id
        resp = await self._call(ApiKey.LIST_REMOTE_LOG_MANIFESTS, req, coordinator=True)
        return _manifests(resp, table_id, partition_id)

    async def remote_log_manifests_of(
        self, table_ids: Sequence[int]
    ) -> list[RemoteLogManifests | Exception]:
        """:meth:`remote_log_manifests` of many tables by id (every partition), pipelined to
        the coordinator in one round trip; each result or its exception, in order."""
        items = [
            CallItem(
                COORDINATOR,
                ApiKey.LIST_REMOTE_LOG_MANIFESTS,
                pb.ListRemoteLogManifestsRequest(table_id=t),
            )
            for t in table_ids
        ]
        results = await self.batch(items)
        return [
            r if isinstance(r, Exception) else _manifests(r, t, None)
            for t, r in zip(table_ids, results, strict=True)
        ]

    async def _table_and_partition_ids(
        self, table: PathLike | int, partition: str | int | None
    ) -> tuple[int, int | None]:
        if isinstance(table, int) and not isinstance(table, bool):
            if isinstance(partition, str):
                raise ValueError("a partition name needs the table's path, not its id")
            return table, partition
        path = as_path(table)
        table_id = (await self.table_info(path)).table_id
        if isinstance(partition, str):
            ids = {x.name: x.partition_id for x in await self.list_partitions(path)}
            if partition not in ids:
                raise PartitionNotExistError(f"partition {partition!r} of {path} does not exist")
            return table_id, ids[partition]
        return table_id, partition

    # ------------------------------------------------------------------ end of 1.0 listings

    # Older name, used by gather.
    _server_label = server_label


def _manifests(resp: Any, table_id: int, partition_id: int | None) -> RemoteLogManifests:
    manifests = (
        RemoteLogManifest(
            table_id=m.table_bucket.table_id,
            partition_id=opt(m.table_bucket, "partition_id"),
            bucket_id=m.table_bucket.bucket_id,
            manifest_path=m.remote_log_manifest_path,
            remote_log_end_offset=m.remote_log_end_offset,
        )
        for m in resp.manifests
    )
    return RemoteLogManifests(
        table_id=table_id,
        partition_id=partition_id,
        manifests=tuple(
            sorted(
                manifests,
                key=lambda m: (m.partition_id is not None, m.partition_id or 0, m.bucket_id),
            )
        ),
    )


def _config_entries(resp: Any) -> tuple[ConfigEntry, ...]:
    return tuple(
        ConfigEntry(c.config_key, opt(c, "config_value"), c.config_source) for c in resp.configs
    )
