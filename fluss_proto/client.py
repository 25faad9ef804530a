"""Cluster-level client: bootstrap, per-server handshakes, metadata cache, routing, retries.

Shape (after aiokafka's ``client.py``):

- :meth:`FlussClient.connect` tries the bootstrap addresses in order until one answers
  GetMetadata; that reply names the coordinator and the live tablet servers. The bootstrap
  may be any server. It then opens (best effort) one connection to the coordinator and one
  to a tablet server so that :attr:`~FlussClient.features` knows both server types.
- One :class:`~fluss_proto.connection.Connection` per server address, created on first use
  and created again after it closed (server restart, idle timeout). Every new connection
  sends API_VERSIONS first and records what the server advertises, then runs SASL/PLAIN
  when credentials are configured, and only then carries requests.
- Before a request is sent its version is negotiated against that server's advertisement:
  ``min(our max, server max)``, provided the ranges overlap. An API the server does not
  advertise raises :class:`~fluss_proto.errors.UnsupportedByServerError` at once and nothing is
  sent: a Fluss server silently drops requests for APIs it does not serve, so the call
  would otherwise hang until its timeout (observed on 0.9.1: SCAN_KV gets no reply and the
  connection stays open).
- Read-only by default: a mutating API raises :class:`~fluss_proto.errors.ReadOnlyViolationError`
  before anything happens unless the client was created with ``allow_writes=True``;
  server-to-server (private) APIs are always refused; LOOKUP with
  ``insert_if_not_exists`` set counts as a write.
- Coordinator HA (Fluss 1.0; 0.9.1 has one coordinator and never sends code 65): a
  standby coordinator answers NOT_COORDINATOR_LEADER (65) to everything but API_VERSIONS.
  A request meant for the coordinator that gets 65 refreshes metadata from a tablet
  server, follows the coordinator it names, retries once there, and appends a
  :class:`CoordinatorRedirect` to :attr:`FlussClient.events`. This path is exercised only
  against fake servers: no 1.0 server is available to test against.
- Retries: read-only APIs only, retriable errors only (``ServerError.retriable``,
  ``ConnectionFailedError``, ``RequestTimeoutError``), at most ``retries`` extra attempts with
  a short exponential backoff; metadata is refreshed first when the error calls for it
  (``refresh_metadata`` on the error class, or a lost/refused connection).

Nothing here logs request or response bodies, and no credential reaches a log line or an
exception text.

The class is built in layers, one job per module: ``_client_connections`` (connections and
their handshake) <- ``_client_metadata`` (metadata cache, routing) <- ``_client_retries``
(attempts, backoff, coordinator failover) <- :class:`FlussClient` here (lifecycle, views,
``call`` / ``call_many``). All log to the ``fluss_proto.client`` logger.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections import Counter, deque
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from types import MappingProxyType, TracebackType
from typing import NamedTuple, TypedDict, Unpack

from google.protobuf.message import Message

from fluss_proto import messages
from fluss_proto._client_connections import (
    _API_KEYS,
    CLIENT_SOFTWARE_NAME,
    CLIENT_SOFTWARE_VERSION,
    COORDINATOR,
    EVENTS_KEPT,
    _is_standby_answer,
    _node_id,
    _request_mutates,
    _short,
    _Slot,
    _Target,
    _unsupported,
)
from fluss_proto._client_retries import _Retries
from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import API_INFO, ApiKey
from fluss_proto.cluster import (
    DEFAULT_PORT,
    FEATURE_APIS,
    SERVER_TYPE_COORDINATOR,
    SERVER_TYPE_TABLET,
    BucketMetadata,
    ClusterMetadata,
    CoordinatorRedirect,
    Features,
    MetadataReply,
    PartitionMetadata,
    ServerApiVersions,
    ServerNode,
    TableMetadata,
    TablePath,
    parse_bootstrap,
    parse_metadata,
)
from fluss_proto.connection import Connection as Connection  # re-exported: tests patch it
from fluss_proto.connection import WireRequest
from fluss_proto.errors import (
    AuthenticationError,
    ConnectionClosedError,
    CoordinatorUnknownError,
    FlussError,
    ReadOnlyViolationError,
    UnknownNodeError,
    UnreachableError,
)
from fluss_proto.sasl import SaslPlain

__all__ = [
    "CLIENT_SOFTWARE_NAME",
    "CLIENT_SOFTWARE_VERSION",
    "COORDINATOR",
    "DEFAULT_PORT",
    "FEATURE_APIS",
    "SERVER_TYPE_COORDINATOR",
    "SERVER_TYPE_TABLET",
    "BucketMetadata",
    "CallItem",
    "ClientOptions",
    "ClusterMetadata",
    "CoordinatorRedirect",
    "CoordinatorUnknownError",
    "Features",
    "FlussClient",
    "MetadataReply",
    "PartitionMetadata",
    "ServerApiVersions",
    "ServerNode",
    "TableMetadata",
    "TablePath",
    "UnknownNodeError",
    "parse_bootstrap",
    "parse_metadata",
]

log = logging.getLogger(__name__)


class CallItem(NamedTuple):
    """One request of :meth:`FlussClient.call_many` (a tuple: gather builds thousands)."""

    #: A tablet server id, None (any server able to answer) or :data:`COORDINATOR`.
    node: int | str | None
    api: ApiKey | int
    request: Message


# =========================================================================== the client


class ClientOptions(TypedDict, total=False):
    """The keyword arguments of :class:`FlussClient` (and of :meth:`FlussClient.connect`)."""

    sasl: SaslPlain | None
    allow_writes: bool
    connect_timeout: float
    request_timeout: float
    retries: int
    retry_backoff: float


class FlussClient(_Retries):
    """A read-mostly client for one Fluss cluster. Create it with :meth:`connect`."""

    def __init__(
        self,
        bootstrap: str | Sequence[str],
        *,
        sasl: SaslPlain | None = None,
        allow_writes: bool = False,
        connect_timeout: float = 10.0,
        request_timeout: float = 30.0,
        retries: int = 2,
        retry_backoff: float = 0.1,
    ) -> None:
        """Set up without any I/O; :meth:`connect` is the usual entry point."""
        if retries < 0:
            raise ValueError("retries must not be negative")
        if sasl is not None and not isinstance(sasl, SaslPlain):
            raise TypeError("sasl must be a SaslPlain instance")
        self.bootstrap_servers: tuple[str, ...] = tuple(parse_bootstrap(bootstrap))
        self._sasl = sasl
        self._allow_writes = bool(allow_writes)
        self.connect_timeout = connect_timeout
        self.request_timeout = request_timeout
        self.retries = retries
        self.retry_backoff = retry_backoff
        self._slots: dict[str, _Slot] = {}
        self._api_versions: dict[str, ServerApiVersions] = {}
        self._metadata = ClusterMetadata()
        self._metadata_lock = asyncio.Lock()
        self._metadata_generation = 0
        self._closed = False
        self._rng = random.Random()
        #: Coordinator redirects, oldest first (bounded).
        self.events: deque[CoordinatorRedirect] = deque(maxlen=EVENTS_KEPT)
        #: Every API key this client has put on the wire, with counts (handshakes included).
        self.sent_api_keys: Counter[ApiKey] = Counter()

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    async def connect(
        cls, bootstrap: str | Sequence[str], **options: Unpack[ClientOptions]
    ) -> FlussClient:
        """Connect to the cluster through the first bootstrap server that answers.

        ``options`` are :meth:`__init__`'s keyword arguments (:class:`ClientOptions`).

        Raises :class:`~fluss_proto.errors.UnreachableError` naming every address tried when
        none answers, and :class:`~fluss_proto.errors.AuthenticationError` at once when a
        server refuses the credentials (or demands credentials that were not given).
        """
        client = cls(bootstrap, **options)
        try:
            await client._bootstrap()
        except BaseException:
            await client.close()
            raise
        return client

    async def _bootstrap(self) -> None:
        failures: list[str] = []
        for address in self.bootstrap_servers:
            target = _Target(address, "bootstrap")
            try:
                response = await self._request(target, ApiKey.GET_METADATA, pb.MetadataRequest())
            except AuthenticationError:
                raise
            except FlussError as exc:
                log.debug("bootstrap server %s did not answer: %s", address, _short(exc))
                failures.append(f"{address} ({_short(exc)})")
                continue
            assert isinstance(response, pb.MetadataResponse)
            self._apply_metadata(response, address)
            break
        else:
            raise UnreachableError("none of the bootstrap servers answered: " + "; ".join(failures))
        await self._warm_up()

    async def _warm_up(self) -> None:
        """Handshake with the coordinator and one tablet server (best effort)."""
        seen_types = {info.server_type for info in self._api_versions.values()}
        targets: list[_Target] = []
        coordinator = self._metadata.coordinator
        if SERVER_TYPE_COORDINATOR not in seen_types and coordinator is not None:
            targets.append(_Target(coordinator.address, "coordinator", coordinator.node_id))
        if SERVER_TYPE_TABLET not in seen_types and self._metadata.tablet_servers:
            node = self._rng.choice(sorted(self._metadata.tablet_servers.values(), key=_node_id))
            targets.append(_Target(node.address, "tablet", node.node_id))
        results = await asyncio.gather(*(self._ensure(t) for t in targets), return_exceptions=True)
        for target, result in zip(targets, results, strict=True):
            if isinstance(result, AuthenticationError):
                raise result
            if isinstance(result, BaseException):
                if not isinstance(result, Exception):
                    raise result
                log.debug("warm-up connection to %s failed: %s", target.address, _short(result))

    async def close(self) -> None:
        """Close every connection; later calls raise ConnectionClosedError. Idempotent."""
        self._closed = True
        conns = [slot.conn for slot in self._slots.values() if slot.conn is not None]
        await asyncio.gather(*(conn.close() for conn in conns), return_exceptions=True)

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
        state = "closed" if self._closed else f"{len(self.connected_servers)} connection(s)"
        auth = f", sasl={self._sasl!r}" if self._sasl is not None else ""
        writes = ", allow_writes=True" if self._allow_writes else ""
        return f"<FlussClient {','.join(self.bootstrap_servers)} {state}{auth}{writes}>"

    # ------------------------------------------------------------------ views

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def allow_writes(self) -> bool:
        return self._allow_writes

    @property
    def metadata(self) -> ClusterMetadata:
        return self._metadata

    @property
    def coordinator(self) -> ServerNode | None:
        return self._metadata.coordinator

    @property
    def tablet_servers(self) -> Mapping[int, ServerNode]:
        return self._metadata.tablet_servers

    @property
    def api_versions(self) -> Mapping[str, ServerApiVersions]:
        """Address -> the latest ApiVersions reply recorded from that server."""
        return MappingProxyType(self._api_versions)

    @property
    def connected_servers(self) -> list[str]:
        """Addresses with an open connection."""
        return [addr for addr, slot in self._slots.items() if slot.ready()]

    @property
    def features(self) -> Features:
        return Features.from_api_versions(self._api_versions.values())

    def api_versions_of(
        self, node: int | None = None, *, coordinator: bool = False
    ) -> ServerApiVersions | None:
        """The recorded ApiVersions of tablet server ``node`` or of the coordinator."""
        address = self._known_address(node, coordinator)
        return self._api_versions.get(address) if address else None

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
        return any(info.advertises(key) for info in self._api_versions.values())

    def _known_address(self, node: int | None, coordinator: bool) -> str | None:
        if coordinator:
            return self._metadata.coordinator.address if self._metadata.coordinator else None
        if node is None:
            return None
        server = self._metadata.tablet_servers.get(node)
        return server.address if server else None

    # ------------------------------------------------------------------ calls

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
        key = self._admit(api, request, node, coordinator)
        return await self._call(key, request, node, coordinator, timeout)

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
        prepared: list[tuple[ApiKey, Message, int | None, bool]] = []
        for item in items:
            target, api, request = item
            to_coordinator = target == COORDINATOR
            node = None if to_coordinator else target
            if node is not None and not isinstance(node, int):
                raise ValueError(f"node must be an int, None or COORDINATOR, got {node!r}")
            key = self._admit(api, request, node, to_coordinator)
            prepared.append((key, request, node, to_coordinator))
        # One attempt for everything, grouped per server (one write each, no task per
        # request); a failure that deserves another attempt then takes the one-at-a-time
        # path with its retries, starting from that failure.
        first = await self._attempt_many(prepared, timeout)
        results: list[Message | BaseException] = []
        again: list[tuple[int, Awaitable[Message]]] = []
        for index, ((key, request, node, coordinator), (sent_to, outcome)) in enumerate(
            zip(prepared, first, strict=True)
        ):
            results.append(outcome)
            if isinstance(outcome, FlussError) and self._worth_another_attempt(
                key, request, sent_to, outcome
            ):
                prior = (sent_to, outcome)
                again.append((index, self._call(key, request, node, coordinator, timeout, prior)))
        if again:
            retried = await asyncio.gather(*(c for _, c in again), return_exceptions=True)
            for (index, _), outcome in zip(again, retried, strict=True):
                results[index] = outcome
        return results

    def _worth_another_attempt(
        self, key: ApiKey, request: Message, target: _Target | None, exc: FlussError
    ) -> bool:
        if target is not None and _is_standby_answer(target, exc):
            return True
        return exc.retriable and self.retries > 0 and not _request_mutates(key, request)

    async def _attempt_many(
        self,
        prepared: Sequence[tuple[ApiKey, Message, int | None, bool]],
        timeout: float | None,
    ) -> list[tuple[_Target | None, Message | BaseException]]:
        """One attempt of every request: routed, grouped per server, sent together."""
        out: list[tuple[_Target | None, Message | BaseException]] = [
            (None, ConnectionClosedError("not sent"))  # every slot is set below
        ] * len(prepared)
        groups: dict[_Target, list[int]] = {}
        for index, (key, _, node, coordinator) in enumerate(prepared):
            try:
                target = await self._resolve(key, node, coordinator, set())
            except FlussError as exc:
                out[index] = (None, exc)
                continue
            groups.setdefault(target, []).append(index)

        async def send(target: _Target, indices: list[int]) -> None:
            try:
                conn, info = await self._ensure(target)
            except FlussError as exc:
                for index in indices:
                    out[index] = (target, exc)
                return
            wire: list[WireRequest] = []
            sent: list[int] = []
            for index in indices:
                key, request = prepared[index][0], prepared[index][1]
                version = info.negotiate(key)
                if version is None:
                    out[index] = (target, _unsupported(key, info, target))
                    continue
                # _admit checked the class and the required fields already
                wire.append(WireRequest(int(key), version, request.SerializeToString(), key.name))
                sent.append(index)
                self.sent_api_keys[key] += 1
            if not wire:
                return
            try:
                raws = await conn.request_many(wire, timeout=timeout)
            except FlussError as exc:  # closed before anything was written
                raws = [exc] * len(wire)
            for index, raw in zip(sent, raws, strict=True):
                key = prepared[index][0]
                if isinstance(raw, FlussError):
                    out[index] = (target, self._explain_auth(raw, target))
                    continue
                try:
                    out[index] = (target, messages.decode_response(key, raw))
                except FlussError as exc:
                    out[index] = (target, exc)

        if len(groups) == 1:
            ((target, indices),) = groups.items()
            await send(target, indices)
        elif groups:
            await asyncio.gather(*(send(t, i) for t, i in groups.items()))
        return out

    def _admit(
        self, api: ApiKey | int, request: object, node: int | None, coordinator: bool
    ) -> ApiKey:
        """Every check that must pass before anything is sent (no I/O)."""
        if self._closed:
            raise ConnectionClosedError("the client is closed")
        key = _API_KEYS.get(api)  # an IntEnum member hashes and compares like its int
        if key is None:
            raise ValueError(f"unknown API key {api!r}")
        spec = API_INFO[key]
        if spec.private:
            raise ReadOnlyViolationError(
                f"{key.name} is a server-to-server API; fluss_proto never sends it"
            )
        if _request_mutates(key, request) and not self._allow_writes:
            what = "LOOKUP with insert_if_not_exists" if not spec.mutating else key.name
            raise ReadOnlyViolationError(
                f"{what} changes the cluster and this client is read-only (allow_writes=False)"
            )
        if key is ApiKey.AUTHENTICATE:
            raise ValueError("AUTHENTICATE is part of the connection handshake (pass sasl=...)")
        if node is not None and coordinator:
            raise ValueError("pass either node or coordinator=True, not both")
        expected = messages.request_class(key)
        if not isinstance(request, expected):
            raise TypeError(
                f"{key.name} takes a {expected.DESCRIPTOR.name}, got {type(request).__name__}"
            )
        if not request.IsInitialized():
            missing = ", ".join(request.FindInitializationErrors())
            raise ValueError(f"{key.name} request lacks required fields: {missing}")
        return key
