"""Frozen result types of the typed read API (:mod:`fluss_proto.admin`, :mod:`fluss_proto.gather`).

Everything here is a plain value: frozen dataclasses, tuples and read-only mappings, built
from server replies and safe to hand to another thread or to keep as history. No I/O.

Conventions:

- A value the server did not send is ``None``, never 0 (an empty bucket has offset 0; an
  unknown one has ``None``).
- Per-item failures are kept on the item (``error``: a typed
  :class:`~fluss_proto.errors.FlussError`), so one bad bucket does not hide the others.
- Enum fields hold the enum member when the code is known and the raw ``int`` otherwise
  (a newer server may send codes this module does not know).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal, TypeVar

from fluss_proto.api_keys import ApiKey, api_key_or_none, line_of_keys
from fluss_proto.cluster import TablePath, format_address
from fluss_proto.errors import FlussError

if TYPE_CHECKING:  # annotations only: a cluster view needs no JSON or type parsing
    from fluss_proto.types import FrozenDict, Schema, TableInfo

__all__ = [
    "EARLIEST",
    "LATEST",
    "AclBinding",
    "AclFilter",
    "AclListing",
    "ActiveKvSnapshot",
    "ActiveKvSnapshots",
    "ApiVersionRange",
    "AtTimestamp",
    "BucketInfo",
    "BucketOffset",
    "BucketRebalance",
    "BucketStats",
    "BucketView",
    "ClusterHealth",
    "ClusterView",
    "ConfigEntry",
    "DatabaseSummary",
    "Earliest",
    "GatherError",
    "HealthStatus",
    "KvSnapshot",
    "KvSnapshots",
    "LakeBucket",
    "LakeSnapshot",
    "Latest",
    "OffsetSpec",
    "OffsetsResult",
    "OperationType",
    "PartitionInfo",
    "PermissionType",
    "RebalanceProgress",
    "RebalanceStatus",
    "RemoteLogManifest",
    "RemoteLogManifests",
    "ResourceType",
    "SchemaInfo",
    "ServerInfo",
    "TableRebalance",
    "TableStats",
    "TableView",
    "enum_or_int",
]

_E = TypeVar("_E", bound=IntEnum)


def enum_or_int(enum: type[_E], value: int) -> _E | int:
    """``enum(value)`` when the code is known, else the raw int."""
    try:
        return enum(value)
    except ValueError:
        return int(value)


# =========================================================================== servers


@dataclass(frozen=True, slots=True)
class ApiVersionRange:
    """One entry of a server's ApiVersions reply."""

    api_key: int
    min_version: int
    max_version: int

    @property
    def name(self) -> str:
        key = api_key_or_none(self.api_key)
        return key.name if key is not None else f"UNKNOWN_{self.api_key}"


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """One server as GetMetadata lists it, plus what it advertised in ApiVersions.

    ``role`` is where metadata places the server; ``server_type`` is what the server
    itself said (1 coordinator, 2 tablet server, None if it did not say or was not
    reached). ``api_versions`` is empty and ``error`` set when the server could not be
    asked. The coordinator is always node 0 (Fluss numbers it so).
    """

    node_id: int
    role: Literal["coordinator", "tablet"]
    host: str
    port: int
    rack: str | None = None
    server_type: int | None = None
    api_versions: tuple[ApiVersionRange, ...] = ()
    error: FlussError | None = None

    @property
    def address(self) -> str:
        return format_address(self.host, self.port)

    @property
    def apis(self) -> Mapping[int, tuple[int, int]]:
        return MappingProxyType(
            {v.api_key: (v.min_version, v.max_version) for v in self.api_versions}
        )

    def advertises(self, api: ApiKey | int) -> bool:
        return int(api) in self.apis

    @property
    def generation(self) -> Literal["0.9", "1.0"] | None:
        """'1.0' when the server offers a 1.0-only API, '0.9' otherwise, None if unknown
        (:func:`fluss_proto.api_keys.line_of_keys`)."""
        return line_of_keys(v.api_key for v in self.api_versions)


# =========================================================================== catalog


@dataclass(frozen=True, slots=True)
class DatabaseSummary:
    name: str
    created_ms: int
    table_count: int


@dataclass(frozen=True, slots=True)
class SchemaInfo:
    schema_id: int
    schema: Schema


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    """One partition: ``name`` is the values joined by ``$`` in partition-key order."""

    partition_id: int
    name: str
    spec: FrozenDict
    remote_data_dir: str | None = None


@dataclass(frozen=True, slots=True)
class BucketInfo:
    """Placement of one bucket, from GetMetadata."""

    table_id: int
    partition_id: int | None
    partition_name: str | None
    bucket_id: int
    #: None while the bucket has no leader.
    leader_id: int | None
    replica_ids: tuple[int, ...]
    #: Informational (Fluss does no client-side epoch fencing).
    leader_epoch: int | None
    #: Always None: the client protocol's GetMetadata carries no ISR (Fluss has a
    #: ``TODO: Add isr here`` in ``PbBucketMetadata``). Take ISR health from
    #: GetClusterHealth (1.0) or from server metrics; never infer it from replicas.
    isr: tuple[int, ...] | None = None


# =========================================================================== offsets


@dataclass(frozen=True, slots=True)
class Earliest:
    """The log start offset (includes data already moved to remote storage)."""

    offset_type = 0


@dataclass(frozen=True, slots=True)
class Latest:
    """The high watermark (what a reader can see), not the leader's log end offset."""

    offset_type = 1


@dataclass(frozen=True, slots=True)
class AtTimestamp:
    """The first offset whose record timestamp is >= ``ms`` (epoch milliseconds).

    A timestamp later than the server's clock answers INVALID_TIMESTAMP (38) per bucket.
    """

    ms: int
    offset_type = 2


OffsetSpec = Earliest | Latest | AtTimestamp
EARLIEST = Earliest()
LATEST = Latest()


@dataclass(frozen=True, slots=True)
class BucketOffset:
    table_id: int
    partition_id: int | None
    bucket_id: int
    #: The node asked last (the leader as metadata named it), None when there was none.
    leader_id: int | None
    offset: int | None
    error: FlussError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.offset is not None


@dataclass(frozen=True, slots=True)
class OffsetsResult:
    """ListOffsets for one table (or partition): one entry per bucket asked."""

    table_path: TablePath
    table_id: int
    spec: OffsetSpec
    buckets: tuple[BucketOffset, ...]

    @property
    def offsets(self) -> Mapping[tuple[int | None, int], int]:
        """(partition_id, bucket_id) -> offset, for the buckets that answered."""
        return MappingProxyType(
            {(b.partition_id, b.bucket_id): b.offset for b in self.buckets if b.ok}  # type: ignore[misc]
        )

    @property
    def by_bucket(self) -> Mapping[int, int]:
        """bucket_id -> offset (for a single partition or a non-partitioned table)."""
        return MappingProxyType({b.bucket_id: b.offset for b in self.buckets if b.ok})  # type: ignore[misc]

    @property
    def errors(self) -> Mapping[tuple[int | None, int], FlussError]:
        return MappingProxyType(
            {(b.partition_id, b.bucket_id): b.error for b in self.buckets if b.error}
        )

    @property
    def total(self) -> int | None:
        """Sum over the buckets, or None when any bucket is unknown."""
        if any(not b.ok for b in self.buckets):
            return None
        return sum(b.offset or 0 for b in self.buckets)


# =========================================================================== snapshots, configs


@dataclass(frozen=True, slots=True)
class KvSnapshot:
    bucket_id: int
    #: Both None while the bucket has no completed snapshot yet.
    snapshot_id: int | None
    log_offset: int | None

    @property
    def exists(self) -> bool:
        return self.snapshot_id is not None


@dataclass(frozen=True, slots=True)
class KvSnapshots:
    table_id: int
    partition_id: int | None
    buckets: tuple[KvSnapshot, ...]


@dataclass(frozen=True, slots=True)
class ActiveKvSnapshot:
    """One KV snapshot the coordinator still keeps for a bucket (ListKvSnapshots, 1.0)."""

    bucket_id: int
    snapshot_id: int


@dataclass(frozen=True, slots=True)
class ActiveKvSnapshots:
    """ListKvSnapshots (Fluss 1.0): every snapshot still retained or held by a lease, per
    bucket of a table (or of one partition). A bucket without any snapshot is not listed.

    The server sends no log offsets here (GetLatestKvSnapshots has them for the latest).
    """

    table_id: int
    partition_id: int | None
    #: Sorted by bucket, then snapshot id.
    snapshots: tuple[ActiveKvSnapshot, ...]

    @property
    def by_bucket(self) -> Mapping[int, tuple[int, ...]]:
        """bucket_id -> its active snapshot ids, ascending."""
        out: dict[int, list[int]] = {}
        for s in self.snapshots:
            out.setdefault(s.bucket_id, []).append(s.snapshot_id)
        return MappingProxyType({b: tuple(ids) for b, ids in out.items()})

    @property
    def newest(self) -> Mapping[int, int]:
        """bucket_id -> its highest active snapshot id."""
        return MappingProxyType({b: ids[-1] for b, ids in self.by_bucket.items()})


@dataclass(frozen=True, slots=True)
class RemoteLogManifest:
    """A bucket whose log is partly in remote storage (ListRemoteLogManifests, 1.0)."""

    table_id: int
    partition_id: int | None
    bucket_id: int
    #: The manifest file in the cluster's remote data directory.
    manifest_path: str
    #: Offsets below this one are in remote storage (exclusive end).
    remote_log_end_offset: int


@dataclass(frozen=True, slots=True)
class RemoteLogManifests:
    """ListRemoteLogManifests (Fluss 1.0) for a table or one partition: only buckets that
    have tiered segments are listed (none when tiering is off or has not run yet)."""

    table_id: int
    partition_id: int | None
    #: Sorted by (partition, bucket).
    manifests: tuple[RemoteLogManifest, ...]

    @property
    def end_offsets(self) -> Mapping[int, int]:
        """bucket_id -> remote log end offset (for a single partition or a plain table)."""
        return MappingProxyType({m.bucket_id: m.remote_log_end_offset for m in self.manifests})


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    key: str
    #: None when the server did not send it (sensitive values are redacted by the server).
    value: str | None
    #: "INITIAL_SERVER_CONFIG" or "DYNAMIC_SERVER_CONFIG".
    source: str


# =========================================================================== ACLs


class ResourceType(IntEnum):
    ANY = 1
    CLUSTER = 2
    DATABASE = 3
    TABLE = 4


class OperationType(IntEnum):
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DROP = 6
    ALTER = 7
    DESCRIBE = 8


class PermissionType(IntEnum):
    ANY = 1
    ALLOW = 2


@dataclass(frozen=True, slots=True)
class AclFilter:
    """Which ACLs to list; the defaults match everything (Fluss ``AclBindingFilter.ANY``)."""

    resource_type: ResourceType = ResourceType.ANY
    resource_name: str | None = None
    principal_name: str | None = None
    principal_type: str | None = None
    host: str | None = None
    operation: OperationType = OperationType.ANY
    permission: PermissionType = PermissionType.ANY


@dataclass(frozen=True, slots=True)
class AclBinding:
    resource_type: ResourceType | int
    resource_name: str
    principal_name: str
    principal_type: str
    host: str
    operation: OperationType | int
    permission: PermissionType | int


@dataclass(frozen=True, slots=True)
class AclListing:
    """ListAcls result. ``enabled`` is False when the server has no authorizer
    (SECURITY_DISABLED_EXCEPTION, 47): then there are no ACLs to list, and ``reason``
    carries the server's text."""

    enabled: bool
    bindings: tuple[AclBinding, ...] = ()
    reason: str | None = None


# =========================================================================== rebalance


class RebalanceStatus(IntEnum):
    NOT_STARTED = 0
    REBALANCING = 1
    FAILED = 2
    COMPLETED = 3
    CANCELED = 4
    #: Fluss 1.0 only.
    TIMEOUT = 5


@dataclass(frozen=True, slots=True)
class BucketRebalance:
    partition_id: int | None
    bucket_id: int
    original_leader: int | None
    new_leader: int | None
    original_replicas: tuple[int, ...]
    new_replicas: tuple[int, ...]
    status: RebalanceStatus | int


@dataclass(frozen=True, slots=True)
class TableRebalance:
    table_id: int
    buckets: tuple[BucketRebalance, ...]


@dataclass(frozen=True, slots=True)
class RebalanceProgress:
    """ListRebalanceProgress. ``rebalance_id`` None = no rebalance to report."""

    rebalance_id: str | None
    status: RebalanceStatus | int | None
    tables: tuple[TableRebalance, ...] = ()

    @property
    def exists(self) -> bool:
        return self.rebalance_id is not None


# =========================================================================== stats, health, lake


@dataclass(frozen=True, slots=True)
class BucketStats:
    table_id: int
    partition_id: int | None
    bucket_id: int
    leader_id: int | None
    #: Live keys (PK tables) or high watermark - log start (log tables); None when the
    #: server could not tell or the bucket failed.
    row_count: int | None
    error: FlussError | None = None


@dataclass(frozen=True, slots=True)
class TableStats:
    table_path: TablePath
    table_id: int
    buckets: tuple[BucketStats, ...]

    @property
    def row_count(self) -> int | None:
        """Sum over buckets, or None when any bucket is unknown."""
        if any(b.row_count is None for b in self.buckets):
            return None
        return sum(b.row_count or 0 for b in self.buckets)

    @property
    def errors(self) -> Mapping[tuple[int | None, int], FlussError]:
        return MappingProxyType(
            {(b.partition_id, b.bucket_id): b.error for b in self.buckets if b.error}
        )


class HealthStatus(IntEnum):
    GREEN = 0
    YELLOW = 1
    RED = 2
    UNKNOWN = 3


@dataclass(frozen=True, slots=True)
class ClusterHealth:
    """GetClusterHealth (Fluss 1.0). RED: some bucket leader is inactive; YELLOW: fewer
    in-sync replicas than replicas."""

    num_replicas: int
    in_sync_replicas: int
    #: One per bucket.
    num_leader_replicas: int
    active_leader_replicas: int
    status: HealthStatus


@dataclass(frozen=True, slots=True)
class LakeBucket:
    partition_id: int | None
    partition_name: str | None
    bucket_id: int
    log_offset: int | None


@dataclass(frozen=True, slots=True)
class LakeSnapshot:
    """GetLakeSnapshot. ``exists`` False (and ``reason`` set) when the table has no lake
    snapshot (LAKE_SNAPSHOT_NOT_EXIST, 53) or the cluster has no lake storage (40)."""

    table_path: TablePath
    exists: bool
    table_id: int | None = None
    snapshot_id: int | None = None
    buckets: tuple[LakeBucket, ...] = ()
    reason: str | None = None


# =========================================================================== cluster view


@dataclass(frozen=True, slots=True)
class GatherError:
    """One failure met while gathering; the rest of the view is still valid."""

    #: "cluster", "server", "database", "table", "partition" or "bucket".
    scope: str
    #: What failed, e.g. "db", "db.table", "db.table/p=1", "db.table[p=1]#3", "127.0.0.1:9123".
    subject: str
    api: str
    error: FlussError


@dataclass(frozen=True, slots=True)
class BucketView:
    table_id: int
    partition_id: int | None
    partition_name: str | None
    bucket_id: int
    leader_id: int | None
    replica_ids: tuple[int, ...]
    leader_epoch: int | None
    latest_offset: int | None = None
    earliest_offset: int | None = None
    latest_error: FlussError | None = None
    earliest_error: FlussError | None = None
    #: Always None: the client protocol carries no ISR (see :class:`BucketInfo`).
    isr: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class TableView:
    path: TablePath
    table_id: int | None
    #: None when the table's metadata could not be read (see ``error``).
    info: TableInfo | None
    partitions: tuple[PartitionInfo, ...] = ()
    buckets: tuple[BucketView, ...] = ()
    #: Set when the table vanished or its metadata failed; buckets are then empty.
    error: FlussError | None = None


@dataclass(frozen=True, slots=True)
class ClusterView:
    """Everything :func:`fluss_proto.gather.gather_cluster` collected in one pass."""

    coordinator: ServerInfo | None
    tablet_servers: tuple[ServerInfo, ...]
    databases: tuple[str, ...]
    tables: tuple[TableView, ...]
    errors: tuple[GatherError, ...]
    #: Awaited batches of concurrent requests (a batch = one round trip).
    round_trips: int
    #: Requests sent (handshakes not included).
    requests: int
    #: Wall-clock start (time.time()) and duration of the gather.
    started_at: float
    duration_s: float
    #: Which offsets were asked for: a bucket's ``latest_offset`` / ``earliest_offset`` of
    #: None without an error means "not asked" when these are False, "unknown" otherwise.
    latest_read: bool = True
    earliest_read: bool = False

    @property
    def servers(self) -> tuple[ServerInfo, ...]:
        return ((self.coordinator,) if self.coordinator else ()) + self.tablet_servers

    def table(self, path: TablePath | tuple[str, str] | str) -> TableView:
        wanted = TablePath.of(path)
        for table in self.tables:
            if table.path == wanted:
                return table
        raise KeyError(str(wanted))

    def tables_in(self, database: str) -> tuple[TableView, ...]:
        return tuple(t for t in self.tables if t.path.database == database)

    @property
    def buckets(self) -> tuple[BucketView, ...]:
        return tuple(b for t in self.tables for b in t.buckets)
