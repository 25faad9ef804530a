"""Which of the configured coordinator addresses is active, which are standby.

Standby coordinators (Fluss 1.0) are not in GetMetadata: only the active one is named
there. So each configured address is asked directly, on its own short-lived connection:

1. ApiVersions, which every coordinator answers (a standby too), and which says whether
   the server is a coordinator at all;
2. ListDatabases, a cheap read-only request: the active coordinator answers it, a standby
   fails it with NOT_COORDINATOR_LEADER (65).

A 0.9 coordinator has no standby and never sends 65: it is active whenever it answers.
Addresses are probed concurrently and each probe is bounded by ``timeout``, so a dead or
hanging server costs at most that much. Nothing here retries or follows anything: the
probe reports what each address said, the caller decides.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

from fluss_proto import messages
from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import ApiKey
from fluss_proto.client import (
    CLIENT_SOFTWARE_NAME,
    CLIENT_SOFTWARE_VERSION,
    SERVER_TYPE_COORDINATOR,
    SERVER_TYPE_TABLET,
    ServerApiVersions,
    parse_bootstrap,
)
from fluss_proto.connection import Connection
from fluss_proto.errors import AuthenticationError, FlussError, RequestTimeoutError, ServerError
from fluss_proto.sasl import SaslPlain, authenticate

__all__ = ["CoordinatorProbe", "CoordinatorRole", "probe_coordinators"]

#: "tablet-server": the address answered, but as a tablet server (a misconfigured list).
CoordinatorRole = Literal["active", "standby", "unreachable", "tablet-server"]

_NOT_COORDINATOR_LEADER: Final = 65
_AUTHORIZATION_FAILED: Final = 48


@dataclass(frozen=True, slots=True)
class CoordinatorProbe:
    """What one configured coordinator address answered."""

    address: str
    role: CoordinatorRole
    #: Seconds from connecting to the decisive answer (None when unreachable).
    latency_s: float | None = None
    #: Why the address is "unreachable"; on an "active" one, the authorization error its
    #: ListDatabases answered with, if any.
    error: FlussError | None = None

    @property
    def active(self) -> bool:
        return self.role == "active"


async def probe_coordinators(
    addresses: str | Iterable[str],
    timeout: float = 2.0,
    *,
    sasl: SaslPlain | None = None,
) -> tuple[CoordinatorProbe, ...]:
    """Probe every address (``"h:p,h:p"`` or a list), in the order given.

    ``timeout`` bounds each probe as a whole (connect, handshake, request). A rejected
    SASL login makes the address "unreachable" with that error (it could not be told to
    be active), and so does any other server error on ListDatabases except an
    authorization failure (48): only the leader checks permissions, so that address is
    "active", with the error.
    """
    wanted = parse_bootstrap(addresses if isinstance(addresses, str) else list(addresses))
    return tuple(await asyncio.gather(*(_probe(a, timeout, sasl) for a in wanted)))


async def _probe(address: str, timeout: float, sasl: SaslPlain | None) -> CoordinatorProbe:
    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    t0 = time.monotonic()
    conn: Connection | None = None
    try:
        async with asyncio.timeout(timeout):
            conn = await Connection.open(
                host, int(port), connect_timeout=timeout, request_timeout=timeout
            )
            versions = await _api_versions(conn)
            server_type = versions.server_type if versions.HasField("server_type") else None
            if server_type == SERVER_TYPE_TABLET:
                return CoordinatorProbe(address, "tablet-server", time.monotonic() - t0)
            if server_type not in (None, SERVER_TYPE_COORDINATOR):
                raise FlussError(f"{address} says it is server type {server_type}")
            if sasl is not None:
                try:
                    await authenticate(conn, sasl, timeout=timeout, version=_auth_version(versions))
                except AuthenticationError as exc:
                    # A standby may refuse the handshake itself with 65.
                    if _is_not_leader(exc.__cause__):
                        return CoordinatorProbe(address, "standby", time.monotonic() - t0)
                    raise
            try:
                await conn.request(
                    int(ApiKey.LIST_DATABASES),
                    0,
                    messages.encode_request(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest()),
                    api_name=ApiKey.LIST_DATABASES.name,
                )
            except ServerError as exc:
                if _is_not_leader(exc):
                    return CoordinatorProbe(address, "standby", time.monotonic() - t0)
                if exc.code != _AUTHORIZATION_FAILED:
                    raise
                # It checked the caller's permission, which only the leader does (a
                # standby answers 65 first): active, with the error kept for the caller.
                # Other errors (a coordinator still starting, say) say nothing of the role.
                return CoordinatorProbe(address, "active", time.monotonic() - t0, exc)
            return CoordinatorProbe(address, "active", time.monotonic() - t0)
    except TimeoutError:
        error: FlussError = RequestTimeoutError(f"{address} did not answer within {timeout}s")
        return CoordinatorProbe(address, "unreachable", error=error)
    except FlussError as exc:
        return CoordinatorProbe(address, "unreachable", error=exc)
    finally:
        if conn is not None:
            await conn.close()


def _is_not_leader(exc: BaseException | None) -> bool:
    return isinstance(exc, ServerError) and exc.code == _NOT_COORDINATOR_LEADER


async def _api_versions(conn: Connection) -> pb.ApiVersionsResponse:
    request = pb.ApiVersionsRequest(
        client_software_name=CLIENT_SOFTWARE_NAME,
        client_software_version=CLIENT_SOFTWARE_VERSION,
    )
    raw = await conn.request(
        int(ApiKey.API_VERSIONS),
        0,
        messages.encode_request(ApiKey.API_VERSIONS, request),
        api_name=ApiKey.API_VERSIONS.name,
    )
    response = messages.decode_response(ApiKey.API_VERSIONS, raw)
    assert isinstance(response, pb.ApiVersionsResponse)
    return response


def _auth_version(versions: pb.ApiVersionsResponse) -> int:
    """The AUTHENTICATE version both sides speak (0 when the server does not say)."""
    info = ServerApiVersions(
        address="",
        server_type=None,
        versions={v.api_key: (v.min_version, v.max_version) for v in versions.api_versions},
        recorded_at=0.0,
    )
    return info.negotiate(ApiKey.AUTHENTICATE) or 0
