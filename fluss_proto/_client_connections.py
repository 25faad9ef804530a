"""FlussClient's connections: one per server address, each opened with an ApiVersions
handshake (and SASL/PLAIN when configured) before it carries requests.

Part of :class:`~fluss_proto.client.FlussClient` (its lowest layer); see
:mod:`fluss_proto.client` for the whole.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from types import MappingProxyType
from typing import Final, Literal, NamedTuple

from google.protobuf.message import Message

from fluss_proto import __version__, messages
from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import API_INFO, ApiKey
from fluss_proto.cluster import (
    SERVER_TYPE_COORDINATOR,
    SERVER_TYPE_TABLET,
    ServerApiVersions,
    ServerNode,
    split_address,
)
from fluss_proto.connection import Connection
from fluss_proto.errors import (
    AuthenticationError,
    ConnectionClosedError,
    FlussError,
    ServerError,
    UnsupportedByServerError,
)
from fluss_proto.sasl import SaslPlain, authenticate

log = logging.getLogger("fluss_proto.client")


#: Sent in every ApiVersionsRequest (the server ignores both values, but they are required).
CLIENT_SOFTWARE_NAME: Final = "fluss_proto"
CLIENT_SOFTWARE_VERSION: Final = __version__
#: ``node`` value for :meth:`FlussClient.call_many` items meant for the coordinator.
COORDINATOR: Final = "coordinator"
#: How many :class:`CoordinatorRedirect` events :attr:`FlussClient.events` keeps.
EVENTS_KEPT: Final = 256

_NOT_COORDINATOR_LEADER = 65
_MAX_BACKOFF = 2.0
_METADATA_TABLET_CANDIDATES = 3  # tablet servers asked per refresh before other fallbacks
_REASON_LIMIT = 200

Role = Literal["coordinator", "tablet", "bootstrap"]


def _short(exc: BaseException | str) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:_REASON_LIMIT]


_API_KEYS: dict[int, ApiKey] = {int(k): k for k in ApiKey}


def _request_mutates(api: ApiKey, request: object) -> bool:
    if API_INFO[api].mutating:
        return True
    # A lookup may ask the server to insert missing keys: that is a write.
    return api is ApiKey.LOOKUP and bool(getattr(request, "insert_if_not_exists", False))


class _Target(NamedTuple):
    address: str
    role: Role
    node_id: int | None = None

    @property
    def expected_type(self) -> int | None:
        return {"coordinator": SERVER_TYPE_COORDINATOR, "tablet": SERVER_TYPE_TABLET}.get(self.role)


class _Slot:
    """The (at most one) live connection to one server address."""

    __slots__ = ("conn", "info", "lock")

    def __init__(self) -> None:
        self.conn: Connection | None = None
        self.info: ServerApiVersions | None = None
        self.lock = asyncio.Lock()

    def ready(self) -> bool:
        return self.conn is not None and not self.conn.closed and self.info is not None


def _is_standby_answer(target: _Target, exc: FlussError) -> bool:
    """A standby coordinator's NOT_COORDINATOR_LEADER: follow to the active one."""
    return (
        isinstance(exc, ServerError)
        and exc.code == _NOT_COORDINATOR_LEADER
        and target.role == "coordinator"
    )


def _unsupported(key: ApiKey, info: ServerApiVersions, target: _Target) -> UnsupportedByServerError:
    advertised = info.versions.get(int(key))
    detail = (
        f"the {info.role} does not offer it"
        if advertised is None
        else f"it offers versions {advertised[0]}..{advertised[1]}, "
        f"fluss_proto speaks 0..{API_INFO[key].max_version}"
    )
    return UnsupportedByServerError(key.name, target.address, detail)


def _node_id(node: ServerNode) -> int:
    return node.node_id


class _Connections:
    """Connections per server address, the handshake, one request on the wire."""

    # Set by FlussClient.__init__.
    bootstrap_servers: tuple[str, ...]
    connect_timeout: float
    request_timeout: float
    sent_api_keys: Counter[ApiKey]
    _sasl: SaslPlain | None
    _slots: dict[str, _Slot]
    _api_versions: dict[str, ServerApiVersions]
    _closed: bool

    async def _request(
        self, target: _Target, key: ApiKey, request: Message, *, timeout: float | None = None
    ) -> Message:
        """One attempt: connect if needed, check the API is offered, send, decode."""
        conn, info = await self._ensure(target)
        version = info.negotiate(key)
        if version is None:
            raise _unsupported(key, info, target)
        body = messages.encode_request(key, request)
        self.sent_api_keys[key] += 1
        try:
            raw = await conn.request(int(key), version, body, timeout=timeout, api_name=key.name)
        except AuthenticationError as exc:
            raise self._explain_auth(exc, target) from exc
        return messages.decode_response(key, raw)

    def _explain_auth(self, exc: FlussError, target: _Target) -> FlussError:
        """A server asking for SASL from a client without credentials gets named as such."""
        if (
            self._sasl is None
            and isinstance(exc, AuthenticationError)
            and isinstance(exc, ServerError)
        ):
            explained = AuthenticationError(
                f"{target.address} requires SASL authentication and this client has no "
                f"credentials (server said: {_short(exc.message or exc.name)})"
            )
            explained.__cause__ = exc
            return explained
        return exc

    async def _ensure(self, target: _Target) -> tuple[Connection, ServerApiVersions]:
        """The ready connection to ``target``, opening and handshaking it if needed."""
        if self._closed:
            raise ConnectionClosedError("the client is closed")
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
            stale, slot.conn, slot.info = slot.conn, None, None
            if stale is not None:
                await stale.close()  # already shut down; this reaps its reader task
            host, port = split_address(target.address)
            conn = await Connection.open(
                host,
                port,
                connect_timeout=self.connect_timeout,
                request_timeout=self.request_timeout,
            )
            try:
                info = await self._handshake(conn, target)
                if self._closed:
                    raise ConnectionClosedError("the client is closed")
            except BaseException:
                await conn.close()
                raise
            slot.conn, slot.info = conn, info
            return conn, info

    async def _handshake(self, conn: Connection, target: _Target) -> ServerApiVersions:
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
        if self._sasl is not None:
            version = info.negotiate(ApiKey.AUTHENTICATE)
            if version is None:
                raise UnsupportedByServerError(
                    ApiKey.AUTHENTICATE.name, target.address, "cannot authenticate with SASL"
                )
            self.sent_api_keys[ApiKey.AUTHENTICATE] += 1
            await authenticate(conn, self._sasl, timeout=self.connect_timeout, version=version)
        return info
