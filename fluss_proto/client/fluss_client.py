"""FlussClient: the lifecycle, the views and the checks before sending, over its connection
pool, metadata router and retry policy (the package docstring, :mod:`fluss_proto.client`,
says how they work together).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from types import TracebackType
from typing import Final, NamedTuple, TypedDict, Unpack

from google.protobuf.message import Message

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import ApiKey, write_grant
from fluss_proto.client.gate import admit
from fluss_proto.client.pool import ConnectionPool
from fluss_proto.client.retry import Admitted, RetryPolicy
from fluss_proto.client.router import MetadataRouter
from fluss_proto.cluster import (
    ClusterMetadata,
    CoordinatorRedirect,
    Features,
    ServerApiVersions,
    ServerNode,
    TablePath,
    parse_bootstrap,
)
from fluss_proto.errors import (
    AuthenticationError,
    ConnectionClosedError,
    ServerSilentError,
    short_reason,
)
from fluss_proto.sasl import SaslPlain

__all__ = ["COORDINATOR", "CallItem", "ClientOptions", "FlussClient"]

log = logging.getLogger("fluss_proto.client")

#: ``node`` value for :meth:`FlussClient.call_many` items meant for the coordinator.
COORDINATOR: Final = "coordinator"


class CallItem(NamedTuple):
    """One request of :meth:`FlussClient.call_many` (a tuple: gather builds thousands)."""

    #: A tablet server id, None (any server able to answer) or :data:`COORDINATOR`.
    node: int | str | None
    api: ApiKey | int
    request: Message


class ClientOptions(TypedDict, total=False):
    """The keyword arguments of :class:`FlussClient` (and of :meth:`FlussClient.connect`)."""

    sasl: SaslPlain | None
    allow_writes: bool | Iterable[ApiKey]
    connect_timeout: float
    request_timeout: float
    retries: int
    retry_backoff: float
    quarantine: bool


class FlussClient:
    """A read-mostly client for one Fluss cluster. Create it with :meth:`connect`."""

    def __init__(
        self,
        bootstrap: str | Sequence[str],
        *,
        sasl: SaslPlain | None = None,
        allow_writes: bool | Iterable[ApiKey] = False,
        connect_timeout: float = 10.0,
        request_timeout: float = 30.0,
        retries: int = 2,
        retry_backoff: float = 0.1,
        quarantine: bool = False,
    ) -> None:
        """Set up without any I/O; :meth:`connect` is the usual entry point.

        ``quarantine``: a server that lets a request time out fails every later request at
        once until :meth:`new_round` (a poller's client: one hung server costs one timeout
        per poll; see :class:`~fluss_proto.client.pool.ConnectionPool`)."""
        if retries < 0:
            raise ValueError("retries must not be negative")
        if sasl is not None and not isinstance(sasl, SaslPlain):
            raise TypeError("sasl must be a SaslPlain instance")
        self.bootstrap_servers: tuple[str, ...] = tuple(parse_bootstrap(bootstrap))
        self._write_keys = write_grant(allow_writes)
        self._pool = ConnectionPool(
            connect_timeout=connect_timeout,
            request_timeout=request_timeout,
            sasl=sasl,
            quarantine=quarantine,
        )
        self._router = MetadataRouter(self._pool, self.bootstrap_servers, random.Random())
        self._retry = RetryPolicy(self._pool, self._router, retries=retries, backoff=retry_backoff)

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    async def connect(
        cls,
        bootstrap: str | Sequence[str],
        *,
        warm_up: bool = True,
        **options: Unpack[ClientOptions],
    ) -> FlussClient:
        """Connect to the cluster through the first bootstrap server that answers.

        ``options`` are :meth:`__init__`'s keyword arguments (:class:`ClientOptions`).
        ``warm_up`` False: no handshake ahead with the coordinator and a tablet server
        (one question of one server: a hung tablet server met there would take the
        question's whole time).

        Raises :class:`~fluss_proto.errors.UnreachableError` naming every address tried when
        none answers, and :class:`~fluss_proto.errors.AuthenticationError` at once when a
        server refuses the credentials (or demands credentials that were not given).
        """
        client = cls(bootstrap, **options)
        try:
            await client._router.bootstrap()
            if warm_up:
                await client._warm_up()
        except BaseException:
            await client.close()
            raise
        return client

    async def _warm_up(self) -> None:
        """Handshake with the coordinator and one tablet server (best effort)."""
        seen_types = {info.server_type for info in self._pool.api_versions.values()}
        targets = self._router.warm_up_targets(seen_types)
        results = await asyncio.gather(
            *(self._pool.ensure(t) for t in targets), return_exceptions=True
        )
        for target, result in zip(targets, results, strict=True):
            if isinstance(result, AuthenticationError):
                raise result
            if isinstance(result, BaseException):
                if not isinstance(result, Exception):
                    raise result
                log.debug(
                    "warm-up connection to %s failed: %s", target.address, short_reason(result)
                )

    async def close(self) -> None:
        """Close every connection; later calls raise ConnectionClosedError. Idempotent."""
        await self._pool.close()

    async def __aenter__(self) -> FlussClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{len(self.connected_servers)} connection(s)"
        sasl = self._pool.sasl
        auth = f", sasl={sasl!r}" if sasl is not None else ""
        writes = f", writes={len(self._write_keys)} key(s)" if self._write_keys else ""
        return f"<FlussClient {','.join(self.bootstrap_servers)} {state}{auth}{writes}>"

    # ------------------------------------------------------------------ views

    @property
    def closed(self) -> bool:
        return self._pool.closed

    @property
    def silent_servers(self) -> Mapping[str, ServerSilentError]:
        """Addresses that gave no answer in this round, and how (``quarantine`` only)."""
        return self._pool.silent

    def new_round(self) -> None:
        """Start a round (a poll): servers silent in the last one are asked again."""
        self._pool.new_round()

    @property
    def allow_writes(self) -> bool:
        """Whether any write is allowed (:attr:`write_keys` says which)."""
        return bool(self._write_keys)

    @property
    def write_keys(self) -> frozenset[ApiKey]:
        """The mutating keys this client may send (empty: read-only)."""
        return self._write_keys

    @property
    def connect_timeout(self) -> float:
        return self._pool.connect_timeout

    @property
    def request_timeout(self) -> float:
        return self._pool.request_timeout

    @property
    def retries(self) -> int:
        return self._retry.retries

    @property
    def retry_backoff(self) -> float:
        return self._retry.backoff

    @property
    def events(self) -> deque[CoordinatorRedirect]:
        """Coordinator redirects, oldest first (bounded)."""
        return self._retry.events

    @property
    def sent_api_keys(self) -> Counter[ApiKey]:
        """Every API key this client has put on the wire, with counts (handshakes included)."""
        return self._pool.sent_api_keys

    @property
    def metadata(self) -> ClusterMetadata:
        return self._router.metadata

    @property
    def coordinator(self) -> ServerNode | None:
        return self._router.metadata.coordinator

    @property
    def tablet_servers(self) -> Mapping[int, ServerNode]:
        return self._router.metadata.tablet_servers

    @property
    def api_versions(self) -> Mapping[str, ServerApiVersions]:
        """Address -> the latest ApiVersions reply recorded from that server."""
        return self._pool.api_versions

    @property
    def connected_servers(self) -> list[str]:
        """Addresses with an open connection."""
        return self._pool.connected_servers()

    @property
    def features(self) -> Features:
        return Features.from_api_versions(self._pool.api_versions.values())

    def api_versions_of(
        self, node: int | None = None, *, coordinator: bool = False
    ) -> ServerApiVersions | None:
        """The recorded ApiVersions of tablet server ``node`` or of the coordinator."""
        address = self._router.known_address(node, coordinator)
        return self._pool.api_versions.get(address) if address else None

    def supports(
        self, api: ApiKey | int, node: int | None = None, *, coordinator: bool = False
    ) -> bool:
        """Whether a server advertises ``api`` at a version we speak.

        ``node``/``coordinator`` ask about that server; otherwise about any server seen.
        Answers from recorded ApiVersions only (no I/O): False for a server not yet met.
        """
        key = ApiKey(api)
        if node is not None or coordinator:
            info = self.api_versions_of(node, coordinator=coordinator)
            return info is not None and info.advertises(key)
        return any(info.advertises(key) for info in self._pool.api_versions.values())

    # ------------------------------------------------------------------ calls

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
        return await self._router.refresh(request)

    async def call(
        self,
        api: ApiKey | int,
        request: Message,
        *,
        node: int | None = None,
        coordinator: bool = False,
        timeout: float | None = None,
    ) -> Message:
        """Send one request and return the decoded response message.

        Routing: ``node`` = that tablet server; ``coordinator=True`` = the (active)
        coordinator; neither = any live server able to answer (a tablet server when the
        API is served by tablet servers, the coordinator for coordinator-only APIs).
        ``timeout`` bounds each attempt (default: the client's ``request_timeout``).

        Raises :class:`ReadOnlyViolationError` (nothing sent), :class:`UnsupportedByServerError`
        (nothing sent), ``TypeError``/``ValueError`` for a malformed request, and the
        typed server / connection errors once retries are spent.
        """
        return await self._retry.call(self._admit(api, request, node, coordinator), timeout)

    async def call_many(
        self,
        items: Iterable[CallItem],
        *,
        timeout: float | None = None,
    ) -> list[Message | BaseException]:
        """Send every :class:`CallItem` (or plain ``(node, api, request)`` tuple)
        concurrently; results in the same order.

        ``node`` is a tablet server id, None (any server) or :data:`COORDINATOR`. Requests
        to one server share its connection (pipelined). Each result is the response or the
        exception of that request, so one failing server does not fail the others. Every
        item passes the read-only gate and request checks before anything is sent; a
        violation raises at once.
        """
        admitted: list[Admitted] = []
        for target, api, request in items:
            to_coordinator = target == COORDINATOR
            node = None if to_coordinator else target
            if node is not None and not isinstance(node, int):
                raise ValueError(f"node must be an int, None or COORDINATOR, got {node!r}")
            admitted.append(self._admit(api, request, node, to_coordinator))
        return await self._retry.call_many(admitted, timeout)

    def _admit(
        self, api: ApiKey | int, request: Message, node: int | None, coordinator: bool
    ) -> Admitted:
        if self._pool.closed:
            raise ConnectionClosedError("the client is closed")
        key = admit(api, request, node, coordinator, allow_writes=self._write_keys)
        return Admitted(key, request, node, coordinator)
