"""Where each table's data lives: the storage part of a snapshot, and its derived figures.

Pure. :class:`StoragePart` is what one storage poll read (``konsole.collect.cluster.storage``),
carried forward from the storage polls before it by :func:`carry`: per bucket the local log
(start and end offset), the remote log end offset (ListRemoteLogManifests, 1.0 only), the
latest KV snapshot (GetLatestKvSnapshots, primary-key tables), the lake snapshot's offset
(GetLakeSnapshot, datalake-enabled tables) and the row count (GetTableStats, 1.0 only); per
table the retention settings that decide how long each tier keeps data.

Every field is ``None`` when the server or its version cannot tell (an API it does not
advertise, a request that failed, a figure the protocol does not carry): unknown, never 0.
The protocol carries no time for a tiered segment or a KV snapshot, so the times here are
*observed*: when a storage poll first saw the value it holds now (``*_since``), and whether
it saw it change (``*_changed``; when it did not, an age is a lower bound).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Final, Protocol

from fluss_proto.model import ClusterView
from konsole.model.metrics import ServerMetrics

__all__ = [
    "RETENTION_KEYS",
    "BucketStorage",
    "ServerLoad",
    "StorageCapabilities",
    "StorageLimits",
    "StoragePart",
    "StorageTrouble",
    "TableStorage",
    "TableSummary",
    "carry",
    "kv_age",
    "kv_behind",
    "kv_stale",
    "lake_lag",
    "server_load",
    "summaries",
    "tiering_age",
    "tiering_stalled",
    "trouble",
    "untiered",
]

#: The table properties that bound how long data stays readable in each tier, with the
#: server's default when the table does not set one (checked in the Fluss sources, 0.9.1
#: and the 1.0 line; ``table.log.local-ttl`` is 1.0 only). Fluss has no ``table.kv.ttl``.
RETENTION_KEYS: Final[Mapping[str, str | None]] = MappingProxyType(
    {
        "table.log.ttl": "7 d",
        "table.log.local-ttl": None,  # inherits table.log.ttl (1.0 line)
        "table.log.tiered.local-segments": "2",
        "table.auto-partition.enabled": "false",
        "table.auto-partition.time-unit": "DAY",
        "table.auto-partition.num-retention": "7",
        "table.datalake.enabled": "false",
        "table.datalake.freshness": "3 min",
        "table.datalake.auto-expire-snapshot": "false",
    }
)


@dataclass(frozen=True, slots=True)
class StorageCapabilities:
    """Which storage reads the servers advertise (ApiVersions); False: not asked."""

    remote_manifests: bool = False
    kv_snapshots: bool = False
    table_stats: bool = False
    lake_snapshot: bool = False

    def as_dict(self) -> dict[str, bool]:
        return {
            "remote_manifests": self.remote_manifests,
            "kv_snapshots": self.kv_snapshots,
            "table_stats": self.table_stats,
            "lake_snapshot": self.lake_snapshot,
        }


@dataclass(frozen=True, slots=True)
class BucketStorage:
    """One bucket's tiers. ``None`` is unknown everywhere (see the module docs)."""

    table_id: int
    partition_id: int | None
    partition_name: str | None
    bucket_id: int
    leader_id: int | None = None
    log_start: int | None = None
    log_end: int | None = None
    #: Offsets below it are in remote storage; 0 when the coordinator listed nothing tiered.
    remote_end: int | None = None
    #: When a storage poll first saw ``remote_end`` at its value, and the log end then.
    remote_since: float | None = None
    remote_changed: bool = False
    log_end_at_remote: int | None = None
    kv_snapshot_id: int | None = None
    kv_log_offset: int | None = None
    #: When a storage poll first saw ``kv_snapshot_id``, and the log end then.
    kv_since: float | None = None
    kv_changed: bool = False
    log_end_at_kv: int | None = None
    lake_log_offset: int | None = None
    row_count: int | None = None

    @property
    def key(self) -> tuple[int, int | None, int]:
        return (self.table_id, self.partition_id, self.bucket_id)


@dataclass(frozen=True, slots=True)
class TableStorage:
    """One table's storage facts beside its buckets'."""

    table_id: int
    name: str
    primary_key: bool
    partitioned: bool
    #: RETENTION_KEYS -> the table's value, or None when it does not set it (the default).
    retention: Mapping[str, str | None] = field(default_factory=lambda: MappingProxyType({}))
    lake_enabled: bool = False
    #: The lake snapshot id; None: unknown or none (``lake_note`` says which).
    lake_snapshot_id: int | None = None
    lake_note: str | None = None

    @property
    def log_ttl(self) -> str | None:
        return self.retention.get("table.log.ttl")


@dataclass(frozen=True, slots=True)
class StoragePart:
    """What the storage polls know at one moment (attached to a snapshot)."""

    #: When the storage poll behind it started, and how long it took.
    taken_at: float
    latency_s: float
    capabilities: StorageCapabilities
    tables: tuple[TableStorage, ...] = ()
    buckets: tuple[BucketStorage, ...] = ()
    #: "db.table: API: message" per failed read, secret-free.
    errors: tuple[str, ...] = ()
    requests: int = 0
    #: Tables this poll did not reach (the request bound): their readings are carried.
    deferred: int = 0

    def table(self, name: str) -> TableStorage | None:
        return next((t for t in self.tables if t.name == name), None)

    def buckets_of(self, table_id: int) -> tuple[BucketStorage, ...]:
        return tuple(b for b in self.buckets if b.table_id == table_id)


# =========================================================================== carrying


def carry(previous: StoragePart | None, current: StoragePart) -> StoragePart:
    """``current`` with the observed times of ``previous``: a value seen before keeps its
    ``since``; a changed one starts a new ``since`` (and is marked changed); a value the
    current poll could not read (None) keeps the previous reading."""
    if previous is None:
        return current
    before = {b.key: b for b in previous.buckets}
    return replace(
        current, buckets=tuple(_carry_bucket(before.get(b.key), b) for b in current.buckets)
    )


def _carry_bucket(old: BucketStorage | None, new: BucketStorage) -> BucketStorage:
    if old is None:
        return new
    changes: dict[str, Any] = {}
    for name in ("remote_end", "kv_snapshot_id", "kv_log_offset", "lake_log_offset", "row_count"):
        if getattr(new, name) is None and getattr(old, name) is not None:
            changes[name] = getattr(old, name)
    for prefix, value in (("remote", "remote_end"), ("kv", "kv_snapshot_id")):
        changes |= _since(
            old, new, prefix, getattr(old, value), changes.get(value, getattr(new, value))
        )
    return replace(new, **changes)


def _since(
    old: BucketStorage, new: BucketStorage, prefix: str, was: int | None, now: int | None
) -> dict[str, Any]:
    """The observed-time fields of one tier: the old sighting while the value holds, the
    new one (marked changed) when it moved. The collector stamps every reading as first
    seen at its poll, so a first sighting needs nothing here."""
    names = (f"{prefix}_since", f"{prefix}_changed", f"log_end_at_{prefix}")
    if (was is not None and was == now) or (now is not None and getattr(new, names[0]) is None):
        return {n: getattr(old, n) for n in names}
    if was is not None and now is not None:
        return {names[1]: True}
    return {}


# =========================================================================== derived


def untiered(bucket: BucketStorage) -> int | None:
    """Offsets only on local disk: log end minus remote end (None: unknown)."""
    if bucket.log_end is None or bucket.remote_end is None:
        return None
    return max(0, bucket.log_end - bucket.remote_end)


def tiering_age(bucket: BucketStorage, now: float) -> float | None:
    """Seconds since the remote end offset was first seen at its value (None: unknown)."""
    if bucket.remote_since is None or bucket.remote_end is None:
        return None
    return max(0.0, now - bucket.remote_since)


def kv_age(bucket: BucketStorage, now: float) -> float | None:
    """Seconds since the latest KV snapshot was first seen (None: unknown or no snapshot)."""
    if bucket.kv_since is None or bucket.kv_snapshot_id is None:
        return None
    return max(0.0, now - bucket.kv_since)


def kv_behind(bucket: BucketStorage) -> int | None:
    """Changelog offsets written since the latest KV snapshot (None: unknown)."""
    if bucket.log_end is None or bucket.kv_log_offset is None:
        return None
    return max(0, bucket.log_end - bucket.kv_log_offset)


def lake_lag(bucket: BucketStorage) -> int | None:
    """Offsets not yet in the lake snapshot (None: unknown or no lake)."""
    if bucket.log_end is None or bucket.lake_log_offset is None:
        return None
    return max(0, bucket.log_end - bucket.lake_log_offset)


def tiering_stalled(bucket: BucketStorage, now: float, after_s: float) -> bool:
    """The remote end did not move for ``after_s`` seconds while the log grew past it.

    Only a bucket that has tiered before can stall (a log that never filled a segment is
    not tiered, rightly); the log must have grown since the remote end was first seen at
    its value, and must be ahead of it.
    """
    age = tiering_age(bucket, now)
    if age is None or age < after_s or not bucket.remote_end:
        return False
    grown = (
        bucket.log_end is not None
        and bucket.log_end_at_remote is not None
        and bucket.log_end > bucket.log_end_at_remote
    )
    return grown and (untiered(bucket) or 0) > 0


def kv_stale(bucket: BucketStorage, now: float, after_s: float) -> bool:
    """A PK bucket taking writes whose latest KV snapshot is older than ``after_s``."""
    age = kv_age(bucket, now)
    if age is None or age < after_s:
        return False
    return (
        bucket.log_end is not None
        and bucket.log_end_at_kv is not None
        and bucket.log_end > bucket.log_end_at_kv
        and (kv_behind(bucket) or 0) > 0
    )


@dataclass(frozen=True, slots=True)
class TableSummary:
    """One table's row on the Storage screen and in ``konsole storage``."""

    name: str
    table_id: int
    primary_key: bool
    buckets: int
    tiers: tuple[str, ...]
    untiered: int | None
    tiering_age_s: float | None
    kv_age_s: float | None
    lake_lag: int | None
    row_count: int | None
    log_ttl: str | None
    stalled_buckets: int
    stale_kv_buckets: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "table": self.name,
            "table_id": self.table_id,
            "primary_key": self.primary_key,
            "buckets": self.buckets,
            "tiers": list(self.tiers),
            "untiered_offsets": self.untiered,
            "tiering_age_s": self.tiering_age_s,
            "kv_snapshot_age_s": self.kv_age_s,
            "lake_lag": self.lake_lag,
            "row_count": self.row_count,
            "log_ttl": self.log_ttl,
            "stalled_buckets": self.stalled_buckets,
            "stale_kv_buckets": self.stale_kv_buckets,
        }


def _total(values: Iterable[int | None]) -> int | None:
    """A sum that is unknown when any part is."""
    out = 0
    for v in values:
        if v is None:
            return None
        out += v
    return out


def _oldest(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def summaries(
    part: StoragePart, now: float, *, stall_after_s: float, kv_stale_after_s: float
) -> list[TableSummary]:
    """One row per table, the most behind first (stalled, then untiered offsets)."""
    out = []
    # One pass over the buckets: asking buckets_of per table is quadratic (1,600 buckets,
    # 200 tables: 320,000 comparisons per call, and health and check both call it).
    by_table: dict[int, list[BucketStorage]] = {}
    for bucket in part.buckets:
        by_table.setdefault(bucket.table_id, []).append(bucket)
    for table in part.tables:
        buckets = by_table.get(table.table_id, ())
        tiers = ["local"]
        if any(b.remote_end for b in buckets):
            tiers.append("remote")
        if table.primary_key and any(b.kv_snapshot_id is not None for b in buckets):
            tiers.append("kv-snapshot")
        if table.lake_enabled:
            tiers.append("lake")
        out.append(
            TableSummary(
                name=table.name,
                table_id=table.table_id,
                primary_key=table.primary_key,
                buckets=len(buckets),
                tiers=tuple(tiers),
                untiered=_total(untiered(b) for b in buckets) if buckets else None,
                tiering_age_s=_oldest(tiering_age(b, now) for b in buckets),
                kv_age_s=_oldest(kv_age(b, now) for b in buckets) if table.primary_key else None,
                lake_lag=_total(lake_lag(b) for b in buckets) if table.lake_enabled else None,
                row_count=_total(b.row_count for b in buckets) if buckets else None,
                log_ttl=table.log_ttl,
                stalled_buckets=sum(tiering_stalled(b, now, stall_after_s) for b in buckets),
                stale_kv_buckets=sum(kv_stale(b, now, kv_stale_after_s) for b in buckets)
                if table.primary_key
                else 0,
            )
        )
    out.sort(key=lambda s: (-s.stalled_buckets, -s.stale_kv_buckets, -(s.untiered or 0), s.name))
    return out


# =========================================================================== servers


@dataclass(frozen=True, slots=True)
class ServerLoad:
    """A tablet server's share of the placement: what draining it would move."""

    server_id: int
    replicas: int
    leaders: int
    #: Tables with a replica here.
    tables: int
    #: Bytes on its local disk (its ``physicalStorage_localSize`` metric); unknown
    #: without a scrape of the server.
    bytes_held: int | None = None
    #: Bytes of tiered log of the buckets with a replica here (its
    #: ``physicalStorage_remoteLogSize`` metric); unknown without a scrape.
    remote_log_bytes: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "server": self.server_id,
            "replicas": self.replicas,
            "leaders": self.leaders,
            "tables": self.tables,
            "bytes_held": self.bytes_held,
            "remote_log_bytes": self.remote_log_bytes,
            "drain_moves_replicas": self.replicas,
            "drain_moves_leaders": self.leaders,
        }


class LoadFacts(Protocol):
    """What the load needs of the poll's ``Placement`` (a protocol: placement imports the
    snapshot, which imports this module, so naming the class here would close a circle)."""

    @property
    def alive(self) -> frozenset[int]: ...
    @property
    def leaders(self) -> Mapping[int, int]: ...
    @property
    def replicas(self) -> Mapping[int, int]: ...


def server_load(
    view: ClusterView | None,
    metrics: Sequence[ServerMetrics] = (),
    *,
    placement: LoadFacts | None,
) -> list[ServerLoad]:
    """Replicas and leaders per tablet server from the poll's placement (``placement``: the one
    its poll made), every server in metadata with 0 when it holds nothing; bytes from each
    server's own scrape in ``metrics`` (unknown for a server not scraped)."""
    if view is None or placement is None:
        return []
    replicas, leaders = placement.replicas, placement.leaders
    tables: dict[int, set[int]] = {}
    for b in view.buckets:
        for r in b.replica_ids:
            tables.setdefault(r, set()).add(b.table_id)
    ids = sorted(set(placement.alive) | set(replicas))
    scraped = {m.server_id: m for m in metrics if m.role == "tablet"}
    out = []
    for i in ids:
        m = scraped.get(str(i))
        out.append(
            ServerLoad(
                i,
                replicas.get(i, 0),
                leaders.get(i, 0),
                len(tables.get(i, ())),
                bytes_held=None if m is None else m.local_size,
                remote_log_bytes=None if m is None else m.remote_log_size,
            )
        )
    return out


# =========================================================================== judgement


@dataclass(frozen=True, slots=True)
class StorageLimits:
    """The health limits the storage judgements read (HealthThresholds' storage keys)."""

    tiering_stall_s: float
    kv_snapshot_stale_s: float
    lake_lag_offsets: int

    @classmethod
    def of(cls, rules: Any) -> StorageLimits:
        """The storage keys of a ``HealthThresholds`` (health imports this module)."""
        return cls(rules.tiering_stall_s, rules.kv_snapshot_stale_s, rules.lake_lag_offsets)


@dataclass(frozen=True, slots=True)
class StorageTrouble:
    """Tables behind in a tier as of one storage part, by concern (name -> summary)."""

    stalled: Mapping[str, TableSummary]
    stale_kv: Mapping[str, TableSummary]
    lake_behind: Mapping[str, TableSummary]


def trouble(part: StoragePart | None, limits: StorageLimits) -> StorageTrouble:
    """The one judgement health, check and the events share. Time is the storage poll's
    (``part.taken_at``): what it saw then, never extrapolated."""
    if part is None:
        return StorageTrouble({}, {}, {})
    rows = summaries(
        part,
        part.taken_at,
        stall_after_s=limits.tiering_stall_s,
        kv_stale_after_s=limits.kv_snapshot_stale_s,
    )
    return StorageTrouble(
        stalled={s.name: s for s in rows if s.stalled_buckets},
        stale_kv={s.name: s for s in rows if s.stale_kv_buckets},
        lake_behind={
            s.name: s
            for s in rows
            if s.lake_lag is not None and s.lake_lag > limits.lake_lag_offsets
        },
    )
