"""One pass over a whole cluster in a few round trips, one when nothing changed.

:func:`gather_cluster` reads servers (with what each advertises), databases, tables (with
their :class:`TableInfo`), partitions, every bucket's placement and its latest offset (the
earliest too when asked). It works in rounds: each round sends every request whose
inputs are known and whose answer is still missing, in two batches sent at the same time
(catalog requests and offset requests, each a ``call_many``: pipelined per connection, all
servers at once), then checks the answers. Without a guide that takes:

1. ListDatabases, ApiVersions of every known server, GetMetadata for the server list;
2. ListTables for every database;
3. GetMetadata for every table (chunks of :data:`~fluss_proto.admin.METADATA_CHUNK`
   paths). The table JSON in it gives each TableInfo, so no GetTableInfo;
4. latest offsets of non-partitioned tables, and ListPartitionInfos of partitioned ones;
5. GetMetadata for all partition ids; 6. latest offsets of partition buckets.

Given ``previous`` (the view of the last poll), every round-1 request is built from what
that view knew (its databases, tables, partitions and leaders), so an unchanged cluster
is read in **one** round trip. Nothing from ``previous`` reaches the result: a guessed
answer is kept only when this gather's own replies confirm what it was based on (the
database and table still listed, the partition still there, the server asked still the
bucket's leader); anything else is discarded and asked again in the next round.

Latest offsets come from one FetchLog per leader naming all its buckets with
``max_bytes=0`` and ``max_wait_ms=0``: each bucket's reply carries its high watermark,
which is what ListOffsets LATEST answers a client, in 3 requests for 3 servers instead
of one per (leader, table, partition). The server may still attach one record batch to
the whole reply (it always returns a first batch if there is one); the fetch offset is
the offset ``previous`` saw, so that batch is new data at most. A bucket the fetch cannot
answer for a reason other than stale leadership (e.g. no READ permission) is asked with
ListOffsets LATEST instead. ``earliest=True`` adds ListOffsets EARLIEST per (leader,
table, partition): FetchLog carries no usable log start offset (0.9.1 and 1.0 send 0).

Nothing fails the whole gather except cancellation: each failure is kept where it
happened (on the server, table or bucket, and in :attr:`ClusterView.errors`). Extra
rounds happen only on change or trouble and are bounded (:data:`MAX_ROUNDS`): a
GetMetadata chunk rejected because a table vanished is asked again table by table, a
partition that vanished the same way per table then per partition, and buckets whose
leader did not answer are asked again once after fresh metadata.
:attr:`ClusterView.round_trips` counts the rounds.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import Message

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto._replies import as_fluss_error
from fluss_proto.admin import METADATA_CHUNK, AdminClient, FlussAdmin
from fluss_proto.api_keys import ApiKey
from fluss_proto.catalog import (
    api_versions_request,
    metadata_request,
    normalise_table_error,
    partitions_from_response,
    server_info,
    table_info_from_metadata,
)
from fluss_proto.client import COORDINATOR, CallItem
from fluss_proto.cluster import (
    BucketMetadata,
    PartitionMetadata,
    ServerNode,
    TableMetadata,
    TablePath,
    parse_metadata,
)
from fluss_proto.error_codes import (
    LeaderNotAvailableError,
    PartitionNotExistError,
    TableNotExistError,
    from_code,
)
from fluss_proto.errors import ConnectionFailedError, FlussError, ServerError
from fluss_proto.model import (
    BucketView,
    ClusterView,
    GatherError,
    PartitionInfo,
    ServerInfo,
    TableView,
)
from fluss_proto.types import TableInfo

__all__ = ["MAX_ROUNDS", "gather_cluster"]

#: Most rounds one gather runs; whatever is still unanswered then is reported as an error.
MAX_ROUNDS = 10
#: ListOffsets offset types.
_EARLIEST, _LATEST = 0, 1
#: Phase of the offset requests (the catalog ones come before: 0 servers .. 4 partitions).
_OFFSETS = 5
#: FetchLog's "from the earliest offset" (used when no offset of the bucket is known).
_FROM_EARLIEST = -2

Key = tuple[int, int | None, int]  # (table_id, partition_id, bucket_id)
_Answer = tuple[int | None, int | None, FlussError | None]  # (asked node, value, error)


async def gather_cluster(
    client: AdminClient,
    *,
    timeout: float | None = None,
    offsets: bool = True,
    earliest: bool = False,
    previous: ClusterView | None = None,
) -> ClusterView:
    """Read the whole cluster (see the module docs).

    ``offsets=False`` skips offsets; ``earliest=True`` also reads every bucket's earliest
    offset; ``previous`` (the last view of the same cluster) lets an unchanged cluster be
    read in one round trip.
    """
    started_at, t0 = time.time(), time.monotonic()
    run = _Gather(client, FlussAdmin(client, timeout=timeout), previous, offsets, earliest)
    await run.run()
    return run.view(started_at, time.monotonic() - t0)


@dataclass
class _Guide:
    """What a previous view knew, as guesses for round 1."""

    databases: tuple[str, ...] = ()
    tables: dict[str, list[TablePath]] = field(default_factory=dict)
    table_ids: dict[TablePath, int] = field(default_factory=dict)
    partitioned: set[TablePath] = field(default_factory=set)
    partitions: dict[TablePath, list[int]] = field(default_factory=dict)
    #: (table path, partition id) -> [(bucket id, leader)]
    buckets: dict[tuple[TablePath, int | None], list[tuple[int, int | None]]] = field(
        default_factory=dict
    )
    latest: dict[Key, int] = field(default_factory=dict)

    @classmethod
    def of(cls, view: ClusterView | None) -> _Guide:
        guide = cls()
        if view is None:
            return guide
        guide.databases = view.databases
        for t in view.tables:
            if t.table_id is None or t.error is not None:
                continue
            guide.tables.setdefault(t.path.database, []).append(t.path)
            guide.table_ids[t.path] = t.table_id
            if t.info is not None and t.info.is_partitioned:
                guide.partitioned.add(t.path)
                guide.partitions[t.path] = [p.partition_id for p in t.partitions]
            for b in t.buckets:
                guide.buckets.setdefault((t.path, b.partition_id), []).append(
                    (b.bucket_id, b.leader_id)
                )
                if b.latest_offset is not None:
                    guide.latest[(b.table_id, b.partition_id, b.bucket_id)] = b.latest_offset
        return guide


class _Round:
    """The requests of one round, each with the phase and function that take its answer."""

    def __init__(self) -> None:
        self.requests: list[CallItem] = []
        self.handlers: list[tuple[int, Callable[[Any], None]]] = []

    def add(
        self,
        phase: int,
        target: int | str | None,
        api: ApiKey,
        request: Message,
        handler: Callable[[Any], None],
    ) -> None:
        self.requests.append(CallItem(target, api, request))
        self.handlers.append((phase, handler))


@dataclass
class _Placement:
    """The buckets of one table, or of one partition of a partitioned table."""

    path: TablePath
    table_id: int
    partition_id: int | None
    buckets: Sequence[BucketMetadata] | Sequence[tuple[int, int | None]]
    fresh: bool

    def leaders(self) -> Iterable[tuple[int, int | None]]:
        if self.fresh:
            return ((b.bucket_id, b.leader_id) for b in self.buckets)  # type: ignore[union-attr]
        return self.buckets  # type: ignore[return-value]


class _Gather:
    def __init__(
        self,
        client: AdminClient,
        admin: FlussAdmin,
        previous: ClusterView | None,
        offsets: bool,
        earliest: bool,
    ) -> None:
        self.client = client
        self.admin = admin
        self.guide = _Guide.of(previous)
        self.want_offsets = offsets
        self.want_earliest = offsets and earliest
        self.errors: list[GatherError] = []
        # ---- fresh facts of this gather
        self.databases: tuple[str, ...] | None = None
        self.listed: dict[str, tuple[TablePath, ...]] = {}
        self.listed_paths: set[TablePath] = set()
        self.db_errors: dict[str, FlussError] = {}
        self.md: dict[TablePath, TableMetadata] = {}
        #: (table id, partition id, bucket id) -> (path, partition id, leader), from fresh
        #: metadata of current tables and partitions: what offset answers are checked with
        self.leaders: dict[Key, tuple[TablePath, int | None, int | None]] = {}
        self.infos: dict[TablePath, TableInfo | None] = {}
        self.table_errors: dict[TablePath, FlussError] = {}
        self.parts: dict[TablePath, tuple[PartitionInfo, ...]] = {}
        self.part_md: dict[TablePath, dict[int, PartitionMetadata | FlussError]] = {}
        self.answers: dict[int, dict[Key, _Answer]] = {_LATEST: {}, _EARLIEST: {}}
        self.servers: tuple[ServerNode | None, dict[int, ServerNode]] | None = None
        self.versions: dict[tuple[str, str], Any] = {}
        # ---- bookkeeping for the next rounds
        self.round = 0
        self.md_alone: set[TablePath] = set()  # ask alone: its chunk failed
        self.md_any_server = False  # the coordinator failed a GetMetadata
        self.parts_alone: set[TablePath] = set()  # partition GetMetadata per table
        self.part_alone: set[tuple[TablePath, int]] = set()  # ... and per partition
        # placements (table, or partition) asked again once for stale leaders; pending =
        # the fresh reply has not arrived yet (their offsets wait for it)
        self.refreshed: set[tuple[TablePath, int | None]] = set()
        self.pending: set[tuple[TablePath, int | None]] = set()
        self.by_list_offsets: set[Key] = set()  # latest via ListOffsets, not FetchLog

    # ================================================================== rounds

    async def run(self) -> None:
        while self.round < MAX_ROUNDS:
            if self.round and not self._unfinished():
                return  # cheaper than a planning pass that would find nothing to ask
            batch = _Round()
            self._plan(batch)
            if not batch.requests:
                return
            self.round += 1
            # Offsets go in their own batch, sent at the same time: the catalog answers
            # (quick) are checked while the leaders are still reading their logs.
            catalog = [i for i, (phase, _) in enumerate(batch.handlers) if phase < _OFFSETS]
            offsets = [i for i, (phase, _) in enumerate(batch.handlers) if phase == _OFFSETS]
            later = (
                asyncio.ensure_future(self.admin.batch([batch.requests[i] for i in offsets]))
                if offsets
                else None
            )
            try:
                if catalog:
                    results = await self.admin.batch([batch.requests[i] for i in catalog])
                    # checked against the facts of their own round: parents first
                    done = zip(catalog, results, strict=True)
                    for i, result in sorted(done, key=lambda x: batch.handlers[x[0]][0]):
                        batch.handlers[i][1](result)
                if later is not None:
                    for i, result in zip(offsets, await later, strict=True):
                        batch.handlers[i][1](result)
            finally:
                if later is not None and not later.done():
                    later.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await later
        self._give_up()

    def _unfinished(self) -> bool:
        """Whether anything current still lacks an answer (a new database, table or
        partition, a placement being refreshed, a bucket without its offsets)."""
        if self.pending:
            return True
        for db in self.databases or ():
            if db not in self.listed:
                if db not in self.db_errors:
                    return True
                continue
            for path in self.listed[db]:
                if path in self.table_errors:
                    continue
                if path not in self.md:
                    return True
                if self._is_partitioned(path):
                    if path not in self.parts:
                        return True
                    done = self.part_md.get(path, {})
                    if any(p.partition_id not in done for p in self.parts[path]):
                        return True
        if self.want_offsets:
            if self.leaders.keys() - self.answers[_LATEST].keys():
                return True
            if self.want_earliest and self.leaders.keys() - self.answers[_EARLIEST].keys():
                return True
        return False

    def _plan(self, batch: _Round) -> None:
        if self.round == 0:
            self._plan_servers(batch)
        dbs = self._effective_databases()
        for db in dbs:
            if db not in self.listed and db not in self.db_errors:
                batch.add(
                    1,
                    None,
                    ApiKey.LIST_TABLES,
                    pb.ListTablesRequest(database_name=db),
                    functools.partial(self._on_tables, db),
                )
        self._plan_table_metadata(batch, dbs)
        self._plan_partitions(batch, dbs)
        if self.want_offsets:
            self._plan_offsets(batch, dbs)

    def _plan_servers(self, batch: _Round) -> None:
        batch.add(0, None, ApiKey.LIST_DATABASES, pb.ListDatabasesRequest(), self._on_databases)
        known = self.client.metadata
        targets: list[tuple[str, ServerNode, int | str]] = []
        if known.coordinator is not None:
            targets.append(("coordinator", known.coordinator, COORDINATOR))
        for node_id in sorted(known.tablet_servers):
            targets.append(("tablet", known.tablet_servers[node_id], node_id))
        for role, node, target in targets:
            batch.add(
                0,
                target,
                ApiKey.API_VERSIONS,
                api_versions_request(),
                functools.partial(self.versions.__setitem__, (role, node.address)),
            )

    # ---- what is known: fresh facts first, the guide where they are missing

    def _effective_databases(self) -> Sequence[str]:
        if self.databases is not None:
            return self.databases
        return self.guide.databases if self.round == 0 else ()

    def _effective_tables(self, db: str) -> Sequence[TablePath]:
        if db in self.listed:
            return self.listed[db]
        if db in self.db_errors or self.round > 0:
            return ()
        return self.guide.tables.get(db, ())

    def _is_partitioned(self, path: TablePath) -> bool | None:
        if path in self.md:
            info = self.infos.get(path)
            # an unreadable table JSON: its table-level buckets (if any) are still read
            return info.is_partitioned if info is not None else False
        if path in self.table_errors or path not in self.guide.table_ids:
            return None
        return path in self.guide.partitioned

    def _effective_partitions(self, path: TablePath) -> Sequence[int]:
        if path in self.parts:
            return [p.partition_id for p in self.parts[path]]
        if path in self.table_errors:
            return ()
        return self.guide.partitions.get(path, ())

    def _placements(self, dbs: Sequence[str]) -> Iterable[_Placement]:
        """Every bucket group whose leaders are known (fresh) or guessed (guide)."""
        for db in dbs:
            for path in self._effective_tables(db):
                if path in self.table_errors and path not in self.md:
                    continue
                partitioned = self._is_partitioned(path)
                md = self.md.get(path)
                if partitioned is None:
                    continue
                if not partitioned:
                    if md is not None:
                        yield _Placement(path, md.table_id, None, md.buckets, True)
                    elif path in self.guide.table_ids:
                        guessed = self.guide.buckets.get((path, None), [])
                        yield _Placement(path, self.guide.table_ids[path], None, guessed, False)
                    continue
                table_id = md.table_id if md is not None else self.guide.table_ids.get(path)
                if table_id is None:
                    continue
                fresh = self.part_md.get(path, {})
                for pid in self._effective_partitions(path):
                    got = fresh.get(pid)
                    if isinstance(got, PartitionMetadata):
                        yield _Placement(path, table_id, pid, got.buckets, True)
                    elif got is None:
                        guessed = self.guide.buckets.get((path, pid), [])
                        yield _Placement(path, table_id, pid, guessed, False)

    # ---- table metadata

    def _plan_table_metadata(self, batch: _Round, dbs: Sequence[str]) -> None:
        wanted = [
            path
            for db in dbs
            for path in self._effective_tables(db)
            if path not in self.table_errors
            and (path not in self.md or (path, None) in self.pending)
        ]
        chunks = [[p] for p in wanted if p in self.md_alone or p in self.md]
        rest = [p for p in wanted if p not in self.md_alone and p not in self.md]
        chunks += [rest[i : i + METADATA_CHUNK] for i in range(0, len(rest), METADATA_CHUNK)]
        if self.round == 0 and not chunks:
            chunks = [[]]  # no table known yet: still ask for the live server list
        for chunk in chunks:
            # The coordinator answers a many-table GetMetadata in 10-20 ms where a 0.9.1
            # tablet server takes 0.1-0.45 s (measured with 300 tables).
            target = COORDINATOR if len(chunk) > 1 and not self.md_any_server else None
            batch.add(
                2,
                target,
                ApiKey.GET_METADATA,
                metadata_request(chunk),
                functools.partial(self._on_table_metadata, chunk, target),
            )

    def _on_table_metadata(
        self, chunk: list[TablePath], target: int | str | None, result: Any
    ) -> None:
        if isinstance(result, BaseException):
            if target == COORDINATOR and _worth_retry(result) and not self.md_any_server:
                self.md_any_server = True  # no coordinator: any tablet server can answer
                return
            for path in chunk:
                if not self._listed(path):
                    continue
                if path in self.md:  # a refresh that failed: keep what we have
                    self.pending.discard((path, None))
                elif len(chunk) > 1:
                    self.md_alone.add(path)  # one of them may have vanished: ask alone
                else:
                    self._table_failed(path, normalise_table_error(result, path))
            return
        reply = parse_metadata(result)
        tables = reply.tables
        if self.servers is None:
            self.servers = (reply.coordinator, reply.tablet_servers)
        for path in chunk:
            if not self._listed(path):
                continue  # guessed from the previous view, and gone
            md = tables.get(path)
            if md is None:
                self._table_failed(
                    path,
                    TableNotExistError(
                        f"Table '{path}' is not in the metadata reply",
                        api=ApiKey.GET_METADATA.name,
                    ),
                )
                continue
            self.md[path] = md
            self.pending.discard((path, None))
            leaders, table_id, leaderless = self.leaders, md.table_id, False
            for b in md.buckets:
                leaders[(table_id, None, b.bucket_id)] = (path, None, b.leader_id)
                leaderless = leaderless or b.leader_id is None
            if leaderless:
                self._refresh_once(path, None)  # a leader may be elected meanwhile
            try:
                self.infos[path] = table_info_from_metadata(md)
            except FlussError as exc:  # a table JSON we cannot read: keep its buckets
                self.infos[path] = None
                self.table_errors[path] = exc
                self.errors.append(GatherError("table", str(path), "GET_METADATA", exc))

    def _listed(self, path: TablePath) -> bool:
        """Whether this gather's own ListTables names ``path``."""
        return path in self.listed_paths

    def _table_failed(self, path: TablePath, exc: BaseException, api: str = "GET_METADATA"):
        err = as_fluss_error(exc)
        self.table_errors.setdefault(path, err)
        self.errors.append(GatherError("table", str(path), api, err))

    # ---- partitions

    def _plan_partitions(self, batch: _Round, dbs: Sequence[str]) -> None:
        ids: dict[TablePath, list[int]] = {}
        for db in dbs:
            for path in self._effective_tables(db):
                if self._is_partitioned(path) is not True or path in self.table_errors:
                    continue
                if path not in self.parts:
                    req = pb.ListPartitionInfosRequest(
                        table_path=pb.PbTablePath(
                            database_name=path.database, table_name=path.table
                        )
                    )
                    batch.add(
                        3,
                        None,
                        ApiKey.LIST_PARTITION_INFOS,
                        req,
                        functools.partial(self._on_partitions, path),
                    )
                done = self.part_md.get(path, {})
                missing = [
                    pid
                    for pid in self._effective_partitions(path)
                    if pid not in done or (path, pid) in self.pending
                ]
                if missing:
                    ids[path] = missing
        # A request the server rejected is split: per table, then per partition.
        groups: list[list[tuple[TablePath, list[int]]]] = []
        together: list[tuple[TablePath, list[int]]] = []
        for path, pids in ids.items():
            rest = [pid for pid in pids if (path, pid) not in self.part_alone]
            groups += [[(path, [pid])] for pid in pids if (path, pid) in self.part_alone]
            if rest and path in self.parts_alone:
                groups.append([(path, rest)])
            elif rest:
                together.append((path, rest))
        groups += [
            together[i : i + METADATA_CHUNK] for i in range(0, len(together), METADATA_CHUNK)
        ]
        for group in groups:
            req = metadata_request(
                [p for p, _ in group], partition_ids=[i for _, pids in group for i in pids]
            )
            batch.add(
                4,
                None,
                ApiKey.GET_METADATA,
                req,
                functools.partial(self._on_partition_metadata, group),
            )

    def _on_partitions(self, path: TablePath, result: Any) -> None:
        if not self._listed(path) or self._is_partitioned(path) is not True:
            return
        if isinstance(result, BaseException):
            self._table_failed(path, result, "LIST_PARTITION_INFOS")
            return
        self.parts[path] = partitions_from_response(result)

    def _on_partition_metadata(self, group: list[tuple[TablePath, list[int]]], result: Any) -> None:
        if isinstance(result, BaseException):
            for path, pids in group:
                if self._refreshing(path, pids):
                    continue
                if len(group) > 1:
                    self.parts_alone.add(path)
                elif isinstance(result, PartitionNotExistError) and len(pids) > 1:
                    self.part_alone.update((path, pid) for pid in pids)
                else:
                    err = as_fluss_error(normalise_table_error(result, path))
                    for pid in pids:
                        self._partition_failed(path, pid, err)
            return
        found = parse_metadata(result).partitions
        for path, pids in group:
            for pid in pids:
                md = found.get(pid)
                if md is not None:
                    self.part_md.setdefault(path, {})[pid] = md
                    self.pending.discard((path, pid))
                    if self._partition_current(path, pid):
                        for b in md.buckets:
                            key = (md.table_id, pid, b.bucket_id)
                            self.leaders[key] = (path, pid, b.leader_id)
                    if any(b.leader_id is None for b in md.buckets):
                        self._refresh_once(path, pid)
                elif self._refreshing(path, [pid]):
                    continue
                else:
                    self._partition_failed(
                        path,
                        pid,
                        PartitionNotExistError(
                            f"partition {pid} of {path} is not in the metadata reply",
                            api=ApiKey.GET_METADATA.name,
                        ),
                    )

    def _refreshing(self, path: TablePath, pids: list[int]) -> bool:
        """A failed refresh of one partition's placement: keep what we have."""
        if len(pids) == 1 and (path, pids[0]) in self.pending:
            self.pending.discard((path, pids[0]))
            return True
        return False

    def _partition_failed(self, path: TablePath, pid: int, err: FlussError) -> None:
        self.part_md.setdefault(path, {})[pid] = err
        if self._partition_current(path, pid):
            self.errors.append(GatherError("partition", f"{path}/p={pid}", "GET_METADATA", err))

    def _partition_current(self, path: TablePath, pid: int) -> bool:
        return path in self.parts and any(p.partition_id == pid for p in self.parts[path])

    # ---- offsets

    def _plan_offsets(self, batch: _Round, dbs: Sequence[str]) -> None:
        # leader -> table id -> asked keys (thousands per round: kept lean)
        fetch: dict[int, dict[int, list[Key]]] = defaultdict(lambda: defaultdict(list))
        listing: dict[tuple[int, int, int, int | None], list[int]] = defaultdict(list)
        latest, earliest = self.answers[_LATEST], self.answers[_EARLIEST]
        by_list_offsets, want_earliest, pending = (
            self.by_list_offsets,
            self.want_earliest,
            self.pending,
        )
        for place in self._placements(dbs):
            table_id, pid = place.table_id, place.partition_id
            if (place.path, pid) in pending:
                continue  # fresh leaders are on their way
            for bucket_id, leader in place.leaders():
                key = (table_id, pid, bucket_id)
                if leader is None:
                    if place.fresh:
                        self._no_leader(place, key)
                    continue
                if key not in latest:
                    if key in by_list_offsets:
                        listing[(_LATEST, leader, table_id, pid)].append(bucket_id)
                    else:
                        fetch[leader][table_id].append(key)
                if want_earliest and key not in earliest:
                    listing[(_EARLIEST, leader, table_id, pid)].append(bucket_id)
        guessed = self.guide.latest
        for leader, tables in fetch.items():
            # min_bytes must be set for max_wait_ms to count (else the server waits)
            req = pb.FetchLogRequest(follower_server_id=-1, max_bytes=0, min_bytes=0, max_wait_ms=0)
            asked: list[Key] = []
            for table_id, keys in tables.items():
                add = req.tables_req.add(
                    table_id=table_id, projection_pushdown_enabled=False
                ).buckets_req.add
                for key in keys:
                    offset = guessed.get(key, _FROM_EARLIEST)
                    if key[1] is None:
                        add(bucket_id=key[2], fetch_offset=offset, max_fetch_bytes=0)
                    else:
                        add(
                            partition_id=key[1],
                            bucket_id=key[2],
                            fetch_offset=offset,
                            max_fetch_bytes=0,
                        )
                asked += keys
            batch.add(
                _OFFSETS,
                leader,
                ApiKey.FETCH_LOG,
                req,
                functools.partial(self._on_fetch, leader, asked),
            )
        for (kind, leader, table_id, pid), bucket_ids in listing.items():
            req = pb.ListOffsetsRequest(
                follower_server_id=-1, offset_type=kind, table_id=table_id, bucket_id=bucket_ids
            )
            if pid is not None:
                req.partition_id = pid
            batch.add(
                _OFFSETS,
                leader,
                ApiKey.LIST_OFFSETS,
                req,
                functools.partial(self._on_list_offsets, kind, leader, table_id, pid, bucket_ids),
            )

    def _no_leader(self, place: _Placement, key: Key) -> None:
        err = LeaderNotAvailableError(
            f"bucket {key[2]} of {place.path} has no leader in the metadata",
            api=ApiKey.LIST_OFFSETS.name,
        )
        for kind in self._kinds():
            self.answers[kind].setdefault(key, (None, None, err))

    def _kinds(self) -> tuple[int, ...]:
        return (_LATEST, _EARLIEST) if self.want_earliest else (_LATEST,)

    def _on_fetch(self, leader: int, asked: list[Key], result: Any) -> None:
        if isinstance(result, BaseException):
            err = as_fluss_error(result)
            for key in asked:
                self._fetch_failed(leader, key, err)
            return
        server = self.admin.server_label(leader)
        answered = 0
        for tr in result.tables_resp:
            table_id = tr.table_id
            for b in tr.buckets_resp:
                pid = b.partition_id if b.HasField("partition_id") else None
                key = (table_id, pid, b.bucket_id)
                if b.HasField("error_code") and b.error_code != 0:
                    msg = b.error_message if b.HasField("error_message") else None
                    err = from_code(b.error_code, msg, api=ApiKey.FETCH_LOG.name, server=server)
                    self._fetch_failed(leader, key, err)
                elif b.HasField("high_watermark"):
                    self._take(_LATEST, leader, key, b.high_watermark, None)
                else:
                    self._fetch_failed(leader, key, _no_answer(ApiKey.FETCH_LOG, server, key))
                answered += 1
        if answered != len(asked):  # a bucket the reply did not mention
            for key in set(asked) - self._mentioned(result):
                self._fetch_failed(leader, key, _no_answer(ApiKey.FETCH_LOG, server, key))

    @staticmethod
    def _mentioned(result: pb.FetchLogResponse) -> set[Key]:
        return {
            (tr.table_id, b.partition_id if b.HasField("partition_id") else None, b.bucket_id)
            for tr in result.tables_resp
            for b in tr.buckets_resp
        }

    def _fetch_failed(self, leader: int, key: Key, err: FlussError) -> None:
        if _stale_leader(err) or isinstance(err, ConnectionFailedError):
            self._take(_LATEST, leader, key, None, err)
        elif key in self.leaders:
            # e.g. no READ permission, or our fetch offset out of range: ask ListOffsets
            # LATEST (DESCRIBE is enough) next round.
            self.by_list_offsets.add(key)

    def _on_list_offsets(
        self,
        kind: int,
        leader: int,
        table_id: int,
        pid: int | None,
        bucket_ids: list[int],
        result: Any,
    ) -> None:
        server = self.admin.server_label(leader)
        got: dict[int, tuple[int | None, FlussError | None]] = {}
        if isinstance(result, BaseException):
            err = as_fluss_error(result)
            got = {b: (None, err) for b in bucket_ids}
        else:
            for b in result.buckets_resp:
                if b.HasField("error_code") and b.error_code != 0:
                    msg = b.error_message if b.HasField("error_message") else None
                    got[b.bucket_id] = (
                        None,
                        from_code(b.error_code, msg, api=ApiKey.LIST_OFFSETS.name, server=server),
                    )
                elif b.HasField("offset"):
                    got[b.bucket_id] = (b.offset, None)
        for bucket_id in bucket_ids:
            key = (table_id, pid, bucket_id)
            value, failure = got.get(bucket_id, (None, None))
            if failure is None and value is None:
                failure = _no_answer(ApiKey.LIST_OFFSETS, server, key)
            self._take(kind, leader, key, value, failure)

    def _take(
        self, kind: int, asked: int, key: Key, value: int | None, err: FlussError | None
    ) -> None:
        """Keep an offset answer if ``asked`` is the bucket's leader in fresh metadata."""
        place = self.leaders.get(key)
        if place is None or place[2] != asked:
            # the table or partition is gone, or the guessed leader moved: the next round
            # asks the new one
            return
        stale = err is not None and (_stale_leader(err) or isinstance(err, ConnectionFailedError))
        if stale and self._refresh_once(place[0], place[1]):
            return  # asked again once fresh metadata is in
        self.answers[kind][key] = (asked, value, err)

    def _refresh_once(self, path: TablePath, pid: int | None) -> bool:
        """Ask the placement of ``path`` (or of its partition ``pid``) again, alone, in the
        next round; its offsets wait for the reply. Once per placement per gather."""
        if (path, pid) in self.refreshed:
            return False
        self.refreshed.add((path, pid))
        self.pending.add((path, pid))
        if pid is not None:
            self.part_alone.add((path, pid))
        return True

    # ---- databases and tables

    def _on_databases(self, result: Any) -> None:
        if isinstance(result, BaseException):
            self.databases = ()
            self.errors.append(
                GatherError("cluster", "databases", "LIST_DATABASES", as_fluss_error(result))
            )
        else:
            self.databases = tuple(sorted(result.database_name))

    def _on_tables(self, db: str, result: Any) -> None:
        if self.databases is None or db not in self.databases:
            return  # guessed from the previous view, and gone
        if isinstance(result, BaseException):
            err = as_fluss_error(result)
            self.db_errors[db] = err
            self.errors.append(GatherError("database", db, "LIST_TABLES", err))
        else:
            self.listed[db] = tuple(TablePath(db, n) for n in sorted(result.table_name))
            self.listed_paths.update(self.listed[db])

    def _give_up(self) -> None:
        err = FlussError(f"gather gave up after {MAX_ROUNDS} rounds: the cluster kept changing")
        self.errors.append(GatherError("cluster", "gather", "GATHER", err))

    # ================================================================== the view

    def view(self, started_at: float, duration_s: float) -> ClusterView:
        tables: list[TableView] = []
        latest, earliest = self.answers[_LATEST], self.answers[_EARLIEST]
        for db in self.databases or ():
            for path in self.listed.get(db, ()):
                tables.append(self._table_view(path, latest, earliest))
        coordinator, tablets = _servers(self.client, self.servers, self.versions, self.errors)
        return ClusterView(
            coordinator=coordinator,
            tablet_servers=tablets,
            databases=self.databases or (),
            tables=tuple(tables),
            errors=tuple(self.errors),
            round_trips=self.round,
            requests=self.admin.requests,
            started_at=started_at,
            duration_s=duration_s,
            latest_read=self.want_offsets,
            earliest_read=self.want_earliest,
        )

    def _table_view(
        self, path: TablePath, latest: Mapping[Key, _Answer], earliest: Mapping[Key, _Answer]
    ) -> TableView:
        md = self.md.get(path)
        if md is None:
            return TableView(path, None, None, error=self.table_errors.get(path))
        groups: list[tuple[int | None, str | None, Sequence[BucketMetadata]]] = []
        if self.infos.get(path) is not None and self._is_partitioned(path):
            for part_id, got in sorted(self.part_md.get(path, {}).items()):
                if isinstance(got, PartitionMetadata) and self._partition_current(path, part_id):
                    groups.append((part_id, got.partition_name, got.buckets))
        else:
            groups.append((None, None, md.buckets))
        buckets: list[BucketView] = []
        table_id = md.table_id
        for pid, pname, group in groups:
            for b in group:
                key = (table_id, pid, b.bucket_id)
                last = latest.get(key)
                first = earliest.get(key) if earliest else None
                buckets.append(
                    BucketView(  # positional: thousands per gather
                        table_id,
                        pid,
                        pname,
                        b.bucket_id,
                        b.leader_id,
                        b.replica_ids,
                        b.leader_epoch,
                        last[1] if last else None,
                        first[1] if first else None,
                        last[2] if last else None,
                        first[2] if first else None,
                    )
                )
                if (last and last[2]) or (first and first[2]):
                    self._bucket_errors(path, pid, b.bucket_id, last, first)
        return TableView(
            path=path,
            table_id=md.table_id,
            info=self.infos.get(path),
            partitions=self.parts.get(path, ()),
            buckets=tuple(buckets),
            error=self.table_errors.get(path),
        )

    def _bucket_errors(
        self,
        path: TablePath,
        pid: int | None,
        bucket_id: int,
        last: _Answer | None,
        first: _Answer | None,
    ) -> None:
        subject = f"{path}" + (f"[p={pid}]" if pid is not None else "") + f"#{bucket_id}"
        for answer, api in ((last, "LATEST"), (first, "EARLIEST")):
            if answer and answer[2] is not None:
                self.errors.append(GatherError("bucket", subject, api, answer[2]))


def _stale_leader(err: BaseException) -> bool:
    """Errors that fresh metadata (a new leader) may cure."""
    return bool(getattr(err, "refresh_metadata", False))


def _worth_retry(exc: BaseException) -> bool:
    """A failure of the server rather than of the request (another server may answer)."""
    return not isinstance(exc, ServerError) or exc.retriable


def _no_answer(api: ApiKey, server: str, key: Key) -> FlussError:
    table_id, pid, bucket_id = key
    where = f"table {table_id}" + (f" partition {pid}" if pid is not None else "")
    return FlussError(
        f"{api.name} reply from {server} did not mention bucket {bucket_id} of {where}"
    )


def _servers(
    client: AdminClient,
    fresh: tuple[ServerNode | None, dict[int, ServerNode]] | None,
    versions: Mapping[tuple[str, str], Any],
    errors: list[GatherError],
) -> tuple[ServerInfo | None, tuple[ServerInfo, ...]]:
    """Servers from this gather's metadata (the client's cache if none arrived), each with
    the ApiVersions reply of round 1, or the client's recorded one for a newcomer."""
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
