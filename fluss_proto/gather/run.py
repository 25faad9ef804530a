"""gather_cluster: one pass over a whole cluster in rounds, each round's requests from the
two planners sent at once (the package docstring, :mod:`fluss_proto.gather`, says how).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping, Sequence

from fluss_proto.admin import AdminClient, FlussAdmin
from fluss_proto.cluster import (
    BucketMetadata,
    PartitionMetadata,
    TablePath,
)
from fluss_proto.errors import FlussError
from fluss_proto.gather.catalog_planner import CatalogPlanner
from fluss_proto.gather.offsets_planner import OffsetsPlanner
from fluss_proto.gather.state import (
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
    """Read the whole cluster (see :mod:`fluss_proto.gather`).

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
