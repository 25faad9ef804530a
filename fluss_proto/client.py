"""Cluster-level client: bootstrap, per-server handshakes, metadata cache, routing, retries.

Shape (after aiokafka's ``client.py``):

- :meth:`FlussClient.connect` tries the bootstrap addresses in order until one answers
  GetMetadata; that reply names the coordinator and the live tablet servers. The bootstrap
  may be any server. It then opens (best effort) one connection to the coordinator and one
  to a tablet server so that :attr:`~FlussClient.features` knows both server types.
- One :class:`~fluss_proto.connection.Connection` per server address, created on first use
  and created again after it closed (server restart, idle timeout). Every new connection
  sends API_VERSIONS first and records what the server advertises, then runs SASL/PLAIN
  when credentials are configured, and only then carries requests.
- Before a request is sent its version is negotiated against that server's advertisement:
  ``min(our max, server max)``, provided the ranges overlap. An API the server does not
  advertise raises :class:`~fluss_proto.errors.UnsupportedByServer` at once and nothing is
  sent: a Fluss server silently drops requests for APIs it does not serve, so the call
  would otherwise hang until its timeout (observed on 0.9.1: SCAN_KV gets no reply and the
  connection stays open).
- Read-only by default: a mutating API raises :class:`~fluss_proto.errors.ReadOnlyViolation`
  before anything happens unless the client was created with ``allow_writes=True``;
  server-to-server (private) APIs are always refused; LOOKUP with
  ``insert_if_not_exists`` set counts as a write.
- Coordinator HA (Fluss 1.0; 0.9.1 has one coordinator and never sends code 65): a
  standby coordinator answers NOT_COORDINATOR_LEADER (65) to everything but API_VERSIONS.
  A request meant for the coordinator that gets 65 refreshes metadata from a tablet
  server, follows the coordinator it names, retries once there, and appends a
  :class:`CoordinatorRedirect` to :attr:`FlussClient.events`. This path is exercised only
  against fake servers: no 1.0 server is available to test against.
- Retries: read-only APIs only, retriable errors only (``ServerError.retriable``,
  ``ConnectionFailure``, ``RequestTimeoutError``), at most ``retries`` extra attempts with
  a short exponential backoff; metadata is refreshed first when the error calls for it
  (``refresh_metadata`` on the error class, or a lost/refused connection).

Nothing here logs request or response bodies, and no credential reaches a log line or an
exception text.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from types import MappingProxyType, TracebackType
from typing import Any, Final, Literal, NamedTuple, TypedDict, TypeVar, Unpack

from google.protobuf.message import Message

from fluss_proto import __version__, messages
from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import API_INFO, ApiKey
from fluss_proto.connection import Connection
from fluss_proto.errors import (
    AuthenticationError,
    ConnectionClosedError,
    ConnectionFailure,
    CoordinatorUnknownError,
    FlussError,
    ReadOnlyViolation,
    ServerError,
    UnknownNodeError,
    UnreachableError,
    UnsupportedByServer,
)
from fluss_proto.sasl import SaslPlain, authenticate

__all__ = [
    "CLIENT_SOFTWARE_NAME",
    "CLIENT_SOFTWARE_VERSION",
    "COORDINATOR",
    "DEFAULT_PORT",
    "FEATURE_APIS",
    "SERVER_TYPE_COORDINATOR",
    "SERVER_TYPE_TABLET",
    "BucketMetadata",
    "ClientOptions",
    "ClusterMetadata",
    "CoordinatorRedirect",
    "CoordinatorUnknownError",
    "Features",
    "FlussClient",
    "PartitionMetadata",
    "ServerApiVersions",
    "ServerNode",
    "TableMetadata",
    "TablePath",
    "UnknownNodeError",
    "parse_bootstrap",
]

log = logging.getLogger(__name__)

#: Sent in every ApiVersionsRequest (the server ignores both values, but they are required).
CLIENT_SOFTWARE_NAME: Final = "fluss_proto"
CLIENT_SOFTWARE_VERSION: Final = __version__
DEFAULT_PORT: Final = 9123
SERVER_TYPE_COORDINATOR: Final = 1
SERVER_TYPE_TABLET: Final = 2
#: ``node`` value for :meth:`FlussClient.call_many` items meant for the coordinator.
COORDINATOR: Final = "coordinator"
#: How many :class:`CoordinatorRedirect` events :attr:`FlussClient.events` keeps.
EVENTS_KEPT: Final = 256

_NOT_COORDINATOR_LEADER = 65
_MAX_BACKOFF = 2.0
_METADATA_TABLET_CANDIDATES = 3  # tablet servers asked per refresh before other fallbacks
_REASON_LIMIT = 200

_KEYS_SINCE_1_0 = tuple(key for key, spec in API_INFO.items() if spec.since == "1.0")

Role = Literal["coordinator", "tablet", "bootstrap"]


# =========================================================================== value types


class TablePath(NamedTuple):
    database: str
    table: str

    def __str__(self) -> str:
        return f"{self.database}.{self.table}"

    @classmethod
    def of(cls, value: TablePath | tuple[str, str] | str) -> TablePath:
        """Accept a TablePath, a ``(database, table)`` pair, or ``"database.table"``."""
        if isinstance(value, str):
            database, dot, table = value.partition(".")
            if not dot or not database or not table:
                raise ValueError(f"table path {value!r} is not 'database.table'")
            return cls(database, table)
        database, table = value
        return cls(str(database), str(table))


def _format_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _split_address(address: str) -> tuple[str, int]:
    if address.startswith("["):
        host, _, rest = address[1:].partition("]")
        return host, int(rest[1:])
    host, _, port = address.rpartition(":")
    return host, int(port)


def parse_bootstrap(bootstrap: str | Sequence[str]) -> list[str]:
    """Normalise ``"h:p,h:p"`` or a list of ``"h:p"`` into distinct ``host:port`` strings.

    A missing port means 9123; IPv6 hosts are written ``[::1]:9123``.
    """
    parts = [bootstrap] if isinstance(bootstrap, str) else list(bootstrap)
    out: list[str] = []
    for part in parts:
        if not isinstance(part, str):
            raise TypeError(f"bootstrap servers are strings, got {type(part).__name__}")
        for item in part.split(","):
            item = item.strip()
            if not item:
                continue
            if item.startswith("["):
                host, close, rest = item[1:].partition("]")
                if not close or (rest and not rest.startswith(":")):
                    raise ValueError(f"bad bootstrap address {item!r}")
                port_text = rest[1:] if rest else str(DEFAULT_PORT)
            elif item.count(":") == 1:
                host, port_text = item.split(":")
            elif item.count(":") > 1:  # a bare IPv6 address
                host, port_text = item, str(DEFAULT_PORT)
            else:
                host, port_text = item, str(DEFAULT_PORT)
            try:
                port = int(port_text)
            except ValueError:
                raise ValueError(f"bad port in bootstrap address {item!r}") from None
            if not host or not 0 < port < 65536:
                raise ValueError(f"bad bootstrap address {item!r}")
            address = _format_address(host, port)
            if address not in out:
                out.append(address)
    if not out:
        raise ValueError("no bootstrap servers given")
    return out


@dataclass(frozen=True, slots=True)
class ServerApiVersions:
    """What one server advertised in its ApiVersions reply."""

    address: str
    #: 1 = coordinator, 2 = tablet server, None when the server did not say.
    server_type: int | None
    #: Raw api key -> (min version, max version); includes keys fluss_proto does not know.
    versions: Mapping[int, tuple[int, int]]
    #: Wall-clock time (time.time()) of the reply.
    recorded_at: float

    @property
    def role(self) -> str:
        return {SERVER_TYPE_COORDINATOR: "coordinator", SERVER_TYPE_TABLET: "tablet-server"}.get(
            self.server_type or 0, "unknown"
        )

    def negotiate(self, api: ApiKey) -> int | None:
        """The version to send ``api`` at, or None when the server cannot take it.

        Our range is 0..``API_INFO[api].max_version``; the server's is what it advertised.
        """
        advertised = self.versions.get(int(api))
        if advertised is None:
            return None
        low = max(0, advertised[0])
        high = min(API_INFO[api].max_version, advertised[1])
        return high if low <= high else None

    def advertises(self, api: ApiKey) -> bool:
        return self.negotiate(api) is not None

    @property
    def fluss_1_0(self) -> bool:
        """True when the server offers an API that only Fluss 1.0 has."""
        return any(int(key) in self.versions for key in _KEYS_SINCE_1_0)


@dataclass(frozen=True, slots=True)
class ServerNode:
    node_id: int
    host: str
    port: int
    rack: str | None = None

    @property
    def address(self) -> str:
        return _format_address(self.host, self.port)


@dataclass(frozen=True, slots=True)
class BucketMetadata:
    bucket_id: int
    #: None while the bucket has no leader.
    leader_id: int | None
    replica_ids: tuple[int, ...]
    #: Informational only (Fluss does no client-side epoch fencing).
    leader_epoch: int | None


@dataclass(frozen=True, slots=True)
class TableMetadata:
    path: TablePath
    table_id: int
    schema_id: int
    table_json: bytes
    buckets: tuple[BucketMetadata, ...]
    created_time: int
    modified_time: int
    remote_data_dir: str | None = None


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    table_id: int
    partition_name: str
    partition_id: int
    buckets: tuple[BucketMetadata, ...]


@dataclass(frozen=True, slots=True)
class ClusterMetadata:
    """An immutable view of the metadata cache."""

    coordinator: ServerNode | None = None
    tablet_servers: Mapping[int, ServerNode] = field(default_factory=lambda: MappingProxyType({}))
    tables: Mapping[TablePath, TableMetadata] = field(default_factory=lambda: MappingProxyType({}))
    #: partition_id -> metadata
    partitions: Mapping[int, PartitionMetadata] = field(
        default_factory=lambda: MappingProxyType({})
    )
    #: The address that answered the last refresh, and when (time.time()).
    source: str | None = None
    refreshed_at: float | None = None

    def table_by_id(self, table_id: int) -> TableMetadata | None:
        for table in self.tables.values():
            if table.table_id == table_id:
                return table
        return None


@dataclass(frozen=True, slots=True)
class CoordinatorRedirect:
    """The client stopped using one coordinator address and followed another."""

    old_address: str
    new_address: str
    #: Wall-clock time (time.time()) of the switch.
    at: float
    #: The API whose request was redirected.
    api: str
    #: NOT_COORDINATOR_LEADER_EXCEPTION, or the name of the connection error.
    reason: str


#: Feature name -> the API whose advertisement decides it.
FEATURE_APIS: Mapping[str, ApiKey] = MappingProxyType(
    {
        "scan_kv": ApiKey.SCAN_KV,
        "cluster_health": ApiKey.GET_CLUSTER_HEALTH,
        "table_stats": ApiKey.GET_TABLE_STATS,
        "limit_scan": ApiKey.LIMIT_SCAN,
        "fetch_log": ApiKey.FETCH_LOG,
        "list_offsets": ApiKey.LIST_OFFSETS,
        "lookup": ApiKey.LOOKUP,
        "prefix_lookup": ApiKey.PREFIX_LOOKUP,
        "list_acls": ApiKey.LIST_ACLS,
        "describe_cluster_configs": ApiKey.DESCRIBE_CLUSTER_CONFIGS,
        "rebalance_progress": ApiKey.LIST_REBALANCE_PROGRESS,
        "lake_snapshot": ApiKey.GET_LAKE_SNAPSHOT,
        "kv_snapshots": ApiKey.GET_LATEST_KV_SNAPSHOTS,
        "producer_offsets": ApiKey.GET_PRODUCER_OFFSETS,
        "alter_database": ApiKey.ALTER_DATABASE,
        "list_kv_snapshots": ApiKey.LIST_KV_SNAPSHOTS,
        "list_remote_log_manifests": ApiKey.LIST_REMOTE_LOG_MANIFESTS,
    }
)


@dataclass(frozen=True, slots=True)
class Features:
    """What the servers seen so far advertise. False means "not seen", not "impossible"."""

    scan_kv: bool = False
    cluster_health: bool = False
    table_stats: bool = False
    limit_scan: bool = False
    fetch_log: bool = False
    list_offsets: bool = False
    lookup: bool = False
    prefix_lookup: bool = False
    list_acls: bool = False
    describe_cluster_configs: bool = False
    rebalance_progress: bool = False
    lake_snapshot: bool = False
    kv_snapshots: bool = False
    producer_offsets: bool = False
    alter_database: bool = False
    list_kv_snapshots: bool = False
    list_remote_log_manifests: bool = False
    #: PUT_KV version 2 (the server may answer STORAGE_BACKPRESSURE, 72).
    put_kv_backpressure: bool = False
    #: "1.0" when a server offers a 1.0-only API, "0.9" otherwise, None before any reply.
    server_generation: Literal["0.9", "1.0"] | None = None

    @classmethod
    def from_api_versions(cls, infos: Iterable[ServerApiVersions]) -> Features:
        infos = list(infos)
        values: dict[str, Any] = {
            name: any(info.advertises(api) for info in infos) for name, api in FEATURE_APIS.items()
        }
        values["put_kv_backpressure"] = any(
            (info.negotiate(ApiKey.PUT_KV) or 0) >= 2 for info in infos
        )
        if infos:
            values["server_generation"] = "1.0" if any(info.fluss_1_0 for info in infos) else "0.9"
        return cls(**values)

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


#: LeaderAndIsr.NO_LEADER: the leader id Fluss puts in metadata for a bucket whose leader
#: is gone (seen live: an RF-1 bucket while its only tablet server is down).
NO_LEADER: Final = -1


def _buckets(items: Iterable[pb.PbBucketMetadata]) -> tuple[BucketMetadata, ...]:
    return tuple(
        BucketMetadata(
            bucket_id=b.bucket_id,
            # Absent or NO_LEADER (any negative id): no leader.
            leader_id=b.leader_id if b.HasField("leader_id") and b.leader_id >= 0 else None,
            replica_ids=tuple(b.replica_id),
            leader_epoch=b.leader_epoch if b.HasField("leader_epoch") else None,
        )
        for b in items
    )


def _node(n: pb.PbServerNode) -> ServerNode:
    return ServerNode(n.node_id, n.host, n.port, n.rack if n.HasField("rack") else None)


def parse_metadata(
    resp: pb.MetadataResponse,
) -> tuple[
    ServerNode | None,
    dict[int, ServerNode],
    dict[TablePath, TableMetadata],
    dict[int, PartitionMetadata],
]:
    """(coordinator, tablet servers, tables, partitions) of one GetMetadata reply."""
    coordinator = _node(resp.coordinator_server) if resp.HasField("coordinator_server") else None
    tablets = {n.node_id: _node(n) for n in resp.tablet_servers}
    tables: dict[TablePath, TableMetadata] = {}
    for t in resp.table_metadata:
        table = _parsed(_PARSED_TABLES, t, _table_metadata)
        tables[table.path] = table
    partitions: dict[int, PartitionMetadata] = {}
    for p in resp.partition_metadata:
        part = _parsed(_PARSED_PARTITIONS, p, _partition_metadata)
        partitions[part.partition_id] = part
    return coordinator, tablets, tables, partitions


def _table_metadata(t: pb.PbTableMetadata) -> TableMetadata:
    path = TablePath(t.table_path.database_name, t.table_path.table_name)
    return TableMetadata(
        path=path,
        table_id=t.table_id,
        schema_id=t.schema_id,
        table_json=t.table_json,
        buckets=_buckets(t.bucket_metadata),
        created_time=t.created_time,
        modified_time=t.modified_time,
        remote_data_dir=t.remote_data_dir if t.HasField("remote_data_dir") else None,
    )


def _partition_metadata(p: pb.PbPartitionMetadata) -> PartitionMetadata:
    return PartitionMetadata(
        table_id=p.table_id,
        partition_name=p.partition_name,
        partition_id=p.partition_id,
        buckets=_buckets(p.bucket_metadata),
    )


#: Parsed metadata entries by their serialised bytes (entries are immutable values).
_PARSED_TABLES: dict[bytes, TableMetadata] = {}
_PARSED_PARTITIONS: dict[bytes, PartitionMetadata] = {}
_PARSED_KEPT = 4096
_T = TypeVar("_T")
_M = TypeVar("_M", bound=Message)


def _parsed(cache: dict[bytes, _T], message: _M, build: Callable[[_M], _T]) -> _T:
    """``build(message)``, memoised by the message's bytes: a poll sees the same entries
    again and again, and re-serialising one (in C) and looking it up costs a fraction of
    building its objects field by field."""
    raw = message.SerializeToString()
    value = cache.get(raw)
    if value is None:
        if len(cache) >= _PARSED_KEPT:
            cache.pop(next(iter(cache)))  # oldest first: dicts keep insertion order
        value = cache[raw] = build(message)
    return value


def _short(exc: BaseException | str) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:_REASON_LIMIT]


_API_KEYS: dict[int, ApiKey] = {int(k): k for k in ApiKey}


def _request_mutates(api: ApiKey, request: object) -> bool:
    if API_INFO[api].mutating:
        return True
    # A lookup may ask the server to insert missing keys: that is a write.
    return api is ApiKey.LOOKUP and bool(getattr(request, "insert_if_not_exists", False))


class _Target(NamedTuple):
    address: str
    role: Role
    node_id: int | None = None

    @property
    def expected_type(self) -> int | None:
        return {"coordinator": SERVER_TYPE_COORDINATOR, "tablet": SERVER_TYPE_TABLET}.get(self.role)


class _Slot:
    """The (at most one) live connection to one server address."""

    __slots__ = ("conn", "info", "lock")

    def __init__(self) -> None:
        self.conn: Connection | None = None
        self.info: ServerApiVersions | None = None
        self.lock = asyncio.Lock()

    def ready(self) -> bool:
        return self.conn is not None and not self.conn.closed and self.info is not None


# =========================================================================== the client


class ClientOptions(TypedDict, total=False):
    """The keyword arguments of :class:`FlussClient` (and of :meth:`FlussClient.connect`)."""

    sasl: SaslPlain | None
    allow_writes: bool
    connect_timeout: float
    request_timeout: float
    retries: int
    retry_backoff: float


class FlussClient:
    """A read-mostly client for one Fluss cluster. Create it with :meth:`connect`."""

    def __init__(
        self,
        bootstrap: str | Sequence[str],
        *,
        sasl: SaslPlain | None = None,
        allow_writes: bool = False,
        connect_timeout: float = 10.0,
        request_timeout: float = 30.0,
        retries: int = 2,
        retry_backoff: float = 0.1,
    ) -> None:
        """Set up without any I/O; :meth:`connect` is the usual entry point."""
        if retries < 0:
            raise ValueError("retries must not be negative")
        if sasl is not None and not isinstance(sasl, SaslPlain):
            raise TypeError("sasl must be a SaslPlain instance")
        self.bootstrap_servers: tuple[str, ...] = tuple(parse_bootstrap(bootstrap))
        self._sasl = sasl
        self._allow_writes = bool(allow_writes)
        self.connect_timeout = connect_timeout
        self.request_timeout = request_timeout
        self.retries = retries
        self.retry_backoff = retry_backoff
        self._slots: dict[str, _Slot] = {}
        self._api_versions: dict[str, ServerApiVersions] = {}
        self._metadata = ClusterMetadata()
        self._metadata_lock = asyncio.Lock()
        self._metadata_generation = 0
        self._closed = False
        self._rng = random.Random()
        #: Coordinator redirects, oldest first (bounded).
        self.events: deque[CoordinatorRedirect] = deque(maxlen=EVENTS_KEPT)
        #: Every API key this client has put on the wire, with counts (handshakes included).
        self.sent_api_keys: Counter[ApiKey] = Counter()

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    async def connect(
        cls, bootstrap: str | Sequence[str], **options: Unpack[ClientOptions]
    ) -> FlussClient:
        """Connect to the cluster through the first bootstrap server that answers.

        ``options`` are :meth:`__init__`'s keyword arguments (:class:`ClientOptions`).

        Raises :class:`~fluss_proto.errors.UnreachableError` naming every address tried when
        none answers, and :class:`~fluss_proto.errors.AuthenticationError` at once when a
        server refuses the credentials (or demands credentials that were not given).
        """
        client = cls(bootstrap, **options)
        try:
            await client._bootstrap()
        except BaseException:
            await client.close()
            raise
        return client

    async def _bootstrap(self) -> None:
        failures: list[str] = []
        for address in self.bootstrap_servers:
            target = _Target(address, "bootstrap")
            try:
                response = await self._request(target, ApiKey.GET_METADATA, pb.MetadataRequest())
            except AuthenticationError:
                raise
            except FlussError as exc:
                log.debug("bootstrap server %s did not answer: %s", address, _short(exc))
                failures.append(f"{address} ({_short(exc)})")
                continue
            assert isinstance(response, pb.MetadataResponse)
            self._apply_metadata(response, address)
            break
        else:
            raise UnreachableError("none of the bootstrap servers answered: " + "; ".join(failures))
        await self._warm_up()

    async def _warm_up(self) -> None:
        """Handshake with the coordinator and one tablet server (best effort)."""
        seen_types = {info.server_type for info in self._api_versions.values()}
        targets: list[_Target] = []
        coordinator = self._metadata.coordinator
        if SERVER_TYPE_COORDINATOR not in seen_types and coordinator is not None:
            targets.append(_Target(coordinator.address, "coordinator", coordinator.node_id))
        if SERVER_TYPE_TABLET not in seen_types and self._metadata.tablet_servers:
            node = self._rng.choice(sorted(self._metadata.tablet_servers.values(), key=_node_id))
            targets.append(_Target(node.address, "tablet", node.node_id))
        results = await asyncio.gather(*(self._ensure(t) for t in targets), return_exceptions=True)
        for target, result in zip(targets, results, strict=True):
            if isinstance(result, AuthenticationError):
                raise result
            if isinstance(result, BaseException):
                if not isinstance(result, Exception):
                    raise result
                log.debug("warm-up connection to %s failed: %s", target.address, _short(result))

    async def close(self) -> None:
        """Close every connection; later calls raise ConnectionClosedError. Idempotent."""
        self._closed = True
        conns = [slot.conn for slot in self._slots.values() if slot.conn is not None]
        await asyncio.gather(*(conn.close() for conn in conns), return_exceptions=True)

    async def __aenter__(self) -> FlussClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self.connected_servers)} connection(s)"
        auth = f", sasl={self._sasl!r}" if self._sasl is not None else ""
        writes = ", allow_writes=True" if self._allow_writes else ""
        return f"<FlussClient {','.join(self.bootstrap_servers)} {state}{auth}{writes}>"

    # ------------------------------------------------------------------ views

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def allow_writes(self) -> bool:
        return self._allow_writes

    @property
    def metadata(self) -> ClusterMetadata:
        return self._metadata

    @property
    def coordinator(self) -> ServerNode | None:
        return self._metadata.coordinator

    @property
    def tablet_servers(self) -> Mapping[int, ServerNode]:
        return self._metadata.tablet_servers

    @property
    def api_versions(self) -> Mapping[str, ServerApiVersions]:
        """Address -> the latest ApiVersions reply recorded from that server."""
        return MappingProxyType(self._api_versions)

    @property
    def connected_servers(self) -> list[str]:
        """Addresses with an open connection."""
        return [addr for addr, slot in self._slots.items() if slot.ready()]

    @property
    def features(self) -> Features:
        return Features.from_api_versions(self._api_versions.values())

    def api_versions_of(
        self, node: int | None = None, *, coordinator: bool = False
    ) -> ServerApiVersions | None:
        """The recorded ApiVersions of tablet server ``node`` or of the coordinator."""
        address = self._known_address(node, coordinator)
        return self._api_versions.get(address) if address else None

    def supports(
        self, api: ApiKey | int, node: int | None = None, *, coordinator: bool = False
    ) -> bool:
        """Whether a server advertises ``api`` at a version we speak.

        ``node``/``coordinator`` ask about that server; otherwise about any server seen.
        Answers from recorded ApiVersions only (no I/O): False for a server not yet met.
        """
        key = ApiKey(api)
        if node is not None or coordinator:
            info = self.api_versions_of(node, coordinator=coordinator)
            return info is not None and info.advertises(key)
        return any(info.advertises(key) for info in self._api_versions.values())

    def _known_address(self, node: int | None, coordinator: bool) -> str | None:
        if coordinator:
            return self._metadata.coordinator.address if self._metadata.coordinator else None
        if node is None:
            return None
        server = self._metadata.tablet_servers.get(node)
        return server.address if server else None

    # ------------------------------------------------------------------ metadata

    async def refresh_metadata(
        self,
        tables: Iterable[TablePath | tuple[str, str] | str] | None = None,
        *,
        partitions: Iterable[tuple[str, str, str]] | None = None,
        partition_ids: Iterable[int] | None = None,
    ) -> ClusterMetadata:
        """Refresh servers (always) and the given tables / partitions from one server.

        Asks a live tablet server first, then the coordinator, then the bootstrap list.
        Without ``tables`` only the server list is refreshed; cached tables are kept.
        ``partitions`` are ``(database, table, partition_name)``; ``partition_ids`` must
        belong to tables also named in ``tables`` (a Fluss rule). Server errors about the
        request itself (e.g. TABLE_NOT_EXIST) are raised as they are.
        """
        request = pb.MetadataRequest()
        for value in tables or ():
            path = TablePath.of(value)
            request.table_path.add(database_name=path.database, table_name=path.table)
        for database, table, partition in partitions or ():
            request.partitions_path.add(
                database_name=database, table_name=table, partition_name=partition
            )
        request.partitions_id.extend(int(p) for p in partition_ids or ())
        return await self._refresh(request)

    async def _refresh(
        self, request: pb.MetadataRequest | None = None, *, avoid: Iterable[str] = ()
    ) -> ClusterMetadata:
        request = request if request is not None else pb.MetadataRequest()
        avoid = frozenset(avoid)
        servers_only = not (request.table_path or request.partitions_path or request.partitions_id)
        generation = self._metadata_generation
        async with self._metadata_lock:
            if servers_only and self._metadata_generation != generation:
                # Refreshed by someone else while we waited (a standby coordinator or a
                # dead server would not have answered it, so ``avoid`` holds too).
                return self._metadata
            failures: list[str] = []
            candidates = self._metadata_candidates(avoid)
            for index, target in enumerate(candidates):
                try:
                    response = await self._request(target, ApiKey.GET_METADATA, request)
                except AuthenticationError:
                    raise
                except ServerError as exc:
                    if exc.code != _NOT_COORDINATOR_LEADER and not exc.retriable:
                        raise
                    failures.append(f"{target.address} ({_short(exc)})")
                    continue
                except FlussError as exc:
                    failures.append(f"{target.address} ({_short(exc)})")
                    continue
                assert isinstance(response, pb.MetadataResponse)
                last = index == len(candidates) - 1
                if not response.tablet_servers and not last:
                    # A server still starting lists no tablet servers; Fluss's own client
                    # treats that as stale and asks elsewhere.
                    failures.append(f"{target.address} (no tablet servers listed)")
                    continue
                self._apply_metadata(response, target.address)
                return self._metadata
            raise UnreachableError(
                "could not refresh metadata from any server: "
                + ("; ".join(failures) or "no server known")
            )

    def _metadata_candidates(self, avoid: frozenset[str]) -> list[_Target]:
        md = self._metadata
        tablets = [n for n in md.tablet_servers.values() if n.address not in avoid]
        self._rng.shuffle(tablets)
        tablets.sort(key=lambda n: not self._is_ready(n.address))  # connected first
        out = [_Target(n.address, "tablet", n.node_id) for n in tablets]
        out = out[:_METADATA_TABLET_CANDIDATES]
        if md.coordinator is not None and md.coordinator.address not in avoid:
            out.append(_Target(md.coordinator.address, "coordinator", md.coordinator.node_id))
        seen = {t.address for t in out}
        for address in self.bootstrap_servers:
            if address not in seen and address not in avoid:
                out.append(_Target(address, "bootstrap"))
        return out

    def _apply_metadata(self, response: pb.MetadataResponse, source: str) -> None:
        old = self._metadata
        coordinator = (
            _node(response.coordinator_server)
            if response.HasField("coordinator_server")
            else old.coordinator  # the answering server does not know it (yet)
        )
        _, tablets, new_tables, new_partitions = parse_metadata(response)
        tables = {**old.tables, **new_tables}
        partitions = {**old.partitions, **new_partitions}
        self._metadata = ClusterMetadata(
            coordinator=coordinator,
            tablet_servers=MappingProxyType(tablets),
            tables=MappingProxyType(tables),
            partitions=MappingProxyType(partitions),
            source=source,
            refreshed_at=time.time(),
        )
        self._metadata_generation += 1
        if (
            old.coordinator is not None
            and coordinator is not None
            and old.coordinator.address != coordinator.address
        ):
            log.info(
                "metadata from %s names a new coordinator: %s (was %s)",
                source,
                coordinator.address,
                old.coordinator.address,
            )

    # ------------------------------------------------------------------ calls

    async def call(
        self,
        api: ApiKey | int,
        request: Message,
        *,
        node: int | None = None,
        coordinator: bool = False,
        timeout: float | None = None,
    ) -> Message:
        """Send one request and return the decoded response message.

        Routing: ``node`` = that tablet server; ``coordinator=True`` = the (active)
        coordinator; neither = any live server able to answer (a tablet server when the
        API is served by tablet servers, the coordinator for coordinator-only APIs).
        ``timeout`` bounds each attempt (default: the client's ``request_timeout``).

        Raises :class:`ReadOnlyViolation` (nothing sent), :class:`UnsupportedByServer`
        (nothing sent), ``TypeError``/``ValueError`` for a malformed request, and the
        typed server / connection errors once retries are spent.
        """
        key = self._admit(api, request, node, coordinator)
        return await self._call(key, request, node, coordinator, timeout)

    async def call_many(
        self,
        items: Iterable[tuple[int | str | None, ApiKey | int, Message]],
        *,
        timeout: float | None = None,
    ) -> list[Message | BaseException]:
        """Send every ``(node, api, request)`` concurrently; results in the same order.

        ``node`` is a tablet server id, None (any server) or :data:`COORDINATOR`. Requests
        to one server share its connection (pipelined). Each result is the response or the
        exception of that request, so one failing server does not fail the others. Every
        item passes the read-only gate and request checks before anything is sent; a
        violation raises at once.
        """
        prepared: list[tuple[ApiKey, Message, int | None, bool]] = []
        for item in items:
            target, api, request = item
            to_coordinator = target == COORDINATOR
            node = None if to_coordinator else target
            if node is not None and not isinstance(node, int):
                raise ValueError(f"node must be an int, None or COORDINATOR, got {node!r}")
            key = self._admit(api, request, node, to_coordinator)
            prepared.append((key, request, node, to_coordinator))
        # One attempt for everything, grouped per server (one write each, no task per
        # request); a failure that deserves another attempt then takes the one-at-a-time
        # path with its retries, starting from that failure.
        first = await self._attempt_many(prepared, timeout)
        results: list[Message | BaseException] = []
        again: list[tuple[int, Awaitable[Message]]] = []
        for index, ((key, request, node, coordinator), (sent_to, outcome)) in enumerate(
            zip(prepared, first, strict=True)
        ):
            results.append(outcome)
            if isinstance(outcome, FlussError) and self._worth_another_attempt(
                key, request, sent_to, outcome
            ):
                prior = (sent_to, outcome)
                again.append((index, self._call(key, request, node, coordinator, timeout, prior)))
        if again:
            retried = await asyncio.gather(*(c for _, c in again), return_exceptions=True)
            for (index, _), outcome in zip(again, retried, strict=True):
                results[index] = outcome
        return results

    def _worth_another_attempt(
        self, key: ApiKey, request: Message, target: _Target | None, exc: FlussError
    ) -> bool:
        if target is not None and _is_standby_answer(target, exc):
            return True
        return exc.retriable and self.retries > 0 and not _request_mutates(key, request)

    async def _attempt_many(
        self,
        prepared: Sequence[tuple[ApiKey, Message, int | None, bool]],
        timeout: float | None,
    ) -> list[tuple[_Target | None, Message | BaseException]]:
        """One attempt of every request: routed, grouped per server, sent together."""
        out: list[tuple[_Target | None, Message | BaseException]] = [
            (None, ConnectionClosedError("not sent"))  # every slot is set below
        ] * len(prepared)
        groups: dict[_Target, list[int]] = {}
        for index, (key, _, node, coordinator) in enumerate(prepared):
            try:
                target = await self._resolve(key, node, coordinator, set())
            except FlussError as exc:
                out[index] = (None, exc)
                continue
            groups.setdefault(target, []).append(index)

        async def send(target: _Target, indices: list[int]) -> None:
            try:
                conn, info = await self._ensure(target)
            except FlussError as exc:
                for index in indices:
                    out[index] = (target, exc)
                return
            wire: list[tuple[int, int, bytes, str | None]] = []
            sent: list[int] = []
            for index in indices:
                key, request = prepared[index][0], prepared[index][1]
                version = info.negotiate(key)
                if version is None:
                    out[index] = (target, _unsupported(key, info, target))
                    continue
                # _admit checked the class and the required fields already
                wire.append((int(key), version, request.SerializeToString(), key.name))
                sent.append(index)
                self.sent_api_keys[key] += 1
            if not wire:
                return
            try:
                raws = await conn.request_many(wire, timeout=timeout)
            except FlussError as exc:  # closed before anything was written
                raws = [exc] * len(wire)
            for index, raw in zip(sent, raws, strict=True):
                key = prepared[index][0]
                if isinstance(raw, FlussError):
                    out[index] = (target, self._explain_auth(raw, target))
                    continue
                try:
                    out[index] = (target, messages.decode_response(key, raw))
                except FlussError as exc:
                    out[index] = (target, exc)

        if len(groups) == 1:
            ((target, indices),) = groups.items()
            await send(target, indices)
        elif groups:
            await asyncio.gather(*(send(t, i) for t, i in groups.items()))
        return out

    def _admit(
        self, api: ApiKey | int, request: object, node: int | None, coordinator: bool
    ) -> ApiKey:
        """Every check that must pass before anything is sent (no I/O)."""
        if self._closed:
            raise ConnectionClosedError("the client is closed")
        key = _API_KEYS.get(api)  # an IntEnum member hashes and compares like its int
        if key is None:
            raise ValueError(f"unknown API key {api!r}")
        spec = API_INFO[key]
        if spec.private:
            raise ReadOnlyViolation(
                f"{key.name} is a server-to-server API; fluss_proto never sends it"
            )
        if _request_mutates(key, request) and not self._allow_writes:
            what = "LOOKUP with insert_if_not_exists" if not spec.mutating else key.name
            raise ReadOnlyViolation(
                f"{what} changes the cluster and this client is read-only (allow_writes=False)"
            )
        if key is ApiKey.AUTHENTICATE:
            raise ValueError("AUTHENTICATE is part of the connection handshake (pass sasl=...)")
        if node is not None and coordinator:
            raise ValueError("pass either node or coordinator=True, not both")
        expected = messages.request_class(key)
        if not isinstance(request, expected):
            raise TypeError(
                f"{key.name} takes a {expected.DESCRIPTOR.name}, got {type(request).__name__}"
            )
        if not request.IsInitialized():
            missing = ", ".join(request.FindInitializationErrors())
            raise ValueError(f"{key.name} request lacks required fields: {missing}")
        return key

    async def _call(
        self,
        key: ApiKey,
        request: Message,
        node: int | None,
        coordinator: bool,
        timeout: float | None,
        prior: tuple[_Target | None, FlussError] | None = None,
    ) -> Message:
        """Attempts with retries; ``prior`` is a first attempt already made elsewhere
        (``call_many``) and the error it ended with."""
        read_only = not _request_mutates(key, request)
        attempts = 1 + (self.retries if read_only else 0)
        failed: set[str] = set()
        start = 0
        if prior is not None:
            target, exc = prior
            if target is not None and _is_standby_answer(target, exc):
                assert isinstance(exc, ServerError)
                try:
                    return await self._follow_coordinator(target, key, request, timeout, exc)
                except FlussError as follow_exc:
                    exc = follow_exc
            if attempts <= 1 or not exc.retriable:
                raise exc
            await self._after_failure(key, target, exc, failed, 0, attempts)
            start = 1
        for attempt in range(start, attempts):
            target = None
            try:
                target = await self._resolve(key, node, coordinator, failed)
                return await self._call_target(target, key, request, timeout)
            except FlussError as exc:
                if attempt + 1 >= attempts or not exc.retriable:
                    raise
                await self._after_failure(key, target, exc, failed, attempt, attempts)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _after_failure(
        self,
        key: ApiKey,
        target: _Target | None,
        exc: FlussError,
        failed: set[str],
        attempt: int,
        attempts: int,
    ) -> None:
        """Between two attempts: note the server, refresh metadata if useful, back off."""
        log.debug(
            "%s to %s failed (%s); retry %d of %d",
            key.name,
            target.address if target else "?",
            _short(exc),
            attempt + 1,
            attempts - 1,
        )
        if target is not None:
            failed.add(target.address)
        if isinstance(exc, (UnknownNodeError, CoordinatorUnknownError)):
            pass  # metadata was refreshed just before this was raised
        elif isinstance(exc, ConnectionFailure) or getattr(exc, "refresh_metadata", False):
            await self._refresh_after_failure(key, target, exc)
        await asyncio.sleep(min(self.retry_backoff * 2**attempt, _MAX_BACKOFF))

    async def _refresh_after_failure(
        self, key: ApiKey, target: _Target | None, exc: FlussError
    ) -> None:
        avoid = {target.address} if target is not None else set()
        try:
            await self._refresh(avoid=avoid)
        except AuthenticationError:
            raise
        except FlussError as refresh_exc:
            log.debug("metadata refresh after a failure did not work: %s", _short(refresh_exc))
            return
        new = self._metadata.coordinator
        if (
            target is not None
            and target.role == "coordinator"
            and new is not None
            and new.address != target.address
        ):
            self._record_redirect(target.address, new.address, key, type(exc).__name__)

    async def _call_target(
        self, target: _Target, key: ApiKey, request: Message, timeout: float | None
    ) -> Message:
        try:
            return await self._request(target, key, request, timeout=timeout)
        except ServerError as exc:
            if not _is_standby_answer(target, exc):
                raise
            return await self._follow_coordinator(target, key, request, timeout, exc)

    async def _follow_coordinator(
        self,
        target: _Target,
        key: ApiKey,
        request: Message,
        timeout: float | None,
        exc: ServerError,
    ) -> Message:
        """A standby coordinator answered 65: find the active one and retry there once."""
        try:
            await self._refresh(avoid={target.address})
        except FlussError as refresh_exc:
            log.info(
                "%s answered NOT_COORDINATOR_LEADER and no other server could name the "
                "active coordinator: %s",
                target.address,
                _short(refresh_exc),
            )
            raise exc from None
        new = self._metadata.coordinator
        if new is None or new.address == target.address:
            raise exc
        self._record_redirect(target.address, new.address, key, exc.name)
        return await self._request(
            _Target(new.address, "coordinator", new.node_id), key, request, timeout=timeout
        )

    def _record_redirect(self, old: str, new: str, key: ApiKey, reason: str) -> None:
        event = CoordinatorRedirect(old, new, time.time(), key.name, reason)
        self.events.append(event)
        log.info("coordinator moved from %s to %s (%s, during %s)", old, new, reason, key.name)

    # ------------------------------------------------------------------ routing

    async def _resolve(
        self, key: ApiKey, node: int | None, coordinator: bool, failed: set[str]
    ) -> _Target:
        if coordinator or (node is None and API_INFO[key].served_by == "coordinator"):
            return await self._coordinator_target()
        if node is not None:
            return await self._node_target(node)
        target = self._pick_any(key, failed)
        if target is None:
            await self._refresh()
            target = self._pick_any(key, failed) or self._pick_any(key, set())
        if target is None:
            raise UnreachableError(f"no live server known that could answer {key.name}")
        return target

    def _pick_any(self, key: ApiKey, failed: set[str]) -> _Target | None:
        md = self._metadata
        untried = [s for s in md.tablet_servers.values() if s.address not in failed]
        candidates = []
        for server in untried:
            info = self._api_versions.get(server.address)
            if info is None or info.advertises(key):
                candidates.append(server)
        if not candidates and API_INFO[key].served_by == "tablet":
            # None offers it: pick one anyway so the caller gets UnsupportedByServer.
            candidates = untried
        if candidates:
            ready = [s for s in candidates if self._is_ready(s.address)]
            server = self._rng.choice(ready or candidates)
            return _Target(server.address, "tablet", server.node_id)
        if (
            API_INFO[key].served_by == "both"
            and md.coordinator is not None
            and md.coordinator.address not in failed
        ):
            return _Target(md.coordinator.address, "coordinator", md.coordinator.node_id)
        return None

    async def _coordinator_target(self) -> _Target:
        if self._metadata.coordinator is None:
            await self._refresh()
        coordinator = self._metadata.coordinator
        if coordinator is None:
            raise CoordinatorUnknownError("no server could name the coordinator")
        return _Target(coordinator.address, "coordinator", coordinator.node_id)

    async def _node_target(self, node: int) -> _Target:
        server = self._metadata.tablet_servers.get(node)
        if server is None:
            await self._refresh()
            server = self._metadata.tablet_servers.get(node)
        if server is None:
            known = sorted(self._metadata.tablet_servers)
            raise UnknownNodeError(
                f"tablet server {node} is not in the cluster metadata (alive: {known})"
            )
        return _Target(server.address, "tablet", server.node_id)

    def _is_ready(self, address: str) -> bool:
        slot = self._slots.get(address)
        return slot is not None and slot.ready()

    # ------------------------------------------------------------------ wire

    async def _request(
        self, target: _Target, key: ApiKey, request: Message, *, timeout: float | None = None
    ) -> Message:
        """One attempt: connect if needed, check the API is offered, send, decode."""
        conn, info = await self._ensure(target)
        version = info.negotiate(key)
        if version is None:
            raise _unsupported(key, info, target)
        body = messages.encode_request(key, request)
        self.sent_api_keys[key] += 1
        try:
            raw = await conn.request(int(key), version, body, timeout=timeout, api_name=key.name)
        except AuthenticationError as exc:
            raise self._explain_auth(exc, target) from exc
        return messages.decode_response(key, raw)

    def _explain_auth(self, exc: FlussError, target: _Target) -> FlussError:
        """A server asking for SASL from a client without credentials gets named as such."""
        if (
            self._sasl is None
            and isinstance(exc, AuthenticationError)
            and isinstance(exc, ServerError)
        ):
            explained = AuthenticationError(
                f"{target.address} requires SASL authentication and this client has no "
                f"credentials (server said: {_short(exc.message or exc.name)})"
            )
            explained.__cause__ = exc
            return explained
        return exc

    async def _ensure(self, target: _Target) -> tuple[Connection, ServerApiVersions]:
        """The ready connection to ``target``, opening and handshaking it if needed."""
        if self._closed:
            raise ConnectionClosedError("the client is closed")
        slot = self._slots.get(target.address)
        if slot is None:
            slot = self._slots[target.address] = _Slot()
        if slot.ready():
            assert slot.conn is not None and slot.info is not None
            return slot.conn, slot.info
        async with slot.lock:
            if slot.ready():
                assert slot.conn is not None and slot.info is not None
                return slot.conn, slot.info
            stale, slot.conn, slot.info = slot.conn, None, None
            if stale is not None:
                await stale.close()  # already shut down; this reaps its reader task
            host, port = _split_address(target.address)
            conn = await Connection.open(
                host,
                port,
                connect_timeout=self.connect_timeout,
                request_timeout=self.request_timeout,
            )
            try:
                info = await self._handshake(conn, target)
                if self._closed:
                    raise ConnectionClosedError("the client is closed")
            except BaseException:
                await conn.close()
                raise
            slot.conn, slot.info = conn, info
            return conn, info

    async def _handshake(self, conn: Connection, target: _Target) -> ServerApiVersions:
        request = pb.ApiVersionsRequest(
            client_software_name=CLIENT_SOFTWARE_NAME,
            client_software_version=CLIENT_SOFTWARE_VERSION,
        )
        self.sent_api_keys[ApiKey.API_VERSIONS] += 1
        raw = await conn.request(
            int(ApiKey.API_VERSIONS),
            0,
            messages.encode_request(ApiKey.API_VERSIONS, request),
            timeout=self.connect_timeout,
            api_name=ApiKey.API_VERSIONS.name,
        )
        response = messages.decode_response(ApiKey.API_VERSIONS, raw)
        assert isinstance(response, pb.ApiVersionsResponse)
        info = ServerApiVersions(
            address=target.address,
            server_type=response.server_type if response.HasField("server_type") else None,
            versions=MappingProxyType(
                {v.api_key: (v.min_version, v.max_version) for v in response.api_versions}
            ),
            recorded_at=time.time(),
        )
        self._api_versions[target.address] = info
        log.debug("%s is a %s offering %d APIs", target.address, info.role, len(info.versions))
        expected = target.expected_type
        if expected is not None and info.server_type is not None and info.server_type != expected:
            raise ConnectionClosedError(
                f"{target.address} is a {info.role}, but metadata says it is a {target.role} "
                "(stale metadata?)"
            )
        if self._sasl is not None:
            version = info.negotiate(ApiKey.AUTHENTICATE)
            if version is None:
                raise UnsupportedByServer(
                    ApiKey.AUTHENTICATE.name, target.address, "cannot authenticate with SASL"
                )
            self.sent_api_keys[ApiKey.AUTHENTICATE] += 1
            await authenticate(conn, self._sasl, timeout=self.connect_timeout, version=version)
        return info


def _is_standby_answer(target: _Target, exc: FlussError) -> bool:
    """A standby coordinator's NOT_COORDINATOR_LEADER: follow to the active one."""
    return (
        isinstance(exc, ServerError)
        and exc.code == _NOT_COORDINATOR_LEADER
        and target.role == "coordinator"
    )


def _unsupported(key: ApiKey, info: ServerApiVersions, target: _Target) -> UnsupportedByServer:
    advertised = info.versions.get(int(key))
    detail = (
        f"the {info.role} does not offer it"
        if advertised is None
        else f"it offers versions {advertised[0]}..{advertised[1]}, "
        f"fluss_proto speaks 0..{API_INFO[key].max_version}"
    )
    return UnsupportedByServer(key.name, target.address, detail)


def _node_id(node: ServerNode) -> int:
    return node.node_id
