"""The storage poll: what each table holds in each tier, read on its own slower cadence.

:func:`poll_storage` turns a connected client and the offsets poll's view into a
:class:`~konsole.model.storage.StoragePart`. The local log's offsets come from the view (no
request); the rest is asked only when the servers advertise it (ApiVersions, the client's
``features``): nothing is sent to a server that does not offer the API, and the figure stays
unknown.

Requests per poll, bounded by ``max_requests`` (tables past the bound are deferred to the
next poll, in turn, and keep their earlier readings):

- ListRemoteLogManifests (1.0 line, coordinator): one per table;
- GetLatestKvSnapshots: one per primary-key table, one per partition when partitioned;
- GetLakeSnapshot: one per table with ``table.datalake.enabled``;
- GetTableStats (both lines): one per table and leader of its buckets, with what the reads
  above leave of the bound, the tables in their own turn (row counts refresh more slowly).

Never raises: a failed read is an error line on the part and leaves its figures unknown.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from fluss_proto.admin import TABLE_STATS_KIND, FlussAdmin
from fluss_proto.leaders import BucketRef
from fluss_proto.model import ClusterView, TableView
from konsole.model.storage import (
    RETENTION_KEYS,
    BucketStorage,
    StorageCapabilities,
    StoragePart,
    TableStorage,
)

__all__ = ["DEFAULT_INTERVAL", "DEFAULT_MAX_REQUESTS", "StorageCursor", "poll_storage"]

#: Seconds between storage polls unless the profile says otherwise.
DEFAULT_INTERVAL: Final = 30.0
#: Requests one storage poll may send (GetTableStats: one per table and leader). 250 keeps
#: a 200-table poll's client CPU, amortised over the 30 s cadence, under a quarter of a
#: guided poll's (bench/storage.py, docs/performance.md).
DEFAULT_MAX_REQUESTS: Final = 250
#: Requests in flight at once.
CONCURRENCY: Final = 8


@dataclass
class StorageCursor:
    """Where the next storage poll starts when the last one hit the request bound."""

    next_table: int = 0
    #: Where the next row counts (GetTableStats) start: they get what the tier reads leave.
    next_stats: int = 0


def capabilities(client: Any) -> StorageCapabilities:
    f = client.features
    return StorageCapabilities(
        remote_manifests=bool(f.list_remote_log_manifests),
        kv_snapshots=bool(f.kv_snapshots),
        table_stats=bool(f.table_stats),
        lake_snapshot=bool(f.lake_snapshot),
    )


def _retention(table: TableView) -> dict[str, str | None]:
    props = table.info.properties if table.info is not None else {}
    return {k: props.get(k) for k in RETENTION_KEYS}


def _requests_for(table: TableView, caps: StorageCapabilities) -> int:
    info = table.info
    n = 1 if caps.remote_manifests else 0
    if info is not None and info.is_pk_table and caps.kv_snapshots:
        n += max(1, len(table.partitions)) if info.partition_keys else 1
    if info is not None and _lake_enabled(table) and caps.lake_snapshot:
        n += 1
    return n


def _lake_enabled(table: TableView) -> bool:
    info = table.info
    return (
        info is not None
        and str(info.properties.get("table.datalake.enabled", "")).lower() == "true"
    )


class _Reads:
    """One storage poll's answers, keyed by bucket; error lines beside them."""

    def __init__(self) -> None:
        self.remote: dict[tuple[int, int | None, int], int] = {}
        self.remote_known: set[int] = set()
        self.kv: dict[tuple[int, int | None, int], tuple[int | None, int | None]] = {}
        self.lake: dict[tuple[int, int | None, int], int | None] = {}
        self.lake_ids: dict[int, tuple[int | None, str | None]] = {}
        self.rows: dict[tuple[int, int | None, int], int | None] = {}
        self.errors: list[str] = []
        self.requests = 0


async def poll_storage(
    client: Any,
    view: ClusterView,
    *,
    now: float | None = None,
    max_requests: int = DEFAULT_MAX_REQUESTS,
    cursor: StorageCursor | None = None,
    monotonic: Callable[[], float] = time.monotonic,
) -> StoragePart:
    """One storage poll (see the module docs); ``cursor`` carries the deferral between polls."""
    taken_at = time.time() if now is None else now
    t0 = monotonic()
    caps = capabilities(client)
    admin = FlussAdmin(client)
    tables = [t for t in view.tables if t.table_id is not None and t.info is not None]
    cursor = cursor or StorageCursor()
    chosen, cursor.next_table = _choose(
        tables, lambda t: _requests_for(t, caps), max_requests, cursor.next_table
    )
    reads = _Reads()
    gate = asyncio.Semaphore(CONCURRENCY)
    jobs: list[Awaitable[None]] = []
    for table in chosen:
        jobs += _table_jobs(admin, table, caps, reads, gate)
    if caps.remote_manifests and chosen:
        jobs.append(_remote(admin, chosen, reads))
    if caps.table_stats:
        # Row counts with what the tier reads left of the budget, in their own turn.
        left = max_requests - sum(_requests_for(t, caps) for t in chosen)
        counted, cursor.next_stats = _choose(tables, _leaders, left, cursor.next_stats, 0)
        if counted:
            jobs.append(_stats(admin, counted, reads))
    await asyncio.gather(*jobs)
    return StoragePart(
        taken_at=taken_at,
        latency_s=monotonic() - t0,
        capabilities=caps,
        tables=tuple(_table_storage(t, reads) for t in tables),
        buckets=tuple(b for t in tables for b in _buckets(t, taken_at, reads, caps)),
        errors=tuple(reads.errors),
        requests=reads.requests,
        deferred=len(tables) - len(chosen),
    )


def _choose(
    tables: Sequence[TableView],
    cost: Callable[[TableView], int],
    budget: int,
    start: int,
    least: int = 1,
) -> tuple[list[TableView], int]:
    """The tables from ``start`` on (in turn) whose costs fit ``budget``, at least ``least``
    of them, and where the next turn starts."""
    if not tables:
        return [], 0
    start %= len(tables)
    chosen: list[TableView] = []
    spent = 0
    for table in list(tables[start:]) + list(tables[:start]):
        if spent + cost(table) > budget and len(chosen) >= least:
            break
        chosen.append(table)
        spent += cost(table)
    return chosen, (start + len(chosen)) % len(tables)


def _leaders(table: TableView) -> int:
    """GetTableStats requests for a table: one per leader of its buckets (a request names
    one table)."""
    return len({b.leader_id for b in table.buckets if b.leader_id is not None})


def _table_jobs(
    admin: FlussAdmin,
    table: TableView,
    caps: StorageCapabilities,
    reads: _Reads,
    gate: asyncio.Semaphore,
) -> list[Awaitable[None]]:
    info = table.info
    assert info is not None and table.table_id is not None
    jobs: list[Awaitable[None]] = []
    if info.is_pk_table and caps.kv_snapshots:
        parts: list[str | None] = (
            [p.name for p in table.partitions] if info.partition_keys else [None]
        )
        for part in parts:
            what = f"{table.path}{f'[{part}]' if part else ''}: GET_LATEST_KV_SNAPSHOTS"
            jobs.append(_guarded(gate, reads, what, _kv(admin, table, part, reads)))
    if _lake_enabled(table) and caps.lake_snapshot:
        jobs.append(
            _guarded(gate, reads, f"{table.path}: GET_LAKE_SNAPSHOT", _lake(admin, table, reads))
        )
    return jobs


async def _guarded(gate: asyncio.Semaphore, reads: _Reads, what: str, job: Awaitable[None]) -> None:
    async with gate:
        reads.requests += 1
        try:
            await job
        except Exception as exc:  # one failed read: its figures stay unknown
            reads.errors.append(f"{what}: {_text(exc)}")


async def _remote(admin: FlussAdmin, tables: Sequence[TableView], reads: _Reads) -> None:
    """Every chosen table's remote log manifests, pipelined to the coordinator in one write
    (one request each: the coordinator's answers name one table)."""
    ids = [t.table_id for t in tables if t.table_id is not None]
    reads.requests += len(ids)
    try:
        listings = await admin.remote_log_manifests_of(ids)
    except Exception as exc:
        reads.errors.append(f"LIST_REMOTE_LOG_MANIFESTS: {_text(exc)}")
        return
    for table, listing in zip(tables, listings, strict=True):
        if isinstance(listing, Exception):
            reads.errors.append(f"{table.path}: LIST_REMOTE_LOG_MANIFESTS: {_text(listing)}")
            continue
        reads.remote_known.add(listing.table_id)
        for m in listing.manifests:
            reads.remote[(m.table_id, m.partition_id, m.bucket_id)] = m.remote_log_end_offset


async def _kv(admin: FlussAdmin, table: TableView, partition: str | None, reads: _Reads) -> None:
    snaps = await admin.latest_kv_snapshots(table.path, partition)
    for s in snaps.buckets:
        reads.kv[(snaps.table_id, snaps.partition_id, s.bucket_id)] = (s.snapshot_id, s.log_offset)


async def _lake(admin: FlussAdmin, table: TableView, reads: _Reads) -> None:
    assert table.table_id is not None
    snap = await admin.lake_snapshot(table.path)
    if not snap.exists:
        reads.lake_ids[table.table_id] = (None, snap.reason or "no lake snapshot")
        return
    reads.lake_ids[table.table_id] = (snap.snapshot_id, None)
    for b in snap.buckets:
        reads.lake[(table.table_id, b.partition_id, b.bucket_id)] = b.log_offset


async def _stats(admin: FlussAdmin, tables: Sequence[TableView], reads: _Reads) -> None:
    refs = [
        BucketRef(t.path, b.table_id, b.partition_id, b.partition_name, b.bucket_id, b.leader_id)
        for t in tables
        for b in t.buckets
        if b.leader_id is not None
    ]
    reads.requests += sum(_leaders(t) for t in tables)
    try:
        outcomes = await admin.leader_calls(TABLE_STATS_KIND, refs)
    except Exception as exc:
        reads.errors.append(f"GET_TABLE_STATS: {_text(exc)}")
        return
    for ref in refs:
        o = outcomes.get((0, ref.key))
        if o is not None and o.error is None and o.value is not None:
            reads.rows[ref.key] = o.value
        elif o is not None and o.error is not None:
            reads.errors.append(f"{ref.path}#{ref.bucket_id}: GET_TABLE_STATS: {_text(o.error)}")


def _table_storage(table: TableView, reads: _Reads) -> TableStorage:
    info = table.info
    assert info is not None and table.table_id is not None
    lake_id, note = reads.lake_ids.get(table.table_id, (None, None))
    return TableStorage(
        table_id=table.table_id,
        name=str(table.path),
        primary_key=info.is_pk_table,
        partitioned=bool(info.partition_keys),
        retention=_retention(table),
        lake_enabled=_lake_enabled(table),
        lake_snapshot_id=lake_id,
        lake_note=note if _lake_enabled(table) else "lake not enabled for this table",
    )


def _buckets(
    table: TableView, at: float, reads: _Reads, caps: StorageCapabilities
) -> list[BucketStorage]:
    out = []
    for b in table.buckets:
        key = (b.table_id, b.partition_id, b.bucket_id)
        remote: int | None = reads.remote.get(key)
        if remote is None and b.table_id in reads.remote_known:
            remote = 0  # the coordinator answered and listed nothing tiered for it
        kv_id, kv_offset = reads.kv.get(key, (None, None))
        out.append(
            BucketStorage(
                table_id=b.table_id,
                partition_id=b.partition_id,
                partition_name=b.partition_name,
                bucket_id=b.bucket_id,
                leader_id=b.leader_id,
                log_start=b.earliest_offset,
                log_end=b.latest_offset,
                remote_end=remote,
                remote_since=at if remote is not None else None,
                log_end_at_remote=b.latest_offset if remote is not None else None,
                kv_snapshot_id=kv_id,
                kv_log_offset=kv_offset,
                kv_since=at if kv_id is not None else None,
                log_end_at_kv=b.latest_offset if kv_id is not None else None,
                lake_log_offset=reads.lake.get(key),
                row_count=reads.rows.get(key),
            )
        )
    return out


def _text(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."
