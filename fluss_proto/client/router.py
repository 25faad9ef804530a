"""FlussClient's metadata cache and routing: the first metadata from the bootstrap list,
refreshes from a live server, and the choice of server for each request (the coordinator,
a tablet server, or any server able to answer).

Part of :class:`~fluss_proto.client.FlussClient`; see :mod:`fluss_proto.client`.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Iterable, Sequence
from types import MappingProxyType

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import API_INFO, ApiKey
from fluss_proto.client.pool import ConnectionPool
from fluss_proto.client.target import NOT_COORDINATOR_LEADER, Target
from fluss_proto.cluster import (
    SERVER_TYPE_COORDINATOR,
    SERVER_TYPE_TABLET,
    ClusterMetadata,
    ServerNode,
    parse_metadata,
)
from fluss_proto.errors import (
    AuthenticationError,
    CoordinatorUnknownError,
    FlussError,
    ServerError,
    UnknownNodeError,
    UnreachableError,
    short_reason,
)

log = logging.getLogger("fluss_proto.client")

_METADATA_TABLET_CANDIDATES = 3  # tablet servers asked per refresh before other fallbacks


def _node_id(node: ServerNode) -> int:
    return node.node_id


class MetadataRouter:
    """The cluster metadata cache (refreshed through ``pool``) and the choice of server
    for each request."""

    def __init__(
        self, pool: ConnectionPool, bootstrap_servers: Sequence[str], rng: random.Random
    ) -> None:
        self._pool = pool
        self._bootstrap_servers = tuple(bootstrap_servers)
        self._rng = rng
        self._metadata = ClusterMetadata()
        self._lock = asyncio.Lock()
        self._generation = 0

    @property
    def metadata(self) -> ClusterMetadata:
        return self._metadata

    # ------------------------------------------------------------------ the cache

    async def bootstrap(self) -> None:
        """The first metadata, from the first bootstrap server that answers."""
        failures: list[str] = []
        for address in self._bootstrap_servers:
            target = Target(address, "bootstrap")
            try:
                response = await self._pool.request(
                    target, ApiKey.GET_METADATA, pb.MetadataRequest()
                )
            except AuthenticationError:
                raise
            except FlussError as exc:
                log.debug("bootstrap server %s did not answer: %s", address, short_reason(exc))
                failures.append(f"{address} ({short_reason(exc)})")
                continue
            assert isinstance(response, pb.MetadataResponse)
            self._apply(response, address)
            return
        raise UnreachableError("none of the bootstrap servers answered: " + "; ".join(failures))

    def warm_up_targets(self, seen_types: set[int | None]) -> list[Target]:
        """The coordinator and one tablet server, for server types not met yet."""
        targets: list[Target] = []
        coordinator = self._metadata.coordinator
        if SERVER_TYPE_COORDINATOR not in seen_types and coordinator is not None:
            targets.append(Target.coordinator(coordinator))
        if SERVER_TYPE_TABLET not in seen_types and self._metadata.tablet_servers:
            node = self._rng.choice(sorted(self._metadata.tablet_servers.values(), key=_node_id))
            targets.append(Target.tablet(node))
        return targets

    async def refresh(
        self, request: pb.MetadataRequest | None = None, *, avoid: Iterable[str] = ()
    ) -> ClusterMetadata:
        """Refresh from one server: a live tablet server first, then the coordinator, then
        the bootstrap list; none of the addresses in ``avoid``."""
        request = request if request is not None else pb.MetadataRequest()
        avoid = frozenset(avoid) | self._pool.silent.keys()
        servers_only = not (request.table_path or request.partitions_path or request.partitions_id)
        generation = self._generation
        async with self._lock:
            if servers_only and self._generation != generation:
                # Refreshed by someone else while we waited (a standby coordinator or a
                # dead server would not have answered it, so ``avoid`` holds too).
                return self._metadata
            failures: list[str] = []
            candidates = self._candidates(avoid)
            for index, target in enumerate(candidates):
                try:
                    response = await self._pool.request(target, ApiKey.GET_METADATA, request)
                except AuthenticationError:
                    raise
                except ServerError as exc:
                    if exc.code != NOT_COORDINATOR_LEADER and not exc.retriable:
                        raise
                    failures.append(f"{target.address} ({short_reason(exc)})")
                    continue
                except FlussError as exc:
                    failures.append(f"{target.address} ({short_reason(exc)})")
                    continue
                assert isinstance(response, pb.MetadataResponse)
                last = index == len(candidates) - 1
                if not response.tablet_servers and not last:
                    # A server still starting lists no tablet servers; Fluss's own client
                    # treats that as stale and asks elsewhere.
                    failures.append(f"{target.address} (no tablet servers listed)")
                    continue
                self._apply(response, target.address)
                return self._metadata
            raise UnreachableError(
                "could not refresh metadata from any server: "
                + ("; ".join(failures) or "no server known")
            )

    def _candidates(self, avoid: frozenset[str]) -> list[Target]:
        md = self._metadata
        tablets = [n for n in md.tablet_servers.values() if n.address not in avoid]
        self._rng.shuffle(tablets)
        tablets.sort(key=lambda n: not self._pool.is_ready(n.address))  # connected first
        out = [Target.tablet(n) for n in tablets][:_METADATA_TABLET_CANDIDATES]
        if md.coordinator is not None and md.coordinator.address not in avoid:
            out.append(Target.coordinator(md.coordinator))
        seen = {t.address for t in out}
        for address in self._bootstrap_servers:
            if address not in seen and address not in avoid:
                out.append(Target(address, "bootstrap"))
        return out

    def _apply(self, response: pb.MetadataResponse, source: str) -> None:
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
        self._generation += 1
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

    # ------------------------------------------------------------------ routing

    def known_address(self, node: int | None, coordinator: bool) -> str | None:
        """The address of tablet server ``node`` or of the coordinator, from the cache."""
        if coordinator:
            return self._metadata.coordinator.address if self._metadata.coordinator else None
        if node is None:
            return None
        server = self._metadata.tablet_servers.get(node)
        return server.address if server else None

    async def resolve(
        self, key: ApiKey, node: int | None, coordinator: bool, failed: set[str]
    ) -> Target:
        """Where to send ``key``: tablet server ``node``, the coordinator, or any server
        able to answer that is not in ``failed``; metadata is refreshed when it cannot say."""
        if coordinator or (node is None and API_INFO[key].served_by == "coordinator"):
            return await self._coordinator_target()
        if node is not None:
            return await self._node_target(node)
        target = self._pick_any(key, failed)
        if target is None:
            await self.refresh()
            target = self._pick_any(key, failed) or self._pick_any(key, set())
        if target is None:
            raise UnreachableError(f"no live server known that could answer {key.name}")
        return target

    def _pick_any(self, key: ApiKey, failed: set[str]) -> Target | None:
        md = self._metadata
        silent = self._pool.silent
        untried = [
            s
            for s in md.tablet_servers.values()
            if s.address not in failed and s.address not in silent
        ]
        recorded = self._pool.api_versions
        candidates = []
        for server in untried:
            info = recorded.get(server.address)
            if info is None or info.advertises(key):
                candidates.append(server)
        if not candidates and API_INFO[key].served_by == "tablet":
            # None offers it: pick one anyway so the caller gets UnsupportedByServerError.
            candidates = untried
        if candidates:
            ready = [s for s in candidates if self._pool.is_ready(s.address)]
            return Target.tablet(self._rng.choice(ready or candidates))
        if (
            API_INFO[key].served_by == "both"
            and md.coordinator is not None
            and md.coordinator.address not in failed
        ):
            return Target.coordinator(md.coordinator)
        return None

    async def _coordinator_target(self) -> Target:
        if self._metadata.coordinator is None:
            await self.refresh()
        coordinator = self._metadata.coordinator
        if coordinator is None:
            raise CoordinatorUnknownError("no server could name the coordinator")
        return Target.coordinator(coordinator)

    async def _node_target(self, node: int) -> Target:
        server = self._metadata.tablet_servers.get(node)
        if server is None:
            await self.refresh()
            server = self._metadata.tablet_servers.get(node)
        if server is None:
            known = sorted(self._metadata.tablet_servers)
            raise UnknownNodeError(
                f"tablet server {node} is not in the cluster metadata (alive: {known})"
            )
        return Target.tablet(server)
