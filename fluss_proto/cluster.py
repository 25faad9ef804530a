"""Cluster value types: table paths, server nodes, metadata, API versions. No I/O.

The client, admin, gather, scan and model modules all speak these values; keeping them
apart from :mod:`fluss_proto.client` lets a module read metadata without importing the
networking code (after aiokafka's ``structs.py`` / ``cluster.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple, TypeVar

from fluss_proto.api_keys import API_INFO, ApiKey, line_of_keys

if TYPE_CHECKING:  # the parsers take protobuf messages; the types here need no protobuf
    from google.protobuf.message import Message

    from fluss_proto._gen import fluss_rpc_pb2 as pb

__all__ = [
    "DEFAULT_PORT",
    "FEATURE_APIS",
    "SERVER_TYPE_COORDINATOR",
    "SERVER_TYPE_TABLET",
    "BucketMetadata",
    "ClusterMetadata",
    "CoordinatorRedirect",
    "Features",
    "MetadataReply",
    "PartitionMetadata",
    "ServerApiVersions",
    "ServerNode",
    "TableMetadata",
    "TablePath",
    "format_address",
    "parse_bootstrap",
    "parse_metadata",
    "split_address",
]

DEFAULT_PORT: Final = 9123
SERVER_TYPE_COORDINATOR: Final = 1
SERVER_TYPE_TABLET: Final = 2


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


def format_address(host: str, port: int) -> str:
    """``host:port``, with IPv6 hosts in brackets (``[::1]:9123``)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _is_ipv6(text: str) -> bool:
    import ipaddress

    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def split_address(address: str) -> tuple[str, int]:
    if address.startswith("["):
        host, _, rest = address[1:].partition("]")
        return host, int(rest[1:])
    host, _, port = address.rpartition(":")
    return host, int(port)


#: The longest HOST:PORT: a DNS name's 253 characters, brackets, a colon, five digits.
_MAX_ADDRESS = 253 + 2 + 1 + 5


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
            if len(item) > _MAX_ADDRESS:  # said short: the value may be megabytes
                raise ValueError(
                    f"bad bootstrap address {item[:40]!r}...: longer than {_MAX_ADDRESS} "
                    "characters (a host name has at most 253)"
                )
            if item.startswith("["):
                host, close, rest = item[1:].partition("]")
                if not close or (rest and not rest.startswith(":")):
                    raise ValueError(f"bad bootstrap address {item!r}")
                port_text = rest[1:] if rest else str(DEFAULT_PORT)
            elif item.count(":") == 1:
                host, port_text = item.split(":")
            elif item.count(":") > 1:  # a bare IPv6 address (``a:b:c`` is not one)
                if not _is_ipv6(item):
                    raise ValueError(f"bad bootstrap address {item!r}: HOST:PORT, or [IPv6]:PORT")
                host, port_text = item, str(DEFAULT_PORT)
            else:
                host, port_text = item, str(DEFAULT_PORT)
            try:
                port = int(port_text)
            except ValueError:
                raise ValueError(f"bad port in bootstrap address {item!r}") from None
            if not host or not 0 < port < 65536:
                raise ValueError(f"bad bootstrap address {item!r}")
            address = format_address(host, port)
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
        return line_of_keys(self.versions) == "1.0"


@dataclass(frozen=True, slots=True)
class ServerNode:
    node_id: int
    host: str
    port: int
    rack: str | None = None

    @property
    def address(self) -> str:
        return format_address(self.host, self.port)


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


@dataclass(frozen=True, slots=True)
class MetadataReply:
    """What one GetMetadata reply says (the reply alone, not merged with any cache)."""

    #: None when the answering server does not know the coordinator (yet).
    coordinator: ServerNode | None
    tablet_servers: dict[int, ServerNode]
    tables: dict[TablePath, TableMetadata]
    #: partition_id -> metadata
    partitions: dict[int, PartitionMetadata]


def parse_metadata(resp: pb.MetadataResponse) -> MetadataReply:
    """The servers, tables and partitions of one GetMetadata reply."""
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
    return MetadataReply(coordinator, tablets, tables, partitions)


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
_M = TypeVar("_M", bound="Message")


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
