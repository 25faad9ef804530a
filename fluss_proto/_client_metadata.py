"""FlussClient's metadata cache and routing: refresh from a live server, route a request
to the coordinator, a tablet server or any server able to answer.

Part of :class:`~fluss_proto.client.FlussClient`; see :mod:`fluss_proto.client`.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Iterable
from types import MappingProxyType

from fluss_proto._client_connections import (
    _METADATA_TABLET_CANDIDATES,
    _NOT_COORDINATOR_LEADER,
    _Connections,
    _short,
    _Target,
)
from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import API_INFO, ApiKey
from fluss_proto.cluster import (
    ClusterMetadata,
    TablePath,
    parse_metadata,
)
from fluss_proto.errors import (
    AuthenticationError,
    CoordinatorUnknownError,
    FlussError,
    ServerError,
    UnknownNodeError,
    UnreachableError,
)

log = logging.getLogger("fluss_proto.client")


class _MetadataAndRouting(_Connections):
    """The cluster metadata cache and the choice of server for each request."""

    # Set by FlussClient.__init__.
    _metadata: ClusterMetadata
    _metadata_lock: asyncio.Lock
    _metadata_generation: int
    _rng: random.Random

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
        reply = parse_metadata(response)
        # None: the answering server does not know the coordinator (yet)
        coordinator = reply.coordinator or old.coordinator
        tables = {**old.tables, **reply.tables}
        partitions = {**old.partitions, **reply.partitions}
        self._metadata = ClusterMetadata(
            coordinator=coordinator,
            tablet_servers=MappingProxyType(reply.tablet_servers),
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
            # None offers it: pick one anyway so the caller gets UnsupportedByServerError.
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
