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

The gather holds one :class:`~fluss_proto._gather_state.GatherState` (what it has learnt
and what it may guess) and two planners that add each round's requests and take their
answers into it: :class:`~fluss_proto._gather_catalog.CatalogPlanner` (servers, databases,
tables, partitions) and :class:`~fluss_proto._gather_offsets.OffsetsPlanner`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping, Sequence

from fluss_proto._gather_catalog import CatalogPlanner
from fluss_proto._gather_offsets import OffsetsPlanner
from fluss_proto._gather_state import (
    _EARLIEST,
    _LATEST,
    _OFFSETS,
    MAX_ROUNDS,
    GatherState,
    Key,
    _Answer,
    _Round,
    _servers,
)
from fluss_proto.admin import AdminClient, FlussAdmin
from fluss_proto.cluster import (
    BucketMetadata,
    PartitionMetadata,
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


class _Gather:
    """One gather: rounds of requests until every answer is in (or MAX_ROUNDS), then the
    view."""

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
        self.state = GatherState(previous, offsets, earliest)
        self.catalog = CatalogPlanner(self.state, client)
        self.offsets = OffsetsPlanner(self.state, admin)

    # ================================================================== rounds

    async def run(self) -> None:
        state = self.state
        while state.round < MAX_ROUNDS:
            if state.round and not state.unfinished():
                return  # cheaper than a planning pass that would find nothing to ask
            batch = _Round()
            dbs = state.effective_databases()
            self.catalog.plan(batch, dbs)
            if state.want_offsets:
                self.offsets.plan(batch, dbs)
            if not batch.requests:
                return
            state.round += 1
            await self._send(batch)
        self._give_up()

    async def _send(self, batch: _Round) -> None:
        """Send one round and hand each answer to its handler."""
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

    def _give_up(self) -> None:
        err = FlussError(f"gather gave up after {MAX_ROUNDS} rounds: the cluster kept changing")
        self.state.errors.append(GatherError("cluster", "gather", "GATHER", err))

    # ================================================================== the view

    def view(self, started_at: float, duration_s: float) -> ClusterView:
        state = self.state
        tables: list[TableView] = []
        latest, earliest = state.answers[_LATEST], state.answers[_EARLIEST]
        for db in state.databases or ():
            for path in state.listed.get(db, ()):
                tables.append(self._table_view(path, latest, earliest))
        coordinator, tablets = _servers(self.client, state.servers, state.versions, state.errors)
        return ClusterView(
            coordinator=coordinator,
            tablet_servers=tablets,
            databases=state.databases or (),
            tables=tuple(tables),
            errors=tuple(state.errors),
            round_trips=state.round,
            requests=self.admin.requests,
            started_at=started_at,
            duration_s=duration_s,
            latest_read=state.want_offsets,
            earliest_read=state.want_earliest,
        )

    def _table_view(
        self, path: TablePath, latest: Mapping[Key, _Answer], earliest: Mapping[Key, _Answer]
    ) -> TableView:
        state = self.state
        md = state.md.get(path)
        if md is None:
            return TableView(path, None, None, error=state.table_errors.get(path))
        groups: list[tuple[int | None, str | None, Sequence[BucketMetadata]]] = []
        if state.infos.get(path) is not None and state.is_partitioned(path):
            for part_id, got in sorted(state.part_md.get(path, {}).items()):
                if isinstance(got, PartitionMetadata) and state.partition_current(path, part_id):
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
            info=state.infos.get(path),
            partitions=state.parts.get(path, ()),
            buckets=tuple(buckets),
            error=state.table_errors.get(path),
        )

    def _bucket_errors(
        self,
        path: TablePath,
        pid: int | None,
        bucket_id: int,
        last: _Answer | None,
        first: _Answer | None,
    ) -> None:
        errors = self.state.errors
        subject = f"{path}" + (f"[p={pid}]" if pid is not None else "") + f"#{bucket_id}"
        for answer, api in ((last, "LATEST"), (first, "EARLIEST")):
            if answer and answer[2] is not None:
                errors.append(GatherError("bucket", subject, api, answer[2]))
