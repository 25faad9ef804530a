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

Leader-routed calls keep errors per bucket. A bucket whose error means "your metadata is
stale" (NOT_LEADER_OR_FOLLOWER 12, UNKNOWN_TABLE_OR_BUCKET 21, LEADER_NOT_AVAILABLE 44, a
lost connection or an unknown node) is retried once, after one concurrent metadata refresh
of the tables concerned; a bucket still failing keeps its typed error.

Metadata is read with GetMetadata requests of our own (the client's cache is not
modified). Partitioned tables carry no table-level buckets in GetMetadata (observed on
0.9.1): their buckets come per partition.

Counters: :attr:`FlussAdmin.round_trips` counts awaited batches (a ``call`` or one
``call_many``), :attr:`FlussAdmin.requests` the requests in them.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple, Protocol

from google.protobuf.message import Message

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import ApiKey
from fluss_proto.client import (
    CLIENT_SOFTWARE_NAME,
    CLIENT_SOFTWARE_VERSION,
    COORDINATOR,
    BucketMetadata,
    ClusterMetadata,
    PartitionMetadata,
    ServerNode,
    TableMetadata,
    TablePath,
    parse_metadata,
)
from fluss_proto.error_codes import (
    LakeSnapshotNotExistError,
    LakeStorageNotConfiguredError,
    LeaderNotAvailableError,
    NoRebalanceInProgressError,
    PartitionNotExistError,
    SecurityDisabledError,
    TableNotExistError,
    UnknownServerError,
    UnknownTableOrBucketError,
    from_code,
)
from fluss_proto.errors import ConnectionFailure, FlussError, ServerError
from fluss_proto.model import (
    AclBinding,
    AclFilter,
    AclListing,
    ActiveKvSnapshot,
    ActiveKvSnapshots,
    ApiVersionRange,
    AtTimestamp,
    BucketInfo,
    BucketOffset,
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
    FrozenDict,
    TableDescriptor,
    TableInfo,
    parse_schema,
    parse_table_descriptor,
)

__all__ = [
    "LIST_OFFSETS_KIND",
    "METADATA_CHUNK",
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

PathLike = TablePath | tuple[str, str] | str
#: Most table paths put in one GetMetadata request (the server answered 300 paths with
#: ~165 KB in one reply on 0.9.1; chunks keep single replies moderate on big clusters and
#: are sent concurrently, so they cost no extra round trip).
METADATA_CHUNK = 500
#: Parsed table documents kept (per distinct table JSON); a poll meets the same ones again.
TABLE_INFO_CACHE = 4096
#: Separator Fluss puts between partition values in a partition name.
PARTITION_SEPARATOR = "$"


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
        items: Iterable[tuple[int | str | None, ApiKey | int, Message]],
        *,
        timeout: float | None = None,
    ) -> list[Message | BaseException]: ...


class NoBucketAnswerError(FlussError):
    """The leader's reply did not mention a bucket that was asked for."""


@dataclass(frozen=True, slots=True)
class BucketRef:
    """One bucket to ask a leader about."""

    path: TablePath
    table_id: int
    partition_id: int | None
    partition_name: str | None
    bucket_id: int
    leader_id: int | None

    @property
    def key(self) -> tuple[int, int | None, int]:
        return (self.table_id, self.partition_id, self.bucket_id)


class _Outcome(NamedTuple):  # a tuple: thousands are built per gather
    leader_id: int | None
    value: Any
    error: FlussError | None


@dataclass(frozen=True, slots=True)
class _Placement:
    """GetMetadata result for one table and the partitions asked for."""

    table: TableMetadata
    partitions: tuple[PartitionMetadata, ...]
    partitioned: bool

    def refs(self) -> list[BucketRef]:
        if not self.partitioned:
            return [
                _ref(self.table.path, self.table.table_id, None, None, b)
                for b in self.table.buckets
            ]
        return [
            _ref(self.table.path, self.table.table_id, p.partition_id, p.partition_name, b)
            for p in self.partitions
            for b in p.buckets
        ]


def _ref(
    path: TablePath, table_id: int, pid: int | None, pname: str | None, b: BucketMetadata
) -> BucketRef:
    return BucketRef(path, table_id, pid, pname, b.bucket_id, b.leader_id)


def as_path(value: PathLike | Any) -> TablePath:
    """A TablePath from a TablePath, ``(db, table)``, ``"db.table"``, or any object with
    ``database_name`` and ``table_name`` attributes (e.g. pyfluss's TablePath)."""
    database, table = getattr(value, "database_name", None), getattr(value, "table_name", None)
    if database is not None and table is not None:
        return TablePath(str(database), str(table))
    return TablePath.of(value)


def partition_name_of(spec: Iterable[tuple[str, str]]) -> str:
    """Fluss's partition name: the values in partition-key order joined by ``$``."""
    return PARTITION_SEPARATOR.join(value for _key, value in spec)


def _pb_path(path: TablePath) -> pb.PbTablePath:
    return pb.PbTablePath(database_name=path.database, table_name=path.table)


def _opt(msg: Message, name: str) -> Any:
    return getattr(msg, name) if msg.HasField(name) else None


def metadata_request(
    tables: Iterable[TablePath] = (),
    *,
    partition_ids: Iterable[int] = (),
    partition_names: Iterable[tuple[TablePath, str]] = (),
) -> pb.MetadataRequest:
    req = pb.MetadataRequest()
    for path in tables:
        req.table_path.add(database_name=path.database, table_name=path.table)
    for path, name in partition_names:
        req.partitions_path.add(
            database_name=path.database, table_name=path.table, partition_name=name
        )
    req.partitions_id.extend(partition_ids)
    return req


def table_info_from_metadata(t: TableMetadata) -> TableInfo:
    """A TableInfo from GetMetadata's table entry (same JSON as GetTableInfo's).

    Memoised: a poll sees the same tables again and again, and TableInfo is immutable.
    """
    return _table_info(
        t.path, t.table_id, t.schema_id, t.table_json, t.created_time, t.modified_time,
        t.remote_data_dir,
    )  # fmt: skip


@functools.lru_cache(maxsize=TABLE_INFO_CACHE)
def _table_info(
    path: TablePath,
    table_id: int,
    schema_id: int,
    table_json: bytes,
    created_ms: int,
    modified_ms: int,
    remote_data_dir: str | None,
) -> TableInfo:
    return TableInfo.from_descriptor(
        path.database,
        path.table,
        table_id=table_id,
        schema_id=schema_id,
        descriptor=_descriptor(table_json),
        created_ms=created_ms,
        modified_ms=modified_ms,
        remote_data_dir=remote_data_dir,
    )


@functools.lru_cache(maxsize=TABLE_INFO_CACHE)
def _descriptor(table_json: bytes) -> TableDescriptor:
    return parse_table_descriptor(table_json)


def _is_partitioned(t: TableMetadata) -> bool:
    return bool(_descriptor(t.table_json).partition_keys)


def normalise_table_error(exc: BaseException, path: TablePath) -> BaseException:
    """Fluss 0.9.1 answers GetMetadata for a missing table with UNKNOWN_SERVER_ERROR (-1)
    whose text wraps ``TableNotExistException``; give that its proper type (code 7)."""
    if isinstance(exc, UnknownServerError) and "TableNotExistException" in (exc.message or ""):
        return TableNotExistError(
            f"Table '{path}' does not exist (reported as UNKNOWN_SERVER_ERROR "
            "wrapping TableNotExistException)",
            api=exc.api,
            server=exc.server,
        )
    return exc


def _needs_refresh(err: BaseException | None) -> bool:
    """Errors that a metadata refresh (and a new leader) may cure."""
    return bool(getattr(err, "refresh_metadata", False)) or isinstance(err, ConnectionFailure)


def as_fluss_error(exc: BaseException) -> FlussError:
    if isinstance(exc, FlussError):
        return exc
    if isinstance(exc, Exception):
        wrapped = FlussError(f"{type(exc).__name__}: {exc}")
        wrapped.__cause__ = exc
        return wrapped
    raise exc  # CancelledError, KeyboardInterrupt...


class _LeaderKind:
    """How one leader-routed API is grouped, built and parsed."""

    api: ApiKey

    def group(self, ref: BucketRef) -> Hashable:
        raise NotImplementedError

    def build(self, refs: Sequence[BucketRef], variant: Any) -> Message:
        raise NotImplementedError

    def parse(
        self, resp: Message, refs: Sequence[BucketRef], server: str
    ) -> dict[tuple[int, int | None, int], tuple[Any, FlussError | None]]:
        raise NotImplementedError


class _ListOffsets(_LeaderKind):
    api = ApiKey.LIST_OFFSETS

    def group(self, ref: BucketRef) -> Hashable:
        return (ref.table_id, ref.partition_id)

    def build(self, refs: Sequence[BucketRef], variant: OffsetSpec) -> Message:
        first = refs[0]
        req = pb.ListOffsetsRequest(
            follower_server_id=-1,
            offset_type=variant.offset_type,
            table_id=first.table_id,
            bucket_id=[r.bucket_id for r in refs],
        )
        if first.partition_id is not None:
            req.partition_id = first.partition_id
        if isinstance(variant, AtTimestamp):
            req.startTimestamp = variant.ms
        return req

    def parse(
        self, resp: Message, refs: Sequence[BucketRef], server: str
    ) -> dict[tuple[int, int | None, int], tuple[Any, FlussError | None]]:
        assert isinstance(resp, pb.ListOffsetsResponse)
        first = refs[0]
        out: dict[tuple[int, int | None, int], tuple[Any, FlussError | None]] = {}
        for b in resp.buckets_resp:
            key = (first.table_id, first.partition_id, b.bucket_id)
            if b.HasField("error_code") and b.error_code != 0:
                out[key] = (
                    None,
                    from_code(
                        b.error_code, _opt(b, "error_message"), api=self.api.name, server=server
                    ),
                )
            elif b.HasField("offset"):
                out[key] = (b.offset, None)
        return out


class _TableStats(_LeaderKind):
    api = ApiKey.GET_TABLE_STATS

    def group(self, ref: BucketRef) -> Hashable:
        return ref.table_id

    def build(self, refs: Sequence[BucketRef], variant: Any) -> Message:
        req = pb.GetTableStatsRequest(table_id=refs[0].table_id)
        for r in refs:
            item = req.buckets_req.add(bucket_id=r.bucket_id)
            if r.partition_id is not None:
                item.partition_id = r.partition_id
        return req

    def parse(
        self, resp: Message, refs: Sequence[BucketRef], server: str
    ) -> dict[tuple[int, int | None, int], tuple[Any, FlussError | None]]:
        assert isinstance(resp, pb.GetTableStatsResponse)
        table_id = refs[0].table_id
        out: dict[tuple[int, int | None, int], tuple[Any, FlussError | None]] = {}
        for b in resp.buckets_resp:
            key = (table_id, _opt(b, "partition_id"), b.bucket_id)
            if b.HasField("error_code") and b.error_code != 0:
                out[key] = (
                    None,
                    from_code(
                        b.error_code, _opt(b, "error_message"), api=self.api.name, server=server
                    ),
                )
            else:
                out[key] = (_opt(b, "row_count"), None)
        return out


_LIST_OFFSETS = _ListOffsets()
_TABLE_STATS = _TableStats()


class FlussAdmin:
    """Read-only typed API. Create with a connected :class:`~fluss_proto.client.FlussClient`.

    Whole-call failures raise the client's typed errors (e.g.
    :class:`~fluss_proto.error_codes.TableNotExistError`,
    :class:`~fluss_proto.errors.UnsupportedByServer`); leader-routed calls keep errors per
    bucket instead.
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

    async def batch(self, items: Sequence[tuple[int | str | None, ApiKey, Message]]) -> list[Any]:
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

    def _server_label(self, node: int | str | None) -> str:
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
        coordinator, tablets, _, _ = parse_metadata(resp)
        return await self._servers_with_versions(coordinator, tablets)

    async def _servers_with_versions(
        self, coordinator: ServerNode | None, tablets: Mapping[int, ServerNode]
    ) -> tuple[ServerInfo, ...]:
        targets: list[tuple[str, ServerNode, int | str]] = []
        if coordinator is not None:
            targets.append(("coordinator", coordinator, COORDINATOR))
        for node_id in sorted(tablets):
            targets.append(("tablet", tablets[node_id], node_id))
        results = await self.batch(
            [(t, ApiKey.API_VERSIONS, api_versions_request()) for _, _, t in targets]
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
        resp = await self._call(ApiKey.TABLE_EXISTS, pb.TableExistsRequest(table_path=_pb_path(p)))
        return bool(resp.exists)

    async def table_info(self, path: PathLike) -> TableInfo:
        p = as_path(path)
        resp = await self._call(
            ApiKey.GET_TABLE_INFO, pb.GetTableInfoRequest(table_path=_pb_path(p))
        )
        return TableInfo.from_response(p.database, p.table, resp)

    async def table_schema(self, path: PathLike, schema_id: int | None = None) -> SchemaInfo:
        """The latest schema, or the one with ``schema_id`` (SCHEMA_NOT_EXIST if unknown)."""
        p = as_path(path)
        req = pb.GetTableSchemaRequest(table_path=_pb_path(p))
        if schema_id is not None:
            req.schema_id = schema_id
        resp = await self._call(ApiKey.GET_TABLE_SCHEMA, req)
        return SchemaInfo(resp.schema_id, parse_schema(resp.schema_json))

    async def list_partitions(self, path: PathLike) -> tuple[PartitionInfo, ...]:
        """Partitions by id. A non-partitioned table raises TableNotPartitionedError (37)."""
        p = as_path(path)
        resp = await self._call(
            ApiKey.LIST_PARTITION_INFOS, pb.ListPartitionInfosRequest(table_path=_pb_path(p))
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
            [(target, ApiKey.GET_METADATA, metadata_request(chunk)) for chunk in chunks]
        )
        # No coordinator (crashed, failing over): any tablet server can answer. A server's
        # verdict on the tables themselves (e.g. one was dropped) is not worth a second ask.
        failed = [
            i
            for i, r in enumerate(results)
            if isinstance(r, BaseException) and (not isinstance(r, ServerError) or r.retriable)
        ]
        if target is COORDINATOR and failed:
            again = await self.batch(
                [(None, ApiKey.GET_METADATA, metadata_request(chunks[i])) for i in failed]
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
            tables = parse_metadata(result)[2]
            for path in chunk:
                out[path] = tables.get(path) or _missing_table(path)
        if retry:
            singles = await self.batch(
                [(None, ApiKey.GET_METADATA, metadata_request([p])) for p in retry]
            )
            for path, result in zip(retry, singles, strict=True):
                if isinstance(result, BaseException):
                    out[path] = as_fluss_error(normalise_table_error(result, path))
                    continue
                out[path] = parse_metadata(result)[2].get(path) or _missing_table(path)
        return {p: out[p] for p in wanted}

    async def _placement(self, path: TablePath, partition: str | int | None) -> _Placement:
        """Table metadata plus the partitions asked for (all when ``partition`` is None)."""
        if partition is None:
            resp = await self._table_metadata_call(path, metadata_request([path]))
            table = parse_metadata(resp)[2].get(path)
            if table is None:
                raise _missing_table(path)
            if not _is_partitioned(table):
                return _Placement(table, (), False)
            parts = await self.list_partitions(path)
            if not parts:
                return _Placement(table, (), True)
            req = metadata_request([path], partition_ids=[p.partition_id for p in parts])
        elif isinstance(partition, str):
            req = metadata_request([path], partition_names=[(path, partition)])
        else:
            req = metadata_request([path], partition_ids=[int(partition)])
        resp = await self._table_metadata_call(path, req)
        _, _, tables, partitions = parse_metadata(resp)
        table = tables.get(path)
        if table is None:
            raise _missing_table(path)
        chosen = tuple(
            sorted(
                (p for p in partitions.values() if p.table_id == table.table_id),
                key=lambda p: p.partition_id,
            )
        )
        return _Placement(table, chosen, True)

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
            return tuple(_bucket_info(t.table_id, None, None, b) for b in t.buckets)
        return tuple(
            _bucket_info(p.table_id, p.partition_id, p.partition_name, b)
            for p in placement.partitions
            for b in p.buckets
        )

    # ------------------------------------------------------------------ leader-routed

    async def leader_calls(
        self,
        kind: _LeaderKind,
        refs: Sequence[BucketRef],
        variants: Sequence[Any] = (None,),
    ) -> dict[tuple[int, tuple[int, int | None, int]], _Outcome]:
        """Ask each bucket's leader, grouped per leader, once per variant, concurrently.

        Returns ``(variant index, (table_id, partition_id, bucket_id)) -> outcome``.
        Stale-metadata failures are retried once after a metadata refresh.
        """
        jobs = [(i, ref) for i in range(len(variants)) for ref in refs]
        outcomes, retry = await self._leader_round(kind, jobs, variants)
        if retry:
            leaders = await self._fresh_leaders([ref for _, ref in retry])
            again = [
                (i, replace(ref, leader_id=leaders[ref.key]))
                for i, ref in retry
                if ref.key in leaders
            ]
            if again:
                second, _ = await self._leader_round(kind, again, variants)
                outcomes.update(second)
        return outcomes

    async def _leader_round(
        self,
        kind: _LeaderKind,
        jobs: Sequence[tuple[int, BucketRef]],
        variants: Sequence[Any],
    ) -> tuple[
        dict[tuple[int, tuple[int, int | None, int]], _Outcome],
        list[tuple[int, BucketRef]],
    ]:
        outcomes: dict[tuple[int, tuple[int, int | None, int]], _Outcome] = {}
        retry: list[tuple[int, BucketRef]] = []
        groups: dict[tuple[int, int, Hashable], list[BucketRef]] = defaultdict(list)
        for i, ref in jobs:
            if ref.leader_id is None:
                err = LeaderNotAvailableError(
                    f"bucket {ref.bucket_id} of {ref.path} has no leader in the metadata",
                    api=kind.api.name,
                )
                outcomes[(i, ref.key)] = _Outcome(None, None, err)
                retry.append((i, ref))
                continue
            groups[(i, ref.leader_id, kind.group(ref))].append(ref)
        order = list(groups)
        results = await self.batch(
            [(g[1], kind.api, kind.build(groups[g], variants[g[0]])) for g in order]
        )
        labels: dict[int, str] = {}
        for g, result in zip(order, results, strict=True):
            i, leader, _ = g
            refs = groups[g]
            if isinstance(result, BaseException):
                failure = as_fluss_error(result)
                for ref in refs:
                    outcomes[(i, ref.key)] = _Outcome(leader, None, failure)
                    if _needs_refresh(failure):
                        retry.append((i, ref))
                continue
            server = labels.get(leader)
            if server is None:
                server = labels[leader] = self._server_label(leader)
            try:
                answers = kind.parse(result, refs, server)
            except FlussError as exc:
                answers = {ref.key: (None, exc) for ref in refs}
            for ref in refs:
                key = ref.key
                answer = answers.get(key)
                if answer is None:
                    answer = (
                        None,
                        NoBucketAnswerError(
                            f"{kind.api.name} reply from {server} did not mention bucket "
                            f"{ref.bucket_id} of {ref.path}"
                        ),
                    )
                outcomes[(i, key)] = _Outcome(leader, *answer)
                if answer[1] is not None and _needs_refresh(answer[1]):
                    retry.append((i, ref))
        return outcomes, retry

    async def _fresh_leaders(
        self, refs: Sequence[BucketRef]
    ) -> dict[tuple[int, int | None, int], int | None]:
        """Current leaders of ``refs``: one GetMetadata per table, all at once.

        Buckets whose table (or partition) could not be refreshed are left out.
        """
        per_table: dict[TablePath, set[int]] = defaultdict(set)
        for ref in refs:
            ids = per_table[ref.path]
            if ref.partition_id is not None:
                ids.add(ref.partition_id)
        paths = list(per_table)
        results = await self.batch(
            [
                (
                    None,
                    ApiKey.GET_METADATA,
                    metadata_request([p], partition_ids=sorted(per_table[p])),
                )
                for p in paths
            ]
        )
        leaders: dict[tuple[int, int | None, int], int | None] = {}
        for result in results:
            if isinstance(result, BaseException):
                continue
            _, _, tables, partitions = parse_metadata(result)
            for t in tables.values():
                for b in t.buckets:
                    leaders[(t.table_id, None, b.bucket_id)] = b.leader_id
            for p in partitions.values():
                for b in p.buckets:
                    leaders[(p.table_id, p.partition_id, b.bucket_id)] = b.leader_id
        return leaders

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
        refs = _select(placement, buckets)
        outcomes = await self.leader_calls(_LIST_OFFSETS, refs, [spec])
        return OffsetsResult(
            table_path=p,
            table_id=placement.table.table_id,
            spec=spec,
            buckets=tuple(_bucket_offset(ref, outcomes.get((0, ref.key))) for ref in refs),
        )

    async def table_stats(self, path: PathLike, partition: str | int | None = None) -> TableStats:
        """Row counts per bucket via GetTableStats (one request per leader, concurrently).

        A leader that does not advertise GET_TABLE_STATS gets nothing sent; its buckets
        carry :class:`~fluss_proto.errors.UnsupportedByServer`.
        """
        p = as_path(path)
        placement = await self._placement(p, partition)
        refs = _select(placement, None)
        outcomes = await self.leader_calls(_TABLE_STATS, refs)
        stats = []
        for ref in refs:
            o = outcomes.get((0, ref.key)) or _Outcome(ref.leader_id, None, None)
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
        req = pb.GetLatestKvSnapshotsRequest(table_path=_pb_path(p))
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
            partition_id=_opt(resp, "partition_id"),
            buckets=tuple(
                KvSnapshot(s.bucket_id, _opt(s, "snapshot_id"), _opt(s, "log_offset"))
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
        req = pb.GetLakeSnapshotRequest(table_path=_pb_path(p))
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
                    _opt(b, "partition_id"),
                    _opt(b, "partition_name"),
                    b.bucket_id,
                    _opt(b, "log_offset"),
                )
                for b in resp.bucket_snapshots
            ),
        )

    # ------------------------------------------------------------------ coordinator

    async def cluster_configs(self) -> tuple[ConfigEntry, ...]:
        resp = await self._call(
            ApiKey.DESCRIBE_CLUSTER_CONFIGS, pb.DescribeClusterConfigsRequest(), coordinator=True
        )
        return tuple(
            ConfigEntry(c.config_key, _opt(c, "config_value"), c.config_source)
            for c in resp.configs
        )

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
        status = _opt(resp, "rebalance_status")
        return RebalanceProgress(
            rebalance_id=_opt(resp, "rebalance_id"),
            status=enum_or_int(RebalanceStatus, status) if status is not None else None,
            tables=tuple(
                TableRebalance(
                    t.table_id,
                    tuple(
                        BucketRebalance(
                            partition_id=_opt(b.rebalance_plan, "partition_id"),
                            bucket_id=b.rebalance_plan.bucket_id,
                            original_leader=_opt(b.rebalance_plan, "original_leader"),
                            new_leader=_opt(b.rebalance_plan, "new_leader"),
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

        A 0.9 coordinator does not offer it: :class:`~fluss_proto.errors.UnsupportedByServer`
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
            partition_id=_opt(resp, "partition_id"),
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
        manifests = (
            RemoteLogManifest(
                table_id=m.table_bucket.table_id,
                partition_id=_opt(m.table_bucket, "partition_id"),
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


# =========================================================================== helpers


def api_versions_request() -> pb.ApiVersionsRequest:
    return pb.ApiVersionsRequest(
        client_software_name=CLIENT_SOFTWARE_NAME,
        client_software_version=CLIENT_SOFTWARE_VERSION,
    )


def server_info(role: str, node: ServerNode, result: Any) -> ServerInfo:
    """A ServerInfo from metadata plus an ApiVersions reply (or the exception instead)."""
    base: dict[str, Any] = {
        "node_id": node.node_id,
        "role": role,
        "host": node.host,
        "port": node.port,
        "rack": node.rack,
    }
    if isinstance(result, BaseException):
        return ServerInfo(**base, error=as_fluss_error(result))
    if result is None:
        return ServerInfo(**base)
    return ServerInfo(
        **base,
        server_type=_opt(result, "server_type"),
        api_versions=tuple(
            sorted(
                (
                    ApiVersionRange(v.api_key, v.min_version, v.max_version)
                    for v in result.api_versions
                ),
                key=lambda v: v.api_key,
            )
        ),
    )


def partitions_from_response(resp: pb.ListPartitionInfosResponse) -> tuple[PartitionInfo, ...]:
    out = []
    for info in resp.partitions_info:
        spec = [(kv.key, kv.value) for kv in info.partition_spec.partition_key_values]
        out.append(
            PartitionInfo(
                partition_id=info.partition_id,
                name=partition_name_of(spec),
                spec=FrozenDict(dict(spec)),
                remote_data_dir=_opt(info, "remote_data_dir"),
            )
        )
    return tuple(sorted(out, key=lambda p: p.partition_id))


def _missing_table(path: TablePath) -> ServerError:
    return TableNotExistError(
        f"Table '{path}' is not in the metadata reply", api=ApiKey.GET_METADATA.name
    )


def _bucket_info(
    table_id: int, pid: int | None, pname: str | None, b: BucketMetadata
) -> BucketInfo:
    return BucketInfo(
        table_id=table_id,
        partition_id=pid,
        partition_name=pname,
        bucket_id=b.bucket_id,
        leader_id=b.leader_id,
        replica_ids=b.replica_ids,
        leader_epoch=b.leader_epoch,
    )


def _select(placement: _Placement, buckets: Iterable[int] | None) -> list[BucketRef]:
    refs = placement.refs()
    if buckets is None:
        return refs
    wanted = list(dict.fromkeys(int(b) for b in buckets))
    known = {(r.partition_id, r.bucket_id): r for r in refs}
    out: list[BucketRef] = []
    parts: list[tuple[int | None, str | None]] = (
        [(p.partition_id, p.partition_name) for p in placement.partitions]
        if placement.partitioned
        else [(None, None)]
    )
    for pid, pname in parts:
        for b in wanted:
            ref = known.get((pid, b))
            if ref is None:  # not in the metadata: asked with no leader -> typed error
                ref = BucketRef(placement.table.path, placement.table.table_id, pid, pname, b, None)
            out.append(ref)
    return out


def _bucket_offset(ref: BucketRef, outcome: _Outcome | None) -> BucketOffset:
    if outcome is None:  # pragma: no cover - every job gets an outcome
        outcome = _Outcome(ref.leader_id, None, UnknownTableOrBucketError("no outcome"))
    return BucketOffset(
        table_id=ref.table_id,
        partition_id=ref.partition_id,
        bucket_id=ref.bucket_id,
        leader_id=outcome.leader_id,
        offset=outcome.value,
        error=outcome.error,
    )


LIST_OFFSETS_KIND: _LeaderKind = _LIST_OFFSETS
TABLE_STATS_KIND: _LeaderKind = _TABLE_STATS
