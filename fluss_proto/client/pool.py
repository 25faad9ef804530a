"""FlussClient's connection pool: one connection per server address, each opened with an
ApiVersions handshake (and SASL/PLAIN when configured) before it carries requests, and the
request's version negotiated against what that server advertised.

Part of :class:`~fluss_proto.client.FlussClient`; see :mod:`fluss_proto.client`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Final

from google.protobuf.message import Message

from fluss_proto import __version__, messages
from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import API_INFO, ApiKey
from fluss_proto.client.target import Target
from fluss_proto.cluster import ServerApiVersions, split_address
from fluss_proto.connection import Connection, WireRequest
from fluss_proto.errors import (
    AuthenticationError,
    ConnectionClosedError,
    ConnectionFailedError,
    ConnectTimeoutError,
    FlussError,
    RequestTimeoutError,
    ServerError,
    ServerSilentError,
    UnsupportedByServerError,
    short_reason,
)
from fluss_proto.sasl import SaslPlain, authenticate

log = logging.getLogger("fluss_proto.client")

#: Sent in every ApiVersionsRequest (the server ignores both values, but they are required).
CLIENT_SOFTWARE_NAME: Final = "fluss_proto"
CLIENT_SOFTWARE_VERSION: Final = __version__


class _Slot:
    """The (at most one) live connection to one server address."""

    __slots__ = ("conn", "info", "lock")

    def __init__(self) -> None:
        self.conn: Connection | None = None
        self.info: ServerApiVersions | None = None
        self.lock = asyncio.Lock()

    def ready(self) -> bool:
        return self.conn is not None and not self.conn.closed and self.info is not None


def _unsupported(key: ApiKey, info: ServerApiVersions, target: Target) -> UnsupportedByServerError:
    advertised = info.versions.get(int(key))
    detail = (
        f"the {info.role} does not offer it"
        if advertised is None
        else f"it offers versions {advertised[0]}..{advertised[1]}, "
        f"fluss_proto speaks 0..{API_INFO[key].max_version}"
    )
    return UnsupportedByServerError(key.name, target.address, detail)


class ConnectionPool:
    """Connections per server address, their handshake, and requests on the wire.

    Knows nothing of the cluster's shape: callers say which server (:class:`Target`).

    With ``quarantine``, a server that lets a request (or the handshake) time out is
    *silent* until :meth:`new_round`: its connection is closed (a stopped peer's socket is
    not reused; the next round connects again) and every request to it fails at once with
    :class:`ServerSilentError`, so one hung server costs one timeout per round.
    """

    def __init__(
        self,
        *,
        connect_timeout: float,
        request_timeout: float,
        sasl: SaslPlain | None,
        quarantine: bool = False,
    ) -> None:
        self.connect_timeout = connect_timeout
        self.request_timeout = request_timeout
        self.sasl = sasl
        self.quarantine = quarantine
        self._silent: dict[str, ServerSilentError] = {}
        #: Every API key put on the wire, with counts (handshakes included).
        self.sent_api_keys: Counter[ApiKey] = Counter()
        self._slots: dict[str, _Slot] = {}
        self._api_versions: dict[str, ServerApiVersions] = {}
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def api_versions(self) -> Mapping[str, ServerApiVersions]:
        """Address -> the latest ApiVersions reply recorded from that server."""
        return MappingProxyType(self._api_versions)

    def connected_servers(self) -> list[str]:
        """Addresses with an open connection."""
        return [addr for addr, slot in self._slots.items() if slot.ready()]

    @property
    def silent(self) -> Mapping[str, ServerSilentError]:
        """Address -> how it went silent in this round (only with ``quarantine``)."""
        return MappingProxyType(self._silent)

    def new_round(self) -> None:
        """Forget the silent servers: each is asked again (on a new connection)."""
        self._silent.clear()

    def _check_silent(self, address: str) -> None:
        silent = self._silent.get(address)
        if silent is not None:
            raise silent.repeated()

    async def _silenced(
        self, address: str, exc: FlussError, seconds: float, api: str
    ) -> FlussError:
        """What a request to ``address`` that failed with ``exc`` raises: with quarantine,
        a timeout makes the server silent (its connection closed), and a connection closed
        under a silent server's request is that silence too."""
        if not self.quarantine:
            return exc
        known = self._silent.get(address)
        if known is not None and isinstance(exc, (ConnectionFailedError, RequestTimeoutError)):
            return known.repeated()
        if not isinstance(exc, (RequestTimeoutError, ConnectTimeoutError)):
            return exc
        silent = ServerSilentError(address, seconds, api)
        silent.__cause__ = exc
        self._silent[address] = silent
        log.debug("%s is silent for this round: %s", address, short_reason(exc))
        slot = self._slots.get(address)
        if slot is not None and slot.conn is not None:
            conn, slot.conn, slot.info = slot.conn, None, None
            await conn.close()  # bounded; pending requests on it fail at once
        return silent

    def is_ready(self, address: str) -> bool:
        slot = self._slots.get(address)
        return slot is not None and slot.ready()

    async def close(self) -> None:
        """Close every connection; later requests raise ConnectionClosedError. Idempotent."""
        self._closed = True
        conns = [slot.conn for slot in self._slots.values() if slot.conn is not None]
        await asyncio.gather(*(conn.close() for conn in conns), return_exceptions=True)

    # ------------------------------------------------------------------ requests

    async def request(
        self, target: Target, key: ApiKey, request: Message, *, timeout: float | None = None
    ) -> Message:
        """One attempt: connect if needed, check the API is offered, send, decode."""
        conn, info = await self.ensure(target)
        version = info.negotiate(key)
        if version is None:
            raise _unsupported(key, info, target)
        body = messages.encode_request(key, request)
        self.sent_api_keys[key] += 1
        try:
            raw = await conn.request(int(key), version, body, timeout=timeout, api_name=key.name)
        except AuthenticationError as exc:
            raise self._explain_auth(exc, target) from exc
        except (RequestTimeoutError, ConnectionFailedError) as exc:
            limit = self.request_timeout if timeout is None else timeout
            silenced = await self._silenced(target.address, exc, limit, key.name)
            if silenced is exc:
                raise
            raise silenced from exc
        return messages.decode_response(key, raw)

    async def request_group(
        self,
        target: Target,
        items: Sequence[tuple[ApiKey, Message]],
        *,
        timeout: float | None = None,
    ) -> list[Message | FlussError]:
        """One attempt of each request to one server, pipelined in one write; a result
        (the response or its error) per item, in order. Requests must be checked already
        (class and required fields)."""
        try:
            conn, info = await self.ensure(target)
        except FlussError as exc:
            return [exc] * len(items)
        out: list[Message | FlussError] = []
        wire: list[WireRequest] = []
        sent: list[int] = []
        for index, (key, request) in enumerate(items):
            version = info.negotiate(key)
            if version is None:
                out.append(_unsupported(key, info, target))
                continue
            out.append(ConnectionClosedError("not sent"))  # replaced below
            wire.append(WireRequest(int(key), version, request.SerializeToString(), key.name))
            sent.append(index)
            self.sent_api_keys[key] += 1
        if not wire:
            return out
        try:
            raws = await conn.request_many(wire, timeout=timeout)
        except FlussError as exc:  # closed before anything was written
            raws = [exc] * len(wire)
        limit = self.request_timeout if timeout is None else timeout
        for index, raw in zip(sent, raws, strict=True):
            if isinstance(raw, FlussError):
                raw = await self._silenced(target.address, raw, limit, items[index][0].name)
                out[index] = self._explain_auth(raw, target)
                continue
            try:
                out[index] = messages.decode_response(items[index][0], raw)
            except FlussError as exc:
                out[index] = exc
        return out

    def _explain_auth(self, exc: FlussError, target: Target) -> FlussError:
        """A server asking for SASL from a client without credentials gets named as such."""
        if (
            self.sasl is None
            and isinstance(exc, AuthenticationError)
            and isinstance(exc, ServerError)
        ):
            explained = AuthenticationError(
                f"{target.address} requires SASL authentication and this client has no "
                f"credentials (server said: {short_reason(exc.message or exc.name)})"
            )
            explained.__cause__ = exc
            return explained
        return exc

    # ------------------------------------------------------------------ connections

    async def ensure(self, target: Target) -> tuple[Connection, ServerApiVersions]:
        """The ready connection to ``target``, opening and handshaking it if needed."""
        if self._closed:
            raise ConnectionClosedError("the client is closed")
        self._check_silent(target.address)
        slot = self._slots.get(target.address)
        if slot is None:
            slot = self._slots[target.address] = _Slot()
        if slot.ready():
            assert slot.conn is not None and slot.info is not None
            return slot.conn, slot.info
        async with slot.lock:
            if slot.ready():
                assert slot.conn is not None and slot.info is not None
                return slot.conn, slot.info
            self._check_silent(target.address)  # went silent while we waited for the lock
            stale, slot.conn, slot.info = slot.conn, None, None
            if stale is not None:
                await stale.close()  # already shut down; this reaps its reader task
            host, port = split_address(target.address)
            try:
                conn = await Connection.open(
                    host,
                    port,
                    connect_timeout=self.connect_timeout,
                    request_timeout=self.request_timeout,
                )
            except ConnectTimeoutError as exc:  # a black-holed address: silent too
                silenced = await self._silenced(
                    target.address, exc, self.connect_timeout, "CONNECT"
                )
                if silenced is exc:
                    raise
                raise silenced from exc
            try:
                info = await self._handshake(conn, target)
                if self._closed:
                    raise ConnectionClosedError("the client is closed")
            except RequestTimeoutError as exc:
                await conn.close()
                silenced = await self._silenced(
                    target.address, exc, self.connect_timeout, ApiKey.API_VERSIONS.name
                )
                if silenced is exc:
                    raise
                raise silenced from exc
            except BaseException:
                await conn.close()
                raise
            slot.conn, slot.info = conn, info
            return conn, info

    async def _handshake(self, conn: Connection, target: Target) -> ServerApiVersions:
        request = pb.ApiVersionsRequest(
            client_software_name=CLIENT_SOFTWARE_NAME,
            client_software_version=CLIENT_SOFTWARE_VERSION,
        )
        self.sent_api_keys[ApiKey.API_VERSIONS] += 1
        raw = await conn.request(
            int(ApiKey.API_VERSIONS),
            0,
            messages.encode_request(ApiKey.API_VERSIONS, request),
            timeout=self.connect_timeout,
            api_name=ApiKey.API_VERSIONS.name,
        )
        response = messages.decode_response(ApiKey.API_VERSIONS, raw)
        assert isinstance(response, pb.ApiVersionsResponse)
        info = ServerApiVersions(
            address=target.address,
            server_type=response.server_type if response.HasField("server_type") else None,
            versions=MappingProxyType(
                {v.api_key: (v.min_version, v.max_version) for v in response.api_versions}
            ),
            recorded_at=time.time(),
        )
        self._api_versions[target.address] = info
        log.debug("%s is a %s offering %d APIs", target.address, info.role, len(info.versions))
        expected = target.expected_type
        if expected is not None and info.server_type is not None and info.server_type != expected:
            raise ConnectionClosedError(
                f"{target.address} is a {info.role}, but metadata says it is a {target.role} "
                "(stale metadata?)"
            )
        if self.sasl is not None:
            version = info.negotiate(ApiKey.AUTHENTICATE)
            if version is None:
                raise UnsupportedByServerError(
                    ApiKey.AUTHENTICATE.name, target.address, "cannot authenticate with SASL"
                )
            self.sent_api_keys[ApiKey.AUTHENTICATE] += 1
            await authenticate(conn, self.sasl, timeout=self.connect_timeout, version=version)
        return info
