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
from collections.abc import Mapping, Sequence

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.admin import AdminClient, FlussAdmin
from fluss_proto.api_keys import ApiKey
from fluss_proto.catalog import (
    api_versions_request,
)
from fluss_proto.client import COORDINATOR
from fluss_proto.cluster import (
    BucketMetadata,
    PartitionMetadata,
    ServerNode,
    TablePath,
)
from fluss_proto.errors import FlussError
from fluss_proto.model import (
    BucketView,
    ClusterView,
    GatherError,
    TableView,
)

__all__ = ["MAX_ROUNDS", "gather_cluster"]
from fluss_proto._gather_offsets import _GatherOffsets
from fluss_proto._gather_state import (
    _EARLIEST,
    _LATEST,
    _OFFSETS,
    MAX_ROUNDS,
    Key,
    _Answer,
    _Round,
    _servers,
)

__all__ = ["MAX_ROUNDS", "gather_cluster"]


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


class _Gather(_GatherOffsets):
    """One gather: rounds of requests until every answer is in (or MAX_ROUNDS), then the
    view. Built in layers: _gather_state <- _gather_catalog <- _gather_offsets <- here."""

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
